"""``@agentic_function``: functions whose calls, execs and tool runs form a session DAG.

    from llmport import Runtime, agentic_function

    rt = Runtime(model="anthropic:claude-sonnet-4-5")

    @agentic_function(expose="io", render_range={"callers": 10, "subcalls": 5})
    def observe(task: str) -> str:
        \"\"\"Look at the screen.\"\"\"
        return rt.exec(f"Find: {task}")

Each call appends a ``function`` node; each ``exec`` inside appends an
``llm`` node whose context is computed from the DAG (:func:`compute_reads`,
rendered by :func:`render_dag_messages`); each tool run a ``tool`` node.
The rules, with worked examples, are in ``docs/dag.md``.
"""

from __future__ import annotations

import contextvars
import functools
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

from ..messages.types import Block, Message, Usage, block_to_dict
from ..observe.logs import logger
from ..observe.tracing import function_observers, functions_end, functions_start  # tracing
from ..slotted import dataclass
from . import dag
from .dag import (
    DEFAULT_READ_TOKENS,
    EXPOSE_VALUES,
    RENDER_RANGE_KEYS,
    Expose,
    History,
    Node,
    Reads,
    Status,
    message_to_stored,
    node_tokens,
    prompt_content,
    render_nodes,
    stored_call,
)
from .session import Session, bound_session

if TYPE_CHECKING:
    import inspect

__all__ = [
    "agentic_function",
    "compute_reads",
    "current_session",
    "record_embed",
    "record_image",
    "render_dag_messages",
]

F = TypeVar("F", bound=Callable[..., Any])

#: Longest repr kept for a value that is not JSON (arguments, results).
MAX_REPR = 2000

#: Set by a handoff while it calls its target: the first agentic call started
#: under it appends its function node (the handoff node links to it).
handoff_claim: contextvars.ContextVar[list[Node] | None] = contextvars.ContextVar(
    "llmport_handoff_claim", default=None
)


# --- the decorator ------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class AgenticSpec:
    """How one decorated function records its calls."""

    name: str
    qualname: str
    module: str
    doc: str | None
    expose: Expose
    callers: int | None
    subcalls: int | None
    tokens: int | None
    render_range: dict[str, int | None] | None
    session: Session | None
    signature: inspect.Signature | None
    #: The parameter names when each is plain (positional or keyword, no ``*``/``**``)
    #: and how many come first without a default: such calls are bound without
    #: :meth:`inspect.Signature.bind` (same result, a fraction of its cost).
    plain: tuple[tuple[str, ...], int] | None = None


@overload
def agentic_function(fn: F, /) -> F: ...


@overload
def agentic_function(
    *,
    expose: Expose = "io",
    render_range: Mapping[str, int | None] | None = None,
    session: Session | None = None,
) -> Callable[[F], F]: ...


def agentic_function(
    fn: Any = None,
    /,
    *,
    expose: Expose = "io",
    render_range: Mapping[str, int | None] | None = None,
    session: Session | None = None,
) -> Any:
    """Record each call of a sync or async function as a node of the session DAG.

    * ``expose``: what later readers outside this call see of its subtree:
      ``"io"`` (the call and its result), ``"full"`` (everything inside, inner
      functions as they expose themselves), ``"llm"`` (the exchanges of its
      execs, nothing else), ``"hidden"`` (nothing).
    * ``render_range``: ``{"callers": N, "subcalls": M, "tokens": T}``; an exec
      inside reads at most N entries of its callers' scope and the M most
      recently finished sub-calls of its own call (``None``: no limit, ``0``:
      none), and at most T estimated tokens, newest first (default
      :data:`llmport.sessions.dag.DEFAULT_READ_TOKENS`; ``None``: no bound).
    * ``session``: the session a top-level call records into (nested calls
      record into their caller's session).

    Works bare (``@agentic_function``) or with arguments. Exceptions propagate
    unchanged after being recorded as a failed node.
    """
    if expose not in EXPOSE_VALUES:
        known = ", ".join(map(repr, EXPOSE_VALUES))
        raise ValueError(f"expose must be one of {known}, got {expose!r}")
    limits = _check_render_range(render_range)
    if session is not None and not isinstance(session, Session):
        raise TypeError(f"session must be a llmport.Session, got {type(session).__name__}")

    def decorate(func: F) -> F:
        return _wrap(func, _spec_of(func, expose, limits, session))  # type: ignore[no-any-return]

    return decorate(fn) if fn is not None else decorate


