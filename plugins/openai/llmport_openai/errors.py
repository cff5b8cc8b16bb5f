"""``openai`` SDK exceptions -> llmport's typed errors.

Classification (SPEC §6): 408, 409, 429 and 5xx are transient, every other
status is permanent, except that a 429 whose code is ``insufficient_quota``
is permanent (waiting does not add credit) and an explicit
``x-should-retry`` header from the server wins. The delay the server asked
for is read from ``retry-after-ms`` first, then ``retry-after`` (seconds or
an HTTP date). Messages never carry an API key: OpenAI echoes a masked key
in 401 messages, and even that is redacted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from llmport.errors import (
    LlmportError,
    MalformedResponseError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    error_class_for_status,
    redact,
)
from llmport.retry import retry_after_from_headers


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait, or None (the core's rule)."""
    return retry_after_from_headers(headers)


def from_status(
    status: int,
    message: str,
    *,
    provider: str,
    headers: Mapping[str, str] | None = None,
    code: str | None = None,
) -> ProviderError:
    """The typed error for an HTTP error status."""
    cls = error_class_for_status(status)
    retryable: bool | None = None
    if status == 409:
        retryable = True
    if status == 429 and code == "insufficient_quota":
        retryable = False
    should = (headers or {}).get("x-should-retry")
    if should in ("true", "false"):
        retryable = should == "true"
    text = f"{status} {redact(message)}"
    if code:
        text += f" (code={code})"
    return cls(
        text,
        provider=provider,
        status=status,
        retryable=retryable,
        retry_after=retry_after(headers),
        code=code,
    )


def translate(exc: BaseException, provider: str) -> BaseException:
    """The llmport error for ``exc`` (``exc`` itself when it is not the vendor's)."""
    if isinstance(exc, LlmportError):
        return exc
    import openai

    if isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        message = str(body.get("message") or exc.message or exc.__class__.__name__)
        return from_status(
            exc.status_code, message, provider=provider, headers=exc.response.headers, code=exc.code
        )
    if isinstance(exc, openai.APITimeoutError):
        return ProviderTimeoutError(f"request timed out ({provider})", provider=provider)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f": {type(cause).__name__}: {redact(str(cause))}" if cause else ""
        return ProviderConnectionError(f"connection failed{detail}", provider=provider)
    if isinstance(exc, openai.APIResponseValidationError | json.JSONDecodeError):
        return MalformedResponseError(
            f"unreadable response: {redact(str(exc))[:200]}", provider=provider
        )
    if isinstance(exc, openai.APIError):  # e.g. an error event inside a stream
        return ProviderError(
            redact(exc.message),
            provider=provider,
            code=exc.code,
            retryable=_stream_error_retryable(exc),
        )
    return _transport(exc, provider) or exc


def _stream_error_retryable(exc: Any) -> bool:
    body = exc.body if isinstance(exc.body, dict) else {}
    kind = str(body.get("type") or exc.code or "")
    return kind in ("server_error", "rate_limit_exceeded", "overloaded_error")


def _transport(exc: BaseException, provider: str) -> ProviderError | None:
    """httpx2 errors raised while a stream is being read (the SDK does not wrap those)."""
    import httpx2

    if isinstance(exc, httpx2.TimeoutException):
        return ProviderTimeoutError(
            f"timed out reading the response ({provider})", provider=provider
        )
    if isinstance(exc, httpx2.TransportError):
        return ProviderConnectionError(
            f"connection failed mid-response: {type(exc).__name__}: {exc}", provider=provider
        )
    return None


@contextmanager
def translated(provider: str) -> Iterator[None]:
    """Re-raise vendor and transport errors as llmport errors."""
    try:
        yield
    except Exception as exc:
        mapped = translate(exc, provider)
        if mapped is exc:
            raise
        raise mapped from exc
