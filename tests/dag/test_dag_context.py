"""What each exec reads: its own frame, expose, render_range, compute_reads, rendering."""

from __future__ import annotations

from typing import Any

import llmport.sessions.dag as dag_module
import pytest
from dag_helpers import build, call, exec_, fn, ids, texts
from llmport import Session, agentic_function, compute_reads, render_dag_messages, tool
from llmport.sessions.agentic import current_session
from llmport.testing import Script, call_tools


@tool
def ping() -> str:
    """Ping."""
    return "pong"


def test_each_exec_sees_the_earlier_ones_of_its_frame(mode: str) -> None:
    script = Script(["one", "two", "three"])
    rt = script.runtime()
    program = build(mode, rt, {"chat": fn([exec_("q1"), exec_("q2"), exec_("q3")], doc="Chat.")})
    with Session() as session:
        assert program.run("chat") == "three"
    assert texts(script.requests[2].messages) == [
        ("user", ["[call chat()]\nChat.", "q1"]), ("assistant", ["one"]),
        ("user", ["q2"]), ("assistant", ["two"]),
        ("user", ["q3"]),
    ]
    assert [n.data["reads"] for n in session.nodes() if n.kind == "llm"] == [
        ["n1"], ["n1", "n2"], ["n1", "n2", "n3"]]


def test_context_argument_replaces_the_computed_context(mode: str) -> None:
    script = Script(["a", "b"])
    rt = script.runtime()
    program = build(mode, rt, {"f": fn([exec_("first"), exec_("second", context="Only this.")])})
    with Session() as session:
        program.run("f")
    assert texts(script.requests[1].messages) == [("user", ["Only this.", "second"])]
    llm = session.node("n3")
    assert llm.data["context_override"] is True and llm.data["reads"] == []
    assert llm.data["content"] == [{"type": "text", "text": "second"}]
    assert compute_reads(llm, session) == []


# --- expose ------------------------------------------------------------------------------------

# main calls child(a=1); child makes two execs (the second runs the ping tool) and
# calls grand(); grand makes one exec. Then main's exec reads what child exposes.
# Nodes: n1 main, n2 child, n3 child exec, n4 child exec with tool, n5 ping tool,
#        n6 grand, n7 grand exec, n8 main exec.
EXPOSE_CASES = [
    ("io", "full", ["n1", "n2"]),
    ("hidden", "full", ["n1"]),
    ("full", "io", ["n1", "n2", "n3", "n4", "n5", "n6"]),
    ("full", "full", ["n1", "n2", "n3", "n4", "n5", "n6", "n7"]),
    ("full", "llm", ["n1", "n2", "n3", "n4", "n5", "n7"]),
    ("full", "hidden", ["n1", "n2", "n3", "n4", "n5"]),
    ("llm", "io", ["n1", "n3", "n4"]),
    ("llm", "full", ["n1", "n3", "n4", "n7"]),
    ("llm", "llm", ["n1", "n3", "n4", "n7"]),
    ("llm", "hidden", ["n1", "n3", "n4"]),
]


def expose_program(mode: str, child: str, grand: str) -> tuple[Script, Any]:
    script = Script(["c1", call_tools(("ping", {})), "c2", "g1", "m1"])
    rt = script.runtime()
    return script, build(mode, rt, {
        "grand": fn([exec_("grand q")], expose=grand, doc="Grand doc."),
        "child": fn([exec_("child q1"), exec_("child q2", tools=[ping]), call("grand")],
                    expose=child, doc="Child doc.", returns="child result"),
        "main": fn([call("child", a=1), exec_("main q")], doc="Main doc."),
    })


@pytest.mark.parametrize(("child", "grand", "expected"), EXPOSE_CASES)
def test_expose_decides_what_later_readers_see(mode: str, child: str, grand: str,
                                               expected: list[str]) -> None:
    _, program = expose_program(mode, child, grand)
    with Session() as session:
        assert program.run("main") == "m1"
    main_exec = session.node("n8")
    assert main_exec.data["reads"] == expected
    assert compute_reads(main_exec, session) == expected
    # Readers inside the subtree are not affected by its expose: grand reads child's exchanges.
    assert session.node("n7").data["reads"] == ["n1", "n2", "n3", "n4", "n5", "n6"]


