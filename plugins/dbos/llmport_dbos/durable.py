"""Durable agentic functions and queues on DBOS.

:func:`durable` turns an ``@agentic_function`` into a DBOS workflow whose
model requests and tool calls are DBOS steps (through the core's seam,
:mod:`llmport.sessions.durable`); :func:`queue`, :func:`enqueue` and
:func:`result` spread such runs over workers with DBOS queues.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any, Generic, ParamSpec, TypeVar

from llmport import Session
from llmport.sessions.dag import enter_frame, leave_frame
from llmport.sessions.durable import Retrace, recording

from .outage import DEFAULT_WAIT, PLUGIN, WAIT_OPTION, aoutage_typed, outage_typed
from .recorder import DbosRecorder

__all__ = ["DurableFunction", "durable", "enqueue", "launch", "queue", "result"]

P = ParamSpec("P")
R = TypeVar("R")

#: The queue :func:`enqueue` uses when none is named.
DEFAULT_QUEUE = "llmport"


class DurableFunction(Generic[P, R]):
    """An agentic function that runs as a DBOS workflow; call it like the function.

    ``workflow`` is the registered DBOS workflow (what :func:`enqueue` and
    ``DBOS.start_workflow`` take); ``fn`` the function as decorated.
    """

    def __init__(self, fn: Callable[P, R], workflow: Callable[P, R], name: str) -> None:
        self.fn = fn
        self.workflow = workflow
        self.name = name
        functools.update_wrapper(self, fn)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Run now, in this process, as a workflow (resumable by any worker if this one dies).

        A database that stays unreachable longer than :func:`launch`'s
        ``database_wait`` is a :class:`~llmport.SessionStoreUnavailable`.
        """
        if inspect.iscoroutinefunction(self.fn):
            return aoutage_typed(lambda: self.workflow(*args, **kwargs))  # type: ignore[arg-type, return-value]
        return outage_typed(lambda: self.workflow(*args, **kwargs))

    def start(self, *args: P.args, **kwargs: P.kwargs) -> Any:
        """Start in the background; the DBOS ``WorkflowHandle`` (``workflow_id``, results)."""
        from dbos import DBOS

        return outage_typed(lambda: DBOS.start_workflow(self.workflow, *args, **kwargs))

    def __repr__(self) -> str:
        return f"<durable {self.name}>"


def durable(
    fn: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    sessions: str | None = None,
    max_recovery_attempts: int | None = None,
) -> Any:
    """Make ``fn`` (an ``@agentic_function``) a durable run: a DBOS workflow.

    Each model request and each tool call inside it, nested agentic functions
    included, is a DBOS step: a worker that dies mid-run is resumed by any
    worker from its last completed step, and completed steps are neither paid
    for nor run again. The run records into the session named by its workflow
    id (in ``sessions``, a session path or URL; default: the configured
    session path, else in memory), its nodes carrying the workflow id; a
    durable function called inside another durable run (a child workflow)
    records into its own session too, not its caller's.

    Works bare (``durable(fn)``, ``@durable``) or with arguments. Register
    durable functions before ``DBOS.launch()`` (DBOS finds a workflow to
    resume by its ``name``, by default the function's module and qualified
    name).
    """

    def decorate(func: Callable[P, R]) -> DurableFunction[P, R]:
        from dbos import DBOS

        label = name or f"{func.__module__}.{func.__qualname__}"
        body = _workflow_body(func, sessions)
        options: dict[str, Any] = {"name": label}
        if max_recovery_attempts is not None:
            options["max_recovery_attempts"] = max_recovery_attempts
        return DurableFunction(func, DBOS.workflow(**options)(body), label)

    return decorate(fn) if fn is not None else decorate


def _workflow_body(func: Callable[P, R], sessions: str | None) -> Callable[P, R]:
    """``func`` run inside its run's session with every step recorded (sync or async)."""
    if inspect.iscoroutinefunction(func):

        async def async_body(*args: Any, **kwargs: Any) -> Any:
            with _attempt(sessions):
                return await func(*args, **kwargs)

        return functools.wraps(func)(async_body)  # type: ignore[return-value]

    def body(*args: Any, **kwargs: Any) -> Any:
        with _attempt(sessions):
            return func(*args, **kwargs)

    return functools.wraps(func)(body)


@contextlib.contextmanager
def _attempt(sessions: str | None) -> Iterator[DbosRecorder]:
    """One attempt of a durable run: its session (id = workflow id) bound, its recorder set."""
    from dbos import DBOS

    workflow_id = DBOS.workflow_id
    if workflow_id is None:  # pragma: no cover - DBOS calls the body inside its workflow
        raise RuntimeError("a durable function's body runs only as a DBOS workflow")
    session = _session(sessions, workflow_id)
    recorder = DbosRecorder(workflow_id, Retrace.of(session.nodes(), workflow_id))
    # A durable run called from inside another agentic call (a nested durable function)
    # starts its own DAG in its own session: outside the caller's frame.
    outside = enter_frame(None)
    try:
        with session, recording(recorder):
            yield recorder
    finally:
        leave_frame(outside)