def _spec_of(func: Any, expose: Expose, limits: _Limits, session: Session | None) -> AgenticSpec:
    """What the decorator records about ``func``; a generator function cannot be recorded."""
    import inspect  # here, at decoration: its import costs ~10 ms of start-up

    if not callable(func):
        raise TypeError(f"@agentic_function needs a function, got {func!r}")
    if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
        raise TypeError(f"@agentic_function cannot record generator function {func.__name__}()")
    try:
        signature: inspect.Signature | None = inspect.signature(func)
    except (TypeError, ValueError):
        signature = None
    callers, subcalls, tokens, kept_range = limits
    plain = _plain_parameters(signature) if signature is not None else None
    return AgenticSpec(
        name=getattr(func, "__name__", type(func).__name__),
        qualname=getattr(func, "__qualname__", ""),
        module=getattr(func, "__module__", "") or "",
        doc=inspect.getdoc(func),
        expose=expose,
        callers=callers,
        subcalls=subcalls,
        tokens=tokens,
        render_range=kept_range,
        session=session,
        signature=signature,
        plain=plain,
    )


def _plain_parameters(signature: inspect.Signature) -> tuple[tuple[str, ...], int] | None:
    """The names of ``signature``'s parameters and how many are required, if all are plain."""
    parameters = list(signature.parameters.values())
    if any(p.kind is not p.POSITIONAL_OR_KEYWORD for p in parameters):
        return None
    required = sum(1 for p in parameters if p.default is p.empty)
    return tuple(p.name for p in parameters), required


def _wrap(func: Callable[..., Any], spec: AgenticSpec) -> Any:
    """``func`` recording each call as a node (sync or async, as ``func`` is)."""
    import inspect  # here, at decoration: its import costs ~10 ms of start-up

    wrapper: Any
    if inspect.iscoroutinefunction(func):

        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            call = _Call(spec, args, kwargs)
            try:
                result = await func(*args, **kwargs)
            except BaseException as exc:
                call.failed(exc)
                raise
            call.returned(result)
            return result

        wrapper = functools.wraps(func)(async_wrapper)
    else:

        def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
            call = _Call(spec, args, kwargs)
            try:
                result = func(*args, **kwargs)
            except BaseException as exc:
                call.failed(exc)
                raise
            call.returned(result)
            return result

        wrapper = functools.wraps(func)(sync_wrapper)
    wrapper.__agentic__ = spec
    return wrapper


_Limits = tuple[int | None, int | None, int | None, dict[str, int | None] | None]


def _check_render_range(value: Mapping[str, int | None] | None) -> _Limits:
    if value is None:
        return None, None, DEFAULT_READ_TOKENS, None
    if not isinstance(value, Mapping):
        raise ValueError(
            f"render_range must be a dict like {{'callers': 3, 'subcalls': 2}}, got {value!r}"
        )
    unknown = sorted(set(value) - set(RENDER_RANGE_KEYS))
    if unknown:
        raise ValueError(
            f"render_range: unknown key(s) {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(map(repr, RENDER_RANGE_KEYS))}"
        )
    for key, limit in value.items():
        bad = isinstance(limit, bool) or not isinstance(limit, int) or limit < 0
        if limit is not None and bad:
            raise ValueError(
                f"render_range[{key!r}] must be an integer >= 0 or None, got {limit!r}"
            )
    tokens = value.get("tokens", DEFAULT_READ_TOKENS)
    return value.get("callers"), value.get("subcalls"), tokens, dict(value)


def _read_tokens(render_range: Mapping[str, Any] | None) -> int | None:
    """The token budget a stored ``render_range`` sets (its default when absent)."""
    if render_range is None or "tokens" not in render_range:
        return DEFAULT_READ_TOKENS
    value = render_range["tokens"]
    return None if value is None else int(value)


