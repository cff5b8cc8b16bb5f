"""The Runtime: the one object users call models through.

A facade over the engine (:mod:`llmport.engine`): :mod:`~llmport.engine.plan`
decides everything before the first request, :mod:`~llmport.engine.steps`
is the run as one generator of effects, :mod:`~llmport.engine.drive`
performs them (sync or async). ``exec``, ``run`` and ``stream`` use the sync
driver; ``async_exec``, ``arun`` and ``astream`` the async one, so every
parameter behaves the same in both worlds by construction. The parameters
are declared once, in :class:`~llmport.controls.options.CallParams`.

The class holds what is the runtime's own (settings, routing, calls,
lifecycle); its methods for files, server-side conversations and jobs come
from the small classes of :mod:`llmport.engine.resources`.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, overload

from .controls.budget import Ledger, as_budget
from .controls.gates import Gates  # limits
from .controls.limits import Limiter  # limits
from .controls.options import CALL_PARAMS, LOOP_OPTIONS, REQUEST_OPTIONS, STANDARD_OPTIONS
from .controls.retry import Backoff
from .controls.window import as_policy
from .engine.resources import ConversationMethods, FileMethods, ImageMethods, JobMethods
from .engine.snapshot import HostSlot, RunSnapshot, Slot, Stores, UsageTotal, max_retries_of
from .engine.targets import Targets, route
from .errors import OptionError
from .messages.content import DEFAULT_MAX_BLOCK_BYTES
from .messages.types import Usage
from .observe.redaction import install_log_redaction
from .provider.setting_checks import check_providers

# What the engine, the plugin host (pluggy), asyncio and the callable provider
# cost to import is paid on first use, not by `from llmport import Runtime`.
if TYPE_CHECKING:
    from .controls.budget import Budget
    from .controls.limits import Gate, Limit  # limits
    from .controls.options import CallOptions, CallParams
    from .controls.window import ContextPolicy
    from .engine.calls import Entry
    from .engine.embed_cache import EmbedCache
    from .engine.result import RunResult, ToolCallRecord
    from .engine.targets import Resolved, Routed
    from .engine.tokens import ModelInfo, TokenCount
    from .messages.embeddings import Embeddings, InputType, Truncate
    from .messages.estimate import estimate_tokens
    from .messages.types import StreamEvent  # files
    from .plugins.host import PluginHost
    from .provider.callable import CallableProvider, request_to_content
    from .provider.config import Config
    from .sessions.configured import ConfiguredStores
    from .sessions.kv import Store

__all__ = [
    "CallableProvider",
    "RunResult",
    "Runtime",
    "ToolCallRecord",
    "estimate_tokens",
    "request_to_content",
]


def __getattr__(name: str) -> Any:
    """The engine names this module exports, loaded on first use (not needed to import it)."""
    if name in ("RunResult", "ToolCallRecord"):
        from .engine import result

        return getattr(result, name)
    if name == "estimate_tokens":
        from .messages.estimate import estimate_tokens

        return estimate_tokens
    if name in ("CallableProvider", "request_to_content"):
        from .provider import callable as callable_provider

        return getattr(callable_provider, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


T = TypeVar("T")

#: The Runtime's own arguments, for "did you mean" on a stray keyword.
_RUNTIME_ARGS = (
    "call",
    "model",
    "max_retries",
    "backoff",
    "providers",
    "hooks",
    "config",
    "plugins",
    "input_token_budget",
    "max_block_bytes",
    "budget",
    "context_policy",
    "limits",
    "limiter",
    "store",
    "embed_cache",
)


class Runtime(FileMethods, ConversationMethods, JobMethods, ImageMethods):
    """Calls models.

    ``Runtime(call=None, model="default", max_retries=2, **settings)``.

    * ``call``: ``fn(content, model, response_format) -> str`` (sync or async).
    * ``model``: the default model (``"provider:model"``, an alias or a named
      configuration); each call may override it.
    * ``max_retries``: total attempts per model request, first included (>= 1);
      when not given, ``max_retries`` from configuration (``LLMPORT_MAX_RETRIES``), else 2.

    Settings: ``backoff`` (:class:`~llmport.controls.retry.Backoff`), ``providers``
    (``{"openai": {"base_url": ...}}``), ``hooks`` (objects with hookimpls:
    policies, providers, toolsets, for this runtime only), ``config``
    (a :class:`~llmport.provider.config.Config`; default: loaded from files and
    environment), ``plugins`` (a :class:`~llmport.plugins.host.PluginHost`),
    ``input_token_budget``, ``max_block_bytes``, ``embed_cache`` (vectors kept
    by content for :meth:`embed`: ``True`` for SQLite, a path or URL, or a
    key-value store); anything else is a default
    option for every call (``temperature=0.2``). A keyword that looks like a
    misspelt argument (``modle=``) is an :class:`~llmport.errors.OptionError`.

    Use it as a context manager (``with Runtime(...) as rt:``, or ``async
    with``) or call :meth:`close` to close the provider clients it created.
    Inside the block, top-level agentic calls that record into the configured
    SQLite file share one connection to it (each still gets its own session).
    """

    def __init__(
        self,
        call: Callable[..., Any] | None = None,
        model: str | Sequence[str] = "default",
        max_retries: int | None = None,
        *,
        backoff: Backoff | None = None,
        providers: Mapping[str, Mapping[str, Any]] | None = None,
        hooks: Sequence[Any] = (),
        config: Config | None = None,
        plugins: PluginHost | None = None,
        input_token_budget: int | None = None,
        max_block_bytes: int = DEFAULT_MAX_BLOCK_BYTES,
        budget: Budget | None = None,
        context_policy: ContextPolicy | None = None,
        limits: Mapping[str, Limit] | None = None,
        limiter: str | Limiter | None = None,
        store: Store | None = None,
        embed_cache: Any = None,
        **settings: Any,
    ) -> None:
        if max_retries is not None:
            _check_max_retries(max_retries)
        if call is not None and not callable(call):
            raise TypeError("call must be a function fn(content, model, response_format) -> str")
        first, fallbacks = _split_models(model)
        _check_settings(settings)
        install_log_redaction()  # idempotent; observe.redaction says why it is process-wide
        self.call = call
        self.model = first
        #: Models tried in order when ``model`` fails (``Runtime(model=[first, *fallbacks])``).
        self.fallbacks = fallbacks
        self._max_retries = max_retries
        self.backoff = backoff or Backoff()
        self.options: dict[str, Any] = dict(settings)
        self.input_token_budget = input_token_budget
        self.max_block_bytes = max_block_bytes
        #: ``providers=``, checked by type now: a wrong one fails here, before any client.
        self.provider_settings = check_providers(providers, "Runtime(providers=...)")
        self.targets = Targets()
        self._config: Slot[Config] = Slot(_load_config, config)
        self._host = HostSlot(plugins, hooks)
        self._usage = UsageTotal()
        self._callable = _callable_provider(self)
        checked = as_budget(budget)
        #: The runtime's cumulative budget, shared by every run (``Runtime(budget=...)``).
        self.ledger = Ledger(checked, "runtime") if checked is not None else None
        self.context_policy = as_policy(context_policy)
        #: Summaries written by ``ContextPolicy(strategy="summarize")``, reused by later runs.
        self.summaries: dict[str, str] = {}
        self._gates = Gates(limits, limiter)  # limits: checked now, the limiter made on first use
        #: ``RunContext.store`` when given; else beside a stored session, else in memory.
        self._stores = Stores(store)
        #: The configured session database, kept open inside ``with rt:`` blocks (made then).
        self._held: ConfiguredStores | None = None
        #: Vectors kept by content (``embed_cache=``: True, a path or URL, or a store).
        self.embed_cache: EmbedCache | None = _embed_cache(embed_cache)
        if self.embed_cache is not None and isinstance(embed_cache, (str, bool)):
            self.adopt(self.embed_cache.store)  # opened here from a path or URL: closed here

    # -- configuration, plugins, providers ------------------------------------

    @property
    def config(self) -> Config:
        """``config=``, else loaded from files and environment on first use."""
        return self._config.get()

    @property
    def plugins(self) -> PluginHost:
        """``plugins=`` (else one made on first use) with this runtime's ``hooks`` registered."""
        return self._host.get()

    @property
    def max_retries(self) -> int:
        """Total attempts per model request: the argument, else configuration, else 2."""
        return max_retries_of(self._max_retries, self._config)

    @max_retries.setter
    def max_retries(self, value: int) -> None:
        self._max_retries = _check_max_retries(value)

    @property
    def usage(self) -> Usage:
        """Tokens used by every call of this runtime so far (a copy)."""
        return self._usage.copy()

    def add_usage(self, usage: Usage) -> None:
        """Add one run's usage to the runtime's total (batches and background runs call this)."""
        self._usage.add(usage)

    def snapshot(self) -> RunSnapshot:
        """This runtime's settings as the next call is planned with them, read now.

        The engine plans each call from one snapshot and calls no method of
        the runtime while planning; the runtime's shared state (provider
        instances, gates, stores, the usage total) is reached through it.
        """
        return RunSnapshot(
            model=self.model,
            fallbacks=tuple(self.fallbacks),
            options=self.options,
            backoff=self.backoff,
            retries=self._max_retries,
            input_token_budget=self.input_token_budget,
            max_block_bytes=self.max_block_bytes,
            context_policy=self.context_policy,
            ledger=self.ledger,
            summaries=self.summaries,
            provider_settings=self.provider_settings,
            targets=self.targets,
            call=self._callable,
            gates=self._gates,
            stores=self._stores,
            usage=self._usage,
            config_slot=self._config,
            host=self._host,
        )

    # -- the run context's key-value store (llmport.sessions.kv) ----------------------------

    @property
    def store(self) -> Store:
        """This runtime's key-value store: ``store=`` if given, else in memory (made once)."""
        return self._stores.default

    def store_for(self, session: Any) -> Store:
        """The store a run uses: ``store=``, else the stored session's, else :attr:`store`."""
        return self._stores.for_session(session)

    # -- rate limits (llmport.controls.limits) ------------------------------------------------

    @property
    def limits(self) -> dict[str, Limit]:
        """``{glob: Limit}``: configuration's ``[limits]``, overridden key by key by ``limits=``."""
        return self._gates.limits(self.config.limits)

    @property
    def limiter(self) -> Limiter:
        """The limiter keeping this runtime's buckets (made on first use, from the hook)."""
        return self._gates.limiter(self)

    def gate(self, target: str) -> Gate | None:
        """The limits on ``target`` (``provider:model``) with the limiter; None if none match."""
        return self._gates.gate(target, self)

    # -- routing (llmport.engine.targets) ----------------------------------------------------

    def call_provider(self) -> CallableProvider | None:
        """The provider made from ``call=`` or a ``_call`` override, if any."""
        return self._callable

    def route(self, model: str | None) -> Routed:
        """(provider, model name, qualified name, configured options, plain callable?)."""
        return route(self, self.targets, self._callable, model)

    def routed(self, model: str | None) -> bool:
        """Whether routing ``model`` is warm (resolved before by this runtime, or ``call=``)."""
        return self._callable is not None or self.targets.routed(model or self.model)

    def resolve(self, model: str) -> Resolved:
        """(provider, model name, qualified name, configured options): never ``call=``."""
        return self.targets.resolve(self, model)

    # -- the seed API ---------------------------------------------------------------

    def _call(
        self,
        content: list[dict[str, Any]],
        model: str = "default",
        response_format: dict[str, Any] | None = None,
        **options: Any,
    ) -> str:
        """Override to make a runtime from a function; returns the reply text."""
        raise NotImplementedError

    async def _async_call(
        self,
        content: list[dict[str, Any]],
        model: str = "default",
        response_format: dict[str, Any] | None = None,
        **options: Any,
    ) -> str:
        """Async override; by default runs ``_call`` in a thread."""
        import asyncio

        return await asyncio.to_thread(self._call, content, model, response_format, **options)

    # -- calls ------------------------------------------------------------------------

    @overload
    def run(
        self, content: Any = None, *, response_format: type[T], **params: Unpack[CallOptions]
    ) -> RunResult[T]: ...
    @overload
    def run(self, content: Any = None, **params: Unpack[CallParams]) -> RunResult[Any]: ...
    def run(self, content: Any = None, **params: Any) -> RunResult[Any]:
        """Like :meth:`exec`, but return the whole :class:`RunResult`."""
        started = time.monotonic()  # deadline=: the run's clock starts at the call
        return _engine_within(self, params, started).run(self, content, params, started)

    @overload
    async def arun(
        self, content: Any = None, *, response_format: type[T], **params: Unpack[CallOptions]
    ) -> RunResult[T]: ...
    @overload
    async def arun(self, content: Any = None, **params: Unpack[CallParams]) -> RunResult[Any]: ...
    async def arun(self, content: Any = None, **params: Any) -> RunResult[Any]:
        """Async :meth:`run`."""
        started = time.monotonic()
        return await _engine_within(self, params, started).arun(self, content, params, started)

    def exec(self, content: Any = None, **params: Unpack[CallParams]) -> Any:
        """Call the model (running tools, validating output) and return the reply.

        Returns the reply text; with ``response_format`` the validated JSON
        text; with ``choices`` the chosen value or the chosen callable's result.
        """
        return self.run(content, **params).output

    async def async_exec(self, content: Any = None, **params: Unpack[CallParams]) -> Any:
        """Async :meth:`exec`; same parameters, same behaviour."""
        # The engine's coroutine awaited here, not through arun: one coroutine fewer
        # held for each call in flight.
        started = time.monotonic()
        engine = _engine_within(self, params, started)
        return (await engine.arun(self, content, params, started)).output

    def stream(self, content: Any = None, **params: Unpack[CallParams]) -> Iterator[StreamEvent]:
        """Yield :data:`~llmport.messages.types.StreamEvent` objects; the last is a FinalEvent."""
        started = time.monotonic()
        yield from _engine_within(self, params, started).stream(self, content, params, started)

    async def astream(
        self, content: Any = None, **params: Unpack[CallParams]
    ) -> AsyncIterator[StreamEvent]:
        """Async :meth:`stream`: ``async for event in rt.astream(...)``."""
        started = time.monotonic()
        engine = _engine_within(self, params, started)
        async for event in engine.astream(self, content, params, started):
            yield event

    # -- tokens and models -------------------------------------------------------------

    def count_tokens(self, content: Any = None, **params: Unpack[CallParams]) -> TokenCount:
        """Input tokens of the first request ``exec`` with these arguments would send.

        Takes every parameter ``exec`` takes; vendor-counted where the model can.
        """
        from .engine import tokens

        return tokens.count_tokens(self, content, params)

    async def acount_tokens(self, content: Any = None, **params: Unpack[CallParams]) -> TokenCount:
        """Async :meth:`count_tokens`; same parameters, same request."""
        from .engine import tokens

        return await tokens.acount_tokens(self, content, params)

    def model_info(self, model: str | None = None) -> ModelInfo:
        """Context window, output limit, inputs, features and price of ``model``."""
        from .engine import tokens

        return tokens.model_info(self, model)

    # -- embeddings (llmport.engine.embed) --------------------------------------------------------

    def embed(
        self,
        inputs: str | Sequence[str],
        *,
        model: str | None = None,
        input_type: InputType | None = None,
        dimensions: int | None = None,
        truncate: Truncate | None = None,
        vendor: Mapping[str, Mapping[str, Any]] | None = None,
        normalize: bool = False,
        deadline: float | None = None,
    ) -> Embeddings:
        """Embed a string or a list of strings with an embedding model (docs: Embeddings).

        ``input_type`` (``"query"`` / ``"document"``) is mapped to the vendor's own
        and dropped where it has none; ``dimensions`` is refused where the size is
        fixed; ``truncate=None`` refuses an over-long input before the wire,
        ``"start"`` / ``"end"`` let the vendor cut it. A long list is split by the
        vendor's limits, the parts sent concurrently, joined in input order.
        """
        from .engine import embed

        return embed.embed(
            self,
            inputs,
            model=model,
            input_type=input_type,
            dimensions=dimensions,
            truncate=truncate,
            vendor=vendor,
            normalize=normalize,
            deadline=deadline,
        )

    async def aembed(
        self,
        inputs: str | Sequence[str],
        *,
        model: str | None = None,
        input_type: InputType | None = None,
        dimensions: int | None = None,
        truncate: Truncate | None = None,
        vendor: Mapping[str, Mapping[str, Any]] | None = None,
        normalize: bool = False,
        deadline: float | None = None,
    ) -> Embeddings:
        """Async :meth:`embed`; same parameters, same requests."""
        from .engine import embed

        return await embed.aembed(
            self,
            inputs,
            model=model,
            input_type=input_type,
            dimensions=dimensions,
            truncate=truncate,
            vendor=vendor,
            normalize=normalize,
            deadline=deadline,
        )

    # -- lifecycle ----------------------------------------------------------------------

    def adopt(self, resource: Any) -> None:
        """Close ``resource`` with this runtime: an object with ``close()`` (and maybe
        ``aclose()``), such as a toolset holding a connection. Runs adopt their
        connected toolsets themselves; adopting twice is harmless."""
        self.targets.adopt(resource)

    def _holder(self) -> ConfiguredStores:
        """What keeps the configured session database open in ``with`` blocks (made once)."""
        if self._held is None:
            from .sessions.configured import ConfiguredStores  # not on start-up's path

            self._held = ConfiguredStores()
        return self._held

    def close(self) -> None:
        """Close the provider clients this runtime created (sync, and every loop's async),
        the connected toolsets its runs used (MCP servers), and the configured session
        database its ``with`` blocks kept open (:mod:`llmport.sessions.configured`)."""
        self.targets.close_all()
        self._gates.close()  # limits
        if self._held is not None:
            self._held.close()

    async def aclose(self) -> None:
        """Close this runtime's clients from async code (the running loop's first, in it)."""
        await self.targets.aclose_all()
        self._gates.close()  # limits
        if self._held is not None:
            self._held.close()

    def __enter__(self) -> Runtime:
        self._holder().enter()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._holder().leave()
        self.close()

    async def __aenter__(self) -> Runtime:
        self._holder().enter()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._holder().leave()
        await self.aclose()


