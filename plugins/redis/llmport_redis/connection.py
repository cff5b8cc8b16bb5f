"""What the limiter and the key-value store share: their URL, the client, the name.

:func:`split_url` takes llmport's own query parameters (``prefix=``,
``timeout=``...) out of a ``redis://`` URL, leaving what redis-py reads;
:func:`bounded_client` makes the sync client whose every operation is
bounded by ``timeout`` (one retry, each try ``timeout / 4`` to connect and
as much for the reply); :func:`service` is how an error names the server
(``Redis at host:port``), never with its password.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["DEFAULT_TIMEOUT", "bounded_client", "service", "split_url"]

#: Seconds bounding one Redis operation (two tries of connect + reply).
DEFAULT_TIMEOUT = 4.0


def split_url(url: str, names: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """``url`` without the query parameters ``names``, and their values."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    ours = {k: v for k, v in query if k in names}
    rest = urlencode([(k, v) for k, v in query if k not in names])
    return urlunsplit(parts._replace(query=rest)), ours


def bounded_client(url: str, timeout: float) -> Any:
    """A thread-safe redis-py client on ``url`` whose operations end within ``timeout``."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    # One retry (a pooled connection Redis closed), each try bounded: timeout / 4 to
    # connect, timeout / 4 for the reply.
    return redis.Redis.from_url(
        url,
        socket_connect_timeout=timeout / 4,
        socket_timeout=timeout / 4,
        retry=Retry(NoBackoff(), 1),
    )


def service(url: str) -> str:
    """What an outage error names: ``Redis at host:port`` (or the socket's path)."""
    parts = urlsplit(url)
    if parts.hostname is None:
        return f"Redis at {parts.path or url}"
    return f"Redis at {parts.hostname}:{parts.port or 6379}"
