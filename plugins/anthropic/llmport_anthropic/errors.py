"""Anthropic's own error codes -> llmport's typed errors.

Only what is Anthropic's lives here: the SDK's exception classes and the
``error.type`` codes of the Messages API. The status table, the retry rule
(408/409/429/5xx and 529 transient, ``x-should-retry`` wins), Retry-After
parsing and transport failures are the core's (:mod:`llmport.provider.translate`);
:func:`translate` is handed to :class:`~llmport.provider.translate.translating`
(the provider's ``translating()``, applied by ``vendor_boundary``), which also
masks secrets and chains nothing.

An ``error`` event inside a 200 stream reaches us as an ``APIStatusError``
with status 200: its ``error.type`` says what happened
(``overloaded_error`` -> :class:`~llmport.errors.OverloadedError`, 529).

The SDK is only touched through the exception passed in (class names and
attributes), so importing this module imports no SDK.
"""

from __future__ import annotations

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
)
from llmport.provider.translate import status_error, transport_error

VENDOR = "anthropic"

#: Anthropic's ``error.type`` -> (llmport class, the HTTP status it stands for).
BY_TYPE: dict[str, tuple[type[ProviderError], int]] = {
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
    """The llmport error for an ``anthropic`` SDK exception, or None if ``exc`` is not one."""
    if not type(exc).__module__.startswith("anthropic"):
        return None
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "APIStatusError" in names:
        return _status_error(exc)
    if "APITimeoutError" in names:
        return ProviderTimeoutError(f"{VENDOR}: request timed out", provider=VENDOR)
    if "APIConnectionError" in names:
        return _connection_error(exc)
    if "APIResponseValidationError" in names:
        return MalformedResponseError(
            f"{VENDOR}: the answer did not match the API schema",
            provider=VENDOR,
            status=getattr(exc, "status_code", None),
        )
    if "CredentialsError" in names:
        return AuthenticationError(
            f"{VENDOR}: no usable credentials ({type(exc).__name__})", provider=VENDOR
        )
    if type(exc).__name__ == "AnthropicError" and "results_url" in str(exc):
        # batches.results() found no results_url on the batch it retrieved: the engine
        # asks only for an ended batch, so the answer was not a MessageBatch.
        return MalformedResponseError(f"{VENDOR}: the batch has no results_url", provider=VENDOR)
    return None


def _status_error(exc: Any) -> ProviderError:
    http_status = getattr(exc, "status_code", None)
    code = getattr(exc, "type", None) or _body_field(exc, "type")
    message = getattr(exc, "api_message", None) or _body_field(exc, "message") or str(exc)
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if http_status is None or http_status < 400:
        # An ``error`` event inside a 200 stream: its error.type says what happened.
        cls, status = BY_TYPE.get(code or "", (OverloadedError, 500))
        return status_error(status, message, provider=VENDOR, code=code, cls=cls)
    return status_error(http_status, message, provider=VENDOR, headers=headers, code=code)


def _connection_error(exc: BaseException) -> ProviderError:
    """A connection failure is transient; a request that could not even be built is not.

    The SDK wraps every exception raised while sending in ``APIConnectionError``,
    including input problems (``ValueError: Timeout value out of range``):
    those must never be retried as if the network had failed.
    """
    cause = exc.__cause__ or exc.__context__
    if cause is None:
        return ProviderConnectionError(f"{VENDOR}: connection failed", provider=VENDOR)
    mapped = transport_error(cause, VENDOR)
    if mapped is not None:
        return mapped
    if isinstance(cause, (OSError, TimeoutError)):
        return ProviderConnectionError(
            f"{VENDOR}: connection failed ({type(cause).__name__})", provider=VENDOR
        )
    return ProviderError(
        f"{VENDOR}: the request could not be sent ({type(cause).__name__}: {cause})",
        provider=VENDOR,
        retryable=False,
    )


def _body_field(exc: Any, name: str) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get(name), str):
            return str(inner[name])
    return None