class _Call:
    """One running call: its node, its frame bound in the context, its clock."""

    __slots__ = ("frame", "observed", "owned", "session", "started", "token")

    def __init__(self, spec: AgenticSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        outer = dag.current_frame()
        self.owned: Session | None = None
        if isinstance(outer, AgenticFrame):
            session, parent = outer.session, outer.node
        else:
            chosen = spec.session if spec.session is not None else bound_session()
            if chosen is None:
                chosen = self.owned = Session.from_config()
            session, parent = chosen, chosen.root
        arguments = _arguments(spec, args, kwargs)
        claim = handoff_claim.get()
        handed = claim is not None and not claim
        if handed and arguments:  # a handoff target: the conversation is in its execs already
            first = next(iter(arguments))
            count = len(args[0]) if args and isinstance(args[0], list) else "the"
            arguments[first] = f"<{count} messages handed off>"
        data: dict[str, Any] = {
            "qualname": spec.qualname,
            "module": spec.module,
            "doc": spec.doc,
            "arguments": arguments,
        }
        if spec.render_range is not None:
            data["render_range"] = spec.render_range
        node = session.begin("function", spec.name, parent, data, expose=spec.expose)
        if handed:  # the target of a handoff (its first call): the handoff node links to it
            assert claim is not None
            claim.append(node)
        self.session = session
        fixed = spec.render_range is not None and "tokens" in spec.render_range
        self.frame = AgenticFrame(
            session, node, spec.callers, spec.subcalls, spec.tokens, fixed_tokens=fixed
        )
        self.started = time.perf_counter()
        self.token = dag.enter_frame(self.frame)
        self.observed = (  # tracing: process-wide observers of agentic calls (span per call)
            functions_start(spec.name, node.id, data["arguments"]) if function_observers() else None
        )

    def returned(self, value: Any) -> None:
        if self.observed is not None:  # tracing
            functions_end(self.observed, value, None)
        dag.leave_frame(self.token)
        try:
            self.session.end(self.frame.node, "ok", {"result": jsonable(value)}, self._elapsed())
        finally:
            self._release()

    def failed(self, exc: BaseException) -> None:
        if self.observed is not None:  # tracing
            functions_end(self.observed, None, exc)
        dag.leave_frame(self.token)
        try:
            self.session.end(self.frame.node, "error", {"error": error_info(exc)}, self._elapsed())
        except Exception:  # never hide the caller's exception behind a recording problem
            logger().exception("could not record the failure of %s()", self.frame.name)
        finally:
            self._release()

    def _elapsed(self) -> float:
        return time.perf_counter() - self.started

    def _release(self) -> None:
        if self.owned is not None:
            self.owned.close()


# --- the frame the runtime talks to -----------------------------------------------------------


class AgenticFrame:
    """A running ``@agentic_function`` call, as the runtime sees it (a dag ``Frame``)."""

    __slots__ = ("callers", "fixed_tokens", "node", "session", "subcalls", "tokens")

    def __init__(
        self,
        session: Session,
        node: Node,
        callers: int | None,
        subcalls: int | None,
        tokens: int | None = DEFAULT_READ_TOKENS,
        *,
        fixed_tokens: bool = False,
    ) -> None:
        self.session = session
        self.node = node
        self.callers = callers
        self.subcalls = subcalls
        self.tokens = tokens
        self.fixed_tokens = fixed_tokens

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def node_id(self) -> str:
        return self.node.id

    def context_messages(self, max_tokens: int | None = None) -> list[Message]:
        """The rendered context of an exec starting now (a :class:`~llmport.sessions.dag.History`).

        The read budget: the function's ``render_range["tokens"]`` if it sets
        one, lowered to ``max_tokens`` if that is smaller; else ``max_tokens``
        (a context policy's room for history); else
        :data:`~llmport.sessions.dag.DEFAULT_READ_TOKENS`.
        """
        budget = self.tokens
        if max_tokens is not None:
            if not self.fixed_tokens or budget is None:
                budget = max_tokens
            else:
                budget = min(budget, max_tokens)
        nodes, cutoff, tokens = self.session.context(self.node, self.callers, self.subcalls, budget)
        reads = Reads(
            (n.id for n in nodes), cutoff=cutoff, frame=self.node.id, budget=budget, tokens=tokens
        )
        return History(render_nodes(nodes, cutoff), reads=reads)

    def previous(self) -> Any:
        """The last successful return value of this function in this session (else None).

        The newest finished ``ok`` call of the same function (same name and
        qualified name) other than this one, as recorded (JSON). Walks the
        session newest first; stops at the first match.
        """
        me = self.node
        qualname = me.data.get("qualname")
        for node in reversed(self.session.nodes()):
            if node is me or node.kind != "function" or node.name != me.name:
                continue
            if node.status != "ok" or node.end is None or node.data.get("qualname") != qualname:
                continue
            return (node.result or {}).get("result")
        return None

    def begin_llm(
        self, *, model: str, messages: list[Message], system: str | None, context_override: bool
    ) -> LlmRecord:
        reads: Reads | None = getattr(messages, "reads", None)
        media = self.session.attachments  # media bytes: once per hash, beside the rows
        data: dict[str, Any] = {
            "model": model,
            "function": self.name,
            "content": [dag.block_to_stored(b, media) for b in prompt_content(messages)],
            "messages": [message_to_stored(m, media) for m in messages],
            "system": system,
            "context_override": context_override,
            "reads": list(reads) if reads is not None else [],
            "cutoff": reads.cutoff if reads is not None else None,
            "read_tokens": reads.budget if reads is not None else self.tokens,
        }
        return LlmRecord(self.session, self.session.begin("llm", model, self.node, data))

    def record_tool(
        self,
        *,
        llm_node_id: str,
        call: Any,
        result: Any,
        duration: float,
        error: str | None,
        iteration: int,
    ) -> str:
        llm = self.session.node(llm_node_id)
        data = {
            "call_id": call.id,
            "arguments": jsonable(call.arguments),
            "iteration": iteration,
            "llm": llm_node_id,
        }
        is_error = bool(getattr(result, "is_error", False))
        outcome = {"content": getattr(result, "content", ""), "is_error": is_error, "error": error}
        blocks = getattr(result, "blocks", ())
        if blocks:  # media the tool returned: by hash, read back by later execs
            media = self.session.attachments
            outcome["blocks"] = [dag.block_to_stored(b, media) for b in blocks]
        status: Status = "error" if (error or is_error) else "ok"
        node = self.session.record("tool", call.name, llm, data, status, outcome, duration)
        return node.id


def record_handoff(
    session: Session,
    llm_node_id: str,
    name: str,
    call_id: str,
    target: Node | None,
    error: BaseException | None,
    duration: float,
) -> Node:
    """Append a ``handoff`` node under the exec's llm node, linking it to the target's call."""
    llm = session.node(llm_node_id)
    data = {
        "call_id": call_id,
        "from": llm_node_id,
        "to": target.id if target is not None else None,
        "target": target.name if target is not None else None,
    }
    status: Status = "error" if error is not None else "ok"
    outcome: dict[str, Any] = {"error": error_info(error)} if error is not None else {}
    if target is not None and error is None and target.result is not None:
        outcome["result"] = target.result.get("result")
    return session.record("handoff", name, llm, data, status, outcome, duration)


def record_embed(
    *,
    model: str,
    hashes: Sequence[str],
    usage: Usage,
    dimensions: int,
    duration: float,
    error: BaseException | None = None,
) -> str | None:
    """Inside an ``@agentic_function``, append an ``embed`` node for one ``rt.embed`` call.

    The node keeps the model, the number of inputs and their SHA-256 hashes
    (never the texts), and the usage (or the error). Outside one: nothing,
    None. Embed nodes are not rendered into any model's context.
    """
    frame = dag.current_frame()
    if not isinstance(frame, AgenticFrame):
        return None
    data = {"model": model, "function": frame.name, "inputs": len(hashes), "hashes": list(hashes)}
    if error is None:
        status: Status = "ok"
        result: dict[str, Any] = {"usage": usage.to_dict(), "dimensions": dimensions}
    else:
        status, result = "error", {"error": error_info(error), "usage": usage.to_dict()}
    return frame.session.record("embed", model, frame.node, data, status, result, duration).id


def record_image(
    *,
    model: str,
    prompt_hash: str,
    n: int,
    usage: Usage,
    images: Sequence[Mapping[str, Any]],
    duration: float,
    error: BaseException | None = None,
) -> str | None:
    """Inside an ``@agentic_function``, append an ``image`` node for one ``rt.generate_image``.

    The node keeps the model, the prompt's SHA-256 (never the text), ``n``,
    each image's media type, size and SHA-256 (never the bytes), and the
    usage (or the error). Outside one: nothing, None. Never rendered into a context.
    """
    frame = dag.current_frame()
    if not isinstance(frame, AgenticFrame):
        return None
    data = {"model": model, "function": frame.name, "prompt_sha256": prompt_hash, "n": n}
    if error is None:
        status: Status = "ok"
        result: dict[str, Any] = {"usage": usage.to_dict(), "images": [dict(i) for i in images]}
    else:
        status, result = "error", {"error": error_info(error), "usage": usage.to_dict()}
    return frame.session.record("image", model, frame.node, data, status, result, duration).id


class LlmRecord:
    """An llm node being recorded (it implements :class:`llmport.sessions.dag.LlmRecordLike`)."""

    __slots__ = ("node", "session", "started")

    def __init__(self, session: Session, node: Node) -> None:
        self.session = session
        self.node = node
        self.started = time.perf_counter()

    @property
    def node_id(self) -> str:
        return self.node.id

    def finish(
        self,
        *,
        reply: str,
        usage: Usage,
        tool_calls: list[Any],
        stop_reason: str,
        output: Any,
        attempts: int,
        thinking: Sequence[Block] = (),
        model: str | None = None,
        response_ids: Sequence[str] = (),
        media: Sequence[Block] = (),
    ) -> None:
        result: dict[str, Any] = {
            "reply": reply,
            "usage": usage.to_dict(),
            "stop_reason": stop_reason,
            "attempts": attempts,
            "tool_calls": [stored_call(c, jsonable(c.arguments)) for c in tool_calls],
        }
        if not (isinstance(output, str) and output == reply):
            result["output"] = jsonable(output)
        if model is not None and model != self.node.name:
            result["model"] = model  # a fallback answered: the model that did
        if thinking:  # signatures included: rendered back (to the same vendor only) later
            result["thinking"] = [block_to_dict(b) for b in thinking]
        if response_ids:  # answers kept on the vendor's server (previous_response_id=)
            result["response_ids"] = list(response_ids)
        if media:  # images the model answered with: by hash, read back by later execs
            attachments = self.session.attachments
            result["media"] = [dag.block_to_stored(b, attachments) for b in media]
        self.session.end(self.node, "ok", result, time.perf_counter() - self.started)

    def fail(self, error: BaseException, *, attempts: int) -> None:
        self.session.end(
            self.node,
            "error",
            {"error": error_info(error), "attempts": attempts},
            time.perf_counter() - self.started,
        )


# --- public helpers -----------------------------------------------------------------------------


def current_session() -> Session | None:
    """The session of the running agentic call, else of the innermost ``with session:``."""
    frame = dag.current_frame()
    if isinstance(frame, AgenticFrame):
        return frame.session
    return bound_session()


def _session_for(session: Session | None) -> Session:
    found = session if session is not None else current_session()
    if found is None:
        raise ValueError(
            "no session: pass session=, or call inside an agentic function or `with session:`"
        )
    return found


def compute_reads(node: Node | str | None = None, session: Session | None = None) -> Reads:
    """The ids of the nodes an exec reads, in session order.

    * ``node`` is a function node (or its id): what an exec started now in
      that call would read (for a finished call: an exec at its very end);
    * an llm node: what that exec read (recomputed from the DAG, equal to
      what was recorded);
    * None: the running agentic call's node.

    The function's own ``render_range`` applies (for an llm node, the token
    budget it was read with). Cost: the entries looked at (bounded by
    ``render_range`` and the token budget) plus the nodes read; never the
    size of the session.
    """
    if node is None:
        frame = dag.current_frame()
        if not isinstance(frame, AgenticFrame):
            raise ValueError("compute_reads() without a node must run inside an agentic function")
        session, node = frame.session, frame.node
    found = _session_for(session)
    target = found.node(node) if isinstance(node, str) else node
    if target.kind == "llm":
        assert target.parent is not None
        if target.data.get("context_override"):
            return Reads(cutoff=target.data.get("cutoff"), frame=target.parent.id)
        frame_node, cutoff = target.parent, target.data.get("cutoff") or target.start
        limits = frame_node.data.get("render_range") or {}
        # Nodes recorded before reads were token-bounded carry no "read_tokens".
        budget = target.data.get("read_tokens")
    elif target.kind == "function":
        frame_node = target
        cutoff = target.end if target.end is not None else found.clock + 1
        limits = frame_node.data.get("render_range") or {}
        budget = _read_tokens(limits)
    else:
        raise ValueError(f"compute_reads takes a function or llm node, not a {target.kind} node")
    nodes = found.reads(frame_node, cutoff, limits.get("callers"), limits.get("subcalls"), budget)
    tokens = sum(node_tokens(n, cutoff) for n in nodes)
    return Reads(
        (n.id for n in nodes), cutoff=cutoff, frame=frame_node.id, budget=budget, tokens=tokens
    )


def render_dag_messages(
    reads: Iterable[str | Node], session: Session | None = None
) -> list[Message]:
    """Vendor-neutral messages for the given nodes (see ``docs/dag.md`` for the format).

    ``reads`` is what :func:`compute_reads` returned (its clock decides
    which callers count as still running) or any list of node ids, rendered
    as of now. Deterministic; cost O(len(reads)).
    """
    cutoff = getattr(reads, "cutoff", None)
    items = list(reads)
    nodes: list[Node]
    if all(isinstance(item, Node) for item in items):
        nodes = [item for item in items if isinstance(item, Node)]
    else:
        found = _session_for(session)
        nodes = [item if isinstance(item, Node) else found.node(item) for item in items]
    nodes.sort(key=lambda n: n.seq)
    return render_nodes(nodes, cutoff)


# --- recording values -------------------------------------------------------------------


def _arguments(spec: AgenticSpec, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """A call's arguments as recorded: by parameter name (as bound), JSON-ready."""
    if spec.plain is not None:
        names = _plain_bound(spec.plain, args, kwargs)
        if names is not None:
            if names and names[0][0] in ("self", "cls"):
                names = names[1:]
            return {name: jsonable(value) for name, value in names}
    signature = spec.signature
    if signature is not None:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            pass  # the call itself will raise; keep what was passed
        else:
            items = list(bound.arguments.items())
            if items and items[0][0] in ("self", "cls"):
                items = items[1:]
            out: dict[str, Any] = {}
            for name, value in items:
                parameter = signature.parameters[name]
                if parameter.kind is parameter.VAR_KEYWORD:
                    # **kwargs are recorded as the caller wrote them
                    out.update((k, jsonable(v)) for k, v in value.items())
                else:
                    out[name] = jsonable(value)
            return out
    passed: dict[str, Any] = {f"arg{i}": jsonable(v) for i, v in enumerate(args)}
    passed.update({k: jsonable(v) for k, v in kwargs.items()})
    return passed


def _plain_bound(
    plain: tuple[tuple[str, ...], int], args: Sequence[Any], kwargs: Mapping[str, Any]
) -> list[tuple[str, Any]] | None:
    """What ``bind(*args, **kwargs).arguments`` holds for plain parameters, in order.

    None when the call does not bind cleanly (too many positional arguments, an
    unknown or repeated keyword, a required parameter missing): then
    :meth:`inspect.Signature.bind` decides, as before.
    """
    names, required = plain
    if len(args) > len(names):
        return None
    bound = list(zip(names, args, strict=False))  # fewer args than names
    if kwargs:
        rest = names[len(args) :]
        bound.extend((name, kwargs[name]) for name in rest if name in kwargs)
        if len(bound) != len(args) + len(kwargs):
            return None
    if len(args) < required and any(name not in kwargs for name in names[len(args) : required]):
        return None
    return bound


def jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-ready copy of ``value``: JSON types as is, bytes as a size, others as a short repr."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if depth > 20:
        return _short_repr(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v, depth + 1) for v in value]
    if hasattr(type(value), "__dataclass_fields__"):  # dataclasses.is_dataclass(an instance)
        import dataclasses  # here: it imports inspect

        return {
            f.name: jsonable(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)
        }
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        try:
            return jsonable(dump(mode="json"), depth + 1)
        except Exception:  # a model that cannot dump itself is shown by repr
            pass
    return _short_repr(value)


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= MAX_REPR else text[:MAX_REPR] + "..."


def error_info(exc: BaseException) -> dict[str, Any]:
    return {"type": type(exc).__name__, "message": str(exc)}
