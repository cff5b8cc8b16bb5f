"""Streamed structured output: its raw JSON as it arrives, and the value parsed so far.

``stream(response_format=...)`` hands the caller :class:`OutputDelta` (the
output's JSON text: the answer's text in the native and prompted modes, the
output tool's argument fragments with ``output_mode="tool"``) and
:class:`PartialOutput` (the value parsed so far, when it changed).

The partial value comes from jiter's partial mode, a maintained parser
already installed wherever pydantic is; it is imported only by a stream that
has a response format. Each partial value is a prefix of the final one: an
unfinished string is kept cut short, but a number at the very end of the
text may still grow (``21`` of ``2161000``), so it waits until it is followed
by something.

Parsing the whole text again for every delta would cost time quadratic in
the output's length, so once the text is long it is parsed again only after
it grew by a sixteenth (:data:`_REPARSE`): linear overall, and every delta
of a short output still gets its value. :meth:`OutputStream.flush` parses
what is left when the answer ends, so the last value is the whole output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..messages.types import OutputDelta, PartialOutput, StreamEvent, ToolCallDelta
from ..provider.assembly import parse_arguments
from .structured import OutputTool

__all__ = ["ForcedToolText", "OutputStream"]

#: What JSON text of a structured output starts with (anything else is prose, not output).
_JSON_START = frozenset('{["-0123456789')
#: Characters a JSON number ends in: at the very end of the text, the number may go on.
_NUMBER_CHARS = frozenset("0123456789.eE+-")
#: "Nothing parsed yet": differs from every JSON value, ``None`` included.
_NOTHING: Any = object()
#: The text is parsed again once what arrived since the last parse is 1/_REPARSE of it.
_REPARSE = 16


class OutputStream:
    """The structured output of one streamed answer, read as it arrives.

    ``tool`` is the output tool of ``output_mode="tool"`` (its argument
    fragments are the output), ``None`` in the other modes (the answer text
    is). :meth:`reset` starts a new answer (a retry, a repair round).
    """

    __slots__ = ("key", "last", "parse", "parts", "size", "start", "tool", "unparsed")

    def __init__(self, tool: OutputTool | None) -> None:
        import jiter  # lazily: only streams with a response format pay for it

        self.parse: Callable[..., Any] = jiter.from_json
        self.tool = tool
        self.reset()

    def reset(self) -> None:
        """Forget the answer read so far."""
        #: The text read, its length, and how much of it arrived since the last parse.
        self.parts: list[str] = []
        self.size = 0
        self.unparsed = 0
        #: Where the JSON begins in the text (None: not known yet; -1: the text is prose).
        self.start: int | None = 0 if self.tool is not None else None
        #: The output tool call's key among the answer's tool calls (tool mode).
        self.key: str | int | None = None
        self.last: Any = _NOTHING

    def text(self, text: str) -> list[StreamEvent]:
        """The events for a piece of answer text (none in tool mode, or for prose)."""
        if self.tool is not None or self.start == -1:
            return []
        self.parts.append(text)
        if self.start is None:
            self.start = _json_start("".join(self.parts))  # short: until the output begins
            if self.start is None or self.start == -1:
                return []
        return self._events(text)

    def call(self, delta: ToolCallDelta) -> list[StreamEvent]:
        """The events for a tool-call fragment (only the output tool's carry output)."""
        if self.tool is None:
            return []
        if self.key is None and delta.name == self.tool.name:
            self.key = delta.key
        if delta.key != self.key or not delta.arguments:
            return []
        self.parts.append(delta.arguments)
        return self._events(delta.arguments)

    def flush(self) -> list[StreamEvent]:
        """The value of the whole output when the answer ends, if not yet sent."""
        return self._changed() if self.unparsed else []

    def _events(self, text: str) -> list[StreamEvent]:
        events: list[StreamEvent] = [OutputDelta(text)]
        self.size += len(text)
        self.unparsed += len(text)
        if self.unparsed * _REPARSE >= self.size:
            events += self._changed()
        return events

    def _changed(self) -> list[StreamEvent]:
        """The :class:`PartialOutput` of the text so far, if its value changed."""
        self.unparsed = 0
        value = self._partial("".join(self.parts)[self.start :])
        if value is _NOTHING or value == self.last:
            return []
        self.last = value
        return [PartialOutput(value)]

    def _partial(self, json_text: str) -> Any:
        """The value ``json_text`` holds so far (``_NOTHING``: none yet)."""
        settled = _settled(json_text)
        if not settled.strip():
            return _NOTHING
        try:
            # allow_inf_nan=False: a preview never shows what the final parse refuses.
            value = self.parse(
                settled.encode(), partial_mode="trailing-strings", allow_inf_nan=False
            )
        except ValueError:  # not JSON (yet): nothing to show
            return _NOTHING
        if self.tool is not None and self.tool.wrapped:  # the tool's input is {"value": ...}
            return value.get("value", _NOTHING) if isinstance(value, dict) else _NOTHING
        return value


class ForcedToolText:
    """A plugin's own forced output tool, streamed: its arguments are the answer's text.

    For an object schema the arguments are the output itself, so each
    fragment is answer text as it arrives (then a stream reads the output as
    in the native mode); a wrapped schema's (``{"value": ...}``) are not, so
    its text is sent whole when the tool's block ends.
    """

    __slots__ = ("parts", "sent", "tool")

    def __init__(self, tool: OutputTool) -> None:
        self.tool = tool
        self.parts: list[str] = []
        self.sent = False

    def fragment(self, part: str) -> str:
        """The answer text for a fragment of the tool's arguments (``""``: none yet)."""
        self.parts.append(part)
        if self.tool.wrapped or not part:
            return ""
        self.sent = True
        return part

    def end(self) -> str:
        """The answer text still to send when the tool's block ends (``""``: none)."""
        if self.sent:
            return ""
        return self.tool.reply_text(parse_arguments("".join(self.parts)))


def _json_start(text: str) -> int | None:
    """Where the JSON of an answer's ``text`` begins: past blanks and a code fence line.

    ``None``: not known yet (blanks, or a fence line not complete); ``-1``:
    the text is prose, not a JSON value.
    """
    head = text.lstrip()
    if "```".startswith(head):
        return None  # blanks, or the start of a fence
    if head.startswith("```"):
        if "\n" not in head:
            return None
        head = head.split("\n", 1)[1].lstrip()
        if not head:
            return None
    return len(text) - len(head) if head[0] in _JSON_START else -1


def _settled(json_text: str) -> str:
    """``json_text`` without a number it ends in (the number may still go on)."""
    end = len(json_text)
    while end and json_text[end - 1] in _NUMBER_CHARS:
        end -= 1
    return json_text[:end]
