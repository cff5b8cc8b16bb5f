"""llmport's exceptions.

Input errors (:class:`ContentError`, :class:`UnsupportedContentError`,
:class:`ConfigError`, :class:`UnknownModelError`, ...) are raised before any
request is sent and are never retried. :class:`ProviderError` subclasses
carry the provider's classification (``retryable``) and any delay the
vendor asked for (``retry_after``).
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


class LlmportError(Exception):
    """Base class of every llmport error."""


# --- secrets never reach messages, reprs or logs ----------------------------------

# Credential shapes vendors use, and the places they appear in echoed requests.
_SECRET_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Vendors echo keys half-masked ("sk-proj-****ab12"): the stars are part of the match.
    (re.compile(r"\b(sk-(?:ant-|proj-)?|sess-)[A-Za-z0-9_\-*]{8,}"), r"\1***"),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"), "AIza***"),
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), r"\1***"),
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/\-]+=*"), r"\1 ***"),
    (re.compile(r"(?i)([?&](?:key|api_key|access_token|token)=)[^&\s\"']+"), r"\1***"),
    (
        re.compile(
            r"(?i)\b((?:x-api-key|x-goog-api-key|api-key|api_key|authorization)[\"']?\s*[:=]\s*[\"']?)"
            r"(?!\*\*\*)[^\s\"',}]+"
        ),
        r"\1***",
    ),
)
_SECRET_SETTING = re.compile(r"(?i)(api_?key|secret|token|password|credential|authorization)")


def redact(text: str) -> str:
    """``text`` with anything that looks like a credential replaced by ``***``."""
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact_settings(settings: Mapping[str, object]) -> dict[str, object]:
    """A copy of ``settings`` whose secret-named values (``api_key``, ...) are ``***``."""
    return {k: "***" if _SECRET_SETTING.search(k) and v else v for k, v in settings.items()}


# --- input errors: raised before any network call --------------------------


class InputError(LlmportError):
    """Bad input detected before any request. Never retried."""


class ContentError(InputError, ValueError):
    """A content block is malformed, missing or unreadable.

    ``index`` is the block's position in the caller's ``content`` list.
    """

    def __init__(self, index: int, problem: str) -> None:
        self.index = index
        self.problem = problem
        super().__init__(f"content block {index}: {problem}")


class UnsupportedContentError(InputError):
    """A vendor/model cannot take a block and no documented conversion applies."""

    def __init__(self, vendor: str, model: str, block: str, reason: str = "") -> None:
        self.vendor = vendor
        self.model = model
        self.block = block
        msg = f"{vendor} model {model!r} cannot take {block}"
        super().__init__(f"{msg}: {reason}" if reason else msg)


class UnsupportedFeatureError(InputError):
    """A vendor/model cannot honour a parameter or option (never dropped silently)."""

    def __init__(self, vendor: str, model: str, feature: str, reason: str = "") -> None:
        self.vendor = vendor
        self.model = model
        self.feature = feature
        msg = f"{vendor} model {model!r} does not support {feature}"
        super().__init__(f"{msg}: {reason}" if reason else msg)


class ConfigError(InputError, ValueError):
    """Configuration is invalid (bad file, unknown key, bad value)."""


class UnknownModelError(InputError, LookupError):
    """A model string names no known provider, alias or configuration."""

    def __init__(self, model: str, available: Sequence[str] = (), hint: str = "") -> None:
        self.model = model
        self.available = list(available)
        msg = f"unknown model {model!r}"
        if hint:
            msg += f": {hint}"
        if self.available:
            msg += "; available: " + ", ".join(self.available)
        else:
            msg += "; no provider plugins are loaded (see `llmport plugins`)"
        super().__init__(msg)


class UnknownToolError(InputError, LookupError):
    """A toolset or tool source name is not registered."""


class SchemaError(InputError, ValueError):
    """A JSON schema (tool parameters, response_format) is itself invalid."""


class TokenLimitExceeded(InputError):
    """The request's estimated input tokens exceed the configured budget."""

    def __init__(self, estimated: int, budget: int) -> None:
        self.estimated = estimated
        self.budget = budget
        super().__init__(f"input of ~{estimated} tokens exceeds the budget of {budget}")


# --- provider errors: classified by the plugin ------------------------------


class ProviderError(LlmportError):
    """An error from a model provider.

    ``retryable`` is the provider's classification (transient or permanent);
    ``retry_after`` is the delay in seconds the vendor asked for, if any.
    """

    default_retryable = False

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: int | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
        code: str | None = None,
    ) -> None:
        self.provider = provider
        self.status = status
        self.retryable = self.default_retryable if retryable is None else retryable
        self.retry_after = retry_after
        self.code = code
        # Vendors sometimes echo the key or the auth header back in an error body.
        super().__init__(redact(message))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({str(self)!r}, provider={self.provider!r}, "
            f"status={self.status!r}, retryable={self.retryable!r})"
        )


