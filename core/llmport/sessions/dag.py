"""Session DAG: nodes, the frame interface the runtime calls, and the read rules.

The runtime only needs :func:`current_frame` and the :class:`Frame` /
:class:`LlmRecordLike` methods. The rest of this module is the pure part of
the DAG: the :class:`Node` type with its per-frame indexes, the rules that
decide which nodes an ``exec`` reads (:func:`select_reads`) and how they
become neutral messages (:func:`render_nodes`). Storage lives in
:mod:`llmport.sessions.session`, the decorator in :mod:`llmport.sessions.agentic`; the rules
are explained with worked examples in ``docs/dag.md``.

Time inside a session is a *clock*: every node start, every node end and
every context computation takes the next tick. "Finished before X" means
``end < X``; that is what makes :func:`select_reads` deterministic even
when threads finish nodes while another exec computes its context.

Reads are token-bounded: an exec reads its frame's call and its callers'
calls, the newest summary that applies (a ``summary`` node, see
:meth:`llmport.Session.add_summary`), then entries newest first until the
next one would cross the budget (``render_range={"tokens": N}``, default
:data:`DEFAULT_READ_TOKENS`, estimated by :mod:`llmport.messages.estimate`), so the
cost of an exec's context stays flat however large the session grows.
"""

from __future__ import annotations

import contextvars
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from typing import Any, Literal, Protocol

from ..messages.estimate import block_tokens, text_tokens
from ..messages.types import (
    Block,
    MediaBlock,
    Message,
    TextBlock,
    Usage,
    block_from_dict,
    block_to_dict,
)
from ..slotted import dataclass, field
from .attachments import Attachments, media_summary, placeholder

NodeKind = Literal[
    "session", "function", "llm", "tool", "summary", "handoff", "fix", "embed", "image"
]
Status = Literal["running", "ok", "error"]
Expose = Literal["io", "full", "llm", "hidden"]

EXPOSE_VALUES: tuple[str, ...] = ("io", "full", "llm", "hidden")
RENDER_RANGE_KEYS: tuple[str, ...] = ("callers", "subcalls", "tokens")

#: The read budget (estimated tokens) of an exec whose function sets no
#: ``render_range["tokens"]`` and whose caller passes no
#: ``Frame.context_messages(max_tokens=...)`` (an engine context policy does).
DEFAULT_READ_TOKENS = 4_000


# --- the interface the runtime calls --------------------------------------------


class LlmRecordLike(Protocol):
    """What the runtime calls on an llm node being recorded.

    :class:`llmport.sessions.agentic.LlmRecord` is the implementation.
    """

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
        thinking: Sequence[Block] = (),
        model: str | None = None,
        response_ids: Sequence[str] = (),
        media: Sequence[Block] = (),
    ) -> None: ...

    def fail(self, error: BaseException, *, attempts: int) -> None: ...


