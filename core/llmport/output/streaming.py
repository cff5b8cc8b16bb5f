"""Streamed structured output: its raw JSON as it arrives, and the value parsed so far.

``stream(response_format=...)`` hands the caller :class:`OutputDelta` (the
output's JSON text: the answer's text in the native and prompted modes, the
output tool's argument fragments with ``output_mode="tool"``) and
:class:`PartialOutput` (the value parsed so far, when it changed), SPEC §23.

The partial value comes from jiter's partial mode, a maintained parser
already installed wherever pydantic is; it is imported only by a stream that
has a response format. Each partial value is a prefix of the final one: an
unfinished string is kept cut short, but a number at the very end of the
text may still grow (``21`` of ``2161000``), so it waits until it is followed
by something.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..messages.types import OutputDelta, PartialOutput, StreamEvent, ToolCallDelta
from .structured import OutputTool

__all__ = ["OutputStream"]

#: What JSON text of a structured output starts with (anything else is prose, not output).
_JSON_START = frozenset('{["-0123456789')
#: Characters a JSON number ends in: at the very end of the text, the number may go on.
_NUMBER_CHARS = frozenset("0123456789.eE+-")
#: "Nothing parsed yet": differs from every JSON value, ``None`` included.
_NOTHING: Any = object()


class OutputStream:
    """The structured output of one streamed answer, read as it arrives.

    ``tool`` is the output tool of ``output_mode="tool"`` (its argument
    fragments are the output), ``None`` in the other modes (the answer text
    is). :meth:`reset` starts a new answer (a retry, a repair round).
    """

    __slots__ = ("buffer", "key", "last", "parse", "prose", "tool")

    def __init__(self, tool: OutputTool | None) -> None:
        import jiter  # lazily: only streams with a response format pay for it

        self.parse: Callable[..., Any] = jiter.from_json
        self.tool = tool
        self.reset()

    def reset(self) -> None:
        """Forget the answer read so far."""
        self.buffer = ""
        #: The output tool call's key among the answer's tool calls (tool mode).
        self.key: str | int | None = None
        self.last: Any = _NOTHING
        #: The answer text turned out to be prose, not JSON: it carries no output.
        self.prose = False

    def text(self, text: str) -> list[StreamEvent]:
        """The events for a piece of answer text (none in tool mode, or for prose)."""
        if self.tool is not None or self.prose:
            return []
        self.buffer += text
        head = _unfenced(self.buffer.lstrip())
        if not head:
            return []
        if head[0] not in _JSON_START:
            self.prose = True
            return []
        return self._events(text, head)

    def call(self, delta: ToolCallDelta) -> list[StreamEvent]:
        """The events for a tool-call fragment (only the output tool's carry output)."""
        if self.tool is None:
            return []
        if self.key is None and delta.name == self.tool.name:
            self.key = delta.key
        if delta.key != self.key or not delta.arguments:
            return []
        self.buffer += delta.arguments
        return self._events(delta.arguments, self.buffer)

    def _events(self, text: str, json_text: str) -> list[StreamEvent]:
        events: list[StreamEvent] = [OutputDelta(text)]
        value = self._partial(json_text)
        if value is not _NOTHING and value != self.last:
            self.last = value
            events.append(PartialOutput(value))
        return events

    def _partial(self, json_text: str) -> Any:
        """The value ``json_text`` holds so far (``_NOTHING``: none yet)."""
        settled = _settled(json_text)
        if not settled:
            return _NOTHING
        try:
            value = self.parse(settled.encode(), partial_mode="trailing-strings")
        except ValueError:  # not JSON (yet): nothing to show
            return _NOTHING
        if self.tool is not None and self.tool.wrapped:  # the tool's input is {"value": ...}
            return value.get("value", _NOTHING) if isinstance(value, dict) else _NOTHING
        return value


def _unfenced(text: str) -> str:
    """``text`` past a leading Markdown code fence line (``""``: that line is not complete)."""
    if not text.startswith("```"):
        return text
    return text.split("\n", 1)[1].lstrip() if "\n" in text else ""


def _settled(json_text: str) -> str:
    """``json_text`` without a number it ends in (the number may still go on)."""
    end = len(json_text)
    while end and json_text[end - 1] in _NUMBER_CHARS:
        end -= 1
    return json_text[:end]
