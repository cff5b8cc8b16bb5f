"""Streamed Anthropic text blocks keep their boundaries (``TextDelta.key``).

The recorded web search answer (wire-samples/anthropic/citations-web-search.json)
has thinking, a server tool call and its result, then seven text blocks, some
with citations: streamed, the assistant message is the same, block for block,
as the whole answer's (consecutive text blocks used to be joined into one).
"""

from __future__ import annotations

from typing import Any

import pytest
from llmport import Runtime, TextBlock
from llmport.messages.types import FinalEvent
from support.anthropic_scenarios import SCENARIOS

pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")


def runtime(model: str) -> Runtime:
    return Runtime(
        model=model,
        providers={"anthropic": {"api_key": "test-key", "base_url": "https://api.anthropic.com"}},
    )


@pytest.mark.parametrize("api", ["sync", "async"])
async def test_streamed_web_search_answer_equals_the_whole_one_block_for_block(
    api: str, cassette: Any
) -> None:
    whole, streamed = SCENARIOS["citations_web_search"], SCENARIOS["stream_citations_web_search"]
    with cassette(whole.cassette):
        rt = runtime(whole.model)
        exec_result = rt.run(**whole.kwargs) if api == "sync" else await rt.arun(**whole.kwargs)
    with cassette(streamed.cassette):
        rt = runtime(streamed.model)
        if api == "sync":
            events = list(rt.stream(**streamed.kwargs))
        else:
            events = [e async for e in rt.astream(**streamed.kwargs)]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    exec_blocks = exec_result.messages[-1].blocks
    assert sum(isinstance(b, TextBlock) for b in exec_blocks) == 7
    assert final.result.messages[-1].blocks == exec_blocks
    assert final.result.text == exec_result.text
