"""The batch flows every vendor's cassettes are made from and replayed by.

Two flows per vendor, each one cassette:

* ``run``: submit three requests (a plain one, one with a response format, one
  the vendor refuses), ``status()``, ``wait(poll=...)`` (two polls: running,
  then ended), ``results()``.
* ``resume``: a fresh Runtime resumes a job by its id (as a new process
  would), ``status()``, ``cancel()``, ``wait()`` (one poll: cancelled),
  ``results()`` (one answer done before the cancel, the rest never processed).

The same code runs sync and async (``mode``); the cassettes were recorded
from the sync run (``make_cassettes.py``) and both replay them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from llmport import Runtime

FAKE_KEY = "sk-fake-batch-key-0000"
POLL = 0.001

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
    "required": ["city", "country"],
    "additionalProperties": False,
}

REQUESTS: list[dict[str, Any]] = [
    {"custom_id": "capital", "content": "What is the capital of France?"},
    {"custom_id": "city", "content": "Name one large city in Japan.", "response_format": CITY},
    # The vendor refuses this one (max_tokens over the model's limit): a per-request error.
    {"custom_id": "too-long", "content": "Write a long story.", "max_tokens": 1_000_000},
]
COMMON: dict[str, Any] = {"system": "Answer in one short sentence.", "max_tokens": 64}
#: Per vendor, what the refused request adds: Anthropic's SDK refuses a non-streamed
#: max_tokens this large unless a timeout is given (batch requests are never streamed).
REFUSED_EXTRA: dict[str, dict[str, Any]] = {"anthropic": {"timeout": 600}}


def requests_for(model: str) -> list[dict[str, Any]]:
    extra = REFUSED_EXTRA.get(model.split(":", 1)[0], {})
    return [*REQUESTS[:2], {**REQUESTS[2], **extra}]


@dataclass
class Outcome:
    """What a flow saw, for the tests to check."""

    job_id: str = ""
    statuses: list[Any] = field(default_factory=list)
    waited: Any = None
    results: dict[str, Any] = field(default_factory=dict)
    cancelled: Any = None


def run_flow(
    rt: Runtime, model: str, mode: str, batch_options: dict[str, Any] | None = None
) -> Outcome:
    """Submit, status, wait, results."""
    out = Outcome()
    if mode == "async":

        async def go() -> None:
            job = await rt.abatch(
                requests_for(model), model=model, batch_options=batch_options, **COMMON
            )
            out.job_id = job.id
            out.statuses.append(await job.astatus())
            out.waited = await job.wait_async(poll=POLL, timeout=30)
            out.results = await job.aresults()
            await rt.aclose()

        asyncio.run(go())
        return out
    job = rt.batch(requests_for(model), model=model, batch_options=batch_options, **COMMON)
    out.job_id = job.id
    out.statuses.append(job.status())
    out.waited = job.wait(poll=POLL, timeout=30)
    out.results = job.results()
    return out


def resume_flow(rt: Runtime, job_id: str, mode: str) -> Outcome:
    """Resume by id (a fresh runtime, as after a restart), status, cancel, wait, results."""
    out = Outcome(job_id=job_id)
    if mode == "async":

        async def go() -> None:
            job = rt.batch_job(job_id)
            out.statuses.append(await job.astatus())
            out.cancelled = await job.acancel()
            out.waited = await job.wait_async(poll=POLL, timeout=30)
            out.results = await job.aresults()
            await rt.aclose()

        asyncio.run(go())
        return out
    job = rt.batch_job(job_id)
    out.statuses.append(job.status())
    out.cancelled = job.cancel()
    out.waited = job.wait(poll=POLL, timeout=30)
    out.results = job.results()
    return out
