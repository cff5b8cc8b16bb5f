"""llmport's exceptions, in one tree.

::

    LlmportError
    ├── InputError                    bad input, raised before any request; never retried
    │   ├── ContentError              (also ValueError) a block is malformed/missing/unreadable
    │   ├── UnsupportedContentError   a vendor/model cannot take a block
    │   ├── UnsupportedFeatureError   a vendor/model cannot honour a parameter or option
    │   ├── ConfigError               (also ValueError) bad configuration or settings
    │   │   └── SessionError          a session database or session cannot be used
    │   │       ├── SessionFileNotFoundError  (also FileNotFoundError) no database there
    │   │       ├── UnknownSessionError       (also KeyError) no such session id
    │   │       ├── MissingSessionStoreError  no plugin stores sessions at that URL scheme
    │   │       └── AttachmentError       stored media contradict their hash, size or type
    │   ├── OptionError               (also ValueError) an unknown option or a bad value
    │   ├── NoModelError              (also NotImplementedError) nothing to call
    │   ├── UnknownModelError         (also LookupError) no provider/alias/configuration
    │   ├── UnknownToolError          (also LookupError) no such toolset/tool source
    │   ├── SchemaError               (also ValueError) a JSON schema is itself invalid
    │   │   └── SchemaSubsetError     a vendor's schema subset cannot express it; .path
    │   ├── MessageError              (also ValueError) a stored message dict is malformed
    │   ├── ContextWindowExceeded     the conversation cannot fit the model's window
    │   └── TokenLimitExceeded        (also BudgetExceeded) the input would cross the budget
    ├── ProviderError                 .provider .status .retryable .retry_after .code
    │   ├── AuthenticationError       401
    │   │   └── PermissionDeniedError 403
    │   ├── BadRequestError           400/413/422
    │   ├── NotFoundError             404
    │   ├── RateLimitError            429                      transient
    │   ├── OverloadedError           5xx, Anthropic 529       transient
    │   ├── ProviderTimeoutError      (also TimeoutError)      transient
    │   ├── ProviderConnectionError   (also ConnectionError)   transient
    │   ├── MalformedResponseError    unreadable answer        transient
    │   └── StreamInterrupted         a stream failed after the caller saw part of it; .run
    ├── ExecFailed                    (also RuntimeError) every attempt failed; .attempts
    ├── MaxIterationsExceeded         the tool loop hit max_iterations; .run
    ├── StructuredOutputError         the reply broke the schema after a repair round
    ├── DecisionError                 no valid pick among choices after a re-pick
    ├── ModelBehaviorError            the model broke the protocol (too many tool errors)
    ├── BudgetExceeded                a token, cost or request budget ran out; never retried
    ├── RunTimeout                    (also TimeoutError) the run's deadline passed; .run
    ├── LimitWaitTimeout              (also TimeoutError) rate-limit capacity comes too late
    ├── LimiterUnavailable            (also ConnectionError) the limiter's store is down; .service
    ├── SessionStoreUnavailable       (also ConnectionError) the session store is down; .service
    ├── GuardrailTripped              a policy rejected a request or a response; .stage
    │   ├── InputGuardrailTripped     raised on the way in (a before_request hook)
    │   └── OutputGuardrailTripped    raised on the way out (an after_response hook)
    ├── ToolApprovalRequired          a tool needs approval and no approver granted it
    ├── BatchError                    a batch job failed, is not done, or has no such result
    │   └── BatchTimeout              (also TimeoutError) BatchJob.wait gave up; .status
    ├── BackgroundError               a background run has no answer: running, cancelled
    │   └── BackgroundTimeout         (also TimeoutError) BackgroundJob.wait gave up; .status
    ├── CassetteError                 a recording cannot be used (llmport.testing.cassette)
    │   ├── CassetteMismatch          a request differs from every recorded one; .path
    │   └── CassetteSecretError       a cassette still holds a secret: refused; .where
    ├── FixRejected                   fix(): a proposed repair failed a check twice; .reason
    └── FixNotApproved                fix(): nobody approved a repair; .diff (nothing compiled)

    UnknownModelWarning               (a UserWarning, not an error) a model the tables do
                                      not know is sent anyway, warned once per Runtime

Every class above is defined here (the modules that raise them import them:
``llmport.engine.jobs.batch.BatchError`` and the like still work). A plugin's own
errors subclass these and live in the plugin, since they name its service;
they are drawn here so that one tree shows everything ``except LlmportError``
can catch::

    llmport_mcp.MCPServerError        an MCP server failed (an LlmportError)
    ├── MCPConnectionError            (also ConnectionError) unreachable, or dropped
    ├── MCPTimeoutError               (also TimeoutError) no answer in time
    └── MCPToolError                  a tool call answered isError; .output

Secrets: messages are redacted (:mod:`llmport.observe.redaction`), and a
:class:`ProviderError` that reaches the caller chains no vendor exception
(whose body or request may hold a key): ``vendor_error`` keeps a redacted
summary of it as text instead.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

# Redaction lives in llmport.observe.redaction; re-exported here for plugins and older imports.
from .observe.redaction import redact as redact
from .observe.redaction import redact_settings as redact_settings
from .slotted import dataclass


class LlmportError(Exception):
    """Base class of every llmport error.

    Every error pickles and unpickles whole (message, attributes, class), so
    it survives a process boundary: a durable run's recorded step, a worker
    pool, a multiprocessing queue. ``Exception``'s own pickling calls the
    class with ``args`` alone, which the subclasses with their own
    ``__init__`` do not take.
    """

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuilt, (type(self), self.args, dict(self.__dict__)))


def _rebuilt(cls: type[LlmportError], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    """An error of ``cls`` with ``args`` and attributes ``state``, its ``__init__`` not run."""
    # The builtin base whose __new__ lays the instance out (OSError under ValueError, say).
    for builtin in (b for b in cls.__mro__ if b.__module__ == "builtins"):
        try:
            error = builtin.__new__(cls, *args)
        except TypeError:
            continue
        BaseException.__init__(error, *args)  # sets args; no subclass __init__ runs
        error.__dict__.update(state)
        return error
    raise TypeError(f"cannot rebuild {cls.__name__}")  # unreachable: BaseException fits


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


class OptionError(InputError, ValueError):
    """A call argument, option or setting is unknown or has a bad value.

    Raised before any request: ``temperature="hot"``, ``timeout=-1``,
    ``tool_choice="required"`` with no tools, ``model=""``, an unknown
    option name (``temprature=0.2``) or a stray ``Runtime`` argument.
    """


class NoModelError(InputError, NotImplementedError):
    """There is nothing to call: no ``call=``, no ``_call`` override and no model.

    Also a :class:`NotImplementedError`, as the seed API promised.
    """


class SchemaSubsetError(SchemaError):
    """A schema uses something a vendor's subset cannot express; ``path`` is its JSON pointer."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path or '<root>'}: {reason}")
        self.path = path
        self.reason = reason


