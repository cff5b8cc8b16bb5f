"""``openai`` SDK exceptions -> llmport's typed errors: only OpenAI's own codes.

The status table, the retry rule (408/409/429/5xx transient, an explicit
``x-should-retry`` wins), the ``retry-after-ms`` / ``retry-after`` parsing,
transport failures and redaction are the core's
(:mod:`llmport.provider.translate`). What is OpenAI's:

* a 429 whose code is ``insufficient_quota`` is permanent (waiting does not
  add credit);
* an error reported inside an answer (a Chat stream's ``error`` chunk, a
  Responses ``error`` event or ``failed`` response: no HTTP status) is
  transient when its type or code says the server failed, timed out or was
  rate limited (:data:`TRANSIENT_STREAM_ERRORS`), permanent otherwise
  (``invalid_prompt``, ...).

The SDK is never imported here: an exception can only be the SDK's if the
SDK is already loaded.
"""

from __future__ import annotations

import sys

from llmport.errors import (
    MalformedResponseError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
)
from llmport.provider.translate import status_error

#: Stream error types/codes that mean "try again" (the server's fault, or load).
TRANSIENT_STREAM_ERRORS = frozenset(
    {
        "server_error",
        "rate_limit_exceeded",
        "overloaded_error",
        "service_unavailable",
        "vector_store_timeout",
    }
)


def translate(exc: BaseException, provider: str = "openai") -> ProviderError | None:
    """The llmport error for an ``openai`` SDK exception, else None (see the module doc)."""
    openai = sys.modules.get("openai")
    if openai is None or not isinstance(exc, openai.OpenAIError):
        return None
    if isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        message = str(body.get("message") or exc.message or type(exc).__name__)
        quota = exc.status_code == 429 and exc.code == "insufficient_quota"
        return status_error(
            exc.status_code,
            message,
            provider=provider,
            headers=exc.response.headers,
            code=exc.code,
            retryable=False if quota else None,
        )
    if isinstance(exc, openai.APITimeoutError) and not _aiohttp_disconnect(exc):
        return ProviderTimeoutError(f"{provider}: request timed out", provider=provider)
    if isinstance(exc, openai.APIConnectionError):
        cause = _aiohttp_disconnect(exc) or exc.__cause__ or exc.__context__
        kind = f" ({type(cause).__name__})" if cause is not None else ""
        return ProviderConnectionError(f"{provider}: connection failed{kind}", provider=provider)
    if isinstance(exc, openai.APIResponseValidationError):
        return MalformedResponseError(
            f"{provider}: the answer did not match the API schema", provider=provider
        )
    if isinstance(exc, openai.APIError):  # an error event inside a stream
        return stream_error(exc.message, exc.code, exc.type, provider=provider)
    return None


def stream_error(
    message: str | None, code: str | int | None, kind: str | None, *, provider: str
) -> ProviderError:
    """An error reported inside a stream (Chat ``error`` chunk, Responses ``error`` event).

    A code that is an HTTP status (OpenRouter and other compatible services send
    ``{"error": {"code": 400, ...}}`` in a 200 stream) is typed as that status is
    when it comes as the response's own.
    """
    status = _http_status(code)
    if status is not None:
        return status_error(status, message or "error during streaming", provider=provider)
    transient = bool({code, kind} & TRANSIENT_STREAM_ERRORS)
    cls = RateLimitError if "rate_limit_exceeded" in (code, kind) else ProviderError
    label = f" {code}" if code else ""
    return cls(
        f"{provider}{label}: {message or 'error during streaming'}",
        provider=provider,
        code=None if code is None else str(code),
        retryable=transient,
    )


def _http_status(code: object) -> int | None:
    """``code`` as an HTTP error status (400-599), if it is one (an int or its digits)."""
    if isinstance(code, bool):
        return None
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    return code if isinstance(code, int) and 400 <= code <= 599 else None


def _aiohttp_disconnect(exc: BaseException) -> BaseException | None:
    """The aiohttp connection error under a timeout the SDK's aiohttp transport reported.

    openai's vendored httpx-aiohttp maps every ``aiohttp.ClientConnectionError``
    (a reset, a server that hung up) to ``httpx.ConnectTimeout``, so the SDK
    raises ``APITimeoutError`` for what is a connection failure. Anthropic's
    copy maps them to connection errors; this restores the same classification
    as on the httpx transport. Real aiohttp timeouts stay timeouts.
    """
    seen = 0
    cause = exc.__cause__
    while cause is not None and seen < 4:
        module = type(cause).__module__
        if module.startswith("aiohttp"):
            name = type(cause).__name__
            if "Timeout" in name or isinstance(cause, TimeoutError):
                return None
            return cause
        cause = cause.__cause__
        seen += 1
    return None
