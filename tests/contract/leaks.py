"""Looking for a secret everywhere it could surface, channel by channel.

:class:`LeakCheck` collects every place a secret was found (with the channel
name and a masked excerpt) and fails once at the end, so one run reports
every leaking channel, not just the first.
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from llmport import hookimpl
from llmport.errors import ExecFailed, LlmportError

__all__ = ["LeakCheck", "Observer", "chain"]


def chain(err: BaseException) -> Iterator[BaseException]:
    """``err`` and every exception reachable through ``__cause__``, ``__context__`` and groups."""
    seen: set[int] = set()
    todo = [err]
    while todo:
        exc = todo.pop(0)
        if id(exc) in seen:
            continue
        seen.add(id(exc))
        yield exc
        for nxt in (exc.__cause__, exc.__context__):
            if nxt is not None:
                todo.append(nxt)
        todo.extend(getattr(exc, "exceptions", ()) or ())


def _vars(obj: Any) -> str:
    try:
        return repr(vars(obj))
    except TypeError:
        slots = [s for cls in type(obj).__mro__ for s in getattr(cls, "__slots__", ())]
        return repr({s: getattr(obj, s, None) for s in slots})


class Observer:
    """A tracing plugin: records every ``llmport_observe`` call."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any], Any]] = []

    @hookimpl
    def llmport_observe(self, event: str, payload: dict[str, Any], info: Any) -> None:
        self.seen.append((event, payload, info))


class LeakCheck:
    """Looks for ``secrets`` (and their last 16 characters) in text, errors, logs, events."""

    def __init__(self, secrets: Iterable[str]) -> None:
        values = {s for s in secrets if s}
        needles = values | {s[-16:] for s in values if len(s) > 16}
        self.needles = sorted(needles, key=len, reverse=True)
        self.found: list[str] = []

    def mask(self, text: str) -> str:
        """``text`` with every secret replaced by ``<SECRET>`` (for failure messages)."""
        for needle in self.needles:
            text = text.replace(needle, "<SECRET>")
        return text

    def text(self, channel: str, text: str) -> None:
        for needle in self.needles:
            at = text.find(needle)
            if at >= 0:
                excerpt = self.mask(text[max(0, at - 80) : at + len(needle) + 40])
                self.found.append(f"{channel}: ...{excerpt!r}...")
                return

    def bytes(self, channel: str, data: bytes) -> None:
        for needle in self.needles:
            if needle.encode() in data:
                self.found.append(f"{channel}: the raw bytes hold a secret")
                return

    def error(
        self, where: str, err: BaseException, *, numbers: tuple[str, str, str] = ("1", "2", "3")
    ) -> None:
        """Channels 1-3 for ``err``: str, repr, the formatted traceback and the whole chain."""
        one, two, three = numbers
        self.text(f"{where} / channel {one} str(err)", str(err))
        self.text(f"{where} / channel {two} repr(err)", repr(err))
        self.text(
            f"{where} / channel {three} traceback.format_exception",
            "".join(traceback.format_exception(err)),
        )
        for i, exc in enumerate(chain(err)):
            name = f"{type(exc).__module__}.{type(exc).__name__}"
            label = f"{where} / channel {three} chain[{i}] {name}"
            if not isinstance(exc, LlmportError):
                self.found.append(f"{label}: a non-llmport exception is in the chain")
            self.text(f"{label} str", str(exc))
            self.text(f"{label} repr", repr(exc))
            self.text(f"{label} args", repr(exc.args))
            self.text(f"{label} vars", _vars(exc))
            self.text(f"{label} notes", repr(getattr(exc, "__notes__", None)))

    def exec_failed(self, where: str, err: BaseException) -> None:
        """Channel 5: an ExecFailed and each of its attempts' errors."""
        if not isinstance(err, ExecFailed):
            return
        self.text(f"{where} / channel 5 ExecFailed str", str(err))
        self.text(f"{where} / channel 5 ExecFailed.attempts repr", repr(err.attempts))
        for attempt in err.attempts:
            self.error(
                f"{where} / channel 5 attempts[{attempt.number}].error",
                attempt.error,
                numbers=("5", "5", "5"),
            )

    def logs(self, where: str, caplog: pytest.LogCaptureFixture) -> None:
        """Channel 4: every captured record (message, arguments, traceback) and the log text."""
        self.text(f"{where} / channel 4 caplog.text", caplog.text)
        for record in caplog.records:
            label = f"{where} / channel 4 log record {record.name}:{record.levelname}"
            try:
                message = record.getMessage()
            except Exception:  # a record whose args do not fit: look at both
                message = f"{record.msg!r} % {record.args!r}"
            self.text(f"{label} getMessage()", message)
            if record.exc_info:
                self.text(f"{label} exc_info", logging.Formatter().formatException(record.exc_info))
            if record.exc_text:
                self.text(f"{label} exc_text", record.exc_text)
            if record.stack_info:
                self.text(f"{label} stack_info", record.stack_info)

    def observed(self, where: str, observer: Observer) -> None:
        """Channel 8: every observer payload and info."""
        for event, payload, info in observer.seen:
            label = f"{where} / channel 8 observer {event}"
            self.text(f"{label} payload repr", repr(payload))
            self.text(f"{label} info repr", repr(info))
            for key, value in payload.items():
                self.text(f"{label} payload[{key!r}] str", str(value))
                if isinstance(value, BaseException):
                    self.error(f"{label} payload[{key!r}]", value, numbers=("8", "8", "8"))

    def events(self, where: str, events: Iterable[Any]) -> None:
        """Channel 7: the repr of every stream event."""
        for i, event in enumerate(events):
            self.text(f"{where} / channel 7 event[{i}] {type(event).__name__} repr", repr(event))

    def result(self, where: str, result: Any) -> None:
        """Channel 6: a RunResult, its messages and its failures."""
        self.text(f"{where} / channel 6 repr(RunResult)", repr(result))
        self.text(f"{where} / channel 6 str(output)", str(result.output))
        for i, message in enumerate(result.messages):
            self.text(f"{where} / channel 6 messages[{i}] repr", repr(message))
            to_dict = getattr(message, "to_dict", None)
            if to_dict is not None:
                self.text(f"{where} / channel 6 messages[{i}].to_dict()", repr(to_dict()))
        for failure in result.failures:
            self.error(
                f"{where} / channel 6 failures[{failure.number}].error",
                failure.error,
                numbers=("6", "6", "6"),
            )

    def assert_clean(self) -> None:
        if not self.found:
            return
        channels = sorted(
            {int(n) for entry in self.found for n in re.findall(r"channel (\d+)", entry)}
        )
        shown = self.found[:30]
        more = len(self.found) - len(shown)
        raise AssertionError(
            f"secret leaked through channel(s) {', '.join(map(str, channels))} "
            f"({len(self.found)} places):\n  "
            + "\n  ".join(shown)
            + (f"\n  ... and {more} more" if more else "")
        )
