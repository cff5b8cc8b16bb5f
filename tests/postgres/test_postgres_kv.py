"""RunContext.store beside a PostgreSQL session (llmport-postgres)."""

from __future__ import annotations

from typing import Any

from llmport import RunContext, Runtime, Session, agentic_function, tool
from llmport.controls.retry import Backoff
from llmport.provider.config import Config
from llmport.testing import Script, call_tools


@tool
def remember(fact: str, ctx: RunContext[None]) -> str:
    """Remember a fact."""
    known = ctx.store.get(("facts",), "all")
    facts = [*(known.value if known else []), fact]
    ctx.store.put(("facts",), "all", facts)
    return "noted"


def test_the_store_lives_in_the_session_database(pg_url: str) -> None:
    script = Script([call_tools(("remember", {"fact": "a"})), "ok"] * 2)
    rt = Runtime(model="scripted:test", hooks=[script], config=Config(), backoff=Backoff.none())

    @agentic_function
    def chat(message: str) -> Any:
        return rt.exec(message, tools=[remember])

    with Session(pg_url) as session:
        chat("one")
        chat("two")
    reopened = Session(pg_url, id=session.id)
    item = reopened.kv.get(("facts",), "all")
    assert item is not None and item.value == ["a", "a"]
    reopened.kv.put(("facts", "x"), "k", {"lang": "en"})
    reopened.kv.put(("factsx",), "k", {"lang": "en"})
    found = reopened.kv.search(("facts",), filter={"lang": "en"})
    assert [i.namespace for i in found] == [("facts", "x")]
    reopened.kv.delete(("facts",), "all")
    assert reopened.kv.get(("facts",), "all") is None
    assert rt.store.search(()) == []  # the runtime's in-memory store was not used
