"""The Gemini provider: ``generate_content`` calls through ``google-genai``.

Settings (``Runtime(providers={"gemini": {...}})`` or ``[providers.gemini]``):

* ``api_key``: default ``GEMINI_API_KEY``, else ``GOOGLE_API_KEY`` (needed for
  the Gemini Developer API; optional on Vertex AI, which can use ADC);
* ``base_url``: another endpoint (a proxy, a loopback server), passed through
  ``http_options``;
* ``api_version``: default the SDK's (``v1``; ``v1beta`` for preview features);
* ``timeout``: seconds per request (an option ``timeout=`` on a call overrides it);
* ``default_headers``: extra HTTP headers on every request;
* ``vertexai`` (default ``GOOGLE_GENAI_USE_VERTEXAI``), ``project``,
  ``location``: use Vertex AI instead of the Developer API.

Clients are created on first use with the SDK's retries off
(``HttpRetryOptions(attempts=1)``): llmport is the one retry layer. The async
client always runs on an ``httpx2.AsyncClient`` we pass in ``http_options``
(one per event loop), so the SDK never switches to aiohttp when aiohttp
happens to be installed: one transport, one set of errors.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from llmport.errors import ConfigError
from llmport.provider import Provider, ProviderInfo
from llmport.types import ProviderEvent, Request, Response

from . import convert_in, convert_out
from .errors import translated
from .plugin import family_for

KNOWN_SETTINGS = frozenset(
    {
        "api_key",
        "base_url",
        "api_version",
        "timeout",
        "default_headers",
        "vertexai",
        "project",
        "location",
    }
)
_TRUE = {"1", "true", "yes", "on"}


class GeminiProvider(Provider):
    """``gemini:<model>``: Gemini through ``google-genai``."""

    name = "gemini"

    def __init__(self, settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None):
        super().__init__(settings, info)
        unknown = sorted(set(self.settings) - KNOWN_SETTINGS)
        if unknown:
            raise ConfigError(
                f"gemini: unknown setting(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(KNOWN_SETTINGS))}"
            )
        timeout = self.settings.get("timeout")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
        ):
            raise ConfigError("gemini: timeout must be a positive number of seconds")
        self._lock = threading.Lock()
        self._sync: Any = None
        # One async client per event loop: an httpx2 pool cannot outlive its loop.
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        where = self.settings.get("base_url") or ("vertex" if self.vertex else "default")
        key = "set" if self.settings.get("api_key") else "from environment"
        return f"GeminiProvider(endpoint={where!r}, api_key=<{key}>)"

    @property
    def vertex(self) -> bool:
        """Whether requests go to Vertex AI rather than the Gemini Developer API."""
        setting = self.settings.get("vertexai")
        if setting is None:
            return os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in _TRUE
        return bool(setting)

    # -- clients --------------------------------------------------------------

    def api_key(self) -> str | None:
        """The key in use: the setting, else ``GEMINI_API_KEY``, else ``GOOGLE_API_KEY``."""
        return (
            self.settings.get("api_key")
            or os.environ.get("GEMINI_API_KEY")
            or os.environ.get("GOOGLE_API_KEY")
            or None
        )

    def client_kwargs(self, *, async_transport: Any = None) -> dict[str, Any]:
        """``genai.Client`` arguments (raises ConfigError; sends nothing)."""
        from google.genai import types

        s = self.settings
        key = self.api_key()
        kwargs: dict[str, Any] = {}
        if self.vertex:
            kwargs["vertexai"] = True
            for name in ("project", "location"):
                if s.get(name):
                    kwargs[name] = s[name]
            if key and not (s.get("project") or s.get("location")):
                kwargs["api_key"] = key  # Vertex AI express mode
        else:
            if not key:
                raise ConfigError(
                    "no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) "
                    "or the api_key setting"
                )
            kwargs["vertexai"] = False
            kwargs["api_key"] = key
        http: dict[str, Any] = {"retry_options": types.HttpRetryOptions(attempts=1)}
        if s.get("base_url"):
            http["base_url"] = s["base_url"]
        if s.get("api_version"):
            http["api_version"] = s["api_version"]
        if s.get("timeout") is not None:
            http["timeout"] = max(1, math.ceil(s["timeout"] * 1000))  # the SDK wants milliseconds
        if s.get("default_headers"):
            http["headers"] = dict(s["default_headers"])
        if async_transport is not None:
            http["httpx_async_client"] = async_transport
        kwargs["http_options"] = types.HttpOptions(**http)
        return kwargs

    def client(self) -> Any:
        """The sync ``genai.Client`` (created once, on first use)."""
        with self._lock:
            if self._sync is None:
                from google import genai

                self._sync = genai.Client(**self.client_kwargs())
            return self._sync

    def async_client(self) -> Any:
        """The ``genai.Client`` of the running event loop, on our own httpx2 transport."""
        loop = asyncio.get_running_loop()
        with self._lock:
            found = self._async.get(loop)
            if found is None:
                import httpx2
                from google import genai

                transport = httpx2.AsyncClient(timeout=None, follow_redirects=True)
                found = self._async[loop] = genai.Client(
                    **self.client_kwargs(async_transport=transport)
                )
            return found

    def close(self) -> None:
        with self._lock:
            if self._sync is not None:
                self._sync.close()
            self._sync = None
            self._async.clear()  # their pools belong to event loops; closed by GC

    # -- checks -----------------------------------------------------------------

    def prepare(self, request: Request) -> None:
        """Reject before any request what this model cannot take (typed input errors)."""
        super().prepare(request)
        convert_in.check(
            request, self.capabilities(request.model), family_for(request.model), vertex=self.vertex
        )

    def _prepared(self, request: Request) -> convert_in.Prepared:
        return convert_in.build(
            request, self.capabilities(request.model), family_for(request.model), vertex=self.vertex
        )

    # -- calls -------------------------------------------------------------------

    def _call(self, request: Request) -> Response:
        prepared = self._prepared(request)
        with translated(self.api_key()):
            answer = self.client().models.generate_content(
                model=prepared.model, contents=prepared.contents, config=prepared.config
            )
        return convert_out.response(answer, prepared)

    async def _async_call(self, request: Request) -> Response:
        prepared = self._prepared(request)
        with translated(self.api_key()):
            answer = await self.async_client().aio.models.generate_content(
                model=prepared.model, contents=prepared.contents, config=prepared.config
            )
        return convert_out.response(answer, prepared)

    def _stream(self, request: Request) -> Iterator[ProviderEvent]:
        prepared = self._prepared(request)
        state = convert_out.StreamState(prepared)
        with translated(self.api_key()):
            chunks = self.client().models.generate_content_stream(
                model=prepared.model, contents=prepared.contents, config=prepared.config
            )
            try:
                for chunk in chunks:
                    yield from state.feed(chunk)
            finally:
                chunks.close()
        yield from state.end()

    async def _astream(self, request: Request) -> AsyncIterator[ProviderEvent]:
        prepared = self._prepared(request)
        state = convert_out.StreamState(prepared)
        with translated(self.api_key()):
            chunks = await self.async_client().aio.models.generate_content_stream(
                model=prepared.model, contents=prepared.contents, config=prepared.config
            )
            try:
                async for chunk in chunks:
                    for event in state.feed(chunk):
                        yield event
            finally:
                await chunks.aclose()
        for event in state.end():
            yield event
