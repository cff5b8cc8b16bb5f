"""Bedrock's vendor codes: botocore exceptions -> llmport's typed errors.

Only what is Bedrock's own lives here; the status table, the retry rule,
``Retry-After`` parsing, redaction and the httpx-family transports are the
core's (:mod:`llmport.provider.translate`). The provider's ``translating()`` is
``translating("bedrock", translate, secrets)``, which calls :func:`translate`.

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

botocore's ``ParamValidationError`` (its client-side check of the request,
raised before anything is sent) is an input error, not a provider error:
:func:`input_error` makes it an :class:`~llmport.errors.OptionError`, and a
botocore error while making the session or client (an unknown profile) is a
:class:`~llmport.errors.ConfigError` (:func:`config_error`); :func:`call`
raises them without chaining botocore's exception.

Only the exception passed in is inspected (class names and attributes), so
importing this module imports no SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from llmport.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    LlmportError,
    MalformedResponseError,
    NotFoundError,
    OptionError,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
)
from llmport.observe.redaction import redact
from llmport.provider.translate import status_error

VENDOR = "bedrock"

T = TypeVar("T")

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


#: botocore class-name words that mean the credentials could not be obtained.
_CREDENTIAL_WORDS = ("Credential", "Token", "SSO", "MFA", "Login")


def normal_code(code: str) -> str:
    """``throttlingException`` (stream frames) -> ``ThrottlingException``; drops ``:...``."""
    code = code.split(":", 1)[0].strip()
    return code[:1].upper() + code[1:]


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def translate(exc: BaseException) -> LlmportError | None:
    """The llmport error for a botocore (or urllib3) exception, or None if ``exc`` is not one."""
    if not type(exc).__module__.startswith(("botocore", "urllib3")):
        return None
    names = _names(exc)
    if "ClientError" in names:
        return _client_error(exc)
    if "NoCredentialsError" in names or "PartialCredentialsError" in names:
        # Found before anything is sent: a configuration problem, never retried.
        return ConfigError(
            f"{VENDOR}: no usable AWS credentials ({type(exc).__name__}); set AWS_ACCESS_KEY_ID "
            "and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or the aws_access_key_id / "
            "aws_secret_access_key settings), or configure the AWS credential chain"
        )
    if any(word in name for name in names for word in _CREDENTIAL_WORDS):
        # CredentialRetrievalError, SSOTokenLoadError, UnauthorizedSSOTokenError...
        return AuthenticationError(
            f"{VENDOR}: cannot get AWS credentials ({type(exc).__name__}: {exc})",
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
    if "HTTPError" in names:  # any other urllib3 failure on the wire
        return ProviderConnectionError(
            f"{VENDOR}: the HTTP exchange failed ({type(exc).__name__})", provider=VENDOR
        )
    if "BotoCoreError" in names:
        # Any other botocore failure is local and permanent; never let it out raw.
        return ProviderError(f"{VENDOR}: {type(exc).__name__}: {exc}", provider=VENDOR)
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
    if known is None:
        # No Bedrock code (a proxy's bare 5xx...): the core's status rule decides.
        status = http_status if isinstance(http_status, int) else 500
        return status_error(status, message, provider=VENDOR, headers=headers, code=code or None)
    cls, retryable, status = known
    # An exception frame inside a 200 stream: the code's own status stands for it.
    if isinstance(http_status, int) and http_status >= 400:
        status = http_status
    return status_error(
        status, message, provider=VENDOR, headers=headers, code=code, retryable=retryable, cls=cls
    )


def input_error(exc: BaseException) -> LlmportError | None:
    """botocore's client-side ``ParamValidationError`` as an :class:`OptionError`, else None."""
    if not _is_botocore(exc) or "ParamValidationError" not in _names(exc):
        return None
    report = str(getattr(exc, "kwargs", {}).get("report") or exc).strip()
    return OptionError(
        f"{VENDOR}: the Converse request is invalid (checked by botocore before sending): "
        f"{report}; check the options and the vendor={{'bedrock': {{...}}}} fields"
    )


def config_error(exc: BaseException) -> LlmportError | None:
    """A botocore error while making the session or client (unknown profile...) as ConfigError."""
    if not _is_botocore(exc) or "BotoCoreError" not in _names(exc):
        return None
    return ConfigError(f"{VENDOR}: cannot create the client: {exc}")


def _is_botocore(exc: BaseException) -> bool:
    return type(exc).__module__.startswith("botocore")


def call(
    to_error: Callable[[BaseException], LlmportError | None],
    fn: Callable[..., T],
    /,
    *args: Any,
    **kwargs: Any,
) -> T:
    """``fn(*args, **kwargs)``; an exception ``to_error`` maps is raised as llmport's instead.

    The llmport error is raised outside the ``except`` block, so it chains
    nothing: no ``__cause__`` and no ``__context__`` holding botocore's
    exception (the core's :func:`~llmport.provider.translate.vendor_boundary` does the
    same for provider errors).
    """
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        error = to_error(exc)
        if error is None:
            raise
    raise redacted(error)


def redacted(error: LlmportError) -> LlmportError:
    """``error`` with its message passed through the core's redaction."""
    if error.args and isinstance(error.args[0], str):
        error.args = (redact(error.args[0]), *error.args[1:])
    return error
