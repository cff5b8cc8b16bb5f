"""google-genai exceptions -> llmport's typed errors, classified transient or permanent.

Transient (retried by llmport): connection failures, timeouts, 408, 409,
429 (``RESOURCE_EXHAUSTED``), 5xx (``INTERNAL``, ``UNAVAILABLE``,
``DEADLINE_EXCEEDED``), unreadable answers (bad JSON, cut streams).
Permanent: 400 (``INVALID_ARGUMENT``, ``FAILED_PRECONDITION``), 401, 403,
404 and anything else. The delay Google asks for comes from the
``google.rpc.RetryInfo`` detail (``retryDelay: "7s"``), else a
``Retry-After`` header, and becomes ``retry_after``.

The SDK is only touched through the exception passed in (its class name and
attributes), so importing this module imports no SDK.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from llmport.errors import (
    LlmportError,
    MalformedResponseError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    error_class_for_status,
)
from llmport.retry import retry_after_from_headers

VENDOR = "gemini"

_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def translate(exc: BaseException) -> ProviderError | None:
    """The llmport error for an SDK / transport exception, or None if ``exc`` is not one."""
    if isinstance(exc, ProviderError):
        return exc
    names = {cls.__name__ for cls in type(exc).__mro__}
    module = type(exc).__module__ or ""
    if module.startswith("google.genai"):
        if "APIError" in names:
            return _api_error(exc)
        if "UnknownApiResponseError" in names:
            return MalformedResponseError(
                f"{VENDOR}: the answer is not valid JSON", provider=VENDOR
            )
        return None
    if module.startswith(("httpx", "httpcore")):
        if "TimeoutException" in names or "TimeoutError" in names:
            return ProviderTimeoutError(f"{VENDOR}: request timed out", provider=VENDOR)
        if "RemoteProtocolError" in names:
            # The server hung up mid-answer (a reset or a cut stream): transient.
            return ProviderConnectionError(
                f"{VENDOR}: connection closed before the answer was complete", provider=VENDOR
            )
        if "TransportError" in names or "NetworkError" in names:
            return ProviderConnectionError(
                f"{VENDOR}: connection failed ({type(exc).__name__})", provider=VENDOR
            )
        return None
    if module.startswith("aiohttp"):  # a caller-supplied aiohttp session
        if isinstance(exc, TimeoutError):
            return ProviderTimeoutError(f"{VENDOR}: request timed out", provider=VENDOR)
        return ProviderConnectionError(
            f"{VENDOR}: connection failed ({type(exc).__name__})", provider=VENDOR
        )
    if isinstance(exc, json.JSONDecodeError):
        return MalformedResponseError(
            f"{VENDOR}: the answer is not valid JSON ({exc.msg})", provider=VENDOR
        )
    if "ValidationError" in names and module.startswith("pydantic"):
        return MalformedResponseError(
            f"{VENDOR}: the answer did not match the API schema", provider=VENDOR
        )
    return None


def _api_error(exc: Any) -> ProviderError:
    code = getattr(exc, "code", None)
    status = code if isinstance(code, int) else None
    grpc_status = getattr(exc, "status", None)
    message = getattr(exc, "message", None) or str(exc)
    details = getattr(exc, "details", None)
    if status is None:
        cls: type[ProviderError] = ProviderError
    else:
        cls = error_class_for_status(status)
    retryable = status is not None and (status in (408, 409, 429) or status >= 500)
    label = f"{status} {grpc_status}" if grpc_status else str(status)
    return cls(
        f"{VENDOR} {label}: {message}",
        provider=VENDOR,
        status=status,
        retryable=retryable,
        retry_after=retry_after(details, getattr(exc, "response", None)),
        code=str(grpc_status) if grpc_status else None,
    )


def retry_after(details: Any, response: Any = None) -> float | None:
    """Seconds to wait: a ``RetryInfo`` detail (``"retryDelay": "7s"``), else ``Retry-After``."""
    error = details.get("error", details) if isinstance(details, dict) else None
    for item in (error or {}).get("details", None) or []:
        if isinstance(item, dict) and item.get("@type") == _RETRY_INFO:
            match = _DURATION.match(str(item.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return retry_after_from_headers(getattr(response, "headers", None))


@contextmanager
def translated(secret: str | None = None) -> Iterator[None]:
    """Re-raise SDK and transport exceptions as llmport errors (chained).

    ``secret`` (the API key in use) is masked wherever the vendor echoed it,
    whatever its shape.
    """
    try:
        yield
    except LlmportError:
        raise
    except Exception as exc:
        error = translate(exc)
        if error is None:
            raise
        if secret and secret in str(error):
            error.args = (str(error).replace(secret, "***"),)
        raise error from exc
