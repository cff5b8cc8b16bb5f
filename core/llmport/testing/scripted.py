"""The scripted provider: a runtime that answers from a script, for tests.

::

    from llmport.testing import Script, reply, call_tools, fail

    script = Script([
        call_tools(("lookup", {"city": "Paris"})),
        reply("Sunny in Paris."),
    ])
    rt = script.runtime()                       # model "scripted:test"
    assert rt.exec("Weather?", tools=[lookup]) == "Sunny in Paris."
    assert script.requests[1].messages[-1].tool_results[0].content == "sunny"

Each model request takes the next step of the script: a reply (text
and/or tool calls), an error to raise, or a function of the request. Steps
may carry a delay. ``script.requests`` records every request received, in
order. The provider also streams (text in word-sized pieces, tool-call
arguments in fragments) so streaming code paths are exercised, and embeds
(``rt.embed``): each text's vector is derived from its SHA-256 (the same
text, the same vector; ``dimensions=`` sets the size, else
:data:`SCRIPTED_DIMENSIONS`), without taking a step of the script. It also makes images
(``rt.generate_image``): each a small PNG whose colour comes from the
prompt's SHA-256 (and the seed, and its index), again without a step.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import field
from typing import Any

from ..messages.embeddings import EmbedRequest, EmbedResponse
from ..messages.estimate import text_tokens
from ..messages.images import ImageRequest, ImageResponse
from ..messages.types import (
    NATIVE_TOOL_KINDS,
    ImageGeneration,
    MediaBlock,
    ModelCapabilities,
    ProviderEvent,
    Request,
    Response,
    StopEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    UsageEvent,
)
from ..plugins.hookspecs import hookimpl
from ..provider.contract import Provider, ProviderInfo
from ..provider.embedding import input_tokens
from ..slotted import dataclass

ALL_INPUTS = ModelCapabilities(
    input_modalities=frozenset({"text", "image", "audio", "file"}),
    file_types=frozenset({"application/pdf"}),
    audio_types=frozenset({"audio/wav", "audio/mpeg"}),
    reasoning=True,
    caching=True,
    citations=True,
    native_tool_kinds=NATIVE_TOOL_KINDS,
    native_text_files=frozenset({"text/plain", "text/markdown", "text/csv"}),
    embeddings=True,
    flexible_dimensions=True,
    embed_input_types=True,
    embed_truncation=True,
    images=ImageGeneration(
        max_images=4,
        min_side=1,
        max_side=4096,
        qualities=frozenset({"low", "medium", "high"}),
        max_seed=2**31 - 1,
    ),
)
#: The size of a scripted provider's vectors when ``dimensions=`` does not say.
SCRIPTED_DIMENSIONS = 8


class ScriptExhausted(AssertionError):
    """The code under test made more model requests than the script has steps."""


@dataclass(slots=True)
class Step:
    """One scripted answer."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    error: BaseException | None = None
    delay: float = 0.0
    usage: Usage | None = None
    stop_reason: str | None = None
    func: Callable[[Request], Response] | None = None


def reply(text: str, *, delay: float = 0.0, usage: Usage | None = None) -> Step:
    """A plain text reply."""
    return Step(text=text, delay=delay, usage=usage)


_ids = itertools.count(1)


def call_tools(
    *calls: tuple[str, dict[str, Any]] | ToolCall, text: str = "", delay: float = 0.0
) -> Step:
    """A reply asking for tool calls: ``call_tools(("name", {"arg": 1}), ...)``."""
    made = []
    for c in calls:
        if isinstance(c, ToolCall):
            made.append(c)
        else:
            name, args = c
            made.append(ToolCall(f"call_{next(_ids)}", name, dict(args), json.dumps(args)))
    return Step(text=text, tool_calls=made, delay=delay, stop_reason="tool_use")


def fail(error: BaseException, *, delay: float = 0.0) -> Step:
    """Raise ``error`` for this request."""
    return Step(error=error, delay=delay)


def respond(func: Callable[[Request], Response]) -> Step:
    """Compute the answer from the request."""
    return Step(func=func)