class AuthenticationError(ProviderError):
    """401/403: bad or missing credentials."""


class PermissionDeniedError(AuthenticationError):
    """403: the credentials may not use this resource."""


class BadRequestError(ProviderError):
    """400/422: the vendor rejected the request."""


class NotFoundError(ProviderError):
    """404: unknown model or endpoint."""


class RateLimitError(ProviderError):
    """429: too many requests. Transient."""

    default_retryable = True


class OverloadedError(ProviderError):
    """5xx / Anthropic 529 / Bedrock ServiceUnavailable. Transient."""

    default_retryable = True


class ProviderTimeoutError(ProviderError, builtins.TimeoutError):
    """The request timed out. Transient."""

    default_retryable = True


class ProviderConnectionError(ProviderError, builtins.ConnectionError):
    """The connection failed or was reset. Transient."""

    default_retryable = True


class MalformedResponseError(ProviderError):
    """The vendor's answer could not be parsed (bad JSON, truncated stream)."""

    default_retryable = True


_STATUS_ERRORS: dict[int, type[ProviderError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    408: ProviderTimeoutError,
    413: BadRequestError,
    422: BadRequestError,
    429: RateLimitError,
    504: ProviderTimeoutError,
    529: OverloadedError,  # Anthropic's "overloaded"
}


def error_class_for_status(status: int) -> type[ProviderError]:
    """The typed error for an HTTP error status, shared by every plugin.

    Other 5xx are :class:`OverloadedError` (transient); other statuses are a
    plain :class:`ProviderError` (permanent unless the plugin says otherwise,
    as for 409).
    """
    cls = _STATUS_ERRORS.get(status)
    if cls is not None:
        return cls
    return OverloadedError if status >= 500 else ProviderError


# --- run errors ---------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class AttemptFailure:
    """One failed attempt, as reported by :class:`ExecFailed`."""

    number: int
    error: BaseException
    delay: float = 0.0

    def line(self) -> str:
        return f"Attempt {self.number}: {type(self.error).__name__}: {redact(str(self.error))}"


class ExecFailed(LlmportError, RuntimeError):
    """A model request failed on every attempt (or permanently).

    ``attempts`` lists every failure; ``last_error`` is the final one (also
    chained as ``__cause__``).
    """

    def __init__(self, attempts: Sequence[AttemptFailure], function: str | None = None) -> None:
        self.attempts = list(attempts)
        self.function = function
        self.last_error = self.attempts[-1].error if self.attempts else None
        n = len(self.attempts)
        where = f" in {function}()" if function else ""
        head = f"exec() failed after {n} attempt{'s' if n != 1 else ''}{where}:"
        super().__init__("\n".join([head, *("  " + a.line() for a in self.attempts)]))


class MaxIterationsExceeded(LlmportError):
    """The tool loop hit ``max_iterations``; ``run`` has everything done so far."""

    def __init__(self, max_iterations: int, run: Any = None) -> None:
        self.max_iterations = max_iterations
        self.run = run
        calls = len(getattr(run, "tool_calls", []) or [])
        super().__init__(
            f"tool loop stopped after {max_iterations} iterations ({calls} tool calls made)"
        )

    @property
    def tool_calls(self) -> list[Any]:
        return list(getattr(self.run, "tool_calls", []) or [])


class StructuredOutputError(LlmportError):
    """The reply did not satisfy the response schema, even after a repair round."""

    def __init__(self, message: str, errors: Sequence[str] = (), text: str = "") -> None:
        self.errors = list(errors)
        self.text = text
        detail = "".join(f"\n  - {e}" for e in self.errors)
        super().__init__(message + detail)


class DecisionError(LlmportError):
    """The model did not make a valid pick among ``choices`` (after one re-pick)."""

    def __init__(self, message: str, errors: Sequence[str] = ()) -> None:
        self.errors = list(errors)
        detail = "".join(f"\n  - {e}" for e in self.errors)
        super().__init__(message + detail)


class ModelBehaviorError(LlmportError):
    """The model did something the protocol does not allow (e.g. too many tool errors)."""


class GuardrailTripped(LlmportError):
    """A policy guardrail rejected a request or a response."""

    def __init__(self, message: str, *, guardrail: str = "", stage: str = "") -> None:
        self.guardrail = guardrail
        self.stage = stage
        super().__init__(message)


class ToolApprovalRequired(LlmportError):
    """A policy requires approval for a tool and no approver granted it."""
