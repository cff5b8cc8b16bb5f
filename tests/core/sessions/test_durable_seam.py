"""The durable-execution seam: every model request and every tool call passes the recorder.

A recorder stand-in (:class:`Tape`) keeps each step's answer; a second
attempt handed the first one's tape replays it: the scripted model is not
asked again and the tool does not run again. The DBOS plugin's own tests
(tests/dbos) run the same seam on real worker processes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from llmport import FinalEvent, Session, agentic_function
from llmport.provider.config import Config
from llmport.sessions.durable import Retrace, StepKind, current_recorder, recording
from llmport.testing import Script, call_tools

T = TypeVar("T")


class Tape:
    """Each step's answer in order; a new attempt on the same tape replays the recorded ones."""

    def __init__(self, workflow_id: str, answers: list[Any], retrace: Retrace) -> None:
        self.workflow_id = workflow_id
        self.answers = answers
        self.position = 0
        self.steps: list[tuple[StepKind, str]] = []
        self.retrace = retrace

    def _recorded(self) -> tuple[bool, Any]:
        if self.position < len(self.answers):
            return True, self.answers[self.position]
        return False, None

    def _keep(self, kind: StepKind, name: str, value: Any, fresh: bool) -> Any:
        self.steps.append((kind, name))
        if fresh:
            self.answers.append(value)
        self.position += 1
        return value

    def step(self, kind: StepKind, name: str, work: Callable[[], T]) -> T:
        known, value = self._recorded()
        return self._keep(kind, name, value if known else work(), not known)  # type: ignore[no-any-return]

    async def astep(self, kind: StepKind, name: str, work: Callable[[], Awaitable[T]]) -> T:
        known, value = self._recorded()
        return self._keep(kind, name, value if known else await work(), not known)  # type: ignore[no-any-return]

    def adopt(self, kind: str, name: str, parent: Any) -> Any:
        return self.retrace.adopt(kind, name, parent)


def two_tool_turns() -> list[Any]:
    return [call_tools(("bump", {"n": 1})), call_tools(("bump", {"n": 2})), "counted to 2"]


def attempt(path: Path, answers: list[Any], body: Callable[[], T]) -> tuple[T, Tape]:
    """One attempt of the run ``wf-1``: its session reopened, its tape handed on."""
    with Session(path, id="wf-1") as session:
        tape = Tape("wf-1", answers, Retrace.of(session.nodes(), "wf-1"))
        with recording(tape):
            return body(), tape


def test_each_model_request_and_tool_call_is_a_step_and_a_replay_pays_for_none(
    tmp_path: Path,
) -> None:
    bumps: list[int] = []

    def bump(n: int) -> str:
        """Count one more."""
        bumps.append(n)
        return f"counted {n}"

    def body_on(script: Script) -> Callable[[], str]:
        rt = script.runtime(config=Config())

        @agentic_function
        def count() -> str:
            """Count twice."""
            return str(rt.exec("count to 2", tools=[bump]))

        return count

    first = Script(two_tool_turns())
    path = tmp_path / "runs.sqlite"
    answers: list[Any] = []
    result, tape = attempt(path, answers, body_on(first))
    assert result == "counted to 2"
    assert [k for k, _ in tape.steps] == ["model", "tool", "model", "tool", "model"]
    assert [n for k, n in tape.steps if k == "tool"] == ["bump", "bump"]
    assert bumps == [1, 2] and len(first.requests) == 3
    ids = [n.id for n in Session(path, id="wf-1", readonly=True).nodes()]
    assert current_recorder() is None  # the seam is set for the block only

    again = Script([])  # a replay asks the model nothing
    result, _ = attempt(path, answers, body_on(again))
    assert result == "counted to 2"
    assert bumps == [1, 2] and again.requests == []  # nothing paid or run twice
    with Session(path, id="wf-1", readonly=True) as session:
        nodes = session.nodes()
    assert [n.id for n in nodes] == ids  # the replay reused every node: same ids, no copies
    assert all(n.data["workflow_id"] == "wf-1" for n in nodes)


async def test_async_runs_and_streams_pass_the_same_seam(tmp_path: Path) -> None:
    script = Script([*two_tool_turns(), "streamed"])
    rt = script.runtime(config=Config())
    bumps: list[int] = []

    async def bump(n: int) -> str:
        """Count one more."""
        bumps.append(n)
        return f"counted {n}"

    tape = Tape("wf-2", [], Retrace())
    with recording(tape):
        assert await rt.async_exec("count to 2", tools=[bump]) == "counted to 2"
        events = [e async for e in rt.astream("and now?")]
    assert [k for k, _ in tape.steps] == ["model", "tool", "model", "tool", "model", "model"]
    assert bumps == [1, 2]
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.result.text == "streamed"
    # A durable stream is one step read to its end: the recorded answer replays whole.
    replay = Tape("wf-2", tape.answers, Retrace())
    with recording(replay):
        assert await rt.async_exec("count to 2", tools=[bump]) == "counted to 2"
        again = [e async for e in rt.astream("and now?")]
    assert isinstance(again[-1], FinalEvent) and again[-1].result.text == "streamed"
    assert bumps == [1, 2] and len(script.requests) == 4


def test_a_sync_stream_in_a_durable_run_is_one_step() -> None:
    script = Script(["one", "one"])
    rt = script.runtime(config=Config())
    tape = Tape("wf-3", [], Retrace())
    with recording(tape):
        events = list(rt.stream("hi"))
    assert tape.steps == [("model", "test")]
    assert isinstance(events[-1], FinalEvent) and events[-1].result.text == "one"
    with recording(Tape("wf-3", tape.answers, Retrace())):
        assert rt.exec("hi") == "one"  # the recorded answer, not the script's next one
    assert len(script.requests) == 1


def test_a_retrace_adopts_in_order_and_stops_at_the_first_different_write(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    with Session(path, id="wf-5") as first, recording(Tape("wf-5", [], Retrace())):
        fn = first.begin("function", "f", first.root, {})
        first.begin("llm", "m", fn, {})
    with Session(path, id="wf-5") as again:
        retrace = Retrace.of(again.nodes(), "wf-5")
        fn, _ = again.nodes()
        with Session() as other:  # a write elsewhere neither adopts nor ends the retrace
            assert retrace.adopt("function", "f", other.root) is None
        assert retrace.adopt("function", "f", again.root) is fn
        assert retrace.adopt("tool", "t", fn) is None  # the run went another way here
        assert retrace.adopt("llm", "m", fn) is None  # so nothing after is reused
