"""The entry point: ``redis://``, ``rediss://`` and ``unix://`` URLs for limiters and
key-value stores (``Runtime(limiter=...)``, ``Runtime(embed_cache=...)``)."""

from __future__ import annotations

from collections.abc import Callable

from llmport.plugins.hookspecs import hookimpl


def _make(url: str) -> object:
    from .limiter import RedisLimiter  # redis is imported when a runtime first needs it

    return RedisLimiter.from_url(url)


@hookimpl
def llmport_limiters(register: Callable[..., None]) -> None:
    for scheme in ("redis", "rediss", "unix"):
        register(scheme, _make)


def _make_kv(url: str) -> object:
    from .kv import RedisKV  # redis is imported when a runtime first needs it

    return RedisKV.from_url(url)


@hookimpl
def llmport_kv_stores(register: Callable[..., None]) -> None:
    for scheme in ("redis", "rediss", "unix"):
        register(scheme, _make_kv)