def _engine_within(rt: Runtime, params: Mapping[str, Any], started: float) -> Entry:
    """The engine; its first import (a second or more, cold) is cut at the run's deadline."""
    if _ENGINE_MODULE in sys.modules:
        return _engine()  # the hot path: loaded
    from .provider.deadline import early_deadline, setup_within

    return setup_within(_engine, started, early_deadline(params, rt.options))


_ENGINE_MODULE = "llmport.engine.calls"


@functools.cache
def _engine() -> Entry:
    """The engine's call entry points, imported on the first call.

    Cached so a call does not pay an import statement; the cache holds only
    what ``sys.modules`` already holds.
    """
    from .engine import calls

    return calls


def _load_config() -> Config:
    """Configuration from files and environment (``config=`` not given)."""
    from .provider.config import load_config

    return load_config()


def _callable_provider(rt: Runtime) -> CallableProvider | None:
    """The provider made from ``call=`` or from ``_call``/``_async_call`` overrides."""
    if rt.call is None and not _overridden(type(rt), "_call", "_async_call"):
        return None  # the common case: no need to import the callable provider
    from .provider.callable import CallableProvider

    if rt.call is not None:
        return CallableProvider.of(rt.call)
    sync = rt._call if _overridden(type(rt), "_call") else None
    asyn = rt._async_call if _overridden(type(rt), "_async_call") else None
    return CallableProvider(sync, asyn, f"{type(rt).__name__}._call")


