"""An error inside a 200 stream is typed by its code, as the same status is when it is the
response's own, on OpenAI and every compatible service on the Chat wire.

OpenRouter (and other services that proxy) report a failure that happens after the
stream started as a chunk ``{"error": {"code": 400, "message": ...}}``.
"""

from __future__ import annotations

import asyncio

import pytest
from llmport import Runtime
from llmport.errors import (
    AuthenticationError,
    BadRequestError,
    ExecFailed,
    LlmportError,
    OverloadedError,
    ProviderError,
    RateLimitError,
)
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_openai.profiles import PROFILES

CHAT = ["openai", *(p.prefix for p in PROFILES.values() if p.wire == "chat")]

#: (the error chunk's code, the typed error, whether it is retried)
CODES = [
    (400, BadRequestError, False),
    ("401", AuthenticationError, False),
    (429, RateLimitError, True),
    (503, OverloadedError, True),
]


def _stream(code: object) -> list[dict[str, object]]:
    base = {"id": "gen-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    delta = {"role": "assistant", "content": ""}
    return [
        {"data": {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}},
        {"data": {"error": {"code": code, "message": "Token limit reached"}}},
    ]


def _first_error(prefix: str, code: object, is_async: bool) -> LlmportError:
    with LoopbackServer([Reply(sse=_stream(code))]) as server:
        rt = Runtime(
            model=f"{prefix}:m",
            providers={prefix: {"api_key": "test-key", "base_url": server.url}},
            max_retries=1,
        )
        try:
            if is_async:

                async def drain() -> None:
                    async for _ in rt.astream("hi"):
                        pass

                asyncio.run(drain())
            else:
                list(rt.stream("hi"))
        except LlmportError as exc:
            return exc
        finally:
            rt.close()
    raise AssertionError("the stream's error chunk raised nothing")


def _unwrap(exc: LlmportError) -> ProviderError:
    """The attempt's own error (a retryable one that exhausted its attempts is wrapped)."""
    if isinstance(exc, ExecFailed):
        assert isinstance(exc.last_error, ProviderError)
        return exc.last_error
    assert isinstance(exc, ProviderError)
    return exc


@pytest.mark.filterwarnings("ignore::llmport.UnknownModelWarning")
@pytest.mark.parametrize("prefix", CHAT)
@pytest.mark.parametrize(("code", "cls", "retried"), CODES, ids=[str(c[0]) for c in CODES])
def test_an_error_chunk_is_typed_by_its_code(
    prefix: str, code: object, cls: type[ProviderError], retried: bool
) -> None:
    error = _unwrap(_first_error(prefix, code, is_async=False))
    assert type(error) is cls, error
    assert error.retryable is retried
    assert "Token limit reached" in str(error)


@pytest.mark.filterwarnings("ignore::llmport.UnknownModelWarning")
@pytest.mark.parametrize("prefix", ["openai", "openrouter"])
def test_an_error_chunk_is_typed_in_async_streams(prefix: str) -> None:
    assert type(_unwrap(_first_error(prefix, 400, is_async=True))) is BadRequestError


@pytest.mark.filterwarnings("ignore::llmport.UnknownModelWarning")
def test_a_code_that_is_no_status_keeps_its_own_typing() -> None:
    error = _unwrap(_first_error("openrouter", "context_length_exceeded", is_async=False))
    assert type(error) is ProviderError and error.code == "context_length_exceeded"
