"""botocore exceptions -> llmport's typed errors, classified transient or permanent.

Transient (retried by llmport): ThrottlingException, ModelNotReadyException,
ModelTimeoutException, ServiceUnavailableException, InternalServerException,
ModelStreamErrorException, any other 5xx, connection failures and timeouts.
Permanent: ValidationException, AccessDeniedException,
ResourceNotFoundException, ServiceQuotaExceededException,
ModelErrorException, missing credentials, everything else.

The same codes arrive two ways: as a ``ClientError`` for an HTTP error
status, and as an exception frame inside a ``converse_stream`` answer (an
``EventStreamError``, whose code is the camelCase member name such as
``throttlingException``). Both are classified by the code.

Only the exception passed in is inspected (class names and attributes), so
importing this module imports no SDK.
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
    error_class_for_status,
)
from llmport.retry import retry_after_from_headers

VENDOR = "bedrock"

# Error code -> (llmport class, transient?, the HTTP status it stands for).
_BY_CODE: dict[str, tuple[type[ProviderError], bool, int]] = {
    "ThrottlingException": (RateLimitError, True, 429),
    "ModelNotReadyException": (OverloadedError, True, 429),
    "ModelTimeoutException": (ProviderTimeoutError, True, 408),
    "ServiceUnavailableException": (OverloadedError, True, 503),
    "InternalServerException": (OverloadedError, True, 500),
    "ModelStreamErrorException": (OverloadedError, True, 424),
    "ValidationException": (BadRequestError, False, 400),
    "AccessDeniedException": (PermissionDeniedError, False, 403),
    "UnrecognizedClientException": (AuthenticationError, False, 403),
    "InvalidSignatureException": (AuthenticationError, False, 403),
    "ExpiredTokenException": (AuthenticationError, False, 403),
    "ResourceNotFoundException": (NotFoundError, False, 404),
    "ServiceQuotaExceededException": (RateLimitError, False, 400),
    "ModelErrorException": (ProviderError, False, 424),
}

# botocore transport errors by class name: (llmport class, message).
_TRANSPORT: tuple[tuple[str, type[ProviderError], str], ...] = (
    ("ReadTimeoutError", ProviderTimeoutError, "timed out waiting for the response"),
    ("ConnectTimeoutError", ProviderTimeoutError, "timed out connecting"),
    ("EndpointConnectionError", ProviderConnectionError, "could not connect to the endpoint"),
    ("ConnectionClosedError", ProviderConnectionError, "the connection was closed"),
    ("ResponseStreamingError", ProviderConnectionError, "the connection failed while streaming"),
    ("ProxyConnectionError", ProviderConnectionError, "could not connect to the proxy"),
    ("SSLError", ProviderConnectionError, "TLS failed"),
    ("ConnectionError", ProviderConnectionError, "connection failed"),
    ("HTTPClientError", ProviderConnectionError, "the HTTP exchange failed"),
)


def normal_code(code: str) -> str:
    """``throttlingException`` (stream frames) -> ``ThrottlingException``; drops ``:...``."""
    code = code.split(":", 1)[0].strip()
    return code[:1].upper() + code[1:]


def translate(exc: BaseException) -> ProviderError | None:
    """The llmport error for a botocore exception, or None if ``exc`` is not one."""
    if isinstance(exc, ProviderError):
        return exc
    names = {cls.__name__ for cls in type(exc).__mro__}
    if not type(exc).__module__.startswith(("botocore", "urllib3")):
        return None
    if "ClientError" in names:
        return _client_error(exc)
    if "NoCredentialsError" in names or "PartialCredentialsError" in names:
        return AuthenticationError(
            f"{VENDOR}: no usable AWS credentials ({type(exc).__name__}); configure the AWS "
            "credential chain, a profile, or the aws_access_key_id / aws_secret_access_key "
            "settings",
            provider=VENDOR,
        )
    if "ResponseParserError" in names:
        return MalformedResponseError(f"{VENDOR}: the answer could not be parsed", provider=VENDOR)
    if "ParserError" in names:  # botocore.eventstream's frame errors
        return MalformedResponseError(
            f"{VENDOR}: corrupt event-stream frame ({type(exc).__name__})", provider=VENDOR
        )
    if "ProtocolError" in names:  # urllib3, while reading a body
        return ProviderConnectionError(
            f"{VENDOR}: the connection failed while reading the response", provider=VENDOR
        )
    for name, cls, text in _TRANSPORT:
        if name in names:
            return cls(f"{VENDOR}: {text} ({type(exc).__name__})", provider=VENDOR)
    return None


def _client_error(exc: Any) -> ProviderError:
    response: dict[str, Any] = getattr(exc, "response", None) or {}
    error = response.get("Error") or {}
    code = normal_code(str(error.get("Code") or ""))
    message = str(error.get("Message") or error.get("message") or exc)
    meta = response.get("ResponseMetadata") or {}
    http_status = meta.get("HTTPStatusCode")
    headers = {str(k).lower(): v for k, v in (meta.get("HTTPHeaders") or {}).items()}
    known = _BY_CODE.get(code)
    if known is not None:
        cls, retryable, status = known
        # An exception frame inside a 200 stream: the code's own status stands for it.
        status = http_status if isinstance(http_status, int) and http_status >= 400 else status
    else:
        status = http_status if isinstance(http_status, int) else 500
        retryable = status in (408, 409, 429) or status >= 500
        cls = error_class_for_status(status)
    label = f"{status} {code}" if code else str(status)
    return cls(
        f"{VENDOR} {label}: {message}",
        provider=VENDOR,
        status=status,
        retryable=retryable,
        retry_after=retry_after(headers),
        code=code or None,
    )


def retry_after(headers: dict[str, Any]) -> float | None:
    """Seconds to wait from a ``retry-after`` header (the core's rule), if any."""
    return retry_after_from_headers(headers)
