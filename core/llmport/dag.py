"""Session DAG: nodes, the frame interface the runtime calls, and the read rules.

The runtime only needs :func:`current_frame` and the :class:`Frame` /
:class:`LlmRecord` methods. The rest of this module is the pure part of
the DAG: the :class:`Node` type with its per-frame indexes, the rules that
decide which nodes an ``exec`` reads (:func:`select_reads`) and how they
become neutral messages (:func:`render_nodes`). Storage lives in
:mod:`llmport.session`, the decorator in :mod:`llmport.agentic`; the rules
are explained with worked examples in ``docs/dag.md``.

Time inside a session is a *clock*: every node start, every node end and
every context computation takes the next tick. "Finished before X" means
``end < X``; that is what makes :func:`select_reads` deterministic even
when threads finish nodes while another exec computes its context.
"""

from __future__ import annotations

import contextvars
import json
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .types import Block, Message, TextBlock, Usage

NodeKind = Literal["session", "function", "llm", "tool"]
Status = Literal["running", "ok", "error"]
Expose = Literal["io", "full", "llm", "hidden"]

EXPOSE_VALUES: tuple[str, ...] = ("io", "full", "llm", "hidden")
RENDER_RANGE_KEYS: tuple[str, ...] = ("callers", "subcalls")


# --- the interface the runtime calls --------------------------------------------


class LlmRecord(Protocol):
    @property
    def node_id(self) -> str: ...

    def finish(
        self,
        *,
        reply: str,
        usage: Usage,
        tool_calls: list[Any],
        stop_reason: str,
        output: Any,
        attempts: int,
    ) -> None: ...

    def fail(self, error: BaseException, *, attempts: int) -> None: ...


