"""Every vendor's batch API replayed from cassettes, sync and async.

``run``: submit (the exact JSONL / request bodies the plugin's ``prepare``
built), status, wait with a tiny poll interval, results with a success, a
structured result and a per-request vendor error. ``resume``: a fresh
runtime resumes a job by id, cancels it, waits, reads the partial results.
"""

from __future__ import annotations

import importlib
from decimal import Decimal
from typing import Any

import pytest
from batch_flows import resume_flow, run_flow
from batch_scenarios import Scenario, replay_settings, scenarios
from llmport import BadRequestError, BatchError, RunResult, Runtime
from llmport.plugins.host import PluginHost

SC = scenarios()
VENDORS = sorted({s.vendor for s in SC.values()})


def runtime(scenario: Scenario) -> Runtime:
    plugin = importlib.import_module(f"llmport_{scenario.vendor}.plugin")
    prefix = scenario.model.split(":", 1)[0]
    return Runtime(
        model=scenario.model,
        plugins=PluginHost(extra=[plugin], load_entry_points=False),
        providers={prefix: replay_settings(scenario)},
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("vendor", VENDORS)
def test_run(vendor: str, mode: str, batch_cassette: Any) -> None:
    sc = SC[f"{vendor}_run"]
    rt = runtime(sc)
    with batch_cassette(sc.cassette):
        out = run_flow(rt, sc.model, mode, sc.batch_options)
    rt.close()
    prefix = sc.model.split(":", 1)[0]
    assert out.job_id.startswith(f"{prefix}:")
    assert out.statuses[0].state in ("queued", "running") and not out.statuses[0].done
    assert out.waited.state == "completed" and out.waited.done
    assert (out.waited.total, out.waited.succeeded, out.waited.failed) == (3, 2, 1)
    results = out.results
    assert set(results) == {"capital", "city", "too-long"}
    capital = results["capital"]
    assert isinstance(capital, RunResult)
    assert capital.output == "The capital of France is Paris."
    assert capital.stop_reason == "end_turn" and capital.usage.requests == 1
    assert capital.usage.input_tokens > 0 and capital.usage.output_tokens > 0
    assert capital.messages[-1].role == "assistant"
    assert capital.model == sc.model
    city = results["city"]
    assert isinstance(city, RunResult)
    assert city.value == {"city": "Osaka", "country": "Japan"}
    error = results["too-long"]
    assert isinstance(error, BadRequestError) and error.status == 400
    assert error.provider == prefix
    assert rt.usage.requests == 2  # the two answers, added to the runtime's usage


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("vendor", VENDORS)
def test_resume_by_id_and_cancel(vendor: str, mode: str, batch_cassette: Any) -> None:
    sc = SC[f"{vendor}_resume"]
    rt = runtime(sc)  # a fresh runtime: nothing of the submitting process is known
    with batch_cassette(sc.cassette):
        out = resume_flow(rt, sc.job_id, mode)
    rt.close()
    assert out.statuses[0].state == "running" and out.statuses[0].id == sc.job_id
    assert out.cancelled.state in ("running", "cancelled")
    assert out.waited.state == "cancelled" and out.waited.done
    results = out.results
    done = results["capital"]
    assert isinstance(done, RunResult) and done.output.startswith("Paris")
    for custom_id, result in results.items():
        if custom_id != "capital":
            assert isinstance(result, BatchError), (custom_id, result)


@pytest.mark.parametrize("vendor", VENDORS)
def test_batch_prices_half_the_standard_price(vendor: str, batch_cassette: Any) -> None:
    pytest.importorskip("genai_prices")
    sc = SC[f"{vendor}_run"]
    rt = runtime(sc)
    with batch_cassette(sc.cassette):
        out = run_flow(rt, sc.model, "sync", sc.batch_options)
    rt.close()
    capital = out.results["capital"]
    assert isinstance(capital, RunResult)
    cost = capital.usage.cost
    assert cost is not None and cost > 0
    from llmport.observe.prices import price

    u = capital.usage
    model = capital.model.split(":", 1)[1]
    standard = price(prefix_of(sc), model, u.input_tokens, u.output_tokens)
    assert standard is not None
    assert cost == pytest.approx(standard * Decimal("0.5"), rel=Decimal("0.01"))


def prefix_of(sc: Scenario) -> str:
    return sc.model.split(":", 1)[0]
