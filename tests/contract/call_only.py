"""A provider plugin written against the first contract only: ``_call`` and friends.

Its providers implement nothing but ``_call(request)`` and
``_async_call(request)`` (``callonly``), plus the optional ``_stream(request)``
and ``_astream(request)`` (``callonly-stream``): no ``prepare``, no ``send*``.
The plugin contract says that is a complete plugin, and the contract suite holds both to
the same faults, secrets, bad-input, structured-output, tool-loop and
streaming checks as the real vendors (``wire.CallOnlyWire``).

It speaks "tiny chat", a small JSON wire format over HTTP (httpx):

* ``POST {base_url}/v1/tiny/chat`` takes ``{"model", "system", "messages",
  "tools", "tool_choice", "schema", options..., vendor fields...}`` and answers
  ``{"id", "model", "text", "calls": [{"id", "name", "args"}], "stop",
  "usage": {"in", "out"}}``;
* ``POST {base_url}/v1/tiny/stream`` answers Server-Sent Events whose data
  are ``{"type": "text", "text"}``, ``{"type": "call", "id", "name"}``,
  ``{"type": "args", "id", "fragment"}`` and a closing ``{"type": "done",
  "stop", "usage", "id", "model"}``;
* errors are ``{"error": {"message", "code"}}`` with the HTTP status (and
  ``Retry-After`` on 429s).

The key is the ``api_key`` setting or ``CALLONLY_API_KEY``, sent as a bearer
token. The module is the plugin: it registers both prefixes through
``llmport_providers`` as an installed plugin's entry-point module would.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2 as httpx
from llmport.plugin_api import (
    ClientCache,
    ConfigError,
    MalformedResponseError,
    MediaBlock,
    Message,
    ModelCapabilities,
    Provider,
    ProviderError,
    ProviderEvent,
    ProviderInfo,
    Request,
    Response,
    StopEvent,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    UsageEvent,
    hookimpl,
    inline_text_file,
    move_answer_media,
    move_tool_media,
    register_secret,
    status_error,
    translating,
)
from llmport.provider.wire import loads

__all__ = [
    "ENV_KEY",
    "PREFIX",
    "STREAMING_PREFIX",
    "CallOnlyProvider",
    "CallOnlyStreamingProvider",
    "llmport_providers",
]

PREFIX = "callonly"
STREAMING_PREFIX = "callonly-stream"
ENV_KEY = "CALLONLY_API_KEY"
#: "tiny" models take text and images; they have tools, structured output and streaming.
CAPS = ModelCapabilities(input_modalities=frozenset({"text", "image"}))
STOPS = {"end": "end_turn", "tool_use": "tool_use", "max_tokens": "max_tokens"}


# -- neutral request -> tiny chat body ----------------------------------------------------


def content_entry(block: Any, vendor: str, model: str) -> dict[str, Any]:
    if isinstance(block, MediaBlock) and block.type == "image" and not block.inline:
        return {"type": "image", "media_type": block.media_type, "url": block.url}
    if isinstance(block, MediaBlock) and block.media_type.startswith("image/"):
        # base64() is encoded once per block and cached: every turn reuses it.
        return {"type": "image", "media_type": block.media_type, "data": block.base64()}
    if isinstance(block, MediaBlock):  # check() let through text-like files only
        block = inline_text_file(block, vendor, model)
    assert isinstance(block, TextBlock)
    return {"type": "text", "text": block.text}


def message_entries(message: Message, vendor: str, model: str) -> list[dict[str, Any]]:
    if message.role == "assistant":
        calls = [{"id": c.id, "name": c.name, "args": c.arguments} for c in message.tool_calls]
        return [{"role": "assistant", "text": message.text, "calls": calls}]
    results = [
        {"role": "tool", "id": r.call_id, "name": r.name, "output": r.content}
        for r in message.tool_results
    ]
    blocks = [content_entry(b, vendor, model) for b in message.blocks]
    return results + ([{"role": "user", "content": blocks}] if blocks else [])


def request_body(request: Request, vendor: str, vendor_fields: dict[str, Any]) -> dict[str, Any]:
    # A tiny tool result holds text: a tool's media follow it in a user turn.
    messages = move_answer_media(move_tool_media(request.messages))
    entries = [e for m in messages for e in message_entries(m, vendor, request.model)]
    body: dict[str, Any] = {"model": request.model, "system": request.system, "messages": entries}
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in request.tools
        ]
        body["tool_choice"] = request.tool_choice
    if request.response_format is not None:
        body["schema"] = request.response_format.schema
    body.update({k: v for k, v in request.options.items() if k != "timeout"})
    body.update(vendor_fields)
    return body


# -- tiny chat answer -> neutral response ---------------------------------------------------


def usage_of(data: dict[str, Any]) -> Usage:
    return Usage(input_tokens=data.get("in", 0), output_tokens=data.get("out", 0), requests=1)


def malformed(provider: str, what: str) -> MalformedResponseError:
    message = f"{provider}: {what} is not in the tiny chat form"
    return MalformedResponseError(message, provider=provider)


def response_of(data: Any, provider: str) -> Response:
    """A 200 answer as a Response; anything but the documented success shape is malformed."""
    try:
        calls = [
            ToolCall(c["id"], c["name"], c["args"], raw_arguments=json.dumps(c["args"]))
            for c in data.get("calls", [])
        ]
        stop = data["stop"]
        usage = usage_of(data["usage"])
        text = data.get("text", "")
    except (KeyError, TypeError, AttributeError):
        raise malformed(provider, "the answer") from None
    return Response(
        text=text,
        tool_calls=calls,
        usage=usage,
        stop_reason=STOPS.get(stop, "end_turn"),  # type: ignore[arg-type]
        raw_stop_reason=stop,
        model=data.get("model", ""),
        id=data.get("id"),
    )


def events_of(line: str, provider: str) -> list[ProviderEvent]:
    """The provider events of one line of the event stream (none for blank lines)."""
    if not line.startswith("data:"):
        return []
    data = json.loads(line[5:])
    try:
        return event_list(data)
    except (KeyError, TypeError, AttributeError):
        raise malformed(provider, f"stream event {line[:60]!r}") from None


def event_list(data: Any) -> list[ProviderEvent]:
    kind = data["type"]
    if kind == "text":
        return [TextDelta(data["text"])]
    if kind == "call":
        return [ToolCallDelta(key=data["id"], id=data["id"], name=data["name"])]
    if kind == "args":
        return [ToolCallDelta(key=data["id"], arguments=data["fragment"])]
    if kind != "done":
        raise KeyError(kind)
    stop = data["stop"]
    return [
        UsageEvent(usage_of(data["usage"])),
        StopEvent(STOPS.get(stop, "end_turn"), stop, data.get("model", ""), data.get("id")),  # type: ignore[arg-type]
    ]


# -- errors -----------------------------------------------------------------------------------


class TinyStatusError(Exception):
    """An error answer of the tiny chat API (what an SDK would raise)."""

    def __init__(self, status: int, body: bytes, headers: httpx.Headers) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body
        self.headers = headers


def translate(exc: BaseException, provider: str) -> ProviderError | None:
    """The vendor's own errors; transport failures and bad JSON are the core's."""
    if not isinstance(exc, TinyStatusError):
        return None
    try:
        error = json.loads(exc.body)["error"]
        message, code = str(error.get("message", "")), error.get("code")
    except (ValueError, KeyError, TypeError, AttributeError):
        message, code = exc.body.decode(errors="replace")[:200], None
    return status_error(exc.status, message, provider=provider, headers=exc.headers, code=code)


def raise_for_status(response: httpx.Response) -> None:
    if response.status_code >= 400:
        raise TinyStatusError(response.status_code, response.content, response.headers)


# -- the providers -----------------------------------------------------------------------


class CallOnlyProvider(Provider):
    """A complete provider with only ``_call`` and ``_async_call``.

    Streaming calls get the core's default: the whole answer replayed as events.
    """

    name = PREFIX

    def __init__(self, settings: dict[str, Any] | None = None, info: ProviderInfo | None = None):
        super().__init__(settings, info)
        self.clients: ClientCache[httpx.Client, httpx.AsyncClient] = ClientCache(
            httpx.Client, httpx.AsyncClient
        )

    def key(self) -> str:
        key = self.settings.get("api_key") or self.environment_key(ENV_KEY)
        if not key:
            raise ConfigError(f"{self.name}: no API key: set {ENV_KEY} or the api_key setting")
        register_secret(key)  # a key read from the environment is masked like a setting
        return str(key)

    def post_args(self, request: Request, stream: bool) -> dict[str, Any]:
        """What httpx sends; the key is checked first, so nothing is sent without one."""
        headers = {"authorization": f"Bearer {self.key()}", "content-type": "application/json"}
        base = str(self.settings.get("base_url", "https://tiny.invalid")).rstrip("/")
        body = request_body(request, self.name, self.vendor_fields(request))
        return {
            "url": f"{base}/v1/tiny/{'stream' if stream else 'chat'}",
            "content": json.dumps(body).encode(),
            "headers": headers,
            "timeout": request.options.get("timeout", self.settings.get("timeout", 60.0)),
        }

    def errors(self) -> translating:
        """Typed errors out of every request, with the key masked."""
        env_key = os.environ.get(ENV_KEY)
        secrets = (*self.secrets(), *((env_key,) if env_key else ()))
        return translating(self.name, lambda exc: translate(exc, self.name), secrets)

    def _call(self, request: Request) -> Response:
        with self.errors():
            response = self.clients.sync().post(**self.post_args(request, stream=False))
            raise_for_status(response)
            return response_of(loads(response.content), self.name)

    async def _async_call(self, request: Request) -> Response:
        with self.errors():
            client = self.clients.for_loop()
            response = await client.post(**self.post_args(request, stream=False))
            raise_for_status(response)
            return response_of(loads(response.content), self.name)

    def close(self) -> None:
        self.clients.close()

    async def aclose(self) -> None:
        await self.clients.aclose()


class CallOnlyStreamingProvider(CallOnlyProvider):
    """The same, with the optional ``_stream`` and ``_astream``: real streaming."""

    name = STREAMING_PREFIX

    def _stream(self, request: Request) -> Iterator[ProviderEvent]:
        post = self.post_args(request, stream=True)
        with self.errors(), self.clients.sync().stream("POST", **post) as r:
            if r.status_code >= 400:
                r.read()
            raise_for_status(r)
            for line in r.iter_lines():
                yield from events_of(line, self.name)

    async def _astream(self, request: Request) -> AsyncIterator[ProviderEvent]:
        with self.errors():
            client = self.clients.for_loop()
            async with client.stream("POST", **self.post_args(request, stream=True)) as r:
                if r.status_code >= 400:
                    await r.aread()
                raise_for_status(r)
                async for line in r.aiter_lines():
                    for event in events_of(line, self.name):
                        yield event


@hookimpl
def llmport_providers(register: Any) -> None:
    """Register ``callonly`` and ``callonly-stream`` (models ``tiny-*``)."""
    for prefix, factory, what in (
        (PREFIX, CallOnlyProvider, "_call / _async_call"),
        (STREAMING_PREFIX, CallOnlyStreamingProvider, "_call / _async_call / _stream / _astream"),
    ):
        register(
            ProviderInfo(
                prefix=prefix,
                factory=factory,
                description=f"tiny chat, a test plugin with only {what}",
                models={"tiny-*": CAPS},
                default=CAPS,
            )
        )
