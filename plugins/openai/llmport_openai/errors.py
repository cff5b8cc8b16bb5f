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

import email.utils
import json
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from llmport.errors import (
    AuthenticationError,
    BadRequestError,
    LlmportError,
    MalformedResponseError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
)

_KEY_PATTERN = re.compile(r"\b(sk-|sess-)[A-Za-z0-9_\-*]{4,}")
_STATUS_CLASSES: dict[int, type[ProviderError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    408: ProviderTimeoutError,
    422: BadRequestError,
    429: RateLimitError,
}


def redact(text: str) -> str:
    """Mask anything shaped like an OpenAI key."""
    return _KEY_PATTERN.sub(lambda m: m.group(1) + "***", text)


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait, or None."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed is not None else None


def from_status(
    status: int,
    message: str,
    *,
    provider: str,
    headers: Mapping[str, str] | None = None,
    code: str | None = None,
) -> ProviderError:
    """The typed error for an HTTP error status."""
    cls = _STATUS_CLASSES.get(status)
    if cls is None:
        cls = OverloadedError if status >= 500 else ProviderError
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