class Frame(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def node_id(self) -> str: ...

    def context_messages(self, max_tokens: int | None = None) -> list[Message]: ...

    def begin_llm(
        self, *, model: str, messages: list[Message], system: str | None, context_override: bool
    ) -> LlmRecordLike: ...

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

    def previous(self) -> Any: ...


_current: contextvars.ContextVar[Frame | None] = contextvars.ContextVar(
    "llmport_frame", default=None
)


def current_frame() -> Frame | None:
    """The innermost running ``@agentic_function`` frame, or None."""
    return _current.get()


def enter_frame(frame: Frame | None) -> contextvars.Token[Frame | None]:
    """Make ``frame`` the current one; hand the token to :func:`leave_frame` when it ends.

    None runs the code inside outside any agentic call: an agentic function
    called there starts at the root of its own session (a durable run nested
    in another records into its own session, not its caller's).
    """
    return _current.set(frame)


def leave_frame(token: contextvars.Token[Frame | None]) -> None:
    """Restore the frame that was current before the :func:`enter_frame` that gave ``token``."""
    _current.reset(token)


class Reads(list[str]):
    """Node ids an exec reads, in session order, plus the clock they were read at.

    A plain ``list`` of ids; ``cutoff`` is the clock tick of the read (a
    function node that finished after it is rendered as still running),
    ``frame`` the id of the function node whose exec reads them, ``budget``
    the token budget of the walk (None: unbounded) and ``tokens`` the
    estimated tokens of what was read.
    """

    __slots__ = ("budget", "cutoff", "frame", "tokens")

    def __init__(
        self,
        ids: Iterable[str] = (),
        *,
        cutoff: int | None = None,
        frame: str | None = None,
        budget: int | None = None,
        tokens: int = 0,
    ):
        super().__init__(ids)
        self.cutoff = cutoff
        self.frame = frame
        self.budget = budget
        self.tokens = tokens


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

    __slots__ = ("content", "dag_count", "reads")

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
        #: How many of the messages were rendered from the DAG (they come first).
        self.dag_count = 0


# --- nodes -------------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class Node:
    """One node of a session DAG.

    ``kind`` is ``"function"`` (an ``@agentic_function`` call), ``"llm"`` (one
    exec), ``"tool"`` (one tool run, child of its llm node) or ``"summary"``
    (a text that stands for the nodes up to ``data["covers"]`` in later
    reads of its parent's scope, see :meth:`llmport.Session.add_summary`); a
    ``"handoff"`` links an exec to the call it handed off to, and a ``"fix"``
    records a :func:`llmport.fix` (diff, model, instruction, who approved; never
    read into an exec's context), an ``"embed"`` one ``rt.embed`` call (model,
    inputs' count and hashes, usage; never read into a context either), an
    ``"image"`` one ``rt.generate_image`` call (model, the prompt's hash, the
    images' media types, sizes and hashes, usage; never read into a context); the
    session itself is a root node of kind
    ``"session"``. ``data`` is what was known
    when the node started (arguments, request), ``result`` what its end added
    (result or error, reply, usage). ``start``/``end`` are clock ticks;
    ``started_at`` is wall time and ``duration`` seconds.

    Function nodes (and the root) keep indexes of their finished children,
    in the order they finished, and of their summaries, so reading a frame's
    scope costs the number of entries looked at, never the size of the
    session. ``text`` caches a finished node's rendered text and token
    estimate (both are fixed once it ends).
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
    summaries: list[Node] | None = None
    text: _Text | None = field(default=None, repr=False)
    #: The session's media by hash (set on the session's root node only).
    attachments: Attachments | None = field(default=None, repr=False)

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
    """Add a just-finished llm, function or summary node to its parent frame's indexes."""
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
    elif node.kind == "summary":
        if parent.summaries is None:
            parent.summaries = []
        parent.summaries.append(node)


def node_seq(node_id: str | int) -> int:
    """``"n12"`` (or ``12``) -> 12."""
    if isinstance(node_id, int):
        return node_id
    if isinstance(node_id, str) and node_id.startswith("n") and node_id[1:].isdigit():
        return int(node_id[1:])
    raise ValueError(f"not a node id: {node_id!r} (ids look like 'n12')")


# --- which nodes an exec reads ---------------------------------------------------------


def select_reads(
    frame: Node,
    cutoff: int,
    callers: int | None,
    subcalls: int | None,
    tokens: int | None = None,
) -> list[Node]:
    """The nodes an exec in ``frame`` reads at clock ``cutoff``, in session order.

    * the frame's own call (always), and its callers' calls (while the
      ``callers`` window lasts);
    * the newest ``summary`` node of the frame or of a caller that finished
      before ``cutoff``, if any: it stands for every entry up to the node it
      covers;
    * then entries, newest first: the frame's own llm exchanges (with their
      tool nodes) and its last ``subcalls`` sub-calls (None: all) that
      finished before ``cutoff``, each sub-call as its ``expose`` allows;
      then the callers' scope, nearest first, at most ``callers`` entries
      (None: all): going up from the frame, each caller's finished
      exchanges and finished sub-calls that ended before the path down to
      the frame began; at the top, the session's earlier finished top-level
      calls. Entries that show nothing (hidden, failed) still count against
      the window.
    * ``tokens`` bounds the estimated tokens read (None: no bound). The
      calls and the summary are reserved first; the walk stops at the first
      entry that would cross the budget or that the summary covers.

    The cost is bounded by the windows and the budget (every node looked at
    counts at least one token), never by the size of the session.
    """
    return walk_reads(frame, cutoff, callers, subcalls, tokens)[0]


def walk_reads(
    frame: Node,
    cutoff: int,
    callers: int | None,
    subcalls: int | None,
    tokens: int | None = None,
) -> tuple[list[Node], int]:
    """:func:`select_reads` and the estimated tokens of the nodes it returns."""
    summary = _summary(frame, cutoff)
    covers = int(summary.data.get("covers") or 0) if summary is not None else 0
    acc = _Acc(cutoff, None)
    if frame.kind == "function":
        acc.take(frame)
    if summary is not None:
        acc.take(summary)
    if tokens is not None:
        reserved = acc.spent
        scope: Node | None = frame.parent
        while scope is not None:
            if scope.kind == "function":
                reserved += node_tokens(scope, cutoff)
            scope = scope.parent
        acc.cap = tokens - reserved + acc.spent
    going = _own_entries(frame, cutoff, subcalls, covers, acc)
    budget = callers
    child, scope = frame, frame.parent
    while scope is not None and (budget is None or budget > 0):
        if going:
            budget, going = _caller_entries(scope, child.start, budget, covers, acc)
        if scope.kind == "function" and (budget is None or budget > 0):
            acc.take(scope, always=True)
            budget = None if budget is None else budget - 1
        child, scope = scope, scope.parent
    out = acc.nodes
    out.sort(key=_by_seq)
    return out, acc.spent


def _by_seq(node: Node) -> int:
    return node.seq


def _summary(frame: Node, cutoff: int) -> Node | None:
    """The newest summary of ``frame`` or a caller that finished before ``cutoff``."""
    best: Node | None = None
    scope: Node | None = frame
    while scope is not None:
        for node in reversed(scope.summaries or ()):
            if node.finished_before(cutoff):
                if best is None or node.seq > best.seq:
                    best = node
                break
        scope = scope.parent
    return best


class _Acc:
    """The nodes read so far and their estimated tokens, against an optional cap."""

    __slots__ = ("cap", "cutoff", "nodes", "spent")

    def __init__(self, cutoff: int, cap: int | None) -> None:
        self.cutoff = cutoff
        self.cap = cap
        self.nodes: list[Node] = []
        self.spent = 0

    def take(self, node: Node, *, always: bool = False) -> bool:
        """Add ``node``; False when it crosses the cap (it is added all the same)."""
        self.nodes.append(node)
        self.spent += node_tokens(node, self.cutoff)
        return always or self.cap is None or self.spent <= self.cap

    def entry(self, node: Node, mode: str | None, limit: int) -> bool:
        """Add one entry (an exchange if ``mode`` is None, else a call); False: it did not fit."""
        mark, spent = len(self.nodes), self.spent
        fits = (
            _add_llm(node, self, tools=True) if mode is None else _add_call(node, mode, self, limit)
        )
        if not fits:
            del self.nodes[mark:]
            self.spent = spent
        return fits


def _own_entries(frame: Node, cutoff: int, subcalls: int | None, covers: int, acc: _Acc) -> bool:
    """Add the frame's finished exchanges and sub-calls, newest first; False: the walk stopped."""
    llm, llm_ends = frame.done_llm or [], frame.done_llm_ends or []
    calls, call_ends = frame.done_calls or [], frame.done_call_ends or []
    i = bisect_left(llm_ends, cutoff) - 1
    k = bisect_left(call_ends, cutoff) if subcalls != 0 else 0
    lo = 0 if subcalls is None else max(0, k - subcalls)
    j = k - 1
    while i >= 0 or j >= lo:
        if j < lo or (i >= 0 and llm_ends[i] > call_ends[j]):
            node, mode = llm[i], None
            i -= 1
        else:
            node, mode = calls[j], calls[j].expose
            j -= 1
        if node.seq <= covers or not acc.entry(node, mode, cutoff):
            return False
    return True


def _caller_entries(
    scope: Node, limit: int, budget: int | None, covers: int, acc: _Acc
) -> tuple[int | None, bool]:
    """Add ``scope``'s entries that finished before ``limit``, newest first, within ``budget``.

    Returns the window left and whether the walk goes on (False once an
    entry is covered by the summary or crosses the token budget).
    """
    llm, llm_ends = scope.done_llm or [], scope.done_llm_ends or []
    calls, call_ends = scope.done_calls or [], scope.done_call_ends or []
    i = bisect_left(llm_ends, limit) - 1
    j = bisect_left(call_ends, limit) - 1
    while (i >= 0 or j >= 0) and (budget is None or budget > 0):
        if j < 0 or (i >= 0 and llm_ends[i] > call_ends[j]):
            node, mode = llm[i], None
            i -= 1
        else:
            node, mode = calls[j], calls[j].expose
            j -= 1
        if node.seq <= covers or not acc.entry(node, mode, limit):
            return budget, False
        budget = None if budget is None else budget - 1
    return budget, True


def _add_llm(node: Node, acc: _Acc, *, tools: bool) -> bool:
    # A failed exec is never context: it has no reply, and failures are not replies.
    if node.status != "ok":
        return True
    fits = acc.take(node)
    if tools and node.children:
        for child in node.children:
            fits = acc.take(child) and fits
    return fits


def _add_call(node: Node, mode: str, acc: _Acc, limit: int) -> bool:
    """Add what a reader outside ``node`` sees of its subtree in ``mode``; False: over the cap."""
    if mode == "hidden":
        return True
    if mode != "llm" and not acc.take(node):
        return False
    if mode == "io" or not node.children:
        return True
    for child in node.children:
        if not child.finished_before(limit):
            continue
        if child.kind == "llm":
            fits = _add_llm(child, acc, tools=mode == "full")
        elif child.kind == "function":
            # The outer expose applies to the whole subtree: in "llm" mode an
            # inner function shows its exchanges only if it shows them itself.
            if mode == "full":
                fits = _add_call(child, child.expose, acc, limit)
            elif child.expose in ("full", "llm"):
                fits = _add_call(child, "llm", acc, limit)
            else:
                fits = True
        else:
            fits = True
        if not fits:
            return False
    return True


# --- rendered text and token estimates ---------------------------------------------------


class _Text:
    """A node's rendered pieces and their estimated tokens (cached once it has ended).

    ``answer`` holds the media an exec's model answered with (after its reply).
    """

    __slots__ = ("answer", "doc", "end", "start", "tokens")

    def __init__(self, start: tuple[Block, ...], end: str | None, doc: str | None) -> None:
        self.start = start
        self.end = end
        self.doc = doc
        self.answer: tuple[Block, ...] = ()
        self.tokens = max(1, sum(block_tokens(b) for b in start) + text_tokens(end or ""))


def session_media(node: Node) -> Attachments | None:
    """The attachments of ``node``'s session (kept on its root), None if it has none."""
    while node.parent is not None:
        node = node.parent
    return node.attachments


def _node_text(node: Node) -> _Text:
    cached = node.text
    if cached is not None:
        return cached
    if node.kind == "function":
        doc = node.data.get("doc")
        end = _result_text(node) if node.end is not None else None
        text = _Text((TextBlock(_call_text(node, with_doc=False)),), end, doc or None)
    elif node.kind == "llm":
        media = session_media(node)
        blocks = tuple(stored_to_block(b, media) for b in node.data.get("content", []))
        reply = (node.result or {}).get("reply") or "" if node.end is not None else None
        text = _Text(blocks or (TextBlock("(exec with no new content)"),), reply, None)
        answered = (node.result or {}).get("media") if node.end is not None else None
        if answered:  # images the model answered with: given back after its reply
            text.answer = tuple(stored_to_block(b, media) for b in answered)
            text.tokens += sum(block_tokens(b) for b in text.answer)
    elif node.kind == "tool":
        media = session_media(node)
        shown = tuple(stored_to_block(b, media) for b in (node.result or {}).get("blocks", ()))
        text = _Text((TextBlock(_tool_text(node)), *shown), None, None)
    elif node.kind == "summary":
        text = _Text((TextBlock(_summary_text(node)),), None, None)
    else:
        text = _Text((), None, None)
    if node.end is not None:
        node.text = text
    return text


def node_tokens(node: Node, cutoff: int | None = None) -> int:
    """The estimated tokens ``node`` adds to a context rendered at ``cutoff`` (at least 1).

    A function that has not finished before ``cutoff`` shows its call and
    docstring; one that has, its call and result.
    """
    text = _node_text(node)
    if node.kind == "function" and not (
        node.end is not None and (cutoff is None or node.end < cutoff)
    ):
        return max(1, sum(block_tokens(b) for b in text.start) + text_tokens(text.doc or ""))
    return text.tokens


# --- rendering --------------------------------------------------------------------------


def render_nodes(nodes: Sequence[Node], cutoff: int | None = None) -> list[Message]:
    """Neutral messages for ``nodes`` (see ``docs/dag.md`` for the format).

    Events are placed on the session clock: a function call where it
    started and its result where it ended (only if it ended before
    ``cutoff``: callers still running show their call and docstring), an
    exec's prompt where it started, its tool runs, then its reply where it
    ended. A summary takes the place of the nodes it covers: before the
    first rendered node it does not cover. Everything but replies is user
    text; adjacent user parts are merged into one message so roles
    alternate.
    """
    # One integer key per event: the clock tick, then summary < start < end.
    events: list[tuple[int, Node]] = []
    add = events.append
    summaries: list[Node] = []
    for node in nodes:
        kind = node.kind
        if kind == "function":
            add((node.start * 4 + 1, node))
            end = node.end
            if end is not None and (cutoff is None or end < cutoff):
                add((end * 4 + 2, node))
        elif kind == "llm":
            add((node.start * 4 + 1, node))
            if node.end is not None:
                add((node.end * 4 + 2, node))
        elif kind == "tool":
            add((node.start * 4 + 1, node))
        elif kind == "summary":
            summaries.append(node)
    for summary in summaries:
        covers = int(summary.data.get("covers") or 0)
        after = [n.start for n in nodes if n.seq > covers and n.kind != "summary"]
        add(((min(after) if after else summary.start) * 4, summary))
    events.sort(key=_first)
    out = _Messages()
    for key, node in events:
        text = node.text or _node_text(node)
        if node.kind == "function":
            if key & 3 == 2:
                out.user(TextBlock(text.end or ""))
            else:
                block = text.start[0]
                end = node.end
                if text.doc and not (end is not None and (cutoff is None or end < cutoff)):
                    assert isinstance(block, TextBlock)  # a call renders as text
                    block = TextBlock(f"{block.text}\n{text.doc}")
                out.user(block)
        elif node.kind == "llm" and key & 3 == 2:
            if text.end:
                # Thinking goes back as recorded; the engine drops it for any other vendor.
                thinking = (node.result or {}).get("thinking") or ()
                out.assistant(text.end, tuple(block_from_dict(b) for b in thinking))
            if text.answer:
                # Not in the assistant turn: most vendors take no image there that they
                # did not make in the same conversation (an id or a signature the DAG
                # does not keep). As user content, every vendor that takes images does.
                out.user(TextBlock("[the answer above included:]"), *text.answer)
        else:
            out.user(*text.start)
    return out.done()


def _first(event: tuple[int, Node]) -> int:
    return event[0]


class _Messages:
    """Builds alternating messages, merging adjacent parts of the same role."""

    __slots__ = ("parts", "role", "texts", "thinking")

    def __init__(self) -> None:
        self.parts: list[Message] = []
        self.role: str | None = None
        self.texts: list[Any] = []
        self.thinking: list[Block] = []

    def _flush(self) -> None:
        if self.role == "user":
            self.parts.append(Message("user", tuple(self.texts)))
        elif self.role == "assistant":
            text = TextBlock("\n".join(self.texts))
            self.parts.append(Message("assistant", (*self.thinking, text)))
        self.texts = []
        self.thinking = []

    def user(self, *blocks: Block) -> None:
        if self.role != "user":
            self._flush()
            self.role = "user"
        self.texts.extend(blocks)

    def assistant(self, text: str, thinking: tuple[Block, ...] = ()) -> None:
        if self.role != "assistant":
            if self.role is None:  # vendors want a user turn first
                self.user(TextBlock("(earlier context)"))
            self._flush()
            self.role = "assistant"
        self.texts.append(text)
        self.thinking.extend(thinking)

    def done(self) -> list[Message]:
        self._flush()
        self.role = None
        return self.parts


def _json(value: Any) -> str:
    import json  # here, not at import: json costs ~2 ms of a script's start-up

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


def _summary_text(node: Node) -> str:
    return f"[summary of the earlier context]\n{node.data.get('text', '')}"


# --- stored forms of blocks and messages (JSON, never media bytes) -----------------------


def block_to_stored(block: Block, media: Attachments | None = None) -> dict[str, Any]:
    """A JSON form of a block. Media keep type, size, name, URL and hash, never their bytes.

    With ``media`` (the session's attachments) the bytes of a media block are
    kept there once per SHA-256 and the stored form names their ``sha256``;
    without, they are dropped. A URL is kept redacted. Thinking and
    server-tool blocks are kept whole (signatures included), so a later read
    sends them back to the vendor that produced them (and only to it); so are
    file references (``FileRef``: no bytes, the vendor holds them).
    """
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if not isinstance(block, MediaBlock):
        return block_to_dict(block)
    return media_summary(block) if media is None else media.keep(block)


def stored_to_block(stored: dict[str, Any], media: Attachments | None = None) -> Block:
    """How a stored block is shown to later readers.

    Text as is; media as the block itself when ``media`` gives its bytes
    back (an :class:`~llmport.errors.AttachmentError` if they contradict the
    stored form), else as a marked placeholder.
    """
    kind = stored.get("type")
    if kind == "text":
        return TextBlock(str(stored.get("text", "")))
    if kind in ("thinking", "server_tool_call", "server_tool_result", "file_ref"):
        return block_from_dict(stored)  # a file reference is kept whole: it is sent again
    if media is not None and "sha256" in stored:
        return media.block(stored)
    return placeholder(stored)


def message_to_stored(message: Message, media: Attachments | None = None) -> dict[str, Any]:
    """A message as an llm node keeps it (media by hash with ``media``: :func:`block_to_stored`)."""
    out: dict[str, Any] = {
        "role": message.role,
        "blocks": [block_to_stored(b, media) for b in message.blocks],
    }
    if message.tool_calls:
        out["tool_calls"] = [stored_call(c) for c in message.tool_calls]
    if message.tool_results:
        out["tool_results"] = [stored_result(r, media) for r in message.tool_results]
    return out


def stored_result(result: Any, media: Attachments | None = None) -> dict[str, Any]:
    """A tool result as the DAG keeps it: its text, and its media blocks by hash."""
    out = {
        "call_id": result.call_id,
        "name": result.name,
        "content": result.content,
        "is_error": result.is_error,
    }
    blocks = getattr(result, "blocks", ())
    if blocks:
        out["blocks"] = [block_to_stored(b, media) for b in blocks]
    return out


def stored_call(call: Any, arguments: Any = None) -> dict[str, Any]:
    """A tool call as the DAG keeps it: id, name, arguments, and its position among blocks."""
    out = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if arguments is not None:
        out["arguments"] = arguments
    position = getattr(call, "position", None)
    if position is not None:
        out["position"] = position
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
    "DEFAULT_READ_TOKENS",
    "EXPOSE_VALUES",
    "RENDER_RANGE_KEYS",
    "Frame",
    "History",
    "LlmRecordLike",
    "Node",
    "Prompt",
    "Reads",
    "current_frame",
    "enter_frame",
    "leave_frame",
    "node_tokens",
    "render_nodes",
    "select_reads",
    "walk_reads",
]