class MessageError(InputError, ValueError):
    """A message dict given to ``Message.from_dict`` (or ``history=``) is malformed."""


class ContextWindowExceeded(InputError):
    """The conversation does not fit the model's window and nothing more can be dropped."""

    def __init__(self, tokens: int, limit: int, model: str = "") -> None:
        self.tokens = tokens
        self.limit = limit
        self.model = model
        where = f" of {model}" if model else ""
        super().__init__(
            f"the request needs ~{tokens} input tokens, over the {limit}-token limit{where}, "
            "and nothing more can be dropped "
            "(keep_last, the system prompt and the current turn stay)"
        )


class BudgetExceeded(LlmportError):
    """A :class:`~llmport.controls.budget.Budget` ran out. Never retried.

    ``kind`` is the limit that was crossed (``input_tokens``, ``output_tokens``,
    ``total_tokens``, ``cost_usd``, ``requests``), ``used`` what had been used
    (with the request that would cross it, for the input side) and ``limit``
    the budget. ``scope`` is ``"runtime"`` (cumulative) or ``"run"``.
    """

    def __init__(self, kind: str, used: Any, limit: Any, scope: str = "run") -> None:
        self.kind = kind
        self.used = used
        self.limit = limit
        self.scope = scope
        super().__init__(f"{scope} budget exceeded: {kind} {used} > {limit}")


