"""Every stream reader's chunk-reading methods are guarded by its base class, ChunkReader.

A reader (first-party or a third-party plugin's) derives from
``llmport.plugin_api.ChunkReader``; each method named in its ``reads`` that a
class defines (``feed``, ``end``..., an override too) reads through
``reads_chunks`` without its author writing the decorator: a chunk of the
wrong shape, or an event whose fields have the wrong types, is a
``MalformedResponseError`` naming the vendor, with nothing foreign chained.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from llmport.errors import MalformedResponseError
from llmport.messages.types import ProviderEvent, StopEvent, TextDelta
from llmport.plugin_api import ChunkReader, reads_chunks


class PlainReader(ChunkReader):
    """A third-party reader written with no decorator at all."""

    vendor = "acme"

    def feed(self, chunk: Any) -> Iterator[ProviderEvent]:
        for choice in chunk["choices"]:
            yield TextDelta(text=choice["delta"]["content"])

    def end(self) -> Iterator[ProviderEvent]:
        yield StopEvent("end_turn", raw_stop_reason="stop", model="acme-1")


class Override(PlainReader):
    """An override of a guarded reader's method (what CompatStream is to ChatStream)."""

    def feed(self, chunk: Any) -> Iterator[ProviderEvent]:
        yield TextDelta(text=chunk["text"])


class OwnStep(ChunkReader):
    """A reader with a reading step of its own, named in ``reads``."""

    vendor = "acme"
    reads = (*ChunkReader.reads, "next_frame", "anext_frame")

    def next_frame(self, frames: Iterator[Any]) -> Any:
        return next(frames)["frame"]

    async def anext_frame(self, frames: AsyncIterator[Any]) -> Any:
        return (await anext(frames))["frame"]


def caught(run: Any) -> BaseException:
    with pytest.raises(Exception) as info:
        run()
    return info.value


def assert_typed(err: BaseException) -> None:
    assert type(err) is MalformedResponseError, f"{type(err).__name__}: {err}"
    assert err.__cause__ is None and err.__context__ is None
    assert err.provider == "acme" and "acme" in str(err)


@pytest.mark.parametrize(
    "chunk",
    [{"choices": "nope"}, {"choices": [{"delta": ["x"]}]}, {}, {"choices": [7]}],
    ids=["choices-a-string", "delta-a-list", "no-choices", "choice-a-number"],
)
def test_a_reader_without_the_decorator_turns_a_wrong_shape_into_a_typed_error(
    chunk: dict[str, Any],
) -> None:
    assert_typed(caught(lambda: list(PlainReader().feed(chunk))))


def test_an_event_of_the_wrong_type_from_an_unguarded_method_is_a_typed_error() -> None:
    err = caught(lambda: list(PlainReader().feed({"choices": [{"delta": {"content": ["x"]}}]})))
    assert_typed(err)
    assert "TextDelta.text" in str(err)


def test_a_good_chunk_reads_as_it_did() -> None:
    reader = PlainReader()
    events = [*reader.feed({"choices": [{"delta": {"content": "Hi"}}]}), *reader.end()]
    assert events == [
        TextDelta(text="Hi"),
        StopEvent("end_turn", raw_stop_reason="stop", model="acme-1"),
    ]


def test_an_override_of_a_guarded_reader_is_guarded_too() -> None:
    assert_typed(caught(lambda: list(Override().feed({"text": 5}))))
    assert_typed(caught(lambda: list(Override().feed([]))))


def test_a_reading_step_named_in_reads_is_guarded_sync_and_async() -> None:
    assert OwnStep().next_frame(iter([{"frame": 1}])) == 1
    assert_typed(caught(lambda: OwnStep().next_frame(iter([["no-frame"]]))))

    async def frames() -> AsyncIterator[Any]:
        yield "not a mapping"

    assert_typed(caught(lambda: asyncio.run(OwnStep().anext_frame(frames()))))


def test_a_method_decorated_by_hand_is_not_guarded_twice() -> None:
    def feed(self: Any, chunk: Any) -> Iterator[ProviderEvent]:
        yield TextDelta(text=chunk)

    guarded = reads_chunks(feed)
    assert reads_chunks(guarded) is guarded

    class HandDecorated(ChunkReader):
        vendor = "acme"
        feed = guarded

    assert HandDecorated.feed is guarded
