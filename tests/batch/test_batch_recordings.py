"""A user's own recordings of batch jobs, on every vendor with a batch API.

Each batch flow (``batch_flows.py``: submit, status, wait, results; resume
by id and cancel) is recorded with :func:`llmport.testing.cassette` against a
loopback server playing the vendor's documented batch answers
(``batch_scenarios.py``), then replayed with the server stopped: the same
job, statuses and results, sync and async. OpenAI's JSONL upload is a
multipart body with a random boundary, matched part by part.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from batch_flows import Outcome, resume_flow, run_flow
from batch_scenarios import Scenario, loopback_settings, scenarios
from llmport import RunResult, Runtime
from llmport.plugins.host import PluginHost
from llmport.testing import cassette
from llmport.testing.loopback import LoopbackServer

SC = scenarios()


def runtime(scenario: Scenario, url: str) -> Runtime:
    plugin = importlib.import_module(f"llmport_{scenario.vendor}.plugin")
    prefix = scenario.model.split(":", 1)[0]
    return Runtime(
        model=scenario.model,
        plugins=PluginHost(extra=[plugin], load_entry_points=False),
        providers={prefix: loopback_settings(scenario, url)},
    )


def play(scenario: Scenario, url: str, mode: str) -> Outcome:
    rt = runtime(scenario, url)
    try:
        if scenario.flow == "run":
            return run_flow(rt, scenario.model, mode, scenario.batch_options)
        return resume_flow(rt, scenario.job_id, mode)
    finally:
        rt.close()


def seen(out: Outcome) -> tuple[Any, ...]:
    """What the flow saw, comparable between the recording and the replay."""

    def status(s: Any) -> Any:
        return None if s is None else (s.id, s.state, s.done, s.total, s.succeeded, s.failed)

    def result(r: Any) -> Any:
        if isinstance(r, RunResult):
            return ("result", r.output, r.stop_reason, r.usage.input_tokens, r.usage.output_tokens)
        return (type(r).__name__, str(r))

    return (
        out.job_id,
        [status(s) for s in out.statuses],
        status(out.cancelled),
        status(out.waited),
        {custom_id: result(r) for custom_id, r in sorted(out.results.items())},
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("name", sorted(SC))
def test_a_batch_flow_records_then_replays_offline(name: str, mode: str, tmp_path: Path) -> None:
    scenario = SC[name]
    path = tmp_path / "batch.yaml"
    with LoopbackServer(scenario.replies) as server, cassette(path):
        recorded = play(scenario, server.url, mode)
    assert len(server.requests) > 1 and recorded.results
    with cassette(path, record="none") as replay:
        replayed = play(scenario, server.url, mode)  # nothing listens there any more
    assert replay.play_count == len(server.requests)
    assert seen(replayed) == seen(recorded)
