"""An unstreamed async Messages call posted straight through the SDK's aiohttp session.

``client.post`` rebuilds per request what is the same for every request of a
client with the same options (its request options copied three times, the
headers merged from five layers, an ``httpx2.Request``), then sends it through
ten coroutine layers of httpx into the SDK's vendored aiohttp transport. At
500 calls in flight that was ~60 of the ~170 objects each call held and the
part of its CPU time that made llmport slower than the bare SDK on its own
aiohttp transport.

Here the SDK builds the request once per client and request options
(:func:`~llmport_anthropic.sdk_internals.built_request`: its own steps, so the
URL, headers and timeout are its own) and each call posts its body with that
:class:`Route` through the same ``aiohttp.ClientSession`` the SDK would use,
as its transport does (no redirects followed by aiohttp unless the httpx
client follows them, no decompression by aiohttp, the timeout mapped the same
way). What comes back is the SDK's too: a transport failure raises the SDK's
``APITimeoutError`` / ``APIConnectionError``, a status outside 2xx its typed
``APIStatusError`` built from the answer, and a compressed answer is decoded
by httpx, as ``post`` would.

It is used only where it changes nothing but the cost
(:func:`~llmport_anthropic.sdk_internals.sends_plainly` and
:func:`~llmport_anthropic.sdk_internals.traces_nothing`: a plain client on the
aiohttp transport, whose SDK would start no span); the first request of a
client, streams, the sync client, Vertex AI and the httpx transport go
through ``client.post``.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import sdk_internals

#: Routes kept per client: options that differ per call (a header with a request id)
#: make a route each; past this many the client's routes start again.
MAX_ROUTES = 256


@dataclass(frozen=True, slots=True)
class Route:
    """Where and how a client posts a body: what the SDK built, read once."""

    #: The URL (a ``yarl.URL``: aiohttp parses a string on every request). Not in the
    #: repr, nor are the headers and the template: a URL may hold a password.
    url: Any = field(repr=False)
    #: The request's headers, ``Content-Length`` left to aiohttp (the body differs per call).
    headers: Any = field(repr=False)
    #: ``aiohttp.ClientTimeout`` from the request's httpx timeout, mapped as the transport maps it.
    timeout: Any
    #: The TLS server name the SDK asks for (a host with ``_``), else ``None``.
    server_hostname: str | None
    #: Whether redirects are followed (the httpx client's setting), and how many.
    follow_redirects: bool
    max_redirects: int
    #: The SDK's request without a body: errors carry it, with the call's body.
    template: Any = field(repr=False)

    def request(self, body: bytes) -> Any:
        """The ``httpx2.Request`` the SDK would have sent with ``body`` (for its errors)."""
        import httpx2

        return httpx2.Request(
            "POST",
            self.template.url,
            headers=self.template.headers,
            content=body,
            extensions=self.template.extensions,
        )


class Routes:
    """Each client's routes, by the request options that decide them (per provider)."""

    def __init__(self) -> None:
        # Weak: a client closed with its event loop takes its routes with it.
        self._by_client: weakref.WeakKeyDictionary[Any, dict[Hashable, Route]] = (
            weakref.WeakKeyDictionary()
        )

    def routes(self, client: Any) -> list[Route]:
        """The routes ``client`` has."""
        return list(self._by_client.get(client, {}).values())

    def size(self, client: Any) -> int:
        """How many routes ``client`` has."""
        return len(self._by_client.get(client, ()))

    def find(self, client: Any, path: str, options: Mapping[str, Any]) -> Route | None:
        """The route for these options if the client has one."""
        routes = self._by_client.get(client)
        return None if routes is None else routes.get(_key(path, options))

    async def learn(self, client: Any, path: str, options: Mapping[str, Any]) -> Route:
        """Build the route with the SDK's own steps and keep it."""
        route = _route(client, await sdk_internals.built_request(client, path, options))
        routes = self._by_client.setdefault(client, {})
        if len(routes) >= MAX_ROUTES:
            routes.clear()
        routes[_key(path, options)] = route
        return route


def usable(client: Any) -> bool:
    """Whether a call on ``client`` may be posted directly now (see the module docstring)."""
    return sdk_internals.sends_plainly(client) and sdk_internals.traces_nothing(client)


async def post(client: Any, route: Route, body: bytes) -> bytes:
    """Post ``body`` along ``route``; the answer's body, or the SDK's error."""
    session = sdk_internals.session(client)
    try:
        async with session.request(
            "POST",
            route.url,
            headers=route.headers,
            data=body,
            allow_redirects=route.follow_redirects,
            max_redirects=route.max_redirects,
            auto_decompress=False,
            compress=False,
            timeout=route.timeout,
            server_hostname=route.server_hostname,
        ) as response:
            content: bytes = await response.read()
    except Exception as error:
        sdk_internals.raise_transport_error(error, route.request(body))
    if 200 <= response.status < 300 and "Content-Encoding" not in response.headers:
        return content
    return _through_httpx(client, route, body, response, content)


def _through_httpx(client: Any, route: Route, body: bytes, response: Any, content: bytes) -> bytes:
    """An answer httpx must read: decoded (``Content-Encoding``), or the SDK's status error."""
    import httpx2

    extensions = {"http_version": b"HTTP/1.1"}
    if response.reason:
        extensions["reason_phrase"] = response.reason.encode()
    answer = httpx2.Response(
        status_code=response.status,
        headers=response.raw_headers,
        content=content,
        request=route.request(body),
        extensions=extensions,
    )
    if not answer.is_success:
        raise sdk_internals.status_error(client, answer) from None
    return answer.content


def _route(client: Any, request: Any) -> Route:
    import aiohttp
    import httpx2
    import yarl
    from multidict import CIMultiDict, CIMultiDictProxy

    headers = httpx2.Headers(request.headers)
    headers.pop("Content-Length", None)
    timeout = request.extensions.get("timeout", {})
    follow_redirects, max_redirects = sdk_internals.redirects(client)
    return Route(
        url=yarl.URL(str(request.url), encoded=True),
        # As the transport hands them over: aiohttp reads an httpx Headers by its items().
        headers=CIMultiDictProxy(CIMultiDict(headers)),
        timeout=aiohttp.ClientTimeout(
            sock_connect=timeout.get("connect"),
            sock_read=timeout.get("read"),
            connect=timeout.get("pool"),
        ),
        server_hostname=request.extensions.get("sni_hostname"),
        follow_redirects=follow_redirects,
        max_redirects=max_redirects,
        template=httpx2.Request(
            "POST", request.url, headers=headers, extensions=request.extensions
        ),
    )


def _key(path: str, options: Mapping[str, Any]) -> Hashable:
    """What decides a route: the path and the request options (headers, timeout, query)."""
    return (path, *((name, _hashable(value)) for name, value in options.items()))


def _hashable(value: Any) -> Hashable:
    if isinstance(value, Mapping):
        return tuple((name, _hashable(item)) for name, item in value.items())
    if isinstance(value, (str, int, float, type(None))):
        return value
    return repr(value)
