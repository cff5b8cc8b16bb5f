"""Cassettes for the Gemini plugin tests: HTTP methods matched as they go on the wire."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pytest


def upper_method(request: Any) -> Any:
    """The recorded request with its method upper-cased, as aiohttp sends it.

    google-genai calls ``session.request(method="post", ...)``; aiohttp
    upper-cases the method before it goes on the wire, but vcrpy's aiohttp
    stub records and matches the method exactly as passed, so a ``POST`` in a
    cassette would never match the async client's ``post``. vcrpy runs this
    on every request it matches or records (it gets a copy).
    """
    request.method = request.method.upper()
    return request


@pytest.fixture
def cassette(cassette: Callable[..., AbstractContextManager[Any]]) -> Any:
    """The shared ``cassette`` fixture, with methods compared upper-cased."""

    @contextmanager
    def use(name: str, **overrides: Any) -> Iterator[Any]:
        overrides.setdefault("before_record_request", upper_method)
        with cassette(name, **overrides) as cass:
            yield cass

    return use