def _overridden(cls: type, *names: str) -> bool:
    """Whether a subclass overrides any of ``names``."""
    return any(getattr(cls, name) is not getattr(Runtime, name) for name in names)


def _split_models(model: str | Sequence[str]) -> tuple[str, list[str]]:
    """``Runtime(model=...)``: (the first model, the fallbacks tried in order after it)."""
    fallbacks: list[str] = []
    if isinstance(model, (list, tuple)) and model:  # candidates, tried in order
        model, fallbacks = model[0], list(model[1:])
    if not isinstance(model, str) or not model.strip():
        raise OptionError(f"model must be a non-empty 'provider:model' string, got {model!r}")
    if not all(isinstance(m, str) and m.strip() for m in fallbacks):
        raise OptionError(f"fallback models must be non-empty strings, got {fallbacks!r}")
    return model, fallbacks


def _embed_cache(value: Any) -> EmbedCache | None:
    """``embed_cache=`` as a cache (None: none; the engine module loaded only when given)."""
    if value is None:
        return None
    from .engine.embed_cache import EmbedCache

    return EmbedCache.of(value)


def _check_max_retries(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionError(
            f"max_retries is the total number of attempts and must be >= 1, got {value!r}"
        )
    return value


def _check_settings(settings: Mapping[str, Any]) -> None:
    """Reject a stray Runtime keyword that is a misspelt argument or a per-call parameter."""
    known = STANDARD_OPTIONS | LOOP_OPTIONS | REQUEST_OPTIONS
    for key in settings:
        if key in known:
            continue
        if key in CALL_PARAMS:
            raise OptionError(
                f"{key!r} is a per-call parameter: give it to exec()/run(), not Runtime()"
            )
        import difflib  # only for a keyword it may hint at: Runtime() needs none

        names = sorted({*_RUNTIME_ARGS, *CALL_PARAMS, *known})
        close = difflib.get_close_matches(key, names, n=1, cutoff=0.75)
        if close:
            raise OptionError(f"unknown Runtime argument {key!r} (did you mean {close[0]!r}?)")
