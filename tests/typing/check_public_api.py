"""Checked by ``mypy --strict`` in CI (not collected by pytest): the public API's types.

``reveal_type`` lines are asserted with ``assert_type``, so a wrong overload
or a parameter the TypedDict does not declare fails the type check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, assert_type

from llmport import BackgroundJob, Embeddings, RunResult, Runtime, TokenCount
from llmport.plugin_api import JobState


@dataclass
class City:
    name: str


async def main(rt: Runtime) -> None:
    assert_type(rt.run("hi", response_format=City), RunResult[City])
    assert_type(rt.run("hi", response_format=City).value, City)
    assert_type(await rt.arun("hi", response_format=City), RunResult[City])
    assert_type(rt.run("hi"), RunResult[Any])
    assert_type(rt.run("hi", temperature=0.2, max_tokens=5, tool_choice="auto"), RunResult[Any])
    rt.exec("hi", model="openai:gpt-4o-mini", vendor={"openai": {"user": "u1"}})
    rt.exec("hi", temprature=0.2)  # type: ignore[call-arg]
    rt.exec("hi", max_iterations="many")  # type: ignore[arg-type]
    # count_tokens takes exec's parameters, typed the same way
    assert_type(rt.count_tokens("hi", reasoning="low", vendor={"openai": {}}), TokenCount)
    assert_type(await rt.acount_tokens("hi", tool_choice="required", cache="auto"), TokenCount)
    rt.count_tokens("hi", temprature=0.2)  # type: ignore[call-arg]


async def server_state_and_background(rt: Runtime) -> None:
    # server-side state: two more call parameters, typed like the rest
    assert_type(rt.run("hi", previous_response_id="resp_1").response_id, str | None)
    rt.exec("hi", conversation="conv_1")
    rt.exec("hi", previous_response_id=1)  # type: ignore[arg-type]
    # background runs take exec's parameters and stream=
    job = rt.submit("hi", model="openai-responses:gpt-4o", stream=True, max_tokens=5)
    assert_type(job, BackgroundJob)
    assert_type(await rt.asubmit("hi", reasoning="high"), BackgroundJob)
    assert_type(job.wait(poll=1.0).state, JobState)
    assert_type(job.result(), RunResult[Any])
    assert_type(rt.create_conversation(), str)
    rt.submit("hi", strem=True)  # type: ignore[call-arg]


async def embeddings(rt: Runtime) -> None:
    # rt.embed / rt.aembed: keyword-only options, Literal input types, the compact result
    vectors = rt.embed(["a", "b"], model="openai:text-embedding-3-small", dimensions=256)
    assert_type(vectors, Embeddings)
    assert_type(vectors[0], tuple[float, ...])
    assert_type(vectors.dimensions, int)
    assert_type(await rt.aembed("a", input_type="query", normalize=True), Embeddings)
    rt.embed("a", input_type="search")  # type: ignore[arg-type]
    rt.embed("a", truncate="middle")  # type: ignore[arg-type]
    rt.embed("a", dimension=256)  # type: ignore[call-arg]
