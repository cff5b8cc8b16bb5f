"""The run context injected into tools and chosen callables.

A tool that declares a parameter ``ctx: RunContext[AppDeps]`` gets one; the
parameter never appears in the tool's JSON schema (:mod:`llmport.schema.build`).

Besides the user's ``deps`` and where the call happens, the context carries
(as in LangGraph's ``Runtime``):

* ``stream_writer(payload)``: hands ``payload`` to the caller of
  ``stream()`` / ``astream()`` as a :class:`~llmport.messages.types.CustomEvent`, live,
  in the order written (a no-op when the run is not streamed);
* ``store``: a namespaced JSON key-value :class:`~llmport.sessions.kv.Store`
  (in memory per Runtime by default; beside a SQLite session in its file;
  PostgreSQL with ``llmport-postgres``);
* ``previous``: the last successful return value of the same agentic
  function in this session (``None`` if there is none);
* :meth:`RunContext.merge` and :meth:`RunContext.override` return new
  (frozen) contexts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from ..slotted import dataclass, field

__all__ = ["RunContext"]

T = TypeVar("T")


def _no_writer(payload: Any) -> None:
    """The ``stream_writer`` of a run that is not streamed: drops the payload."""


#: Says "not looked up yet" for ``previous``.
_UNSET: Any = object()


@dataclass(slots=True, frozen=True)
class RunContext(Generic[T]):
    """Immutable context injected into tools that declare ``ctx: RunContext[...]``.

    ``deps`` is whatever was passed as ``exec(..., deps=...)``; ``model``, the
    ``llm`` DAG node of the exec (``None`` outside ``@agentic_function``),
    the tool-loop ``iteration`` (1-based), the vendor's ``tool_call_id``, the
    ``tool_name`` and the agentic ``function`` say where the call happens.
    ``stream_writer``, ``store`` and ``previous`` are described in the module
    docstring.
    """

    #: Left out of a function's JSON schema (:data:`llmport.schema.build.INJECTED`).
    __llmport_injected__: ClassVar[bool] = True

    deps: T
    model: str
    node_id: str | None = None
    iteration: int = 0
    tool_call_id: str = ""
    tool_name: str = ""
    function: str | None = None
    #: ``stream_writer(payload)``: a CustomEvent in stream()/astream(), else a no-op.
    stream_writer: Callable[[Any], None] = field(default=_no_writer, compare=False, repr=False)
    #: The run's key-value store (:class:`llmport.sessions.kv.Store`), None when made by hand.
    store: Any = field(default=None, compare=False, repr=False)
    #: ``previous`` given explicitly (else looked up through ``previous_lookup``).
    previous_value: Any = field(default=_UNSET, compare=False, repr=False)
    #: Finds ``previous`` on first use (the engine sets it inside an agentic function).
    previous_lookup: Callable[[], Any] | None = field(default=None, compare=False, repr=False)

    @property
    def previous(self) -> Any:
        """The last successful return value of this agentic function in this session.

        ``None`` outside an agentic function or before its first successful call.
        Looked up in the session DAG when first read.
        """
        if self.previous_value is not _UNSET:
            return self.previous_value
        if self.previous_lookup is None:
            return None
        value = self.previous_lookup()
        object.__setattr__(self, "previous_value", value)  # a cache of a fixed fact
        return value

    def override(self, **changes: Any) -> RunContext[T]:
        """A new context with ``changes`` applied (``ctx.override(deps=other)``).

        ``previous=`` sets the previous value. Unknown names are a ``TypeError``.
        """
        from dataclasses import fields, replace  # here: dataclasses loads inspect

        if "previous" in changes:
            changes["previous_value"] = changes.pop("previous")
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise TypeError(
                f"RunContext has no field(s) {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(sorted(known - {'previous_value', 'previous_lookup'}))}"
            )
        return replace(self, **changes)

    def merge(self, other: RunContext[Any]) -> RunContext[Any]:
        """A new context: ``other``'s values where it sets them, this one's elsewhere.

        A field counts as set when it differs from its default (``None``,
        ``0``, ``""``, the no-op writer, no store, no previous value).
        """
        from dataclasses import fields, replace  # here: dataclasses loads inspect

        if not isinstance(other, RunContext):
            raise TypeError(f"merge() takes a RunContext, got {type(other).__name__}")
        changes: dict[str, Any] = {}
        for f in fields(other):
            value = getattr(other, f.name)
            if f.name == "deps":
                if value is not None:
                    changes["deps"] = value
                continue
            if f.name == "model":
                if value:
                    changes["model"] = value
                continue
            if value is not f.default and value != f.default:
                changes[f.name] = value
        return replace(self, **changes)
