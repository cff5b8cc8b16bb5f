"""What @agentic_function records: function, llm and tool nodes, errors, nesting."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from dag_helpers import build, call, exec_, fn, raise_, texts
from llmport import Session, agentic_function, tool
from llmport.errors import BadRequestError
from llmport.messages.types import Usage
from llmport.testing import Script, call_tools, fail


@tool
def lookup(city: str) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


def test_function_llm_and_tool_nodes(mode: str) -> None:
    script = Script([call_tools(("lookup", {"city": "Paris"})),
                     "It is sunny.", ])
    rt = script.runtime()
    program = build(mode, rt, {
        "observe": fn([exec_("Weather?", tools=[lookup])], doc="Look at the weather."),
    })
    with Session() as session:
        assert program.run("observe", task="paris") == "It is sunny."
    function, llm, tool_node = session.nodes()
    assert (function.kind, function.name, function.status) == ("function", "observe", "ok")
    assert function.data["arguments"] == {"task": "paris"}
    assert function.data["doc"] == "Look at the weather."
    assert function.result == {"result": "It is sunny."}
    assert function.duration is not None and function.duration >= 0
    assert function.parent_id is None and function.started_at > 0

    assert (llm.kind, llm.name, llm.status, llm.parent_id) == ("llm", "scripted:test", "ok", "n1")
    assert llm.data["content"] == [{"type": "text", "text": "Weather?"}]
    assert llm.data["messages"][0]["role"] == "user"
    assert llm.result is not None
    assert llm.result["reply"] == "It is sunny."
    assert llm.result["tool_calls"][0]["name"] == "lookup"
    assert llm.result["attempts"] == 2 and llm.result["usage"]["requests"] == 2

    assert (tool_node.kind, tool_node.name, tool_node.parent_id) == ("tool", "lookup", llm.id)
    assert tool_node.data["arguments"] == {"city": "Paris"}
    assert tool_node.result == {"content": "sunny in Paris", "is_error": False, "error": None}
    assert [n.seq for n in session.nodes()] == [1, 2, 3]


def test_run_result_and_tool_records_carry_node_ids() -> None:
    script = Script([call_tools(("lookup", {"city": "Oslo"})), "done"])
    rt = script.runtime()

    @agentic_function
    def ask() -> Any:
        return rt.run("go", tools=[lookup])

    with Session() as session:
        result = ask()
    assert result.node_id == "n2"
    assert result.tool_calls[0].node_id == "n3"
    assert session.node("n3").parent is session.node("n2")


def test_bare_and_configured_decorators_keep_the_function() -> None:
    @agentic_function
    def plain(x: int) -> int:
        """Doubles."""
        return x * 2

    @agentic_function(expose="full", render_range={"callers": 1})
    async def configured(x: int) -> int:
        return x + 1

    assert plain.__name__ == "plain" and plain.__doc__ == "Doubles."
    assert plain.__agentic__.expose == "io"
    assert configured.__agentic__.callers == 1 and configured.__agentic__.subcalls is None
    with Session() as session:
        assert plain(2) == 4
        assert asyncio.run(configured(2)) == 3
    assert [(n.name, n.expose, n.result) for n in session.nodes()] == [
        ("plain", "io", {"result": 4}), ("configured", "full", {"result": 3})]


def test_exceptions_propagate_unchanged_after_being_recorded(mode: str) -> None:
    error = KeyError("missing")
    program = build(mode, None, {
        "inner": fn([raise_(error)]),
        "outer": fn([call("inner", k=1)]),
    })
    with Session() as session, pytest.raises(KeyError) as caught:
        program.run("outer")
    assert caught.value is error
    outer, inner = session.nodes()
    assert (outer.status, inner.status) == ("error", "error")
    assert inner.result == {"error": {"type": "KeyError", "message": "'missing'"}}
    assert inner.parent is outer


def test_failed_exec_is_a_failed_node_never_a_reply(mode: str) -> None:
    script = Script([fail(BadRequestError("bad prompt", provider="scripted", status=400)),
                     "second try works"])
    rt = script.runtime(max_retries=1)
    program = build(mode, rt, {
        "bad": fn([exec_("first")]),
        "good": fn([exec_("second")]),
        "main": fn([call("bad")]),
    })
    with Session() as session:
        with pytest.raises(BadRequestError):
            program.run("main")
        assert program.run("good") == "second try works"
    main, bad, failed_llm, _, good_llm = session.nodes()
    assert failed_llm.kind == "llm" and failed_llm.status == "error"
    assert failed_llm.result is not None and "reply" not in failed_llm.result
    assert failed_llm.result["error"]["type"] == "BadRequestError"
    assert (bad.status, main.status) == ("error", "error")
    # The next top-level call reads the failed calls, never the failed exec as a reply.
    assert good_llm.data["reads"] == ["n1", "n4"]
    sent = texts(script.requests[1].messages)
    assert sent == [("user", ["[call main()]", "[main raised BadRequestError: bad prompt]",
                              "[call good()]", "second"])]


def test_nesting_three_deep(mode: str) -> None:
    script = Script(["a1", "b1", "c1"])
    rt = script.runtime()
    program = build(mode, rt, {
        "c": fn([exec_("in c")], doc="C doc."),
        "b": fn([exec_("in b"), call("c", depth=3)], doc="B doc."),
        "a": fn([exec_("in a"), call("b", depth=2)], doc="A doc."),
    })
    with Session() as session:
        assert program.run("a", depth=1) == "c1"
    a, a_llm, b, b_llm, c, c_llm = session.nodes()
    assert [n.parent for n in (a, a_llm, b, b_llm, c, c_llm)] == [session.root, a, a, b, b, c]
    assert c_llm.data["reads"] == ["n1", "n2", "n3", "n4", "n5"]
    assert texts(script.requests[2].messages) == [
        ("user", ["[call a(depth=1)]\nA doc.", "in a"]),
        ("assistant", ["a1"]),
        ("user", ["[call b(depth=2)]\nB doc.", "in b"]),
        ("assistant", ["b1"]),
        ("user", ["[call c(depth=3)]\nC doc.", "in c"]),
    ]


def test_streaming_exec_is_recorded() -> None:
    script = Script(["streamed reply here"])
    rt = script.runtime()

    @agentic_function
    def talk() -> str:
        return "".join(getattr(e, "text", "") for e in rt.stream("hi") if e.kind == "text_delta")

    with Session() as session:
        assert talk() == "streamed reply here"
    llm = session.node("n2")
    assert llm.status == "ok" and llm.result is not None
    assert llm.result["reply"] == "streamed reply here"


def test_exec_outside_agentic_functions_records_nothing() -> None:
    script = Script(["plain"])
    with Session() as session:
        assert script.runtime().exec("hi") == "plain"
    assert len(session) == 0


def test_usage_sums_llm_nodes() -> None:
    script = Script(["x", "y"])
    script.steps[0].usage = Usage(input_tokens=10, output_tokens=2)
    script.steps[1].usage = Usage(input_tokens=5, output_tokens=1)
    rt = script.runtime()

    @agentic_function
    def twice() -> None:
        rt.exec("a")
        rt.exec("b")

    with Session() as session:
        twice()
    usage = session.usage()
    assert (usage.input_tokens, usage.output_tokens, usage.requests) == (15, 3, 2)


@pytest.mark.parametrize("bad", [
    {"expose": "everything"},
    {"render_range": {"caller": 1}},
    {"render_range": {"callers": -1}},
    {"render_range": {"subcalls": 1.5}},
    {"render_range": {"callers": True}},
    {"render_range": [("callers", 1)]},
])
def test_bad_options_fail_at_decoration(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError) as caught:
        agentic_function(**bad)
    if bad.get("render_range") == {"caller": 1}:
        assert "'caller'" in str(caught.value) and "'callers'" in str(caught.value)


def test_generators_are_rejected() -> None:
    def gen() -> Any:
        yield 1

    with pytest.raises(TypeError, match="generator"):
        agentic_function(gen)


def test_methods_do_not_record_self() -> None:
    class Agent:
        @agentic_function
        def act(self, goal: str, **extra: Any) -> str:
            return goal

    with Session() as session:
        Agent().act("win", speed=3)
    assert session.node("n1").data["arguments"] == {"goal": "win", "speed": 3}


def test_unjsonable_arguments_and_results_are_summarised() -> None:
    class Opaque:
        def __repr__(self) -> str:
            return "<opaque>"

    @agentic_function
    def take(blob: bytes, thing: Any) -> Any:
        return Opaque()

    with Session() as session:
        take(b"\x00" * 1000, {"nested": (1, Opaque())})
    node = session.node("n1")
    assert node.data["arguments"] == {"blob": "<1000 bytes>", "thing": {"nested": [1, "<opaque>"]}}
    assert node.result == {"result": "<opaque>"}


def test_without_a_session_each_top_level_call_gets_its_own() -> None:
    seen = []

    @agentic_function
    def who() -> None:
        from llmport.sessions.agentic import current_session

        seen.append(current_session())

    who()
    who()
    assert seen[0] is not None and seen[1] is not None and seen[0] is not seen[1]
    assert seen[0].path is None


def test_decorator_session_wins_for_top_level_calls() -> None:
    mine = Session()

    @agentic_function(session=mine)
    def record() -> int:
        return 1

    with Session() as ambient:
        record()
    assert len(mine) == 1 and len(ambient) == 0


def test_a_keyed_media_url_is_recorded_masked() -> None:
    secret = "sk-fake-DagUrlSecret12345"
    url = f"https://bob:{secret}@images.example.com/kiwi.png?X-Goog-Signature={secret}"
    rt = Script(["A kiwi."]).runtime()

    @agentic_function
    def look() -> Any:
        return rt.run(["What is this?", {"type": "image", "url": url, "media_type": "image/png"}])

    with Session() as session:
        look()
    recorded = json.dumps([n.data for n in session.nodes()])
    assert "images.example.com/kiwi.png" in recorded  # the block is recorded, its URL masked
    assert secret not in recorded and secret[8:20] not in recorded