def test_expose_io_renders_call_and_result(mode: str) -> None:
    script, program = expose_program(mode, "io", "full")
    with Session():
        program.run("main")
    assert texts(script.requests[-1].messages) == [
        ("user", ["[call main()]\nMain doc.", "[call child(a=1)]", "[child returned: child result]",
                  "main q"]),
    ]


def test_expose_full_renders_the_whole_subtree_in_order(mode: str) -> None:
    script, program = expose_program(mode, "full", "io")
    with Session():
        program.run("main")
    assert texts(script.requests[-1].messages) == [
        ("user", ["[call main()]\nMain doc.", "[call child(a=1)]", "child q1"]),
        ("assistant", ["c1"]),
        ("user", ["child q2", "[tool ping({}) returned: pong]"]),
        ("assistant", ["c2"]),
        ("user", ["[call grand()]", "[grand returned: g1]", "[child returned: child result]",
                  "main q"]),
    ]


def test_expose_llm_renders_only_the_exchanges(mode: str) -> None:
    script, program = expose_program(mode, "llm", "llm")
    with Session():
        program.run("main")
    assert texts(script.requests[-1].messages) == [
        ("user", ["[call main()]\nMain doc.", "child q1"]), ("assistant", ["c1"]),
        ("user", ["child q2"]), ("assistant", ["c2"]),
        ("user", ["grand q"]), ("assistant", ["g1"]),
        ("user", ["main q"]),
    ]


# --- render_range --------------------------------------------------------------------------------

# main: exec m1, leaf(i=1), leaf(i=2), then worker(); worker: leaf 10, 11, 12, then its exec.
# Nodes: n1 main, n2 m1, n3 leaf1, n4 leaf2, n5 worker, n6 leaf10, n7 leaf11, n8 leaf12, n9 exec.
# The callers' scope of worker, nearest first: n4, n3, n2 (main's exec), n1 (main's call).
RANGE_CASES = [
    (None, ["n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"]),
    ({}, ["n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"]),
    ({"callers": 0}, ["n5", "n6", "n7", "n8"]),
    ({"callers": 1}, ["n4", "n5", "n6", "n7", "n8"]),
    ({"callers": 3}, ["n2", "n3", "n4", "n5", "n6", "n7", "n8"]),
    ({"callers": 4}, ["n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"]),
    ({"callers": 99}, ["n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"]),
    ({"subcalls": 0}, ["n1", "n2", "n3", "n4", "n5"]),
    ({"subcalls": 1}, ["n1", "n2", "n3", "n4", "n5", "n8"]),
    ({"callers": 0, "subcalls": 0}, ["n5"]),
    ({"callers": 2, "subcalls": 2}, ["n3", "n4", "n5", "n7", "n8"]),
    ({"callers": None, "subcalls": 2}, ["n1", "n2", "n3", "n4", "n5", "n7", "n8"]),
]


@pytest.mark.parametrize(("render_range", "expected"), RANGE_CASES)
def test_render_range_windows(mode: str, render_range: dict[str, Any] | None,
                              expected: list[str]) -> None:
    script = Script(["m1", "w1"])
    rt = script.runtime()
    program = build(mode, rt, {
        "leaf": fn([], returns="leaf"),
        "worker": fn([call("leaf", i=10), call("leaf", i=11), call("leaf", i=12), exec_("work")],
                     render_range=render_range),
        "main": fn([exec_("m1"), call("leaf", i=1), call("leaf", i=2), call("worker")]),
    })
    with Session() as session:
        program.run("main")
    assert session.node("n9").data["reads"] == expected
    assert compute_reads(session.node("n9"), session) == expected


