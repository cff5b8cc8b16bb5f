"""JSON POSTs for plugins that call a vendor's REST API without an SDK.

:class:`JsonEndpoint` is one vendor's API as such a plugin holds it: base
URL, bearer key (a :class:`~llmport.errors.ConfigError` when missing, before
any request), a sync client and one async client per event loop
(:class:`~llmport.provider.clients.ClientCache`). Underneath, a plugin gives
an httpx-style client (``httpx2.Client`` / ``httpx2.AsyncClient``:
``post(url, content=, headers=)`` answering with ``status_code``, ``headers``
and ``content``) and a function that reads the vendor's error message from
an error body. :func:`post_json` / :func:`apost_json` post bytes serialized
once, and give the parsed JSON of a 2xx answer; an error status becomes the
typed :class:`~llmport.errors.ProviderError` of
:func:`~llmport.provider.translate.status_error` (the core's one retry rule),
and an answer that is not JSON a
:class:`~llmport.errors.MalformedResponseError`. Transport exceptions are the
vendor boundary's (:func:`~llmport.provider.translate.transport_error` knows
httpx2's by name). Nothing here imports an HTTP library.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ..errors import ConfigError, UnsupportedFeatureError
from ..messages.types import Request
from ..observe.redaction import register_secret
from .clients import ClientCache
from .contract import Prepared, Provider, ProviderInfo
from .translate import malformed, status_error, translating
from .wire import loads as strict_json

__all__ = ["ErrorMessage", "JsonEmbeddingProvider", "JsonEndpoint", "apost_json", "post_json"]

#: Reads the vendor's message from a parsed error body (None: not its error shape).
ErrorMessage = Callable[[Any], "str | None"]


class JsonEndpoint:
    """A vendor's JSON API: ``post(path, body)`` with its key, on cached httpx-style clients.

    ``make_client(is_async)`` builds a client (importing the HTTP library there,
    lazily); ``message`` reads the vendor's error bodies; ``missing_key`` is the
    ConfigError's text when no key is set.
    """

    __slots__ = ("_clients", "base_url", "key", "message", "missing_key", "provider")

    def __init__(
        self,
        provider: str,
        base_url: str,
        key: str | None,
        *,
        make_client: Callable[[bool], Any],
        message: ErrorMessage,
        missing_key: str,
    ) -> None:
        self.provider = provider
        self.base_url = base_url.rstrip("/")
        self.key = key or None
        self.message = message
        self.missing_key = missing_key
        self._clients: ClientCache[Any, Any] = ClientCache(
            lambda: make_client(False), lambda: make_client(True)
        )

    def headers(self) -> dict[str, str]:
        """The request headers, the key registered for redaction; ConfigError without a key."""
        if not self.key:
            raise ConfigError(self.missing_key)
        register_secret(self.key)
        return {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}

    def post(self, path: str, body: bytes) -> Any:
        """POST ``body`` to ``path``; the answer's JSON (see :func:`post_json`)."""
        headers = self.headers()
        url = self.base_url + path
        return post_json(
            self._clients.sync(), url, body, headers, provider=self.provider, message=self.message
        )

    async def apost(self, path: str, body: bytes) -> Any:
        """Async :meth:`post` on the running event loop's client."""
        headers = self.headers()
        client = await self._clients.aclient()
        url = self.base_url + path
        return await apost_json(
            client, url, body, headers, provider=self.provider, message=self.message
        )

    def close(self) -> None:
        """Close every client (the async ones in their loops)."""
        self._clients.close()

    async def aclose(self) -> None:
        """Close the running loop's async client now."""
        await self._clients.aclose()


def post_json(
    client: Any,
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    provider: str,
    message: ErrorMessage,
) -> Any:
    """POST ``body`` (JSON bytes) to ``url``; the parsed answer, or the typed error."""
    response = client.post(url, content=body, headers=headers)
    return answer_json(response.status_code, response.headers, response.content, provider, message)


async def apost_json(
    client: Any,
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    provider: str,
    message: ErrorMessage,
) -> Any:
    """Async :func:`post_json` on an async client."""
    response = await client.post(url, content=body, headers=headers)
    return answer_json(response.status_code, response.headers, response.content, provider, message)


def answer_json(
    status: int, headers: Mapping[str, Any], content: bytes, provider: str, message: ErrorMessage
) -> Any:
    """A 2xx answer's JSON; an error status's typed error, with the vendor's message."""
    try:
        data = strict_json(content) if content else None
    except ValueError:
        data = None
        if 200 <= status < 300:
            raise malformed(provider, "the answer is not JSON") from None
    if 200 <= status < 300:
        return data
    text = message(data) or (content[:200].decode("utf-8", "replace") if content else "")
    raise status_error(status, text or f"HTTP {status}", provider=provider, headers=headers)


class JsonEmbeddingProvider(Provider):
    """A provider that only embeds, through a vendor's REST API (no SDK): the part every
    such plugin shares.

    A subclass names its vendor (:attr:`label`), default :attr:`base_url`, key
    variable (:attr:`key_variable`) and error-body reader (:meth:`error_message`),
    and writes ``prepare_embed`` / ``send_embed`` / ``asend_embed`` through
    :attr:`endpoint`. Its settings are ``api_key``, ``base_url`` and ``timeout``
    (another name is a :class:`~llmport.errors.ConfigError`); its key is masked in
    every error; chat is refused typed before any request; the clients are
    ``httpx2``'s, imported when first used.
    """

    #: The vendor's name in messages (``"Cohere"``, ``"Voyage AI"``).
    label: ClassVar[str] = ""
    base_url: ClassVar[str] = ""
    key_variable: ClassVar[str] = ""
    SETTINGS: ClassVar[frozenset[str]] = frozenset({"api_key", "base_url", "timeout"})

    def __init__(self, settings: Mapping[str, Any] | None = None, info: ProviderInfo | None = None):
        super().__init__(settings, info)
        unknown = sorted(set(self.settings) - self.SETTINGS)
        if unknown:
            raise ConfigError(
                f"{self.name}: unknown setting(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(self.SETTINGS))}"
            )
        self.endpoint = JsonEndpoint(
            self.name,
            str(self.settings.get("base_url") or self.base_url),
            self.settings.get("api_key") or self.environment_key(self.key_variable),
            make_client=self._client,
            message=self.error_message,
            missing_key=(
                f"no {self.label} API key: set {self.key_variable} or the api_key setting"
            ),
        )

    @staticmethod
    def error_message(data: Any) -> str | None:
        """The vendor's message in a parsed error body (None: not its error shape)."""
        return None

    def secrets(self) -> tuple[str, ...]:
        """The configured secrets and the key in use (from the environment too)."""
        key = self.endpoint.key
        return (*super().secrets(), *((key,) if key else ()))

    def translating(self) -> translating:
        return translating(self.name, None, self.secrets())

    def _client(self, is_async: bool) -> Any:
        import httpx2

        timeout = self.settings.get("timeout")
        return httpx2.AsyncClient(timeout=timeout) if is_async else httpx2.Client(timeout=timeout)

    def close(self) -> None:
        self.endpoint.close()

    async def aclose(self) -> None:
        await self.endpoint.aclose()

    def prepare(self, request: Request) -> Prepared:
        """Chat is not this provider's: refused before any request."""
        raise UnsupportedFeatureError(
            self.name, request.model, "chat", f"the {self.name} provider only embeds (rt.embed)"
        )
