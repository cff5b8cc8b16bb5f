"""SDK exceptions -> llmport's typed errors, classified transient or permanent.

Transient (retried by llmport): connection failures, timeouts, 408, 409,
429, 5xx and 529 (``overloaded_error`` -> :class:`~llmport.errors.OverloadedError`),
also when Anthropic sends them as an ``error`` event after a 200 inside a
stream. Everything else is permanent. ``retry-after-ms`` / ``retry-after``
become ``retry_after``; ``x-should-retry`` overrides the classification.

The SDK is only touched through the exception passed in (its class name and
attributes), so importing this module imports no SDK.
"""

from __future__ import annotations

import json
from typing import Any

from llmport.errors import (
    AuthenticationError,
    BadRequestError,
    MalformedResponseError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    error_class_for_status,
)
from llmport.retry import retry_after_from_headers

VENDOR = "anthropic"

# Anthropic's error.type -> (llmport class, the HTTP status it stands for).
_BY_TYPE: dict[str, tuple[type[ProviderError], int]] = {
    "invalid_request_error": (BadRequestError, 400),
    "request_too_large": (BadRequestError, 413),
    "authentication_error": (AuthenticationError, 401),
    "permission_error": (PermissionDeniedError, 403),
    "not_found_error": (NotFoundError, 404),
    "rate_limit_error": (RateLimitError, 429),
    "timeout_error": (ProviderTimeoutError, 504),
    "api_error": (OverloadedError, 500),
    "overloaded_error": (OverloadedError, 529),
}


def translate(exc: BaseException) -> ProviderError | None:
    """The llmport error for an SDK / transport exception, or None if ``exc`` is not one."""
    if isinstance(exc, ProviderError):
        return exc
    names = {cls.__name__ for cls in type(exc).__mro__}
    module = type(exc).__module__
    if module.startswith("anthropic"):
        if "APIStatusError" in names:
            return _status_error(exc)
        if "APITimeoutError" in names:
            return ProviderTimeoutError(f"{VENDOR}: request timed out", provider=VENDOR)
        if "APIConnectionError" in names:
            cause = exc.__cause__ or exc.__context__
            detail = f": {type(cause).__name__}" if cause is not None else ""
            return ProviderConnectionError(f"{VENDOR}: connection failed{detail}", provider=VENDOR)
        if "APIResponseValidationError" in names:
            return MalformedResponseError(
                f"{VENDOR}: response did not match the API schema",
                provider=VENDOR,
                status=getattr(exc, "status_code", None),
            )
        if "CredentialsError" in names:
            return AuthenticationError(f"{VENDOR}: no usable credentials ({exc})", provider=VENDOR)
        return None
    if module.startswith("httpx"):  # raised while reading a stream, unwrapped by the SDK
        if "TimeoutException" in names:
            return ProviderTimeoutError(
                f"{VENDOR}: timed out reading the response", provider=VENDOR
            )
        if "TransportError" in names:
            return ProviderConnectionError(
                f"{VENDOR}: connection failed while reading the response ({type(exc).__name__})",
                provider=VENDOR,
            )
        return None
    if isinstance(exc, json.JSONDecodeError):
        return MalformedResponseError(
            f"{VENDOR}: response is not valid JSON ({exc.msg})", provider=VENDOR
        )
    if "ValidationError" in names and module.startswith("pydantic"):
        return MalformedResponseError(
            f"{VENDOR}: response did not match the API schema", provider=VENDOR
        )
    return None


def _status_error(exc: Any) -> ProviderError:
    response = getattr(exc, "response", None)
    http_status = getattr(exc, "status_code", None)
    error_type = getattr(exc, "type", None) or _body_field(exc, "type")
    message = getattr(exc, "api_message", None) or _body_field(exc, "message") or str(exc)
    cls: type[ProviderError]
    if http_status == 200 or http_status is None:
        # An `error` event inside a 200 stream: the body's type says what happened.
        cls, status = _BY_TYPE.get(error_type or "", (OverloadedError, 500))
    else:
        status = http_status
        cls = error_class_for_status(status)
    retryable = cls.default_retryable or status in (408, 409) or status >= 500
    headers = getattr(response, "headers", None)
    should_retry = headers.get("x-should-retry") if headers is not None else None
    if should_retry in ("true", "false"):
        retryable = should_retry == "true"
    label = f"{status} {error_type}" if error_type else str(status)
    return cls(
        f"{VENDOR} {label}: {message}",
        provider=VENDOR,
        status=status,
        retryable=retryable,
        retry_after=retry_after(headers),
        code=error_type,
    )


def _body_field(exc: Any, name: str) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get(name), str):
            return str(inner[name])
    return None


def retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (the core's rule)."""
    return retry_after_from_headers(headers)