class TokenLimitExceeded(BudgetExceeded, InputError):
    """The input tokens of the next request would cross the budget; it is not sent."""

    def __init__(self, estimated: int, budget: int, scope: str = "run") -> None:
        self.estimated = estimated
        self.budget = budget
        BudgetExceeded.__init__(self, "input_tokens", estimated, budget, scope)
        self.args = (f"input of ~{estimated} tokens exceeds the budget of {budget}",)

    def __str__(self) -> str:
        return str(self.args[0])


class RunTimeout(LlmportError, TimeoutError):
    """The run's ``deadline=`` passed; ``run`` is the partial :class:`~llmport.RunResult`.

    ``late`` is the model's answer (a :class:`~llmport.messages.types.Response`)
    when it came after the deadline from a call that cannot be cut short (a
    sync ``call=`` function, a scripted reply): kept here, never returned late.
    """

    def __init__(self, deadline: float, run: Any = None, late: Any = None) -> None:
        self.deadline = deadline
        self.run = run
        self.late = late
        super().__init__(f"the run did not finish within its deadline of {deadline:g} s")


# --- provider errors: classified by the plugin ------------------------------


class ProviderError(LlmportError):
    """An error from a model provider.

    ``retryable`` is the provider's classification (transient or permanent);
    ``retry_after`` is the delay in seconds the vendor asked for, if any;
    ``headers`` the vendor's rate-limit headers of the failed response
    (``x-ratelimit-*``, ``anthropic-ratelimit-*``, ``retry-after``), which
    tighten the rate-limit buckets (:mod:`llmport.controls.limits`).
    """

    default_retryable = False
    headers: dict[str, str] = {}

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: int | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
        code: str | None = None,
        vendor_error: str | None = None,
    ) -> None:
        self.provider = provider
        #: A redacted one-line summary of the vendor's own exception, if any.
        self.vendor_error = redact(vendor_error) if vendor_error else None
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


