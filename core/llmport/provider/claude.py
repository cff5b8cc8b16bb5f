"""What Claude-family vendors share when reading a reply (Anthropic, and Claude on Bedrock).

Anthropic's Messages API and Bedrock's Converse end a turn with the same
stop reasons and count a prompt in the same three parts (uncached input,
cache reads, cache writes), under names of their own. :class:`ClaudeReply`
reads both from one description of those names, so the two plugins map a
stop reason and count tokens the same way: a conversation moved from
``anthropic:`` to ``bedrock:`` reports the same :class:`~llmport.messages.types.Usage`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ..messages.types import StopReason, Usage
from ..slotted import dataclass

__all__ = ["CLAUDE_STOP_REASONS", "CONVERSE", "MESSAGES_API", "ClaudeReply"]

#: Stop reasons both vendors send, as neutral ones.
CLAUDE_STOP_REASONS: Mapping[str, StopReason] = MappingProxyType(
    {
        "end_turn": "end_turn",
        "tool_use": "tool_use",
        "max_tokens": "max_tokens",
        "model_context_window_exceeded": "max_tokens",
        "stop_sequence": "stop_sequence",
    }
)


@dataclass(frozen=True, slots=True)
class ClaudeReply:
    """One vendor's names for a reply's stop reasons and token counts.

    ``stop_reasons`` maps the vendor's stop reasons to neutral ones (any
    other is ``"other"``); the ``*_tokens`` fields name the usage object's
    counts; ``output_details`` names the object holding ``thinking_tokens``,
    where the vendor sends one.
    """

    stop_reasons: Mapping[str, StopReason]
    input_tokens: str
    output_tokens: str
    cache_read_tokens: str
    cache_write_tokens: str
    output_details: str | None = None

    def stop_reason(self, raw: str | None) -> StopReason:
        """The neutral stop reason (none sent: ``end_turn``; an unknown one: ``other``)."""
        if raw is None:
            return "end_turn"
        return self.stop_reasons.get(raw, "other")

    def usage(self, raw: Any) -> Usage:
        """The usage object (JSON, or an SDK object) as neutral :class:`Usage`.

        ``input_tokens`` is the whole prompt (the vendor's uncached input
        plus cache reads and writes), as with the other vendors; the cache
        counts are kept apart in ``cache_read_tokens`` / ``cache_write_tokens``.
        """
        if raw is None:
            return Usage(requests=1)
        get = raw.get if isinstance(raw, dict) else functools.partial(getattr, raw)
        cache_read = int(get(self.cache_read_tokens, None) or 0)
        cache_write = int(get(self.cache_write_tokens, None) or 0)
        details = get(self.output_details, None) if self.output_details else None
        if isinstance(details, dict):
            thinking = details.get("thinking_tokens") or 0
        else:
            thinking = getattr(details, "thinking_tokens", None) or 0
        return Usage(
            input_tokens=int(get(self.input_tokens, None) or 0) + cache_read + cache_write,
            output_tokens=int(get(self.output_tokens, None) or 0),
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
            reasoning_tokens=int(thinking),
            requests=1,
        )


#: Anthropic's Messages API (``stop_reason``, ``usage``).
MESSAGES_API = ClaudeReply(
    stop_reasons=MappingProxyType({**CLAUDE_STOP_REASONS, "refusal": "refusal"}),
    input_tokens="input_tokens",
    output_tokens="output_tokens",
    cache_read_tokens="cache_read_input_tokens",
    cache_write_tokens="cache_creation_input_tokens",
    output_details="output_tokens_details",
)
#: Bedrock's Converse (``stopReason``, ``usage``), for Claude and every other model on it.
CONVERSE = ClaudeReply(
    stop_reasons=MappingProxyType(
        {
            **CLAUDE_STOP_REASONS,
            "guardrail_intervened": "content_filter",
            "content_filtered": "content_filter",
        }
    ),
    input_tokens="inputTokens",
    output_tokens="outputTokens",
    cache_read_tokens="cacheReadInputTokens",
    cache_write_tokens="cacheWriteInputTokens",
)
