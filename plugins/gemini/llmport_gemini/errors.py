"""google-genai's own exceptions -> llmport's typed errors: Gemini's codes only.

Everything shared lives in :mod:`llmport.provider.translate`: the status table and
retry rule (:func:`~llmport.provider.translate.status_error`: 408, 409, 429 and 5xx
are transient), ``Retry-After`` and Google's ``RetryInfo`` parsing, and the
httpx / httpx2 / aiohttp / JSON / pydantic transport mapping. What is left
here is what only Gemini says:

* an ``APIError`` carries the HTTP status, Google's status name
  (``RESOURCE_EXHAUSTED``, kept as ``error.code``) and the ``details`` whose
  ``RetryInfo`` gives the delay to wait;
* a bad or expired key is **400** ``INVALID_ARGUMENT`` with an ``ErrorInfo``
  reason ``API_KEY_INVALID`` / ``API_KEY_EXPIRED``: an
  :class:`~llmport.errors.AuthenticationError` (code: the reason), not a
  bad request;
* ``UnknownApiResponseError`` is an answer the SDK could not read;
* on the aiohttp transport, the SDK's ``ClientTimeout(total=...)`` expires
  as a bare ``asyncio.TimeoutError`` (the builtin ``TimeoutError``), which
  names no transport: inside a Gemini call it can only be the request's
  timeout.

The SDK is only touched through the exception passed in (its class name and
attributes, and for an answer the SDK failed to read, its traceback:
``sdk_internals.failed_reading_answer``), so importing this module imports no SDK.
"""

from __future__ import annotations

from typing import Any

from llmport.controls.retry import retry_after_from_details
from llmport.errors import (
    AuthenticationError,
    MalformedResponseError,
    ProviderError,
    ProviderTimeoutError,
)
from llmport.provider.translate import status_error

from . import sdk_internals

VENDOR = "gemini"

_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
#: ``ErrorInfo`` reasons meaning the credentials are wrong, whatever the status says.
AUTH_REASONS = frozenset({"API_KEY_INVALID", "API_KEY_EXPIRED"})


def translate(exc: BaseException) -> ProviderError | None:
    """The llmport error for a google-genai exception, or None if ``exc`` is not one."""
    if type(exc) is TimeoutError:  # aiohttp's total timeout: see the module docstring
        return ProviderTimeoutError(f"{VENDOR}: request timed out", provider=VENDOR)
    if sdk_internals.failed_reading_answer(exc):
        return MalformedResponseError(
            f"{VENDOR}: the answer did not match the API schema", provider=VENDOR
        )
    if not (type(exc).__module__ or "").startswith("google.genai"):
        return None
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "APIError" in names:
        return api_error(exc)
    if "UnknownApiResponseError" in names:
        return MalformedResponseError(f"{VENDOR}: the answer is not valid JSON", provider=VENDOR)
    return None


def api_error(exc: Any) -> ProviderError:
    """A google-genai ``APIError`` (status, Google status name, details) as a typed error."""
    status = getattr(exc, "code", None)
    grpc_status = getattr(exc, "status", None)
    code = str(grpc_status) if grpc_status else None
    message = getattr(exc, "message", None) or str(exc)
    if isinstance(status, bool) or not isinstance(status, int):
        return ProviderError(f"{VENDOR}: {message}", provider=VENDOR, code=code)
    details = getattr(exc, "details", None)
    cls: type[ProviderError] | None = None
    reason = error_reason(details)
    if reason in AUTH_REASONS:
        cls, code = AuthenticationError, reason
    return status_error(
        status,
        message,
        provider=VENDOR,
        headers=getattr(getattr(exc, "response", None), "headers", None),
        code=code,
        cls=cls,
        retry_after=retry_after_from_details(details),
    )


def error_reason(details: Any) -> str | None:
    """The ``reason`` of a ``google.rpc.ErrorInfo`` detail (``API_KEY_INVALID``), if any."""
    error = details.get("error", details) if isinstance(details, dict) else None
    items = error.get("details") if isinstance(error, dict) else None
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and item.get("@type") == _ERROR_INFO:
            reason = item.get("reason")
            return str(reason) if reason else None
    return None
