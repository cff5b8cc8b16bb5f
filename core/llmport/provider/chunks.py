"""Stream chunks read into neutral events: a chunk of the wrong shape is a typed error.

Each plugin has one stream reader per wire format (Chat Completions'
``ChatStream``, Messages' ``StreamState``...) whose methods read one vendor
chunk (a JSON object, or an SDK event) into
:class:`~llmport.messages.types.ProviderEvent` objects. They read fields as
the API documents them: a hostile or broken peer that sends ``"choices":
"nope"``, a ``delta`` that is a list or ``tool_calls`` that is a number makes
such code raise ``AttributeError`` / ``TypeError`` / ``KeyError`` /
``IndexError`` / ``ValueError`` (which the vendor boundary lets pass as a
bug), or pass the wrong type on in an event (a ``TextDelta`` whose text is a
list, which the core's assembly cannot join).

Every reader derives from :class:`ChunkReader`, which puts each of those
methods a class defines (``feed``, ``end``, the step that parses the next
event off the wire: the names in its ``reads``) through :func:`reads_chunks`
as the class is made, so an override cannot forget it. What they raise of
:data:`SHAPE_ERRORS` is the chunk's fault, and so is an event whose fields
are not of their declared types (:func:`check_event`); either is a
:class:`~llmport.errors.MalformedResponseError` naming the reader's vendor,
raised with no foreign exception chained. Reading stays in the plugin; this
is only where its shape errors are decided, once for every vendor.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, ClassVar, TypeVar, cast

from ..errors import MalformedResponseError
from ..messages.types import StopEvent, TextDelta, ThinkingDelta, ToolCallDelta, UsageEvent
from .translate import check_usage

__all__ = ["SHAPE_ERRORS", "ChunkReader", "check_event", "reads_chunks", "shape_error"]

#: What reading a JSON value of another type than documented raises.
SHAPE_ERRORS = (AttributeError, TypeError, KeyError, IndexError, ValueError)

F = TypeVar("F", bound=Callable[..., Any])

#: Set on what :func:`reads_chunks` returns, so a method is never guarded twice.
_GUARDED = "__llmport_reads_chunks__"

_NONE = type(None)
#: The fields of each neutral event a reader fills from the vendor's chunk, and their types.
_FIELDS: dict[type, tuple[tuple[str, tuple[type, ...]], ...]] = {
    TextDelta: (("text", (str,)), ("key", (str, int))),
    ToolCallDelta: (
        ("key", (str, int)),
        ("arguments", (str,)),
        ("id", (str, _NONE)),
        ("name", (str, _NONE)),
        ("extra", (dict,)),
    ),
    ThinkingDelta: (
        ("text", (str,)),
        ("key", (str, int)),
        ("signature", (str, _NONE)),
        ("redacted", (str, _NONE)),
        ("extra", (dict,)),
    ),
    StopEvent: (
        ("raw_stop_reason", (str, _NONE)),
        ("model", (str,)),
        ("id", (str, _NONE)),
        ("extra", (dict,)),
    ),
}


def shape_error(
    vendor: str, exc: BaseException | str, what: str = "a stream chunk"
) -> MalformedResponseError:
    """The error for ``what`` whose JSON is not shaped as the API's (``exc`` says where)."""
    where = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
    return MalformedResponseError(
        f"{vendor}: {what} did not match the API schema ({where})", provider=vendor
    )


def check_event(event: Any, vendor: str) -> None:
    """Raise :class:`MalformedResponseError` unless ``event``'s fields have their types."""
    if type(event) is UsageEvent:
        check_usage(event.usage, vendor)
        return
    for name, kinds in _FIELDS.get(type(event), ()):
        value = getattr(event, name)
        if not isinstance(value, kinds) or (type(value) is bool and bool not in kinds):
            raise shape_error(vendor, f"{type(event).__name__}.{name} is a {type(value).__name__}")


def reads_chunks(method: F) -> F:
    """Decorate a stream reader's method that reads vendor chunks into events.

    A generator (``feed``, ``end``) or async generator has each event it
    yields checked (:func:`check_event`); a plain or async method (one that
    parses the next event off the wire) is guarded alone. A shape error
    (:data:`SHAPE_ERRORS`) raised while it reads becomes a
    :class:`MalformedResponseError` of the reader's vendor (its ``vendor``
    attribute, else its ``name``, else its plugin's). Events read before it
    are yielded first, as the stream would have.
    """
    if getattr(method, _GUARDED, False):
        return method
    if inspect.isasyncgenfunction(method):
        wrapper: Callable[..., Any] = _async_events(method)
    elif inspect.isgeneratorfunction(method):
        wrapper = _events(method)
    elif inspect.iscoroutinefunction(method):
        wrapper = _coroutine(method)
    else:
        wrapper = _call(method)
    guarded = functools.wraps(method)(wrapper)
    setattr(guarded, _GUARDED, True)
    return cast(F, guarded)


class ChunkReader:
    """Base of every stream reader: the methods named in ``reads`` read vendor chunks.

    Each of them a subclass defines (an override too) is wrapped in
    :func:`reads_chunks` when the class is made: a chunk of the wrong shape
    is a :class:`~llmport.errors.MalformedResponseError` whether or not its
    author remembered the decorator. A reader with another reading step
    adds its name: ``reads = (*ChunkReader.reads, "next_frame")``.
    """

    __slots__ = ()

    #: The names of the methods that read vendor chunks into events.
    reads: ClassVar[tuple[str, ...]] = ("feed", "feed_json", "end")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in cls.reads:
            method = cls.__dict__.get(name)
            if inspect.isfunction(method):
                setattr(cls, name, reads_chunks(method))


# Each wrapper raises after its ``except`` block: raising inside it would chain the
# foreign exception as ``__context__``.


def _events(method: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    def events(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        vendor = reader_vendor(self)
        try:
            for event in method(self, *args, **kwargs):
                check_event(event, vendor)
                yield event
            return
        except SHAPE_ERRORS as exc:
            error = shape_error(vendor, exc)
        raise error from None

    return events


def _async_events(method: Callable[..., AsyncIterator[Any]]) -> Callable[..., AsyncIterator[Any]]:
    async def events(self: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        vendor = reader_vendor(self)
        try:
            async for event in method(self, *args, **kwargs):
                check_event(event, vendor)
                yield event
            return
        except SHAPE_ERRORS as exc:
            error = shape_error(vendor, exc)
        raise error from None

    return events


def _coroutine(method: Callable[..., Any]) -> Callable[..., Any]:
    async def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await method(self, *args, **kwargs)
        except SHAPE_ERRORS as exc:
            error = shape_error(reader_vendor(self), exc)
        raise error from None

    return call


def _call(method: Callable[..., Any]) -> Callable[..., Any]:
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except SHAPE_ERRORS as exc:
            error = shape_error(reader_vendor(self), exc)
        raise error from None

    return call


def reader_vendor(reader: Any) -> str:
    """The vendor a reader reads for: its ``vendor``, else its ``name``, else its plugin's."""
    for attribute in ("vendor", "name"):
        value = getattr(reader, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(reader).__module__.partition(".")[0].removeprefix("llmport_")