def test_callers_zero_walls_off_the_rendered_context(mode: str) -> None:
    script = Script(["outer", "walled"])
    rt = script.runtime()
    program = build(mode, rt, {
        "walled": fn([exec_("inside")], render_range={"callers": 0}, doc="Alone."),
        "main": fn([exec_("secret plan"), call("walled")]),
    })
    with Session():
        program.run("main")
    assert texts(script.requests[1].messages) == [("user", ["[call walled()]\nAlone.", "inside"])]


def test_earlier_top_level_calls_are_the_root_scope(mode: str) -> None:
    script = Script(["first answer", "second answer", "third answer"])
    rt = script.runtime()
    program = build(mode, rt, {
        "ask": fn([exec_("question")]),
        "narrow": fn([exec_("question")], render_range={"callers": 1}),
    })
    with Session() as session:
        program.run("ask", n=1)
        program.run("ask", n=2)
        program.run("narrow")
    assert session.node("n4").data["reads"] == ["n1", "n3"]
    assert session.node("n6").data["reads"] == ["n3", "n5"]
    assert texts(script.requests[1].messages) == [
        ("user", ["[call ask(n=1)]", "[ask returned: first answer]", "[call ask(n=2)]",
                  "question"])]


# --- compute_reads / render_dag_messages ------------------------------------------------


def test_compute_reads_predicts_the_next_exec_and_renders_its_history() -> None:
    script = Script(["a", "b", "c"])
    rt = script.runtime()
    predicted: list[Any] = []

    @agentic_function(expose="full")
    def helper() -> str:
        return str(rt.exec("help"))

    @agentic_function
    def main() -> None:
        rt.exec("start")
        helper()
        reads = compute_reads()
        predicted.append((list(reads), render_dag_messages(reads)))
        rt.exec("end")

    with Session() as session:
        main()
    reads, history = predicted[0]
    last = session.node("n5")
    assert reads == last.data["reads"] == ["n1", "n2", "n3", "n4"]
    # The request is the rendered history plus the exec's own content.
    sent = texts(script.requests[2].messages)
    assert sent[:-1] == texts(history)[:-1]
    assert sent[-1] == ("user", [*texts(history)[-1][1], "end"])


def test_compute_reads_on_a_finished_function_and_by_id() -> None:
    @agentic_function
    def leaf() -> int:
        return 1

    @agentic_function(render_range={"subcalls": 1})
    def main() -> None:
        leaf()
        leaf()

    with Session() as session:
        main()
    assert compute_reads("n1", session) == ["n1", "n3"]
    rendered = texts(render_dag_messages(["n3"], session))
    assert rendered == [("user", ["[call leaf()]", "[leaf returned: 1]"])]
    with pytest.raises(ValueError, match="tool"):
        compute_reads(_tool_node(session), session)


def _tool_node(session: Session) -> Any:
    node = session.begin("llm", "m", session.node("n1"), {})
    return session.record("tool", "t", node, {}, "ok", {"content": "x"}, 0.0)


def test_render_dag_messages_needs_a_session_outside_agentic_calls() -> None:
    with pytest.raises(ValueError, match="no session"):
        render_dag_messages(["n1"])
    assert current_session() is None


def test_reads_cost_does_not_scan_the_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a window, the entries looked at are bounded however many siblings exist."""
    session = Session()
    main = session.begin("function", "main", session.root, {"arguments": {}})
    for i in range(3000):
        leaf = session.begin("function", "leaf", main, {"arguments": {"i": i}}, expose="io")
        session.end(leaf, "ok", {"result": i}, 0.0)
    worker = session.begin("function", "worker", main,
                           {"arguments": {}, "render_range": {"callers": 2}})
    looked: list[int] = []
    real_add_call = dag_module._add_call

    def counting(node: Any, mode: str, acc: Any, limit: int) -> bool:
        looked.append(node.seq)
        return real_add_call(node, mode, acc, limit)

    monkeypatch.setattr(dag_module, "_add_call", counting)
    reads = compute_reads(worker, session)
    assert reads == ["n3000", "n3001", "n3002"]
    assert looked == [3001, 3000]
    assert ids(session, "worker") == ["n3002"]
