"""The aiohttp session an async Gemini client runs on.

Imported only when the provider builds an async client on aiohttp (never at
plugin import), so it may import aiohttp at the top.
"""

from __future__ import annotations

import urllib.request
import warnings
from typing import Any

import aiohttp

#: google-genai's own read buffer: long stream lines (a big image, a long
#: function call) arrive whole.
READ_BUFFER = 2**22


class GeminiResponse(aiohttp.ClientResponse):
    """An aiohttp response whose ``json()`` fails on a non-JSON body as the SDK expects.

    google-genai reads an error answer with ``await response.json()`` and
    falls back to the text and the reason phrase only on ``ContentTypeError``
    (a body not labelled JSON). A body labelled JSON that is not JSON (a
    proxy's error page), or an empty one, would otherwise raise
    ``JSONDecodeError`` or give ``None`` instead of the status error, so a
    503 would become an unreadable answer and a 400 would be retried. Raising
    ``ContentTypeError`` there gives the same status error as on httpx.
    Successful answers are read with ``text()`` and are unaffected.
    """

    async def json(self, *args: Any, **kwargs: Any) -> Any:
        """The parsed body; ``ContentTypeError`` when it is empty or not JSON."""
        try:
            parsed = await super().json(*args, **kwargs)
        except ValueError:  # json.JSONDecodeError (a ContentTypeError is not a ValueError)
            parsed = None
        else:
            if parsed is not None or self._body is None or self._body.strip():
                return parsed
        raise aiohttp.ContentTypeError(
            self.request_info,
            self.history,
            status=self.status,
            message="the body is not JSON",
            headers=self.headers,
        )


# aiohttp warns on any subclass of ClientSession (its internals may change); this one
# overrides only the public request(). Silenced here, once, at class creation.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "Inheritance class", DeprecationWarning)

    class GeminiSession(aiohttp.ClientSession):
        """A ``ClientSession`` whose ``request()`` upper-cases the HTTP method.

        google-genai calls ``session.request(method="post", ...)``. aiohttp sends
        ``POST`` either way, but whatever wraps ``ClientSession._request`` sees
        the method as passed: vcrpy records and matches it as is, so cassettes
        recorded on httpx (``POST``), the plugin's own and users', would not
        replay on aiohttp.
        """

        def request(self, method: str, url: Any, **kwargs: Any) -> Any:
            """``ClientSession.request`` with ``method`` upper-cased."""
            return super().request(method.upper(), url, **kwargs)


def session() -> aiohttp.ClientSession:
    """A :class:`GeminiSession` like the one google-genai would make, with :class:`GeminiResponse`.

    No connection limit (llmport's limiter bounds concurrency, and the SDK sets
    none either) and the SDK's read buffer. Must be called inside the event
    loop it will serve.

    ``trust_env`` (proxies from ``HTTP(S)_PROXY``, credentials from
    ``~/.netrc``) only when the environment names a proxy: with it, aiohttp
    looks both up in a worker thread on every request, two thread hops that
    doubled the time of a sequential call on a loopback server. Without a
    proxy there is nothing for it to find but ``.netrc`` credentials, which
    the httpx2 transport does not read either.
    """
    return GeminiSession(
        connector=aiohttp.TCPConnector(limit=0),
        trust_env=proxy_in_environment(),
        read_bufsize=READ_BUFFER,
        response_class=GeminiResponse,
    )


def proxy_in_environment() -> bool:
    """Whether the environment (or the system settings) names a proxy aiohttp would use."""
    return bool(_PROXY_SCHEMES & set(urllib.request.getproxies()))


#: The schemes whose proxies aiohttp reads from the environment.
_PROXY_SCHEMES = frozenset({"http", "https", "ws", "wss"})
