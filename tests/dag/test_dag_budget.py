"""Token-bounded reads (newest first, flat cost) and summary nodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import llmport.sessions.dag as dag_module
import pytest
from dag_helpers import texts
from llmport import Session, agentic_function, compute_reads, render_dag_messages
from llmport.messages.types import Usage
from llmport.sessions.agentic import AgenticFrame
from llmport.sessions.dag import DEFAULT_READ_TOKENS, node_tokens
from llmport.testing import Script


def long_run(session: Session, steps: int, text: str = "") -> Any:
    """main calling step(i) ``steps`` times, each step one exec with one tool run."""
    main = session.begin("function", "main", session.root,
                         {"arguments": {"goal": "ship"}, "doc": "Run the agent."})
    for i in range(steps):
        step = session.begin("function", "step", main, {"arguments": {"i": i}}, expose="full")
        llm = session.begin("llm", "m", step, {"content": [{"type": "text", "text": f"do {i}"}]})
        session.record("tool", "lookup", llm, {"arguments": {"q": i}}, "ok",
                       {"content": f"found {i}{text}"}, 0.0)
        session.end(llm, "ok", {"reply": f"step {i} done"}, 0.0)
        session.end(step, "ok", {"result": f"done {i}"}, 0.0)
    return main


def test_reads_stop_at_the_token_budget_newest_first() -> None:
    session = Session()
    main = long_run(session, 200)
    worker = session.begin("function", "worker", main, {"arguments": {}})
    nodes = session.reads(worker, session.clock + 1, None, None, 300)
    total = sum(node_tokens(n, session.clock + 1) for n in nodes)
    assert total <= 300
    # The callers' calls are always read; the rest is the newest steps, contiguous.
    assert nodes[0].name == "main" and nodes[-1].name == "worker"
    steps = [n.data["arguments"]["i"] for n in nodes if n.name == "step"]
    assert steps == list(range(steps[0], 200)) and 0 < len(steps) < 200
    # One more step would not have fitted.
    unbounded = session.reads(worker, session.clock + 1, None, None, None)
    assert len(unbounded) == 2 + 200 * 3


def test_default_budget_bounds_what_an_exec_reads() -> None:
    script = Script(["ok"])
    rt = script.runtime()
    session = Session()
    main = long_run(session, 3000, text=" " + "x" * 40)

    @agentic_function
    def worker() -> str:
        return str(rt.exec("go"))

    frame = AgenticFrame(session, main, None, None)
    history = frame.context_messages()
    reads = history.reads  # type: ignore[attr-defined]
    assert reads.budget == DEFAULT_READ_TOKENS
    assert 0 < reads.tokens <= DEFAULT_READ_TOKENS
    assert len(reads) < 3000
    # max_tokens (a context policy's room) replaces the default; render_range's cap stays.
    small = frame.context_messages(max_tokens=500).reads  # type: ignore[attr-defined]
    assert small.budget == 500 and small.tokens <= 500 and len(small) < len(reads)
    capped = AgenticFrame(session, main, None, None, 200, fixed_tokens=True)
    assert capped.context_messages(max_tokens=10_000).reads.budget == 200  # type: ignore[attr-defined]


def test_recorded_reads_are_recomputed_with_their_budget(mode: str) -> None:
    script = Script(["a", "b", "c", "d"])
    rt = script.runtime()

    if mode == "sync":
        @agentic_function(render_range={"tokens": 12})
        def chat() -> None:
            for q in ("first question here", "second question here", "third one", "fourth"):
                rt.exec(q)
    else:
        @agentic_function(render_range={"tokens": 12})
        async def chat() -> None:
            for q in ("first question here", "second question here", "third one", "fourth"):
                await rt.async_exec(q)

    with Session() as session:
        if mode == "sync":
            chat()
        else:
            import asyncio

            asyncio.run(chat())
    llms = [n for n in session.nodes() if n.kind == "llm"]
    assert [n.data["read_tokens"] for n in llms] == [12] * 4
    # The last exec could not read all three earlier exchanges.
    assert len(llms[3].data["reads"]) < 4
    for llm in llms:
        assert list(compute_reads(llm, session)) == llm.data["reads"]


@pytest.mark.parametrize("bad", [-1, 1.5, "10", True])
def test_tokens_must_be_a_non_negative_integer_or_none(bad: Any) -> None:
    with pytest.raises(ValueError, match="tokens"):
        agentic_function(render_range={"tokens": bad})
    agentic_function(render_range={"tokens": None})


def test_context_cost_stays_flat_as_the_session_grows() -> None:
    """Not a benchmark (see benchmarks/bench_dag.py): the work per read is bounded."""
    costs = []
    real = dag_module._Acc.take
    for steps in (300, 3000, 30_000):
        session = Session()
        main = long_run(session, steps)
        worker = session.begin("function", "worker", main, {"arguments": {}})
        frame = AgenticFrame(session, worker, None, None)
        frame.context_messages()
        looked = 0

        def counting(self: Any, node: Any, *, always: bool = False, real: Any = real) -> bool:
            nonlocal looked
            looked += 1
            return bool(real(self, node, always=always))

        dag_module._Acc.take = counting  # type: ignore[method-assign]
        try:
            history = frame.context_messages()
            costs.append((looked, len(history.reads)))  # type: ignore[attr-defined]
        finally:
            dag_module._Acc.take = real  # type: ignore[method-assign]
    # About the same nodes looked at for 10x the session (longer numbers cost more tokens).
    assert costs[2][0] <= costs[1][0] * 1.2 and costs[2][1] <= costs[1][1] * 1.2


# --- summary nodes -----------------------------------------------------------------------


def test_a_summary_replaces_the_nodes_it_covers() -> None:
    session = Session()
    main = long_run(session, 10)
    covered = [n for n in session.nodes() if n.name == "step"][6]  # steps 0..6 are covered
    summary = session.add_summary(covered.seq + 2, "Steps 0-6 found the files.",
                                  Usage(input_tokens=100, output_tokens=20), frame=main,
                                  model="openai:gpt-4o-mini")
    assert summary.kind == "summary" and summary.parent is main
    assert summary.data == {"covers": covered.seq + 2, "text": "Steps 0-6 found the files.",
                            "model": "openai:gpt-4o-mini"}
    worker = session.begin("function", "worker", main, {"arguments": {}})
    reads = compute_reads(worker, session)
    steps = [session.node(i).data["arguments"]["i"] for i in reads
             if session.node(i).name == "step"]
    assert steps == [7, 8, 9]
    assert summary.id in reads and "n1" in reads  # main's call is still read
    rendered = texts(render_dag_messages(reads, session))
    assert rendered[0][1][:2] == ["[call main(goal='ship')]\nRun the agent.",
                                  "[summary of the earlier context]\nSteps 0-6 found the files."]
    assert rendered[0][1][2] == "[call step(i=7)]"
    assert session.usage().input_tokens == 100


def test_the_newest_summary_wins_and_execs_reuse_it() -> None:
    script = Script(["a1", "a2", "a3", "a4"])
    rt = script.runtime()

    @agentic_function
    def chat() -> None:
        rt.exec("one")
        rt.exec("two")
        session = current()
        assert session is not None
        first = [n for n in session.nodes() if n.kind == "llm"]
        session.add_summary(first[0], "S1")  # the running call's frame by default
        session.add_summary(first[1], "S2")
        rt.exec("three")
        rt.exec("four")

    from llmport.sessions.agentic import current_session as current

    with Session():
        chat()
    assert texts(script.requests[2].messages) == [
        ("user", ["[call chat()]", "[summary of the earlier context]\nS2", "three"])]
    assert texts(script.requests[3].messages)[-1] == ("user", ["four"])
    assert "S2" in texts(script.requests[3].messages)[0][1][1]


def test_summaries_are_stored_and_reloaded(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    session = Session(path)
    main = long_run(session, 5)
    session.add_summary(7, "early part", Usage(input_tokens=5, output_tokens=1), frame=main)
    session.end(main, "ok", {"result": None}, 0.0)
    session.close()
    again = Session(path, id=session.id)
    (summary,) = [n for n in again.nodes() if n.kind == "summary"]
    assert summary.data["covers"] == 7 and summary.parent is not None
    assert summary.parent.summaries == [summary]
    assert again.usage().input_tokens == 5
    again.close()


def test_a_summary_belongs_to_a_function_or_the_session() -> None:
    session = Session()
    main = long_run(session, 1)
    llm = next(n for n in session.nodes() if n.kind == "llm")
    with pytest.raises(ValueError, match="function"):
        session.add_summary(1, "x", frame=llm)
    top = session.add_summary("n2", "top-level summary")
    assert top.parent is session.root and main.summaries is None
