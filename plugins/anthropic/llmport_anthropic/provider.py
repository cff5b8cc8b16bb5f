"""The Anthropic provider: Messages API calls through the official SDK.

Settings (``Runtime(providers={"anthropic": {...}})`` or ``[providers.anthropic]``):

* ``api_key``: default ``ANTHROPIC_API_KEY`` (the SDK's own credential chain
  applies when neither is set);
* ``base_url``: default ``ANTHROPIC_BASE_URL``, else the SDK default;
* ``timeout``: seconds per request for the client (an option ``timeout=``
  on a call overrides it).

Clients are created on first use with ``max_retries=0``: llmport is the one
retry layer. The SDK is imported here only, never at plugin import.
"""

from __future__ import annotations

import os
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, NoReturn

from llmport.errors import ConfigError
from llmport.provider import Provider, ProviderInfo
from llmport.types import ProviderEvent, Request, Response

from . import convert_in, convert_out
from .errors import translate
from .plugin import family_for

_SETTINGS = frozenset({"api_key", "base_url", "timeout", "auth_token", "default_headers"})


class AnthropicProvider(Provider):
    """``anthropic:<model>``: Claude through the Messages API."""

    name = "anthropic"

    def __init__(self, settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None):
        super().__init__(settings, info)
        unknown = sorted(set(self.settings) - _SETTINGS)
        if unknown:
            raise ConfigError(
                f"anthropic: unknown setting(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(_SETTINGS))}"
            )
        self._lock = threading.Lock()
        self._sync: Any = None
        self._async: Any = None

    def __repr__(self) -> str:
        # Settings may hold a key: show only where requests go.
        return f"AnthropicProvider(base_url={self._base_url()!r})"

    # -- clients --------------------------------------------------------------

    def _base_url(self) -> str | None:
        return self.settings.get("base_url") or os.environ.get("ANTHROPIC_BASE_URL") or None

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"max_retries": 0}
        api_key = self.settings.get("api_key") or os.environ.get("ANTHROPIC_API_KEY")
        if api_key:
            kwargs["api_key"] = api_key
        elif self.settings.get("auth_token"):
            kwargs["auth_token"] = self.settings["auth_token"]
        if self._base_url():
            kwargs["base_url"] = self._base_url()
        if self.settings.get("timeout") is not None:
            kwargs["timeout"] = self.settings["timeout"]
        if self.settings.get("default_headers"):
            kwargs["default_headers"] = dict(self.settings["default_headers"])
        return kwargs

    def client(self) -> Any:
        """The sync ``anthropic.Anthropic`` client (created once, on first use)."""
        if self._sync is None:
            with self._lock:
                if self._sync is None:
                    import anthropic

                    self._sync = anthropic.Anthropic(**self._client_kwargs())
        return self._sync

    def async_client(self) -> Any:
        """The ``anthropic.AsyncAnthropic`` client (created once, on first use)."""
        if self._async is None:
            with self._lock:
                if self._async is None:
                    import anthropic

                    self._async = anthropic.AsyncAnthropic(**self._client_kwargs())
        return self._async

    def close(self) -> None:
        with self._lock:
            if self._sync is not None:
                self._sync.close()
            self._sync = None
            self._async = None  # its pool belongs to an event loop; dropped, closed by GC

    # -- checks -----------------------------------------------------------------

    def prepare(self, request: Request) -> None:
        """Reject before any request what this model cannot take (typed input errors)."""
        super().prepare(request)
        convert_in.check(request, self.capabilities(request.model), family_for(request.model))

    def _prepared(self, request: Request) -> convert_in.Prepared:
        return convert_in.build(
            request, self.capabilities(request.model), family_for(request.model)
        )

    # -- calls -------------------------------------------------------------------

    def _call(self, request: Request) -> Response:
        prepared = self._prepared(request)
        try:
            message = self.client().messages.create(**prepared.params)
        except Exception as exc:
            _reraise(exc)
        return convert_out.response(message, prepared)

    async def _async_call(self, request: Request) -> Response:
        prepared = self._prepared(request)
        try:
            message = await self.async_client().messages.create(**prepared.params)
        except Exception as exc:
            _reraise(exc)
        return convert_out.response(message, prepared)

    def _stream(self, request: Request) -> Iterator[ProviderEvent]:
        prepared = self._prepared(request)
        params = {**prepared.params, "stream": True}
        state = convert_out.StreamState(prepared)
        try:
            with self.client().messages.create(**params) as stream:
                for event in stream:
                    yield from state.feed(event)
        except Exception as exc:
            _reraise(exc)

    async def _astream(self, request: Request) -> AsyncIterator[ProviderEvent]:
        prepared = self._prepared(request)
        params = {**prepared.params, "stream": True}
        state = convert_out.StreamState(prepared)
        try:
            async with await self.async_client().messages.create(**params) as stream:
                async for event in stream:
                    for out in state.feed(event):
                        yield out
        except Exception as exc:
            _reraise(exc)


def _reraise(exc: Exception) -> NoReturn:
    """Raise the llmport error for ``exc`` (chained), or ``exc`` itself if it is not the SDK's."""
    error = translate(exc)
    if error is None or error is exc:
        raise exc
    raise error from exc
