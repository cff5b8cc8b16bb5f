"""The provider behind ``Runtime(call=fn)`` and ``_call`` / ``_async_call`` overrides.

The seed API: ``fn(content: list[dict], model: str, response_format: dict | None,
**options) -> str``. Content is the flat list of blocks the function was
always given (:func:`request_to_content`); the function returns text only,
so tools are refused before any call. Options reach the function only if it
declares them (or ``**kwargs``).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from ..errors import UnsupportedFeatureError
from ..messages.check import check_file_refs
from ..messages.content import block_to_dict
from ..messages.types import ModelCapabilities, Request, Response, Usage
from .contract import Prepared, Provider

__all__ = ["CallableProvider", "request_to_content"]

_ANY = ModelCapabilities(
    input_modalities=frozenset({"text", "image", "audio", "file"}),
    native_tools=False,
    native_structured_output=True,
)


def request_to_content(request: Request) -> list[dict[str, Any]]:
    """The seed API's view of a request: a flat list of content dicts.

    The system prompt and earlier turns become text blocks; the blocks of
    user messages keep their form (see :func:`llmport.messages.content.block_to_dict`).
    """
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"type": "text", "text": request.system})
    for message in request.messages:
        if message.role == "user":
            out.extend(block_to_dict(b) for b in message.blocks)
        elif message.role == "assistant" and message.text:
            out.append({"type": "text", "text": f"[assistant] {message.text}"})
        for result in message.tool_results:
            out.append({"type": "text", "text": f"[tool {result.name}] {result.content}"})
    return out


class CallableProvider(Provider):
    """Adapts a ``call=`` function or a ``_call`` / ``_async_call`` override."""

    name = "call"
    #: The caller's function runs in the caller's thread, never abandoned at the
    #: deadline: an answer after it raises RunTimeout with the answer on it.
    cut_at_deadline = False

    def __init__(
        self, sync_fn: Callable[..., Any] | None, async_fn: Callable[..., Any] | None, label: str
    ) -> None:
        super().__init__()
        self.sync_fn = sync_fn
        self.async_fn = async_fn
        self.label = label
        fn = sync_fn or async_fn
        params = inspect.signature(fn).parameters.values() if fn else []
        self.accepts_any = any(p.kind is p.VAR_KEYWORD for p in params)
        self.accepted = {p.name for p in params} - {"content", "model", "response_format"}

    @classmethod
    def of(cls, fn: Callable[..., Any], label: str = "call function") -> CallableProvider:
        """A provider for ``fn``, sync or async."""
        if inspect.iscoroutinefunction(fn):
            return cls(None, fn, label)
        return cls(fn, None, label)

    def capabilities(self, model: str) -> ModelCapabilities:
        return _ANY

    def prepare(self, request: Request) -> Prepared:
        check_file_refs(request.messages, self.files_vendor, request.model)
        if request.tools:
            raise UnsupportedFeatureError(
                self.label,
                request.model,
                "tools",
                "a call function returns text only; "
                "use a provider plugin (e.g. 'openai:...') for tools",
            )
        if request.native_tools:
            raise UnsupportedFeatureError(self.label, request.model, "native tools")
        options = dict(request.options)
        if request.reasoning is not None:
            options["reasoning"] = request.reasoning  # a Reasoning, for functions that declare it
        unknown = [k for k in options if not self.accepts_any and k not in self.accepted]
        if unknown:
            raise UnsupportedFeatureError(
                self.label,
                request.model,
                f"option(s) {', '.join(sorted(unknown))}",
                "add them as keyword parameters (or **kwargs) to the call function",
            )
        rf = request.response_format.schema if request.response_format else None
        return Prepared(request, (request_to_content(request), request.model, rf, options))

    @staticmethod
    def _text(text: Any, model: str) -> Response:
        if not isinstance(text, str):
            raise TypeError(f"the call function must return str, got {type(text).__name__}")
        return Response(text=text, model=model, usage=Usage(requests=1))

    def send(self, prepared: Prepared) -> Response:
        if self.sync_fn is None:
            raise TypeError(f"{self.label} is async: use async_exec() (or astream())")
        content, model, rf, options = prepared.payload
        return self._text(self.sync_fn(content, model, rf, **options), model)

    async def asend(self, prepared: Prepared) -> Response:
        content, model, rf, options = prepared.payload
        if self.async_fn is not None:
            text = await self.async_fn(content, model, rf, **options)
        else:
            assert self.sync_fn is not None
            # to_thread carries the current contextvars (frame, tool scope) into the worker.
            text = await asyncio.to_thread(self.sync_fn, content, model, rf, **options)
        return self._text(text, model)

    def send_stream(self, prepared: Prepared) -> Any:
        from .assembly import response_events

        return iter(response_events(self.send(prepared)))

    async def asend_stream(self, prepared: Prepared) -> Any:
        from .assembly import response_events

        for event in response_events(await self.asend(prepared)):
            yield event