def _session(target: str | None, workflow_id: str) -> Session:
    if target is None:
        from llmport.provider.config import load_config

        target = load_config().session_path
    return Session(target, id=workflow_id) if target else Session(id=workflow_id)


def launch(
    database_url: str,
    *,
    name: str = "llmport",
    database_wait: float = DEFAULT_WAIT,
    **config: Any,
) -> Any:
    """Configure and launch DBOS on ``database_url`` (PostgreSQL, or SQLite for one machine).

    ``database_wait``: seconds a run waits for a PostgreSQL that stopped
    answering (its checkpoints are written once it is back, nothing is paid
    twice) before it fails with :class:`~llmport.SessionStoreUnavailable`
    (default 5). ``config`` adds to the ``DBOSConfig`` (e.g. ``executor_id``,
    ``application_version``). Launching recovers this executor's pending
    runs. Register durable functions first; declare queues after. Returns the ``DBOS``
    instance (``DBOS.destroy()`` stops it).
    """
    from dbos import DBOS, DBOSConfig

    wait = _wait_setting(database_wait)
    _repoint_closed_log_streams()
    settings: DBOSConfig = {"name": name, "system_database_url": database_url}
    settings.update(config)  # type: ignore[typeddict-item]
    if not database_url.startswith("sqlite"):
        engine_kwargs = dict(settings.get("db_engine_kwargs") or {})
        engine_kwargs["plugins"] = [*engine_kwargs.get("plugins", []), PLUGIN]
        engine_kwargs[WAIT_OPTION] = wait
        settings["db_engine_kwargs"] = engine_kwargs
    dbos = DBOS(config=settings)
    DBOS.launch()
    return dbos


def _wait_setting(value: Any) -> float:
    """``database_wait=`` checked: a finite number of seconds >= 0."""
    import math

    from llmport import OptionError

    number = not isinstance(value, bool) and isinstance(value, (int, float))
    if not (number and math.isfinite(value) and value >= 0):
        raise OptionError(f"database_wait must be a number of seconds >= 0, got {value!r}")
    return float(value)


def _repoint_closed_log_streams() -> None:
    """Point DBOS's console log handler at today's stderr if the one it kept is closed.

    DBOS binds it to ``sys.stderr`` as it was when ``dbos`` was imported; a
    process that replaced and closed that stream since (a daemonized worker,
    a test runner's capture) would otherwise fail inside DBOS's launch,
    which flushes it.
    """
    for handler in logging.getLogger("dbos").handlers:
        if isinstance(handler, logging.StreamHandler) and getattr(handler.stream, "closed", False):
            with handler.lock or contextlib.nullcontext():  # setStream() flushes the closed one
                handler.stream = sys.stderr


def queue(
    name: str = DEFAULT_QUEUE,
    *,
    concurrency: int | None = None,
    worker_concurrency: int | None = None,
    limit: int | None = None,
    period: float | None = None,
    polling_interval: float = 1.0,
) -> Any:
    """Declare a DBOS queue: at most ``concurrency`` runs at once across all workers,
    ``worker_concurrency`` per worker, and ``limit`` starts per ``period`` seconds.

    The queue's settings live in the DBOS database: declare it after
    :func:`launch`, in every worker that should take its runs.
    """
    from dbos import DBOS

    limiter: Any = None
    if limit is not None or period is not None:
        if limit is None or period is None:
            raise ValueError("a rate limit needs both limit= and period=")
        limiter = {"limit": limit, "period": period}
    return DBOS.register_queue(
        name,
        global_concurrency=concurrency,
        worker_concurrency=worker_concurrency,
        limiter=limiter,
        polling_interval_sec=polling_interval,
    )


def enqueue(
    fn: DurableFunction[P, R],
    *args: Any,
    queue: Any = DEFAULT_QUEUE,
    workflow_id: str | None = None,
    **kwargs: Any,
) -> Any:
    """Queue a run of ``fn`` for any worker listening on ``queue`` (a name or a DBOS queue).

    Returns the DBOS ``WorkflowHandle``; its ``workflow_id`` gets the result
    later from anywhere (:func:`result`). ``workflow_id`` names the run
    (enqueuing the same id twice runs it once).
    """
    from dbos import DBOS, SetWorkflowID

    if not isinstance(fn, DurableFunction):
        raise TypeError(f"enqueue() takes a durable function (llmport_dbos.durable), got {fn!r}")
    target = DBOS.retrieve_queue(queue) if isinstance(queue, str) else queue
    if target is None:
        raise ValueError(f"no DBOS queue named {queue!r}: declare it with llmport_dbos.queue()")
    if workflow_id is None:
        return outage_typed(lambda: target.enqueue(fn.workflow, *args, **kwargs))
    with SetWorkflowID(workflow_id):
        return outage_typed(lambda: target.enqueue(fn.workflow, *args, **kwargs))


def result(workflow_id: str) -> Any:
    """The return value of the durable run ``workflow_id`` (waits until it finishes).

    A database unreachable for longer than :func:`launch`'s ``database_wait``
    is a :class:`~llmport.SessionStoreUnavailable`.
    """
    from dbos import DBOS

    return outage_typed(lambda: DBOS.retrieve_workflow(workflow_id).get_result())