class StreamInterrupted(ProviderError):
    """A stream failed after part of its answer reached the caller.

    llmport never continues such a stream with another answer. ``run`` is the
    partial :class:`~llmport.RunResult` (``run.text``: the text the caller was
    shown by this model call); ``error`` is the failure, also the ``__cause__``.
    ``stream_retry="restart"`` opts in to a retry announced by
    :class:`~llmport.StreamRestarted` instead.
    """

    def __init__(self, error: BaseException, run: Any, *, provider: str = "") -> None:
        self.error = error
        self.run = run
        shown = len(getattr(run, "text", "") or "")
        super().__init__(
            f"the stream failed after {shown} characters reached the caller: {error}",
            provider=provider,
            status=getattr(error, "status", None),
            retryable=False,
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
    #: The model this attempt went to (``provider:model``), when a run has fallbacks.
    model: str = ""

    def line(self) -> str:
        return f"Attempt {self.number}: {type(self.error).__name__}: {redact(str(self.error))}"


class ExecFailed(LlmportError, RuntimeError):
    """A model request failed on every attempt (or permanently).

    ``attempts`` lists every failure; ``last_error`` is the final one (also
    chained as ``__cause__``).
    """

    def __init__(
        self,
        attempts: Sequence[AttemptFailure],
        function: str | None = None,
        skipped: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.attempts = list(attempts)
        self.function = function
        #: Fallback candidates that could not take the request: ``(model, reason)``.
        self.skipped = list(skipped)
        self.last_error = self.attempts[-1].error if self.attempts else None
        n = len(self.attempts)
        where = f" in {function}()" if function else ""
        models = list(dict.fromkeys(a.model for a in self.attempts))
        if len(models) <= 1 and not self.skipped:
            head = f"exec() failed after {n} attempt{'s' if n != 1 else ''}{where}:"
            super().__init__("\n".join([head, *("  " + a.line() for a in self.attempts)]))
            return
        lines = [f"exec() failed on {len(models)} models after {n} attempts{where}:"]
        for model in models:  # the attempts, grouped by model
            lines.append(f"  {model}:")
            lines.extend("    " + a.line() for a in self.attempts if a.model == model)
        lines.extend(f"  {model}: skipped ({why})" for model, why in self.skipped)
        super().__init__("\n".join(lines))

    def by_model(self) -> dict[str, list[AttemptFailure]]:
        """The attempts grouped by the model they went to, in order."""
        grouped: dict[str, list[AttemptFailure]] = {}
        for a in self.attempts:
            grouped.setdefault(a.model, []).append(a)
        return grouped


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


class InputGuardrailTripped(GuardrailTripped):
    """An input guardrail (an ``llmport_before_request`` hook) rejected the request.

    Nothing was sent. A hook may raise it, or a plain :class:`GuardrailTripped`
    (the run re-raises it as this class, ``.guardrail`` and ``.stage`` kept).
    """

    def __init__(self, message: str, *, guardrail: str = "", stage: str = "input") -> None:
        super().__init__(message, guardrail=guardrail, stage=stage)


class OutputGuardrailTripped(GuardrailTripped):
    """An output guardrail (an ``llmport_after_response`` hook) rejected a response.

    A plain :class:`GuardrailTripped` raised by such a hook reaches the caller as
    this class, ``.guardrail`` and ``.stage`` kept. Never retried.
    """

    def __init__(self, message: str, *, guardrail: str = "", stage: str = "output") -> None:
        super().__init__(message, guardrail=guardrail, stage=stage)


class ToolApprovalRequired(LlmportError):
    """A policy requires approval for a tool and no approver granted it."""


class LimitWaitTimeout(LlmportError, TimeoutError):
    """Waiting for rate-limit capacity would pass the run's deadline (never retried)."""

    def __init__(self, target: str, wait: float) -> None:
        self.target = target
        self.wait = wait
        super().__init__(
            f"rate limit for {target}: capacity in {wait:.2f}s would pass the run's deadline"
        )


# --- batches ---------------------------------------------------------------------------


class BatchError(LlmportError):
    """A batch-level problem: the job failed, is not done yet, or an id has no result."""


class BatchTimeout(BatchError, TimeoutError):
    """:meth:`~llmport.engine.jobs.batch.BatchJob.wait` gave up before the job was done.

    The job keeps running. ``status`` is its last
    :class:`~llmport.engine.jobs.batch.BatchStatus` (typed loosely here: ``errors``
    imports nothing of the engine).
    """

    def __init__(self, job_id: str, seconds: float, status: Any) -> None:
        self.status = status
        super().__init__(
            f"batch {job_id} still {status.state} after {seconds:g}s "
            f"({status.processed}/{status.total} processed); wait again or resume it later"
        )


# --- background runs -------------------------------------------------------------------


class BackgroundError(LlmportError):
    """A background run has no answer to give: not ended yet, cancelled or expired."""


class BackgroundTimeout(BackgroundError, TimeoutError):
    """:meth:`~llmport.engine.jobs.job.Job.wait` gave up before the background run ended.

    The run keeps going; ``status`` is its last :class:`~llmport.engine.jobs.job.JobStatus`.
    """

    def __init__(self, job_id: str, seconds: float, status: Any) -> None:
        self.status = status
        super().__init__(
            f"background run {job_id} still {status.state} after {seconds:g}s; "
            "wait again or resume it later"
        )


# --- recordings ------------------------------------------------------------------------


class CassetteError(LlmportError):
    """A cassette cannot be used: vcrpy is missing, a bad mode, an unreadable file."""


class CassetteMismatch(CassetteError):
    """A request matched no recorded interaction while replaying.

    ``path`` is the JSON path where the sent request first differs from the
    closest recorded one (``$.messages[0].content``, or ``method``/``path``),
    ``recorded`` and ``sent`` the two values there.
    """

    def __init__(self, message: str, path: str = "", recorded: Any = None, sent: Any = None):
        self.path, self.recorded, self.sent = path, recorded, sent
        super().__init__(message)


class CassetteSecretError(CassetteError):
    """A cassette would still hold a secret after scrubbing: it is not written.

    ``where`` names the interaction and field (``interactions[1].response.body.detail``).
    """

    def __init__(self, where: str, path: str = ""):
        self.where = where
        super().__init__(
            f"cassette {path or ''} not written: a secret remains at {where} "
            "(remove it from the file, or re-record)".replace("  ", " ")
        )


# --- sessions --------------------------------------------------------------------------


class SessionError(ConfigError):
    """A session database or session the caller named cannot be used.

    Also raised for a file that is not an llmport session database.
    """


class SessionFileNotFoundError(SessionError, FileNotFoundError):
    """No session database at the path given (opening read-only, listing, showing)."""


class UnknownSessionError(SessionError, KeyError):
    """A session id (or prefix) names no session, or several, in the database."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class MissingSessionStoreError(SessionError):
    """No installed plugin stores sessions at URLs of this scheme."""


class AttachmentError(SessionError):
    """A session's stored media cannot be given back as it was kept.

    The bytes under a hash do not have that hash, the size the node
    recorded or a media type they do not contradict, or a size is not a
    byte count or is too large. ``sha256`` names the attachment; nothing
    was sent anywhere.
    """

    def __init__(self, sha256: str, problem: str) -> None:
        self.sha256 = sha256
        self.problem = problem
        super().__init__(f"session attachment sha256:{sha256[:16]} refused: {problem}")
# --- fix(): a model-proposed repair of an agentic function (llmport.repair) ----------


class FixRejected(LlmportError):
    """The model's proposed repair failed a check (after one repair round).

    ``reason`` says which check (a hidden character, it does not parse,
    another name or signature, no longer an ``@agentic_function``, an import
    not allowed, dynamic evaluation or a dunder escape, a top-level statement
    besides the function); ``source`` is the rejected proposal. Nothing of
    it ran.
    """

    def __init__(self, reason: str, *, source: str = "") -> None:
        self.reason = reason
        self.source = source
        super().__init__(f"proposed fix rejected: {reason}")


class FixNotApproved(LlmportError):
    """No one approved a proposed repair: the approver said no, or there was none.

    ``diff`` is the unified diff that was refused; the new source was never
    compiled or run. ``rationale`` is the model's explanation of its change.
    """

    def __init__(self, diff: str, *, rationale: str = "", reason: str = "not approved") -> None:
        self.diff = diff
        self.rationale = rationale
        self.reason = reason
        super().__init__(f"proposed fix {reason}:\n{diff}")


# --- backing services that are down: a typed error within a bounded time --------------------
# Kept together at the end of the module: a limiter's or a session store's server
# (Redis, PostgreSQL, a locked SQLite file) did not answer within its bounded time.


class LimiterUnavailable(LlmportError, builtins.ConnectionError):
    """The limiter's backing service did not answer within its bound (never a driver error).

    ``service`` names it (``"Redis at 127.0.0.1:6379"``), ``detail`` says what
    failed, as text (the driver's exception is not chained). With every
    matching ``Limit(on_unavailable="allow")`` the call goes ahead unlimited
    instead of raising this.
    """

    def __init__(self, service: str, detail: str = "") -> None:
        self.service = service
        self.detail = detail
        msg = f"rate limiter unavailable: {service}"
        super().__init__(f"{msg} ({detail})" if detail else msg)


class SessionStoreUnavailable(LlmportError, builtins.ConnectionError):
    """The session store did not answer within its bound (never a driver error).

    ``service`` names it (``"PostgreSQL at host/db"``, a SQLite path),
    ``detail`` says what failed, as text (the driver's exception is not chained).
    """

    def __init__(self, service: str, detail: str = "") -> None:
        self.service = service
        self.detail = detail
        msg = f"session store unavailable: {service}"
        super().__init__(f"{msg} ({detail})" if detail else msg)


class UnknownModelWarning(UserWarning):
    """A model the provider's tables do not know: it is sent anyway.

    llmport gives it its family's capabilities (the plugin's family rule for
    the name) or permissive ones, and warns once per model per provider
    instance (so once per ``Runtime``). Filter it like any warning:
    ``warnings.filterwarnings("ignore", category=llmport.UnknownModelWarning)``.
    """

    def __init__(self, provider: str, model: str, hint: str = "") -> None:
        self.provider = provider
        self.model = model
        super().__init__(
            f"{provider}: model {model!r} is not in llmport's tables; it is sent with its "
            "family's (or permissive) capabilities, and the vendor decides what it accepts"
            + (f"; {hint}" if hint else "")
        )
