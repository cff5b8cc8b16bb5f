"""Vendor errors to llmport errors: written once, used by every plugin.

* :func:`status_error`: an HTTP error status (plus headers, code, message)
  to its typed :class:`~llmport.errors.ProviderError`, with the one retry
  retry rule: 408, 409, 429 and 5xx are transient, everything else is
  permanent, and an explicit ``x-should-retry`` header wins.
* the vendor's requested wait, read by
  :func:`~llmport.controls.retry.retry_after_from_headers` (it lives with
  the retries, which read it too) and put on the error.
* :func:`transport_error`: httpx / httpx2 / httpcore / aiohttp errors and
  unreadable answers (bad JSON, schema mismatch) by class name, so no
  transport library is imported here.
* :class:`translating`: how one provider translates: vendor exceptions
  into llmport's, the provider's configured secrets masked literally, and
  only a redacted summary of the vendor exception kept
  (``ProviderError.vendor_error``), never the exception itself.
* :func:`vendor_boundary`: THE vendor boundary (only typed errors leave it). A plugin
  decorates every method that reaches its vendor (send, stream, count,
  batch submit/status/results/cancel) with it; whatever leaves such a method
  is an llmport error translated by the owner's ``translating()``, raised
  outside any ``except`` block with every foreign exception cut from its
  ``__cause__`` / ``__context__`` chain (:func:`detach`), not merely
  suppressed. Used as a context manager, :class:`translating` cannot do
  that last part (Python sets ``__context__`` to the exception
  ``__exit__`` handles), hence the decorator.
* :func:`answer_field` and :func:`malformed`: a 2xx whose body is not the
  documented success shape is a :class:`~llmport.errors.MalformedResponseError`,
  never an empty success.

A plugin keeps only its vendor codes: a ``translate(exc)`` function that
returns a :class:`ProviderError` for the SDK's own exceptions (using
:func:`status_error`) or ``None``.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from types import TracebackType
from typing import Any, Literal, ParamSpec, TypeVar, cast

from ..controls.retry import retry_after_from_headers
from ..errors import (
    LlmportError,
    MalformedResponseError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    error_class_for_status,
)
from ..observe.redaction import redact
from ..observe.secrets_in_use import note_in_use, noting

__all__ = [
    "Translator",
    "answer_field",
    "bad_embeddings",
    "detach",
    "event_json",
    "is_transient_status",
    "malformed",
    "status_error",
    "translating",
    "transport_error",
    "vendor_boundary",
    "vendor_summary",
]

#: A plugin's mapping of its SDK's exceptions: a ProviderError, an input error the
#: SDK found before sending (an :class:`~llmport.errors.InputError`), or None.
Translator = Callable[[BaseException], "LlmportError | None"]

# --- statuses ---------------------------------------------------------------------


def is_transient_status(status: int) -> bool:
    """408, 409, 429 and every 5xx (Anthropic's 529 included) are retried."""
    return status in (408, 409, 429) or status >= 500


def status_error(
    status: int,
    message: str,
    *,
    provider: str,
    headers: Mapping[str, Any] | None = None,
    code: str | None = None,
    retryable: bool | None = None,
    cls: type[ProviderError] | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """The typed error for an HTTP error status.

    ``cls`` and ``retryable`` let a vendor code refine the status (Anthropic's
    ``overloaded_error``, OpenAI's ``insufficient_quota``); an explicit
    ``x-should-retry: true|false`` header from the server wins over both.
    """
    error_cls = cls or error_class_for_status(status)
    transient = is_transient_status(status) if retryable is None else retryable
    should = headers.get("x-should-retry") if headers is not None else None
    if should in ("true", "false"):
        transient = should == "true"
    label = f"{status} {code}" if code else str(status)
    if retry_after is None:
        retry_after = retry_after_from_headers(headers)
    error = error_cls(
        f"{provider} {label}: {message}",
        provider=provider,
        status=status,
        retryable=transient,
        retry_after=retry_after,
        code=code,
    )
    if headers is not None:
        limits = {
            str(k).lower(): str(v)
            for k, v in headers.items()
            if str(k).lower().startswith(_RATE_LIMIT_HEADERS)
        }
        if limits:  # the limiter tightens its buckets with them (llmport.controls.limits)
            error.headers = limits
    return error


_RATE_LIMIT_HEADERS = ("x-ratelimit-", "anthropic-ratelimit-", "retry-after")


# --- transports and unreadable answers ---------------------------------------------


def transport_error(exc: BaseException, provider: str) -> ProviderError | None:
    """The llmport error for a transport failure or an unreadable answer, else None.

    Matched by class name and module (httpx, httpx2, httpcore, aiohttp,
    urllib3, pydantic, json), so nothing is imported to check.
    """
    names = {cls.__name__ for cls in type(exc).__mro__}
    module = type(exc).__module__ or ""
    if module.startswith(("httpx", "httpcore")):
        if "TimeoutException" in names or "TimeoutError" in names:
            return ProviderTimeoutError(f"{provider}: request timed out", provider=provider)
        if "RemoteProtocolError" in names:
            return ProviderConnectionError(
                f"{provider}: connection closed before the answer was complete",
                provider=provider,
            )
        if names & {"TransportError", "NetworkError", "ProtocolError", "ConnectError"}:
            return ProviderConnectionError(
                f"{provider}: connection failed ({type(exc).__name__})", provider=provider
            )
        return None
    if module.startswith("aiohttp"):
        if isinstance(exc, TimeoutError) or "ServerTimeoutError" in names:
            return ProviderTimeoutError(f"{provider}: request timed out", provider=provider)
        if "ClientError" in names:
            return ProviderConnectionError(
                f"{provider}: connection failed ({type(exc).__name__})", provider=provider
            )
        return None
    # An answer whose bytes are not text in their declared encoding, or nested past what
    # the decoder's stack allows (a hostile peer): unreadable, as invalid JSON is.
    if isinstance(exc, UnicodeDecodeError):
        return MalformedResponseError(
            f"{provider}: the answer is not text in its encoding ({exc.reason})", provider=provider
        )
    if isinstance(exc, OverflowError):  # a count of 1e400 (infinity) made an integer
        return MalformedResponseError(
            f"{provider}: the answer holds a number out of range", provider=provider
        )
    if isinstance(exc, RecursionError):
        return MalformedResponseError(
            f"{provider}: the answer is nested too deep to read", provider=provider
        )
    if type(exc) is ValueError and "integer string conversion" in str(exc):
        # CPython's digit limit, hit by an SDK's own JSON parse of the answer.
        return MalformedResponseError(
            f"{provider}: the answer holds an integer too long to read", provider=provider
        )
    if "JSONDecodeError" in names:
        return MalformedResponseError(
            f"{provider}: the answer is not valid JSON ({getattr(exc, 'msg', exc)})",
            provider=provider,
        )
    if "ValidationError" in names and module.startswith("pydantic"):
        return MalformedResponseError(
            f"{provider}: the answer did not match the API schema", provider=provider
        )
    return None


# --- the helper plugins use -----------------------------------------------------------


def vendor_summary(exc: BaseException, secrets: Iterable[str] = ()) -> str:
    """``Type: message`` of a vendor exception, redacted and cut to 300 characters."""
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return redact(text, secrets)[:300]


def detach(exc: BaseException) -> BaseException:
    """Cut every link to a foreign exception from the chain of an llmport error.

    Python sets ``__context__`` to the exception being handled when another is
    raised, so an llmport error raised while a vendor exception was handled
    (in :class:`translating`, or by a plugin raising ``ConfigError`` from a
    client-creation failure) still points at that vendor exception, which may
    hold a request with a key. The runtime calls this on every exception a
    provider raises; llmport errors in the chain are kept. Other exceptions
    (a bug in a plugin) pass unchanged.
    """
    if not isinstance(exc, LlmportError):
        return exc
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        if node.__cause__ is not None and not isinstance(node.__cause__, LlmportError):
            node.__cause__ = None
        if node.__context__ is not None and not isinstance(node.__context__, LlmportError):
            node.__context__ = None
            node.__suppress_context__ = True
        node = node.__cause__ or node.__context__
    return exc


class translating:
    """How one provider translates: wrap SDK calls, vendor exceptions leave as llmport's.

    ::

        with translating(self.name, translate, self.secrets()):
            answer = client.messages.create(**payload)

    ``translate(exc)`` is the plugin's mapping of its SDK's exceptions (None
    for anything else); transport failures and unreadable answers are
    mapped here for every plugin. ``secrets`` (the configured key values)
    are masked literally in the message. An exception that is neither
    passes through unchanged; an llmport error raised inside has its
    message masked too. A provider's ``translating()`` returns its instance,
    which :func:`vendor_boundary` applies to whole methods.
    """

    __slots__ = ("provider", "secrets", "translate")

    def __init__(
        self, provider: str, translate: Translator | None = None, secrets: Iterable[str] = ()
    ) -> None:
        self.provider = provider
        self.translate = translate
        self.secrets = tuple(s for s in secrets if s)

    def __enter__(self) -> translating:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Literal[False]:
        if exc is None or not isinstance(exc, Exception):
            return False
        settled = self.settle(exc)
        # The frame's own references to the vendor exception and its traceback go too.
        del exc, tb
        if settled is None:
            return False
        raise settled from None

    def settle(self, exc: Exception) -> LlmportError | None:
        """The llmport error ``exc`` leaves as (masked, detached), or None to let it pass.

        An llmport error is itself (its message masked); a vendor or
        transport error is its translation (with the redacted summary);
        anything else (a bug) is None.
        """
        if isinstance(exc, LlmportError):
            if self.secrets and exc.args and isinstance(exc.args[0], str):
                exc.args = (redact(exc.args[0], self.secrets), *exc.args[1:])
            return cast(LlmportError, detach(exc))
        mapped = self.map(exc)
        if mapped is None:
            return None
        if isinstance(mapped, ProviderError):
            mapped.vendor_error = vendor_summary(exc, self.secrets)
        return mapped

    def map(self, exc: BaseException) -> LlmportError | None:
        """The llmport error for ``exc`` (None when it is not a vendor or transport error)."""
        mapped: LlmportError | None = self.translate(exc) if self.translate is not None else None
        if mapped is None:
            mapped = transport_error(exc, self.provider)
        if mapped is None:
            return None
        if mapped.args and isinstance(mapped.args[0], str):
            mapped.args = (redact(mapped.args[0], self.secrets),)
        mapped._llmport_translated = True  # type: ignore[attr-defined]
        return mapped


# --- the vendor boundary ----------------------------------------------------------------

P = ParamSpec("P")
R = TypeVar("R")


def boundary_of(owner: Any) -> translating:
    """The :class:`translating` of a decorated method's owner.

    A provider gives its own ``translating()``; a batch backend (or any
    helper holding a ``provider``) its provider's.
    """
    make = getattr(owner, "translating", None)
    if make is None:
        make = getattr(getattr(owner, "provider", None), "translating", None)
    if make is None:
        raise TypeError(f"{type(owner).__name__} has no translating() (nor a provider with one)")
    guard = make()
    if not isinstance(guard, translating):
        raise TypeError(f"{type(owner).__name__}.translating() must return a translating")
    return guard


def vendor_boundary(method: Callable[P, R]) -> Callable[P, R]:
    """Decorate a method that reaches the vendor: the one way its errors leave.

    Works on plain methods, coroutines, generators and async generators
    (``send``, ``asend``, ``send_stream``, ``asend_stream``, counts, batch
    calls). An exception leaving ``method`` goes through the owner's
    ``translating().settle``: vendor and transport errors become typed
    llmport errors, llmport errors keep their type; either way secrets are
    masked and it is raised *outside* the ``except`` block with no foreign
    exception left in ``__cause__`` / ``__context__``. Anything else (a bug
    in the plugin) passes unchanged.
    """
    if inspect.isasyncgenfunction(method):
        wrapper: Callable[..., Any] = _async_generator_boundary(method)
    elif inspect.isgeneratorfunction(method):
        wrapper = _generator_boundary(method)
    elif inspect.iscoroutinefunction(method):
        wrapper = _coroutine_boundary(method)
    else:
        wrapper = _call_boundary(method)
    return cast(Callable[P, R], functools.wraps(method)(wrapper))


# Each wrapper catches, settles, and raises after the ``except`` block: raising
# inside it would make Python chain the vendor exception as ``__context__``. The
# suspending ones drop their argument tuple and dict once the inner call is made:
# every request in flight would hold them while the vendor answers.


def _note_secrets(owner: Any) -> None:
    """Tell an open :func:`~llmport.observe.secrets_in_use.secrets_in_use` block (a cassette
    recording) this provider's secrets. Before and after the call: a credential chain
    may resolve its keys during the first one."""
    if not noting():
        return
    try:
        guard = boundary_of(owner)
    except TypeError:  # a plugin bug its first error reports; the call itself may work
        return
    note_in_use(guard.secrets)


def _settled(owner: Any, exc: Exception) -> LlmportError:
    """What ``exc`` leaves a boundary as; ``exc`` itself is re-raised when it is a bug."""
    settled = boundary_of(owner).settle(exc)
    if settled is None:
        raise exc
    return settled


def _call_boundary(method: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        _note_secrets(args[0])
        try:
            return method(*args, **kwargs)
        except Exception as exc:
            error = _settled(args[0], exc)
        finally:
            _note_secrets(args[0])
        raise error from None

    return call


def _coroutine_boundary(method: Callable[..., Any]) -> Callable[..., Any]:
    async def call(*args: Any, **kwargs: Any) -> Any:
        owner = args[0]
        _note_secrets(owner)
        try:
            answer = method(*args, **kwargs)
            del args, kwargs
            return await answer
        except Exception as exc:
            error = _settled(owner, exc)
        finally:
            _note_secrets(owner)
        raise error from None

    return call


def _generator_boundary(method: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    def events(*args: Any, **kwargs: Any) -> Iterator[Any]:
        owner = args[0]
        _note_secrets(owner)
        try:
            inner = method(*args, **kwargs)
            del args, kwargs
            yield from inner
            return
        except Exception as exc:
            error = _settled(owner, exc)
        finally:
            _note_secrets(owner)
        raise error from None

    return events


def _async_generator_boundary(
    method: Callable[..., AsyncIterator[Any]],
) -> Callable[..., AsyncIterator[Any]]:
    async def events(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        owner = args[0]
        _note_secrets(owner)
        inner = method(*args, **kwargs)
        del args, kwargs
        try:
            async for event in inner:
                yield event
            return
        except Exception as exc:
            error = _settled(owner, exc)
        finally:
            _note_secrets(owner)
            # ``async for`` does not pass aclose() on: end the inner generator here.
            await inner.aclose()  # type: ignore[attr-defined]
        raise error from None

    return events


# --- 2xx answers that are not the documented success ----------------------------------------


def malformed(provider: str, what: str) -> MalformedResponseError:
    """The error for a 2xx answer that is not the documented success shape."""
    return MalformedResponseError(
        f"{provider}: the answer is not the documented success shape ({what})", provider=provider
    )


#: The counts of a :class:`~llmport.messages.types.Usage`, each a whole number of tokens.
USAGE_COUNTS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "requests",
)


def check_usage(usage: Any, provider: str) -> None:
    """Raise :class:`MalformedResponseError` unless every count of ``usage`` is a number.

    JSON decoders take ``NaN``, ``Infinity`` and ``1e400`` (infinity) as
    numbers: counted as tokens, they would poison the run's usage, cost and
    budgets. A vendor's answer carrying them is not its documented success.
    """
    for name in USAGE_COUNTS:
        value = getattr(usage, name, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise malformed(provider, f"usage {name} is a {type(value).__name__}")
        if isinstance(value, float) and not math.isfinite(value):
            raise malformed(provider, f"usage {name} is {value!r}")


def bad_embeddings(provider: str, what: str) -> MalformedResponseError:
    """The error for a 2xx embedding answer that is not the vendor's success shape.

    Not retried, as :class:`~llmport.messages.embeddings.EmbedResponse`'s own
    checks: the same request gets the same wrong answer again.
    """
    return MalformedResponseError(
        f"{provider}: the embedding answer is not the documented success shape ({what})",
        provider=provider,
        retryable=False,
    )


def answer_field(answer: Any, name: str, kind: type[R] | tuple[type, ...], provider: str) -> R:
    """``answer``'s field ``name`` (a dict key or an attribute) when it is a ``kind``.

    Else (missing, null, wrong type, ``answer`` an error object or ``{}``) a
    :class:`~llmport.errors.MalformedResponseError`: a success never comes
    back empty. ``bool`` never passes for ``int``; a ``str`` must not be empty.
    """
    value = answer.get(name) if isinstance(answer, Mapping) else getattr(answer, name, None)
    ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in _kinds(kind))
    if ok and isinstance(value, str) and not value:
        ok = False
    if not ok:
        got = "nothing" if value is None else type(value).__name__
        raise malformed(provider, f"{name!r} expected, got {got}")
    return cast(R, value)


def event_json(event: Any, provider: str) -> dict[str, Any]:
    """A stream event's JSON object: a dict as is, an SDK event model as its JSON.

    Anything else (a JSON array, a string, a number where an event object was
    due) is a :class:`~llmport.errors.MalformedResponseError`.
    """
    if type(event) is dict:
        return event
    to_dict = getattr(event, "to_dict", None)
    if to_dict is None:
        got = "nothing" if event is None else type(event).__name__
        raise malformed(provider, f"a stream event object expected, got {got}")
    return cast(dict[str, Any], to_dict(mode="json", exclude_unset=True))


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)
