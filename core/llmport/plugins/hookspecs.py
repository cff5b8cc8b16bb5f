"""The hooks plugins implement.

Provider hooks register vendors; tool-source hooks register named toolsets
and sources of tools; policy hooks allow/deny tools, rewrite or reject
requests and responses (guardrails) and observe every model and tool call;
limiter, session-store and key-value-store hooks register backends by URL
scheme; the command hook adds ``llmport`` subcommands; the cassette-reader
hook shows a vendor's recorded exchanges as neutral messages.

Implement them in a module or object decorated with ``llmport.hookimpl``
and expose it through the ``llmport`` entry-point group::

    [project.entry-points.llmport]
    my_plugin = "my_package.plugin"
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import argparse  # only for the annotation: `import llmport` stays free of argparse

    from ..messages.types import Request, Response
    from ..provider.contract import ProviderInfo
    from ..provider.recorded import CassetteReader
    from ..tools.policy import CallInfo, ToolCheck

hookspec = pluggy.HookspecMarker("llmport")
"""Marks a hook specification of the ``llmport`` project (used by this module)."""
hookimpl = pluggy.HookimplMarker("llmport")
"""Marks a function or method as an implementation of an ``llmport`` hook."""


# --- provider hooks -----------------------------------------------------------


@hookspec
def llmport_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register provider classes with their prefix, aliases and capabilities.

    Call ``register(ProviderInfo(prefix="openai", factory=..., ...))`` once
    per provider. Import the vendor SDK lazily, inside the factory.
    """


# --- tool-source hooks ----------------------------------------------------------


@hookspec
def llmport_cassette_readers(register: Callable[[CassetteReader], None]) -> None:
    """Register readers that show this plugin's recorded exchanges as neutral messages.

    ``llmport cassette show`` asks every reader in turn (``register(reader)``;
    see :mod:`llmport.provider.recorded`); the first that returns a
    ``ShownExchange`` is printed, and an exchange no reader knows is read
    generically. A reader that raises is skipped.
    """


@hookspec
def llmport_toolsets(register: Callable[..., None]) -> None:
    """Register named toolsets: ``register("web", toolset_or_factory)``.

    Users then enable them by name: ``rt.exec(..., toolset="web")``. A
    factory (a zero-argument callable) is called on first use.
    """


@hookspec
def llmport_tool_sources(register: Callable[..., None]) -> None:
    """Register named tool sources: ``register("mcp", source)``.

    A source is a callable ``source(info) -> Iterable[tool]`` called at
    exec time (``exec(..., tools_source="mcp")``), ``info`` being a
    :class:`~llmport.tools.policy.CallInfo` for the call.
    """


# --- policy hooks -------------------------------------------------------------


@hookspec
def llmport_tool_policy(check: ToolCheck) -> str | None:
    """Decide whether a tool may be offered or run.

    Return ``"allow"``, ``"deny"`` or ``"approve"`` (require approval), or
    ``None`` for no opinion. ``check.stage`` is ``"offer"`` (building the
    request) or ``"run"`` (a call arrived, ``check.call`` is set). Deny wins
    over approve, approve over allow.
    """


@hookspec
def llmport_before_request(request: Request, info: CallInfo) -> Request | None:
    """Inspect or rewrite a request before it is sent (input guardrail).

    Return a new Request to replace it, ``None`` to keep it, or raise
    :class:`~llmport.errors.GuardrailTripped` to stop the run.
    """


@hookspec
def llmport_after_response(request: Request, response: Response, info: CallInfo) -> Response | None:
    """Inspect or rewrite a response (output guardrail); same contract."""


@hookspec
def llmport_observe(event: str, payload: dict[str, Any], info: CallInfo) -> None:
    """Observe model and tool calls (tracing).

    ``event`` is one of ``run_start``, ``run_end`` (payload ``run``,
    ``trace``, and ``error`` at the end), ``model_start``, ``model_end``,
    ``model_error`` (with ``delay``: the backoff before the next attempt),
    ``tool_start``, ``tool_end``. ``info.metadata["trace"]`` is the run's
    :class:`~llmport.observe.tracing.Trace` when ``exec(trace=...)`` gave one.
    Observers must not raise; an exception here is logged and swallowed.
    """


# --- limiter hooks ------------------------------------------------------------


@hookspec
def llmport_limiters(register: Callable[..., None]) -> None:
    """Register rate limiters by URL scheme: ``register("redis", factory)``.

    ``factory(url) -> Limiter`` (see :class:`llmport.controls.limits.Limiter`) is called
    when a runtime is configured with ``limiter="redis://..."`` (or
    ``limiter = "..."`` in configuration). Without one, the in-process
    :class:`llmport.controls.limits.InProcessLimiter` keeps the buckets.
    """


# --- session-store hooks ------------------------------------------------------------


@hookspec
def llmport_session_stores(register: Callable[[str, Callable[..., Any]], None]) -> None:
    """Register session stores by URL scheme: ``register("postgresql", factory)``.

    ``Session("postgresql://...")`` then calls ``factory(url, readonly=...,
    durable=...)``, which returns a :class:`llmport.sessions.stores.SessionStore`.
    Import the database driver lazily, inside the factory. Plain paths and
    ``sqlite://`` URLs use the core's embedded SQLite store.
    """


# --- key-value store hooks ------------------------------------------------------------


@hookspec
def llmport_kv_stores(register: Callable[[str, Callable[..., Any]], None]) -> None:
    """Register key-value stores (``RunContext.store``) by URL scheme.

    ``register("postgresql", factory)``: ``factory(url)`` returns a
    :class:`llmport.sessions.kv.Store` kept beside a session stored at that URL.
    Plain paths and ``sqlite://`` URLs use the core's SQLite store (the
    session's file, table ``llmport_kv``).
    """


# --- command-line hooks ------------------------------------------------------------


@hookspec
def llmport_register_commands(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add subcommands to the ``llmport`` command line.

    ``subparsers`` is the top-level ``argparse`` subparsers object: call
    ``subparsers.add_parser("name", help=...)``, add arguments, and
    ``set_defaults(func=...)`` on each command, ``func(args) -> int`` being
    the exit status. Every parser made there (nested ones too) gets
    ``--debug``; raise :class:`llmport.cli.main.UsageError` for a bad command
    line (printed with that command's usage, exit status 2) and any
    :class:`~llmport.errors.LlmportError` for a user error (one line, exit
    status 1). Import heavy dependencies inside ``func``, not here: the hook
    runs on every ``llmport`` invocation.
    """


# --- fix() approval (a policy hook) ------------------------------------------------------


@hookspec(firstresult=True)
def llmport_approve_fix(diff: str, fn: Callable[..., Any], instruction: str) -> bool | None:
    """Approve or refuse a model-proposed repair of an agentic function (``llmport.fix``).

    ``diff`` is the unified diff of the function's source, ``fn`` the
    function being repaired, ``instruction`` what the caller asked for.
    Return ``True`` to install it, ``False`` to refuse, ``None`` for no
    opinion; the first answer that is not ``None`` wins. Only consulted
    when ``fix()`` is given no ``approve=`` callable; with no answer at all
    the repair is refused (:class:`~llmport.errors.FixNotApproved`).
    """
