"""Claude-family replies: Anthropic and Bedrock read stop reasons and usage the same way."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from llmport.messages.types import Usage
from llmport.provider.claude import CONVERSE, MESSAGES_API, ClaudeReply


def test_one_prompt_counts_the_same_on_both_vendors() -> None:
    counts = (10, 5, 100, 20)  # uncached input, output, cache reads, cache writes
    messages = ("input_tokens", "output_tokens", "cache_read_input_tokens")
    messages += ("cache_creation_input_tokens",)
    converse = ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheWriteInputTokens")
    anthropic = MESSAGES_API.usage(dict(zip(messages, counts, strict=True)))
    bedrock = CONVERSE.usage(dict(zip(converse, counts, strict=True)))
    assert anthropic == bedrock == Usage(130, 5, 100, 20, 0, 1)


def test_anthropic_usage_reads_sdk_objects_and_thinking_tokens() -> None:
    raw = SimpleNamespace(
        input_tokens=3,
        output_tokens=7,
        cache_read_input_tokens=None,
        cache_creation_input_tokens=2,
        output_tokens_details=SimpleNamespace(thinking_tokens=4),
    )
    assert MESSAGES_API.usage(raw) == Usage(5, 7, 0, 2, 4, 1)
    assert (
        MESSAGES_API.usage({"output_tokens_details": {"thinking_tokens": 6}}).reasoning_tokens == 6
    )


@pytest.mark.parametrize("reader", [MESSAGES_API, CONVERSE])
def test_no_usage_is_one_request_with_unknown_counts(reader: ClaudeReply) -> None:
    assert reader.usage(None) == Usage(requests=1)


@pytest.mark.parametrize(
    ("raw", "anthropic", "bedrock"),
    [
        (None, "end_turn", "end_turn"),
        ("end_turn", "end_turn", "end_turn"),
        ("model_context_window_exceeded", "max_tokens", "max_tokens"),
        ("refusal", "refusal", "other"),
        ("guardrail_intervened", "other", "content_filter"),
        ("pause_turn", "other", "other"),
    ],
)
def test_stop_reasons_shared_and_vendor_own(raw: str | None, anthropic: str, bedrock: str) -> None:
    assert (MESSAGES_API.stop_reason(raw), CONVERSE.stop_reason(raw)) == (anthropic, bedrock)