class ScriptedProvider(Provider):
    """A provider that plays a :class:`Script`."""

    name = "scripted"
    #: Steps run in the caller's thread (a ``respond`` function is the caller's code):
    #: a reply whose delay ends after the deadline raises RunTimeout with the reply on it.
    cut_at_deadline = False

    def __init__(
        self,
        script: Script,
        settings: dict[str, Any] | None = None,
        info: ProviderInfo | None = None,
    ) -> None:
        super().__init__(settings, info)
        self.script = script
        # Each prefix is its own vendor (thinking signed by one is not sent to another).
        self.name = info.prefix if info is not None else "scripted"

    def _response(self, request: Request, step: Step) -> Response:
        if step.error is not None:
            raise step.error
        if step.func is not None:
            return step.func(request)
        usage = step.usage or Usage(
            input_tokens=sum(len(m.text) for m in request.messages) // 4 + 1,
            output_tokens=len(step.text) // 4 + 1,
        )
        usage.requests = 1
        stop = step.stop_reason or ("tool_use" if step.tool_calls else "end_turn")
        return Response(
            text=step.text,
            tool_calls=list(step.tool_calls),
            usage=usage,
            stop_reason=stop,  # type: ignore[arg-type]
            model=request.model,
        )

    def _call(self, request: Request) -> Response:
        step = self.script.next_step(request)
        if step.delay:
            time.sleep(step.delay)
        return self._response(request, step)

    async def _async_call(self, request: Request) -> Response:
        step = self.script.next_step(request)
        if step.delay:
            await asyncio.sleep(step.delay)
        return self._response(request, step)

    def _stream(self, request: Request) -> Iterator[ProviderEvent]:
        yield from _fragments(self._call(request))

    async def _astream(self, request: Request) -> AsyncIterator[ProviderEvent]:
        for event in _fragments(await self._async_call(request)):
            yield event

    def _embed(self, request: EmbedRequest) -> EmbedResponse:
        size = request.dimensions or SCRIPTED_DIMENSIONS
        # A text's vector from its own hash; an image's (the scripted model takes every
        # input kind) from its content's digest.
        keys = [item if isinstance(item, str) else item.digest() for item in request.inputs]
        rows = [scripted_vector(key, size) for key in keys]
        tokens = sum(input_tokens(item) for item in request.inputs)
        usage = Usage(input_tokens=tokens, requests=1)
        return EmbedResponse.from_rows(rows, expected=len(rows), usage=usage, model=request.model)

    async def _async_embed(self, request: EmbedRequest) -> EmbedResponse:
        return self._embed(request)

    def _generate_image(self, request: ImageRequest) -> ImageResponse:
        images = tuple(
            MediaBlock(
                "image", "image/png", data=scripted_png(f"{request.prompt}|{request.seed}|{i}")
            )
            for i in range(request.n)
        )
        usage = Usage(input_tokens=text_tokens(request.prompt), requests=1)
        return ImageResponse(images, usage, request.model)

    async def _async_generate_image(self, request: ImageRequest) -> ImageResponse:
        return self._generate_image(request)


def scripted_png(text: str, side: int = 8) -> bytes:
    """A ``side`` x ``side`` PNG of one colour taken from ``text``'s SHA-256."""
    import struct
    import zlib

    colour = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:3]
    rows = b"".join(b"\x00" + colour * side for _ in range(side))

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def scripted_vector(text: str, size: int = SCRIPTED_DIMENSIONS) -> list[float]:
    """The scripted provider's vector of ``text``: values in [-1, 1] from its SHA-256."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    while len(digest) < size:
        digest += hashlib.sha256(digest).digest()
    return [(byte - 127.5) / 127.5 for byte in digest[:size]]


def _fragments(response: Response) -> Iterator[ProviderEvent]:
    if response.blocks:  # thinking, citations, server tools: the documented event forms
        from ..provider.assembly import response_events

        yield from response_events(response)
        return
    words = response.text.split(" ")
    for i, word in enumerate(words):
        piece = word if i == len(words) - 1 else word + " "
        if piece:
            yield TextDelta(piece)
    for index, call in enumerate(response.tool_calls):
        raw = call.raw_arguments or json.dumps(call.arguments)
        half = len(raw) // 2
        yield ToolCallDelta(key=index, id=call.id, name=call.name, arguments=raw[:half])
        yield ToolCallDelta(key=index, arguments=raw[half:])
    yield UsageEvent(response.usage)
    yield StopEvent(response.stop_reason, model=response.model)


class Script:
    """A sequence of scripted steps and the requests that consumed them.

    Register it on a runtime with ``Runtime(model="scripted:test", hooks=[script])``
    or use :meth:`runtime`. ``prefix`` lets two scripts coexist on one runtime.
    """

    def __init__(
        self,
        steps: Iterable[Step | str] = (),
        *,
        prefix: str = "scripted",
        capabilities: ModelCapabilities = ALL_INPUTS,
    ) -> None:
        self.steps: list[Step] = [reply(s) if isinstance(s, str) else s for s in steps]
        self.prefix = prefix
        self.capabilities = capabilities
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._position = 0

    def add(self, *steps: Step | str) -> Script:
        with self._lock:
            self.steps.extend(reply(s) if isinstance(s, str) else s for s in steps)
        return self

    def next_step(self, request: Request) -> Step:
        with self._lock:
            self.requests.append(request)
            if self._position >= len(self.steps):
                raise ScriptExhausted(
                    f"request #{len(self.requests)} arrived but the script has only "
                    f"{len(self.steps)} steps"
                )
            step = self.steps[self._position]
            self._position += 1
            return step

    @property
    def remaining(self) -> int:
        return len(self.steps) - self._position

    @hookimpl
    def llmport_providers(self, register: Callable[[ProviderInfo], None]) -> None:
        register(
            ProviderInfo(
                prefix=self.prefix,
                factory=lambda settings, info: ScriptedProvider(self, settings, info),
                description="scripted replies for tests",
                default=self.capabilities,
                plugin="llmport.testing",
            )
        )

    def runtime(self, model: str | None = None, **settings: Any) -> Any:
        """A Runtime wired to this script (no sleeping between retries by default)."""
        from ..controls.retry import Backoff
        from ..runtime import Runtime

        settings.setdefault("backoff", Backoff.none())
        hooks = [self, *settings.pop("hooks", [])]
        return Runtime(model=model or f"{self.prefix}:test", hooks=hooks, **settings)
