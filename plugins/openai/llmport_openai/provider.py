"""The OpenAI providers: Chat Completions (``openai:``) and Responses (``openai-responses:``).

Settings (``Runtime(providers={"openai": {...}})``, ``[providers.openai]`` in
``llmport.toml``, or the environment):

* ``api_key`` — default ``OPENAI_API_KEY`` (Azure: ``AZURE_OPENAI_API_KEY``);
  optional when ``base_url`` points at a local server that needs none.
* ``base_url`` — default ``OPENAI_BASE_URL``; any OpenAI-compatible server
  (Ollama ``http://localhost:11434/v1``, vLLM ``http://host:8000/v1``).
* ``organization``, ``project``, ``timeout`` (seconds), ``default_headers``.
* Azure OpenAI: ``azure_endpoint`` (or ``azure=True`` with
  ``AZURE_OPENAI_ENDPOINT``), ``api_version`` (or ``OPENAI_API_VERSION``),
  ``azure_deployment``, ``azure_ad_token``.
* ``max_tokens_field`` — the body field ``max_tokens`` becomes in Chat
  Completions: ``"max_completion_tokens"`` (default, what OpenAI wants) or
  ``"max_tokens"`` for older OpenAI-compatible servers.

Clients are created on first use with ``max_retries=0``: llmport is the
one retry layer. The ``openai`` SDK is imported then, never before. Keys
never appear in ``repr()`` or in error messages.
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from llmport.errors import ConfigError
from llmport.provider import Provider, ProviderInfo
from llmport.types import ModelCapabilities, ProviderEvent, Request, Response

from . import convert_in, convert_out
from .errors import translated

KNOWN_SETTINGS = frozenset(
    {
        "api_key",
        "base_url",
        "organization",
        "project",
        "timeout",
        "default_headers",
        "azure",
        "azure_endpoint",
        "api_version",
        "azure_deployment",
        "azure_ad_token",
        "max_tokens_field",
    }
)
_PLACEHOLDER_KEY = (
    "unused"  # local OpenAI-compatible servers ignore the key, the SDK insists on one
)


class _OpenAIProvider(Provider):
    """Client management and settings shared by both APIs."""

    name = "openai"

    def __init__(
        self, settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None
    ) -> None:
        super().__init__(settings, info)
        unknown = set(self.settings) - KNOWN_SETTINGS
        if unknown:
            raise ConfigError(
                f"unknown {self.name} setting(s): {', '.join(sorted(unknown))} "
                f"(known: {', '.join(sorted(KNOWN_SETTINGS))})"
            )
        field = self.settings.get("max_tokens_field", "max_completion_tokens")
        if field not in ("max_completion_tokens", "max_tokens"):
            raise ConfigError("max_tokens_field must be 'max_completion_tokens' or 'max_tokens'")
        self.max_tokens_field: str = field
        self._lock = threading.Lock()
        self._client: Any = None
        # One async client per event loop: an httpx2 pool cannot outlive its loop.
        # Each comes with a keeper task that closes it inside that loop when the
        # loop shuts down (asyncio.run cancels leftover tasks); otherwise the SDK
        # would try to close it later from whichever loop is running then.
        self._async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._keepers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task[None]] = (
            weakref.WeakKeyDictionary()
        )
        self._caps: dict[str, ModelCapabilities] = {}

    def __repr__(self) -> str:
        where = self.settings.get("azure_endpoint") or self.settings.get("base_url") or "default"
        key = "set" if self.settings.get("api_key") else "from environment"
        return f"{type(self).__name__}(endpoint={where!r}, api_key=<{key}>)"

    def capabilities(self, model: str) -> ModelCapabilities:
        # Pattern matching is cheap but runs several times per request: remember it.
        caps = self._caps.get(model)
        if caps is None:
            caps = self._caps[model] = super().capabilities(model)
        return caps

    # -- clients -------------------------------------------------------------------

    @property
    def is_azure(self) -> bool:
        s = self.settings
        return bool(s.get("azure") or s.get("azure_endpoint") or s.get("azure_deployment"))

    def client_options(self) -> dict[str, Any]:
        """Constructor arguments for the SDK client (shared by sync and async)."""
        s = self.settings
        options: dict[str, Any] = {"max_retries": 0}
        for name in ("organization", "project", "timeout", "default_headers"):
            if s.get(name) is not None:
                options[name] = s[name]
        if self.is_azure:
            endpoint = s.get("azure_endpoint") or os.environ.get("AZURE_OPENAI_ENDPOINT")
            version = s.get("api_version") or os.environ.get("OPENAI_API_VERSION")
            if not endpoint:
                raise ConfigError("Azure OpenAI needs azure_endpoint (or AZURE_OPENAI_ENDPOINT)")
            if not version:
                raise ConfigError("Azure OpenAI needs api_version (or OPENAI_API_VERSION)")
            options.update(azure_endpoint=endpoint, api_version=version)
            if s.get("azure_deployment"):
                options["azure_deployment"] = s["azure_deployment"]
            if s.get("azure_ad_token"):
                options["azure_ad_token"] = s["azure_ad_token"]
                return options
            azure_key = s.get("api_key") or os.environ.get("AZURE_OPENAI_API_KEY")
            if not azure_key:
                raise ConfigError(
                    "no Azure OpenAI key: set AZURE_OPENAI_API_KEY, or api_key / azure_ad_token"
                )
            options["api_key"] = azure_key
            return options
        base_url = s.get("base_url") or os.environ.get("OPENAI_BASE_URL")
        key = s.get("api_key") or os.environ.get("OPENAI_API_KEY")
        if base_url:
            options["base_url"] = base_url
        if not key:
            if not base_url:
                raise ConfigError(
                    "no OpenAI API key: set OPENAI_API_KEY or the api_key setting "
                    "(a local server given as base_url needs none)"
                )
            key = _PLACEHOLDER_KEY
        options["api_key"] = key
        return options

    def client(self) -> Any:
        """The sync SDK client (created once)."""
        with self._lock:
            if self._client is None:
                import openai

                cls = openai.AzureOpenAI if self.is_azure else openai.OpenAI
                self._client = cls(**self.client_options())
            return self._client

    def async_client(self) -> Any:
        """The async SDK client of the running event loop."""
        loop = asyncio.get_running_loop()
        with self._lock:
            found = self._async_clients.get(loop)
            if found is None:
                import openai

                cls = openai.AsyncAzureOpenAI if self.is_azure else openai.AsyncOpenAI
                found = self._async_clients[loop] = cls(**self.client_options())
                self._keepers[loop] = loop.create_task(_close_on_shutdown(found))
            return found

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
            self._client = None
            for loop, keeper in list(self._keepers.items()):
                if not loop.is_closed():
                    loop.call_soon_threadsafe(keeper.cancel)  # closes that loop's client
            self._keepers.clear()
            self._async_clients.clear()


async def _close_on_shutdown(client: Any) -> None:
    """Wait until cancelled (loop shutdown or ``close()``), then close ``client`` in this loop."""
    try:
        await asyncio.Event().wait()
    finally:
        await client.close()


class OpenAIChatProvider(_OpenAIProvider):
    """``openai:MODEL`` — the Chat Completions API."""

    name = "openai"

    def kwargs(self, request: Request, *, stream: bool) -> dict[str, Any]:
        """The SDK arguments for ``request`` (raises input errors; sends nothing)."""
        return convert_in.chat_kwargs(
            request,
            self.name,
            self.capabilities(request.model),
            stream=stream,
            max_tokens_field=self.max_tokens_field,
        )

    def prepare(self, request: Request) -> None:
        super().prepare(request)
        self.kwargs(request, stream=request.stream)  # every conversion error, before the network

    def _call(self, request: Request) -> Response:
        kwargs = self.kwargs(request, stream=False)
        with translated(self.name):
            completion = self.client().chat.completions.create(**kwargs)
        return convert_out.chat_response(completion, request)

    async def _async_call(self, request: Request) -> Response:
        kwargs = self.kwargs(request, stream=False)
        with translated(self.name):
            completion = await self.async_client().chat.completions.create(**kwargs)
        return convert_out.chat_response(completion, request)

    def _stream(self, request: Request) -> Iterator[ProviderEvent]:
        kwargs = self.kwargs(request, stream=True)
        converter = convert_out.ChatStream(request)
        with translated(self.name):
            stream = self.client().chat.completions.create(**kwargs)
            try:
                for chunk in stream:
                    yield from converter.feed(chunk)
            finally:
                stream.close()
            yield from converter.end()

    async def _astream(self, request: Request) -> AsyncIterator[ProviderEvent]:
        kwargs = self.kwargs(request, stream=True)
        converter = convert_out.ChatStream(request)
        with translated(self.name):
            stream = await self.async_client().chat.completions.create(**kwargs)
            try:
                async for chunk in stream:
                    for event in converter.feed(chunk):
                        yield event
            finally:
                await stream.close()
            for event in converter.end():
                yield event


class OpenAIResponsesProvider(_OpenAIProvider):
    """``openai-responses:MODEL`` — the Responses API."""

    name = "openai-responses"

    def kwargs(self, request: Request, *, stream: bool) -> dict[str, Any]:
        """The SDK arguments for ``request`` (raises input errors; sends nothing)."""
        return convert_in.responses_kwargs(
            request, self.name, self.capabilities(request.model), stream=stream
        )

    def prepare(self, request: Request) -> None:
        super().prepare(request)
        self.kwargs(request, stream=request.stream)

    def _call(self, request: Request) -> Response:
        kwargs = self.kwargs(request, stream=False)
        with translated(self.name):
            response = self.client().responses.create(**kwargs)
        return convert_out.responses_response(response, request)

    async def _async_call(self, request: Request) -> Response:
        kwargs = self.kwargs(request, stream=False)
        with translated(self.name):
            response = await self.async_client().responses.create(**kwargs)
        return convert_out.responses_response(response, request)

    def _stream(self, request: Request) -> Iterator[ProviderEvent]:
        kwargs = self.kwargs(request, stream=True)
        converter = convert_out.ResponsesStream(request)
        with translated(self.name):
            stream = self.client().responses.create(**kwargs)
            try:
                for event in stream:
                    yield from converter.feed(event)
            finally:
                stream.close()
            yield from converter.end()

    async def _astream(self, request: Request) -> AsyncIterator[ProviderEvent]:
        kwargs = self.kwargs(request, stream=True)
        converter = convert_out.ResponsesStream(request)
        with translated(self.name):
            stream = await self.async_client().responses.create(**kwargs)
            try:
                async for event in stream:
                    for item in converter.feed(event):
                        yield item
            finally:
                await stream.close()
            for item in converter.end():
                yield item