class Frame(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def node_id(self) -> str: ...

    def context_messages(self) -> list[Message]: ...

    def begin_llm(
        self, *, model: str, messages: list[Message], system: str | None, context_override: bool
    ) -> LlmRecord: ...

    def record_tool(
        self,
        *,
        llm_node_id: str,
        call: Any,
        result: Any,
        duration: float,
        error: str | None,
        iteration: int,
    ) -> str: ...


_current: contextvars.ContextVar[Frame | None] = contextvars.ContextVar(
    "llmport_frame", default=None
)


def current_frame() -> Frame | None:
    """The innermost running ``@agentic_function`` frame, or None."""
    return _current.get()


class Reads(list[str]):
    """Node ids an exec reads, in session order, plus the clock they were read at.

    A plain ``list`` of ids; ``cutoff`` is the clock tick of the read (a
    function node that finished after it is rendered as still running) and
    ``frame`` the id of the function node whose exec reads them.
    """

    __slots__ = ("cutoff", "frame")

    def __init__(
        self, ids: Iterable[str] = (), *, cutoff: int | None = None, frame: str | None = None
    ):
        super().__init__(ids)
        self.cutoff = cutoff
        self.frame = frame


class History(list[Message]):
    """The rendered context of one exec, carrying the :class:`Reads` it came from."""

    __slots__ = ("reads",)

    def __init__(self, messages: Iterable[Message] = (), *, reads: Reads | None = None):
        super().__init__(messages)
        self.reads = reads


class Prompt(list[Message]):
    """The request messages of one exec inside a frame.

    ``content`` holds the exec's own new blocks (the runtime merges them into
    the last user message of the history, so they cannot be told apart
    afterwards) and ``reads`` what the history was rendered from; the frame
    stores both on the llm node.
    """

    __slots__ = ("content", "reads")

    def __init__(
        self,
        messages: Iterable[Message] = (),
        *,
        content: Sequence[Block] = (),
        reads: Reads | None = None,
    ):
        super().__init__(messages)
        self.content = tuple(content)
        self.reads = reads


# --- nodes -------------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class Node:
    """One node of a session DAG.

    ``kind`` is ``"function"`` (an ``@agentic_function`` call), ``"llm"`` (one
    exec) or ``"tool"`` (one tool run, child of its llm node); the session
    itself is a root node of kind ``"session"``. ``data`` is what was known
    when the node started (arguments, request), ``result`` what its end added
    (result or error, reply, usage). ``start``/``end`` are clock ticks;
    ``started_at`` is wall time and ``duration`` seconds.

    Function nodes (and the root) keep indexes of their finished children,
    in the order they finished, so reading a frame's scope costs the number
    of entries looked at, never the size of the session.
    """

    seq: int
    kind: NodeKind
    name: str
    parent: Node | None
    start: int
    started_at: float
    data: dict[str, Any]
    expose: Expose = "full"
    status: Status = "running"
    end: int | None = None
    duration: float | None = None
    result: dict[str, Any] | None = None
    children: list[Node] | None = None
    done_llm: list[Node] | None = None
    done_llm_ends: list[int] | None = None
    done_calls: list[Node] | None = None
    done_call_ends: list[int] | None = None

    @property
    def id(self) -> str:
        return f"n{self.seq}" if self.kind != "session" else "root"

    @property
    def parent_id(self) -> str | None:
        """The parent's id; None for top-level calls."""
        if self.parent is None or self.parent.kind == "session":
            return None
        return self.parent.id

    def finished_before(self, clock: int) -> bool:
        return self.end is not None and self.end < clock

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (what ``llmport session show --json`` prints)."""
        return {
            "id": self.id,
            "seq": self.seq,
            "kind": self.kind,
            "name": self.name,
            "parent": self.parent_id,
            "status": self.status,
            "expose": self.expose if self.kind == "function" else None,
            "started_at": self.started_at,
            "duration": self.duration,
            "start_clock": self.start,
            "end_clock": self.end,
            "data": self.data,
            "result": self.result,
        }

    def __repr__(self) -> str:
        return f"Node({self.id} {self.kind} {self.name!r} {self.status})"


def attach_child(parent: Node, child: Node) -> None:
    if parent.children is None:
        parent.children = []
    parent.children.append(child)


def index_finished(node: Node) -> None:
    """Add a just-finished llm or function node to its parent frame's indexes."""
    parent = node.parent
    assert parent is not None and node.end is not None
    if node.kind == "llm":
        if parent.done_llm is None:
            parent.done_llm, parent.done_llm_ends = [], []
        assert parent.done_llm_ends is not None
        parent.done_llm.append(node)
        parent.done_llm_ends.append(node.end)
    elif node.kind == "function":
        if parent.done_calls is None:
            parent.done_calls, parent.done_call_ends = [], []
        assert parent.done_call_ends is not None
        parent.done_calls.append(node)
        parent.done_call_ends.append(node.end)


def node_seq(node_id: str | int) -> int:
    """``"n12"`` (or ``12``) -> 12."""
    if isinstance(node_id, int):
        return node_id
    if isinstance(node_id, str) and node_id.startswith("n") and node_id[1:].isdigit():
        return int(node_id[1:])
    raise ValueError(f"not a node id: {node_id!r} (ids look like 'n12')")


# --- which nodes an exec reads ---------------------------------------------------------


def select_reads(frame: Node, cutoff: int, callers: int | None, subcalls: int | None) -> list[Node]:
    """The nodes an exec in ``frame`` reads at clock ``cutoff``, in session order.

    * the frame's own call (always);
    * the frame's own llm exchanges that finished before ``cutoff`` (always,
      with their tool nodes);
    * the frame's sub-calls that finished before ``cutoff``: the last
      ``subcalls`` of them (None: all), each as its ``expose`` allows;
    * the callers' scope, nearest first, at most ``callers`` entries (None:
      all): going up from the frame, each caller's finished exchanges and
      finished sub-calls that ended before the path down to the frame began,
      then the caller's own call; at the top, the session's earlier finished
      top-level calls. Entries that show nothing (hidden, failed) still
      count against the window, so the cost is bounded by the window.
    """
    out: list[Node] = [frame] if frame.kind == "function" else []
    if frame.done_llm:
        assert frame.done_llm_ends is not None
        for node in frame.done_llm[: bisect_left(frame.done_llm_ends, cutoff)]:
            _add_llm(node, out, tools=True)
    if frame.done_calls and subcalls != 0:
        assert frame.done_call_ends is not None
        k = bisect_left(frame.done_call_ends, cutoff)
        lo = 0 if subcalls is None else max(0, k - subcalls)
        for node in frame.done_calls[lo:k]:
            _add_call(node, node.expose, out, cutoff)
    budget = callers
    child, scope = frame, frame.parent
    while scope is not None and (budget is None or budget > 0):
        budget = _caller_entries(scope, child.start, budget, out)
        if scope.kind == "function" and (budget is None or budget > 0):
            out.append(scope)
            budget = None if budget is None else budget - 1
        child, scope = scope, scope.parent
    out.sort(key=_by_seq)
    return out


def _by_seq(node: Node) -> int:
    return node.seq


def _caller_entries(scope: Node, limit: int, budget: int | None, out: list[Node]) -> int | None:
    """Add ``scope``'s entries that finished before ``limit``, newest first, within ``budget``."""
    llm, llm_ends = scope.done_llm or [], scope.done_llm_ends or []
    calls, call_ends = scope.done_calls or [], scope.done_call_ends or []
    i = bisect_left(llm_ends, limit) - 1
    j = bisect_left(call_ends, limit) - 1
    while (i >= 0 or j >= 0) and (budget is None or budget > 0):
        if j < 0 or (i >= 0 and llm_ends[i] > call_ends[j]):
            _add_llm(llm[i], out, tools=True)
            i -= 1
        else:
            _add_call(calls[j], calls[j].expose, out, limit)
            j -= 1
        budget = None if budget is None else budget - 1
    return budget


def _add_llm(node: Node, out: list[Node], *, tools: bool) -> None:
    # A failed exec is never context: it has no reply, and failures are not replies.
    if node.status != "ok":
        return
    out.append(node)
    if tools and node.children:
        out.extend(node.children)


def _add_call(node: Node, mode: str, out: list[Node], limit: int) -> None:
    """Add what a reader outside ``node`` sees of its subtree in ``mode``."""
    if mode == "hidden":
        return
    if mode != "llm":
        out.append(node)
    if mode == "io" or not node.children:
        return
    for child in node.children:
        if not child.finished_before(limit):
            continue
        if child.kind == "llm":
            _add_llm(child, out, tools=mode == "full")
        elif child.kind == "function":
            # The outer expose applies to the whole subtree: in "llm" mode an
            # inner function shows its exchanges only if it shows them itself.
            if mode == "full":
                _add_call(child, child.expose, out, limit)
            elif child.expose in ("full", "llm"):
                _add_call(child, "llm", out, limit)


# --- rendering --------------------------------------------------------------------------


def render_nodes(nodes: Sequence[Node], cutoff: int | None = None) -> list[Message]:
    """Neutral messages for ``nodes`` (see ``docs/dag.md`` for the format).

    Events are placed on the session clock: a function call where it
    started and its result where it ended (only if it ended before
    ``cutoff``: callers still running show their call and docstring), an
    exec's prompt where it started, its tool runs, then its reply where it
    ended. Everything but replies is user text; adjacent user parts are
    merged into one message so roles alternate.
    """
    events: list[tuple[int, int, Node]] = []
    for node in nodes:
        if node.kind == "function":
            events.append((node.start, 0, node))
            if node.end is not None and (cutoff is None or node.end < cutoff):
                events.append((node.end, 1, node))
        elif node.kind == "llm":
            events.append((node.start, 0, node))
            if node.end is not None:
                events.append((node.end, 1, node))
        elif node.kind == "tool":
            events.append((node.start, 0, node))
    events.sort(key=_event_key)
    out = _Messages()
    for _, is_end, node in events:
        if node.kind == "function":
            if is_end:
                out.user(TextBlock(_result_text(node)))
            else:
                finished = node.end is not None and (cutoff is None or node.end < cutoff)
                out.user(TextBlock(_call_text(node, with_doc=not finished)))
        elif node.kind == "llm":
            if is_end:
                reply = (node.result or {}).get("reply") or ""
                if reply:
                    out.assistant(reply)
            else:
                blocks = [stored_to_block(b) for b in node.data.get("content", [])]
                out.user(*(blocks or [TextBlock("(exec with no new content)")]))
        else:
            out.user(TextBlock(_tool_text(node)))
    return out.messages


def _event_key(event: tuple[int, int, Node]) -> tuple[int, int]:
    return event[0], event[1]


class _Messages:
    """Builds alternating messages, merging adjacent parts of the same role."""

    __slots__ = ("messages",)

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def user(self, *blocks: Block) -> None:
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "user":
            self.messages[-1] = Message("user", (*last.blocks, *blocks))
        else:
            self.messages.append(Message("user", tuple(blocks)))

    def assistant(self, text: str) -> None:
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "assistant":
            self.messages[-1] = Message("assistant", (TextBlock(last.text + "\n" + text),))
        else:
            if last is None:  # vendors want a user turn first
                self.messages.append(Message("user", (TextBlock("(earlier context)"),)))
            self.messages.append(Message("assistant", (TextBlock(text),)))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _value_text(value: Any) -> str:
    return repr(value) if isinstance(value, str) else _json(value)


def _call_text(node: Node, *, with_doc: bool) -> str:
    args = node.data.get("arguments") or {}
    text = f"[call {node.name}({', '.join(f'{k}={_value_text(v)}' for k, v in args.items())})]"
    doc = node.data.get("doc")
    if with_doc and doc:
        text += "\n" + doc
    return text


def _result_text(node: Node) -> str:
    result = node.result or {}
    if node.status == "error":
        error = result.get("error") or {}
        return f"[{node.name} raised {error.get('type', 'Exception')}: {error.get('message', '')}]"
    value = result.get("result")
    shown = value if isinstance(value, str) else _json(value)
    return f"[{node.name} returned: {shown}]"


def _tool_text(node: Node) -> str:
    result = node.result or {}
    args = _json(node.data.get("arguments") or {})
    if node.status == "error":
        problem = result.get("error") or result.get("content", "")
        return f"[tool {node.name}({args}) failed: {problem}]"
    return f"[tool {node.name}({args}) returned: {result.get('content', '')}]"


# --- stored forms of blocks and messages (JSON, never media bytes) -----------------------


def block_to_stored(block: Block) -> dict[str, Any]:
    """A JSON form of a block. Media keep type, name and size, never their bytes."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    out: dict[str, Any] = {"type": block.type, "media_type": block.media_type, "size": block.size}
    if block.filename:
        out["filename"] = block.filename
    if block.url:
        out["url"] = block.url
    return out


def stored_to_block(stored: dict[str, Any]) -> TextBlock:
    """How a stored block is shown to later readers: text as is, media as a placeholder."""
    if stored.get("type") == "text":
        return TextBlock(str(stored.get("text", "")))
    where = stored.get("filename") or stored.get("url") or f"{stored.get('size', 0)} bytes"
    return TextBlock(f"[{stored.get('type')}: {where} ({stored.get('media_type')})]")


def message_to_stored(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": message.role,
        "blocks": [block_to_stored(b) for b in message.blocks],
    }
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ]
    if message.tool_results:
        out["tool_results"] = [
            {"call_id": r.call_id, "name": r.name, "content": r.content, "is_error": r.is_error}
            for r in message.tool_results
        ]
    return out


def prompt_content(messages: Sequence[Message]) -> tuple[Block, ...]:
    """An exec's own blocks: from a :class:`Prompt`, else the last user message."""
    content = getattr(messages, "content", None)
    if content is not None:
        return tuple(content)
    for message in reversed(messages):
        if message.role == "user":
            return message.blocks
    return ()


__all__ = [
    "EXPOSE_VALUES",
    "RENDER_RANGE_KEYS",
    "Frame",
    "History",
    "LlmRecord",
    "Node",
    "Prompt",
    "Reads",
    "current_frame",
    "render_nodes",
    "select_reads",
]
