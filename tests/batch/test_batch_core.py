"""The core of llmport.engine.jobs.batch without any vendor: planning, checks, the job, the bar."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pytest
from llmport import (
    BatchError,
    BatchRequest,
    BatchStatus,
    BatchTimeout,
    ContentError,
    OptionError,
    RunResult,
    Runtime,
    StructuredOutputError,
    UnsupportedFeatureError,
    hookimpl,
)
from llmport.engine.jobs.batch import BatchBackend, BatchItem, BatchOutcome
from llmport.messages.types import Response, Usage
from llmport.plugins.host import PluginHost
from llmport.provider.contract import Provider, ProviderInfo


class ScriptedBackend(BatchBackend):
    """A batch API answering from a script: statuses in order, then the outcomes."""

    options = frozenset({"label"})

    def __init__(self, provider: Provider, states: list[BatchStatus]) -> None:
        super().__init__(provider)
        self.states = states
        self.submitted: list[BatchItem] = []
        self.cancelled = False

    def submit(self, items: list[BatchItem], model: str, options: Mapping[str, Any]) -> str:
        self.submitted = items
        return "job-1"

    def status(self, vendor_id: str) -> BatchStatus:
        return self.states.pop(0) if len(self.states) > 1 else self.states[0]

    def cancel(self, vendor_id: str) -> BatchStatus:
        self.cancelled = True
        return BatchStatus(vendor_id, "running", raw="cancelling")

    def outcomes(self, vendor_id: str, items: Mapping[str, BatchItem]) -> list[BatchOutcome]:
        out = []
        for custom_id in items:
            text = '{"n": 1}' if custom_id == "json" else "not json" if custom_id == "bad" else "hi"
            usage = Usage(input_tokens=10, output_tokens=5)
            out.append(BatchOutcome(custom_id, response=Response(text=text, usage=usage)))
        return out


class FakeProvider(Provider):
    name = "fake"
    backend: ScriptedBackend | None = None

    def batch_backend(self) -> Any:
        return self.backend


class NoBatchProvider(Provider):
    name = "nobatch"


def states(*spec: tuple[str, int, int]) -> list[BatchStatus]:
    return [BatchStatus("job-1", s, 3, ok, bad, raw=s) for s, ok, bad in spec]  # type: ignore[arg-type]


class Plugin:
    def __init__(self, script: list[BatchStatus]) -> None:
        self.script = script
        self.provider: FakeProvider | None = None

    def make(self, **kw: Any) -> FakeProvider:
        self.provider = FakeProvider(**kw)
        self.provider.backend = ScriptedBackend(self.provider, list(self.script))
        return self.provider

    @hookimpl
    def llmport_providers(self, register: Any) -> None:
        register(ProviderInfo(prefix="fake", factory=self.make))
        register(ProviderInfo(prefix="nobatch", factory=NoBatchProvider))


def runtime(script: list[BatchStatus] | None = None) -> tuple[Runtime, Plugin]:
    plugin = Plugin(script or states(("queued", 0, 0), ("running", 1, 0), ("completed", 2, 1)))
    host = PluginHost(extra=[plugin], load_entry_points=False)
    return Runtime(model="fake:m1", plugins=host), plugin


REQS = [
    {"custom_id": "a", "content": "Hello"},
    BatchRequest("json", "Give JSON", {"response_format": {"type": "object"}}),
    {"custom_id": "bad", "content": "x", "response_format": {"type": "object"}},
]


def test_requests_are_planned_like_exec_and_handed_to_the_backend() -> None:
    rt, plugin = runtime()
    job = rt.batch(REQS, system="Be brief.", temperature=0.2)
    assert job.id == "fake:job-1"
    assert plugin.provider is not None and plugin.provider.backend is not None
    items = plugin.provider.backend.submitted
    assert [i.custom_id for i in items] == ["a", "json", "bad"]
    first = items[0].request
    assert first.system == "Be brief." and first.options["temperature"] == 0.2
    assert first.messages[-1].blocks[0].text == "Hello"  # type: ignore[union-attr]
    assert items[1].request.response_format is not None


def test_wait_status_results_and_batch_prices() -> None:
    rt, _ = runtime()
    job = rt.batch(REQS)
    assert job.status().state == "queued"
    done = job.wait(poll=0.001)
    assert done.state == "completed" and (done.succeeded, done.failed) == (2, 1)
    results = job.results()
    assert isinstance(results["a"], RunResult) and results["a"].output == "hi"
    assert results["a"].model == "fake:m1" and results["a"].usage.requests == 1
    assert results["json"].value == {"n": 1}  # type: ignore[union-attr]
    assert isinstance(results["bad"], StructuredOutputError)
    assert job.results() is results  # fetched once
    assert rt.usage.requests == 3
    pending = results["a"].usage._unpriced  # type: ignore[union-attr]
    assert pending and pending[0][-1] is True  # priced as a batch request


def test_async_twins() -> None:
    rt, _ = runtime()

    async def go() -> Any:
        job = await rt.abatch(REQS)
        first = await job.astatus()
        done = await job.wait_async(poll=0.001)
        return first, done, await job.aresults(), await job.acancel()

    first, done, results, cancelled = asyncio.run(go())
    assert first.state == "queued" and done.done and set(results) == {"a", "json", "bad"}
    assert cancelled.raw == "cancelling"


def test_results_before_the_end_is_an_error_and_wait_times_out() -> None:
    rt, _ = runtime(states(("running", 1, 0)))
    job = rt.batch(REQS)
    with pytest.raises(BatchError, match="wait"):
        job.results()
    with pytest.raises(BatchTimeout) as caught:
        job.wait(poll=0.001, timeout=0.01)
    assert caught.value.status.state == "running"


def test_unprocessed_ids_get_a_batch_error() -> None:
    rt, plugin = runtime(states(("cancelled", 0, 0)))
    job = rt.batch(REQS)
    assert plugin.provider is not None and plugin.provider.backend is not None
    plugin.provider.backend.outcomes = lambda vendor_id, items: []  # type: ignore[method-assign]
    job.wait(poll=0.001)
    assert all(isinstance(r, BatchError) for r in job.results().values())


def test_progress_bar_renders_to_a_rich_console() -> None:
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=100, force_terminal=False, color_system=None)
    rt, _ = runtime()
    job = rt.batch(REQS)
    job.wait(poll=0.001, progress=True, console=console)
    out = buffer.getvalue()
    assert "fake:job-1" in out
    assert "3/3" in out and "completed, 1 failed" in out


def test_no_batch_api_fails_before_any_request() -> None:
    rt, _ = runtime()
    with pytest.raises(UnsupportedFeatureError, match="batch"):
        rt.batch(REQS, model="nobatch:m")
    with pytest.raises(UnsupportedFeatureError, match="batch"):
        Runtime(call=lambda content, model, response_format: "x").batch(REQS)


def test_bad_requests_fail_before_any_request() -> None:
    rt, plugin = runtime()
    with pytest.raises(OptionError, match="custom_id"):
        rt.batch([{"content": "no id"}])
    with pytest.raises(OptionError, match="twice"):
        rt.batch([{"custom_id": "a", "content": "x"}, {"custom_id": "a", "content": "y"}])
    with pytest.raises(OptionError, match="one model"):
        rt.batch(
            [
                {"custom_id": "a", "content": "x"},
                {"custom_id": "b", "content": "y", "model": "fake:m2"},
            ]
        )
    with pytest.raises(OptionError, match="stream"):
        rt.batch(REQS, stream=True)
    with pytest.raises(OptionError, match="unknown fake batch option"):
        rt.batch(REQS, batch_options={"lable": 1})
    with pytest.raises(ContentError):
        rt.batch([{"custom_id": "a"}])
    with pytest.raises(OptionError, match="at least one"):
        rt.batch([])
    assert plugin.provider is None or not plugin.provider.backend.submitted  # type: ignore[union-attr]


def test_resume_needs_a_provider_prefixed_id() -> None:
    rt, _ = runtime()
    with pytest.raises(OptionError, match="provider:vendor-id"):
        rt.batch_job("job-1")
    job = rt.batch_job("fake:job-1")
    assert job.id == "fake:job-1" and job.items == {}
    again = rt.batch_job("fake:job-1", requests=REQS, model="fake:m1")
    assert set(again.items) == {"a", "json", "bad"}


def test_batch_price_uses_genai_prices_batch_variant_or_half() -> None:
    pytest.importorskip("genai_prices")
    from llmport.observe.prices import price

    full = price("openai", "gpt-4o-mini", 1_000_000, 1_000_000)
    half = price("openai", "gpt-4o-mini", 1_000_000, 1_000_000, batch=True)
    assert full is not None and half is not None and half == full / 2
    # AWS has no batch variant in genai-prices: the documented 50% applies.
    full = price("bedrock", "amazon.nova-lite-v1:0", 1_000_000, 1_000_000)
    half = price("bedrock", "amazon.nova-lite-v1:0", 1_000_000, 1_000_000, batch=True)
    assert full is not None and half == full * Decimal("0.5")
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000).priced_as(
        "openai", "gpt-4o-mini", batch=True
    )
    assert usage.cost == price("openai", "gpt-4o-mini", 1_000_000, 1_000_000, batch=True)


@pytest.mark.parametrize(
    "bad",
    [
        {"poll": -1},
        {"poll": float("nan")},
        {"poll": float("inf")},
        {"poll": "1"},
        {"poll": True},
        {"timeout": float("nan")},
        {"timeout": -1},
        {"timeout": "5"},
    ],
    ids=[
        "poll-neg",
        "poll-nan",
        "poll-inf",
        "poll-str",
        "poll-bool",
        "timeout-nan",
        "timeout-neg",
        "timeout-str",
    ],
)
def test_bad_wait_arguments_are_option_errors_before_any_poll(bad: dict[str, Any]) -> None:
    rt, plugin = runtime(states(("running", 1, 0)))
    job = rt.batch(REQS)
    assert plugin.provider is not None and plugin.provider.backend is not None
    polls: list[str] = []
    plugin.provider.backend.status = lambda vendor_id: (
        polls.append(vendor_id)
        or BatchStatus(  # type: ignore[method-assign,func-returns-value]
            vendor_id, "running"
        )
    )
    with pytest.raises(OptionError):
        job.wait(**bad)
    with pytest.raises(OptionError):
        asyncio.run(job.wait_async(**bad))
    assert polls == []


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_wait_with_poll_zero_polls_at_a_sane_pace(is_async: bool) -> None:
    """``poll=0`` used to ask the vendor hundreds of times a second: now at most 1/MIN_POLL."""
    from llmport.engine.jobs.job import MIN_POLL

    rt, plugin = runtime(states(("running", 1, 0)))
    job = rt.batch(REQS)
    assert plugin.provider is not None and plugin.provider.backend is not None
    polls: list[str] = []
    plugin.provider.backend.status = lambda vendor_id: (
        polls.append(vendor_id)
        or BatchStatus(  # type: ignore[method-assign,func-returns-value]
            vendor_id, "running"
        )
    )
    with pytest.raises(BatchTimeout):
        if is_async:
            asyncio.run(job.wait_async(poll=0, timeout=0.35))
        else:
            job.wait(poll=0, timeout=0.35)
    assert 2 <= len(polls) <= 0.35 / MIN_POLL + 2
