"""Keeping a conversation inside the model's context window.

``context_policy=ContextPolicy(...)`` on the Runtime or per exec. Before each
model request the engine estimates the request's input tokens; when they
exceed ``max_tokens`` (default: 80% of the model's known context window) the
policy's strategy applies:

* ``"trim"`` drops the oldest turns. The system prompt, the current turn
  (the last user message and everything after it) and the ``keep_last``
  turns before it always stay, and a tool call never loses its result: an
  assistant message with tool calls and the tool message answering it go
  together.
* ``"summarize"`` replaces the dropped turns by a summary written by a model
  call (``summary_model``, else the run's model). The summary is kept (per
  runtime, and in the session DAG inside an ``@agentic_function``) and
  reused by later requests that drop the same turns: it is written once.
* ``"error"`` raises :class:`~llmport.errors.ContextWindowExceeded`.
* ``"vendor"`` leaves it to the vendor where the model edits its own context
  (Anthropic's context management: old tool results, and old thinking when
  thinking is on, are cleared server-side once the input passes the limit;
  the ``keep_last`` most recent tool uses and thinking turns stay). Nothing
  is trimmed locally and llmport's conversation stays whole. On a model
  without it, ``"vendor"`` trims as ``"trim"`` does.

When nothing more can be dropped, :class:`~llmport.errors.ContextWindowExceeded`
is raised: a request known to be too long is never sent.
"""

from __future__ import annotations

from typing import Literal

from ..errors import OptionError
from ..messages.types import (
    ContextEditing,
    MediaBlock,
    Message,
    ModelCapabilities,
    TextBlock,
    block_to_dict,
)
from ..slotted import dataclass

__all__ = [
    "SUMMARY_PROMPT",
    "ContextPolicy",
    "Turn",
    "conversation_key",
    "split_turns",
    "vendor_editing",
]

Strategy = Literal["trim", "summarize", "error", "vendor"]
STRATEGIES = ("trim", "summarize", "error", "vendor")

SUMMARY_PROMPT = (
    "Summarize the conversation above for a model that will continue it without seeing it. "
    "Keep every fact, decision, name, number and open question; leave out pleasantries. "
    "Answer with the summary only."
)


@dataclass(slots=True, frozen=True)
class ContextPolicy:
    """How to keep a conversation inside the window (see the module docs)."""

    max_tokens: int | None = None
    strategy: Strategy = "trim"
    keep_last: int = 2
    summary_model: str | None = None

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise OptionError(
                "ContextPolicy strategy must be 'trim', 'summarize', 'error' or 'vendor', "
                f"got {self.strategy!r}"
            )
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool)
            or not isinstance(self.max_tokens, int)
            or self.max_tokens < 1
        ):
            raise OptionError(
                f"ContextPolicy max_tokens must be an integer >= 1, got {self.max_tokens!r}"
            )
        if (
            isinstance(self.keep_last, bool)
            or not isinstance(self.keep_last, int)
            or self.keep_last < 0
        ):
            raise OptionError(
                f"ContextPolicy keep_last must be an integer >= 0, got {self.keep_last!r}"
            )

    def limit(self, context_window: int | None) -> int | None:
        """The token limit for a model with this window (``None``: nothing to enforce)."""
        if self.max_tokens is not None:
            return self.max_tokens
        return int(context_window * 0.8) if context_window else None


def vendor_editing(
    policy: ContextPolicy | None, caps: ModelCapabilities, limit: int | None
) -> ContextEditing | None:
    """The context editing a request asks for: ``"vendor"`` on a model that edits, else none.

    ``limit`` (the policy's token limit) is when the vendor starts clearing.
    """
    if policy is None or policy.strategy != "vendor" or not caps.context_editing:
        return None
    return ContextEditing(trigger_tokens=limit, keep=policy.keep_last)


def as_policy(value: object) -> ContextPolicy | None:
    if value is None or isinstance(value, ContextPolicy):
        return value
    if isinstance(value, str):
        return ContextPolicy(strategy=value)  # type: ignore[arg-type]
    if isinstance(value, dict):
        return ContextPolicy(**value)
    raise OptionError(f"context_policy must be a ContextPolicy(...), got {value!r}")


Turn = tuple[int, int]  # [start, end) indices into the message list


def split_turns(messages: list[Message]) -> list[Turn]:
    """Units that are dropped whole: a message, or a tool-calling turn with its results."""
    turns: list[Turn] = []
    i = 0
    n = len(messages)
    while i < n:
        j = i + 1
        if messages[i].tool_calls:
            while j < n and messages[j].tool_results:
                j += 1
        turns.append((i, j))
        i = j
    return turns


def current_turn_start(messages: list[Message]) -> int:
    """Index of the last user message that is not tool results (the current turn)."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role == "user" and not m.tool_results and m.blocks:
            return i
    return max(0, len(messages) - 1)


def conversation_key(messages: list[Message]) -> str:
    """A digest of a list of messages (summaries are reused for the same dropped turns)."""
    import hashlib  # only a summarizing context policy digests: keeps the runtime's import light
    import json

    h = hashlib.sha256()
    for m in messages:
        h.update(json.dumps(_light(m), sort_keys=True, default=str).encode())
    return h.hexdigest()


def _light(m: Message) -> dict[str, object]:
    import json  # here, as in conversation_key

    blocks: list[object] = []
    for b in m.blocks:
        if isinstance(b, MediaBlock):  # never hash (or encode) media bytes twice: name them
            blocks.append([b.type, b.media_type, b.size, b.url, b.filename])
        else:
            blocks.append(block_to_dict(b))
    return {
        "role": m.role,
        "blocks": blocks,
        "calls": [
            (c.id, c.name, c.raw_arguments or json.dumps(c.arguments, sort_keys=True))
            for c in m.tool_calls
        ],
        "results": [(r.call_id, r.content, r.is_error) for r in m.tool_results],
    }


def summary_message(summary: str) -> Message:
    return Message(
        "user", (TextBlock(f"<summary of the earlier conversation>\n{summary}\n</summary>"),)
    )
