"""RunContext.store: namespaced JSON values; in memory, or beside a SQLite session."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import WAY_IDS, WAYS, run, runtime
from llmport import OptionError, RunContext, Session, agentic_function, tool
from llmport.sessions.kv import MemoryStore, SqliteKV
from llmport.testing import Script, call_tools


@tool
def remember(user: str, fact: str, ctx: RunContext[None]) -> str:
    """Remember a fact about a user."""
    known = ctx.store.get(("users", user), "facts")
    facts = [*(known.value if known else []), fact]
    ctx.store.put(("users", user), "facts", facts)
    return f"{len(facts)} facts"


@tool
def recall(user: str, ctx: RunContext[None]) -> str:
    """Recall what is known about a user."""
    known = ctx.store.get(("users", user), "facts")
    return ", ".join(known.value) if known else "nothing"


def turns(*pairs: tuple[str, dict[str, Any]]) -> list[Any]:
    steps: list[Any] = []
    for pair in pairs:
        steps += [call_tools(pair), "ok"]
    return steps


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_facts_are_kept_between_runs_of_a_runtime(way: tuple[str, bool]) -> None:
    script = Script(
        turns(
            ("remember", {"user": "ada", "fact": "likes tea"}),
            ("remember", {"user": "ada", "fact": "owns a cat"}),
            ("recall", {"user": "ada"}),
        )
    )
    rt = runtime(script)
    for _ in range(3):
        result = await run(way, rt, "go", tools=[remember, recall])
    assert result.tool_calls[0].result.content == "likes tea, owns a cat"
    assert rt.store.get(("users", "ada"), "facts").value == ["likes tea", "owns a cat"]  # type: ignore[union-attr]
    other = runtime(Script(turns(("recall", {"user": "ada"}))))
    assert other.run("go", tools=[recall]).tool_calls[0].result.content == "nothing"


def test_a_store_given_to_the_runtime_is_used() -> None:
    mine = MemoryStore()
    script = Script(turns(("remember", {"user": "bo", "fact": "x"})))
    runtime(script, store=mine).run("go", tools=[remember])
    assert mine.get("users/bo", "facts") is None  # a string is a one-part namespace
    assert mine.get(("users", "bo"), "facts").value == ["x"]  # type: ignore[union-attr]


@pytest.mark.parametrize("make", [MemoryStore, "sqlite"])
def test_get_put_delete_search(make: Any, tmp_path: Path) -> None:
    store = SqliteKV(str(tmp_path / "kv.sqlite")) if make == "sqlite" else make()
    store.put(("users", "ada"), "profile", {"lang": "en", "n": 1})
    store.put(("users", "bob"), "profile", {"lang": "fr", "n": 2})
    store.put(("users", "bob", "x"), "note", "deep")
    store.put(("usersx",), "profile", {"lang": "en"})
    store.put("teams", "a", [1, 2])
    assert store.get(("users", "ada"), "profile").value == {"lang": "en", "n": 1}
    assert store.get(("users", "ada"), "nope") is None
    found = store.search(("users",))
    assert sorted(i.namespace for i in found) == [
        ("users", "ada"),
        ("users", "bob"),
        ("users", "bob", "x"),
    ]  # "usersx" does not start with the namespace ("users",)
    assert [i.namespace for i in store.search(("users",), filter={"lang": "fr"})] == [
        ("users", "bob")
    ]
    assert len(store.search((), limit=2)) == 2
    store.put(("users", "ada"), "profile", {"lang": "de"})  # replaces
    assert store.get(("users", "ada"), "profile").value == {"lang": "de"}
    store.delete(("users", "ada"), "profile")
    assert store.get(("users", "ada"), "profile") is None
    with pytest.raises(OptionError, match="JSON"):
        store.put("a", "b", {1, 2})
    with pytest.raises(OptionError, match="namespace"):
        store.put(("",), "b", 1)
    with pytest.raises(OptionError, match="limit"):
        store.search((), limit=0)


def test_the_sqlite_store_survives_reopening_from_another_process(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    script = Script(turns(("remember", {"user": "ada", "fact": "likes tea"})))
    rt = runtime(script)

    @agentic_function
    def chat(message: str) -> str:
        return str(rt.exec(message, tools=[remember]))

    with Session(path) as session:
        chat("I like tea")
    # Another process reads it from the same file, beside the session tables.
    code = textwrap.dedent(
        f"""
        from llmport import Session
        session = Session({str(path)!r}, id={session.id!r})
        item = session.kv.get(("users", "ada"), "facts")
        session.kv.put(("users", "ada"), "seen_by", "child")
        print(item.value, len(session.nodes()))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["['likes", "tea']", str(len(session.nodes()))]
    # A later run in a reopened session sees what the other process wrote.
    script2 = Script(turns(("recall", {"user": "ada"})))
    rt2 = runtime(script2)

    @agentic_function
    def chat2(message: str) -> str:
        rt2.exec(message, tools=[recall])
        return "done"

    with Session(path, id=session.id):
        chat2("what do I like?")
    assert script2.requests[1].messages[-1].tool_results[0].content == "likes tea"
    again = Session(path, id=session.id)
    assert again.kv.get(("users", "ada"), "seen_by").value == "child"
    assert rt2.store.get(("users", "ada"), "facts") is None  # the runtime's own store: unused
