"""The command line's log: every prompt and answer, kept in a session database.

A conversation is a :class:`~llmport.sessions.session.Session` (its id is
the conversation id, ``--cid``); each prompt and its answer is one ``llm``
node recorded through the session store, holding the prompt, system
prompt, model and options (the node's data) and the answer, usage, cost,
tool calls and the turn's messages (its result). Continuing a conversation
reads those messages back as ``history=``.

Beside the session tables, an FTS5 table (``cli_search``) indexes each
prompt and answer for ``llmport logs -q``; it holds text only, keyed by
(session, seq). Logging is on unless ``--no-log`` or ``LLMPORT_LOGS=off``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import closing
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import redact
from ..messages.types import Message
from ..sessions.session import (
    Session,
    SessionError,
    SessionFileNotFoundError,
    UnknownSessionError,
)
from ..slotted import dataclass
from .paths import logs_path

if TYPE_CHECKING:
    from ..engine.result import RunResult

__all__ = [
    "Conversation",
    "LogQuery",
    "iter_usage",
    "logging_enabled",
    "open_conversation",
    "search",
]

# One row per logged turn, in the order logged: the rowid orders turns newest first
# without reading the session rows, so a listing reads only the rows it prints.
_SEARCH_TABLE = """
CREATE VIRTUAL TABLE IF NOT EXISTS cli_search USING fts5(
    prompt, response, session UNINDEXED, seq UNINDEXED, model UNINDEXED
)
"""
_NODE_NAME = "prompt"


def logging_enabled(no_log: bool) -> bool:
    """False with ``--no-log`` or ``LLMPORT_LOGS=off`` (also ``0``, ``false``, ``no``)."""
    setting = os.environ.get("LLMPORT_LOGS", "").strip().lower()
    return not no_log and setting not in {"off", "0", "false", "no"}


@dataclass(slots=True)
class Conversation:
    """One conversation: its messages so far and, when logging, the session it is logged in."""

    session: Session | None
    history: list[Message] = field(default_factory=list)

    @property
    def id(self) -> str | None:
        return self.session.id if self.session is not None else None

    def close(self) -> None:
        """Close the log database's connection (it reopens on the next turn)."""
        if self.session is not None:
            self.session.close()

    def record(
        self,
        prompt: str,
        model: str,
        options: dict[str, Any],
        result: RunResult[Any],
        *,
        system: str | None = None,
    ) -> None:
        """Log one prompt and its answer, and add the turn to :attr:`history`."""
        turn = result.messages[len(self.history) :]
        self.history = list(result.messages)
        if self.session is None:
            return
        # The text the model wrote; structured output without text is kept as its JSON.
        answer = result.text or json.dumps(result.output, default=str)
        data = {"prompt": prompt, "system": system, "model": model, "options": options}
        outcome = {
            "output": answer,
            "model": result.model,
            "usage": result.usage.to_dict(),
            "cost": _cost(result),
            "tool_calls": _tool_calls(turn),
            "stop_reason": result.stop_reason,
            "messages": [m.to_dict() for m in turn],
        }
        node = self.session.record(
            "llm", _NODE_NAME, self.session.root, data, "ok", outcome, result.latency
        )
        turn_row = (prompt, answer, self.session.id, node.seq, result.model)
        _index(Path(str(self.session.path)), turn_row)


def _cost(result: RunResult[Any]) -> str | None:
    try:
        cost = result.usage.cost
    except Exception:  # an unpriced model, or no price data installed: no cost, no failure
        return None
    return None if cost is None else str(cost)


def _tool_calls(turn: list[Message]) -> list[dict[str, Any]]:
    return [
        {"name": call.name, "arguments": call.arguments}
        for message in turn
        for call in message.tool_calls
    ]


def _index(path: Path, row: tuple[str, str, str, int, str]) -> None:
    """Add a turn (prompt, answer, session, seq, model) to the index, its text redacted
    as the session rows are."""
    prompt, answer, *keys = row
    insert = "INSERT INTO cli_search(prompt, response, session, seq, model) VALUES (?,?,?,?,?)"
    _run_sql(
        path, [(_SEARCH_TABLE, ()), (insert, (redact(prompt), redact(answer), *keys))], write=True
    )


def _run_sql(
    path: Path, steps: list[tuple[str, tuple[Any, ...]]], *, write: bool = False
) -> list[tuple[Any, ...]]:
    """Run ``steps`` in one transaction and return the rows of the last.

    A database that cannot be used (not SQLite, damaged, locked too long) is a
    :class:`~llmport.sessions.session.SessionError` on one line, never a sqlite3 error.
    """
    import sqlite3  # here: a run with --no-log writes no log and never loads it

    target = str(path) if write else path.resolve().as_uri() + "?mode=ro"
    try:
        with closing(sqlite3.connect(target, uri=not write, timeout=5)) as db, db:
            rows: list[tuple[Any, ...]] = []
            for sql, params in steps:
                rows = db.execute(sql, params).fetchall()
            return rows
    except sqlite3.Error as exc:
        problem = f"{type(exc).__name__}: {exc}"
    raise SessionError(f"the log database {path} cannot be used ({problem})")


def open_conversation(
    *, log: bool, cid: str | None = None, latest: bool = False, path: Path | None = None
) -> Conversation:
    """The conversation to prompt in: a new one, the latest (``-c``) or ``cid`` (``--cid``).

    Continuing needs the log; an unknown ``cid``, or ``-c`` with nothing
    logged yet, is an :class:`~llmport.sessions.session.UnknownSessionError`.
    """
    path = path or logs_path()
    if cid is not None or latest:
        _check_exists(path, cid)
    elif not log:
        return Conversation(None)
    path.parent.mkdir(parents=True, exist_ok=True)
    session = Session(str(path), id=cid, resume=latest and cid is None)
    history = _history(session)
    if not log:  # read only for its history: this turn is not logged
        session.close()
    return Conversation(session if log else None, history)


def _check_exists(path: Path, cid: str | None) -> None:
    if not path.is_file():
        raise UnknownSessionError(f"no conversation to continue: nothing is logged at {path}")
    if cid is None:
        return
    if not _run_sql(path, [("SELECT 1 FROM sessions WHERE id = ?", (cid,))]):
        raise UnknownSessionError(f"no conversation {cid!r} in {path} (see `llmport logs`)")


def _history(session: Session) -> list[Message]:
    """The messages of every logged turn of ``session``, in order."""
    return [
        Message.from_dict(message)
        for node in session.roots()
        if node.kind == "llm" and node.name == _NODE_NAME and node.result
        for message in node.result.get("messages", [])
    ]


@dataclass(slots=True, frozen=True)
class LogQuery:
    """What ``llmport logs`` asks for: newest first, at most ``limit`` rows."""

    limit: int = 3
    model: str | None = None
    cid: str | None = None
    text: str | None = None


def _fts_phrase(text: str) -> str:
    """``text`` as FTS5 phrases (every word must match): no FTS5 syntax from the user."""
    return " ".join('"' + word.replace('"', '""') + '"' for word in text.split())


def search(query: LogQuery, path: Path | None = None) -> list[dict[str, Any]]:
    """The logged turns ``query`` selects, newest first, each a JSON-safe dict.

    The turns are chosen in the index alone (newest rowid first, at most
    ``limit``); only those are read from the session rows.
    """
    path = path or logs_path()
    if not path.is_file():
        raise SessionFileNotFoundError(f"nothing is logged yet: no log database at {path}")
    where, params = [], []
    if query.text is not None:
        where.append("cli_search MATCH ?")
        params.append(_fts_phrase(query.text))
    if query.model is not None:
        where.append("model = ?")
        params.append(query.model)
    if query.cid is not None:
        where.append("session = ?")
        params.append(query.cid)
    chosen = (
        "SELECT rowid, session, seq FROM cli_search"
        + (f" WHERE {' AND '.join(where)}" if where else "")
        + " ORDER BY rowid DESC LIMIT ?"
    )
    sql = (
        "SELECT n.session, n.seq, n.started_at, n.duration, n.start_data, n.end_data "
        f"FROM ({chosen}) f JOIN nodes n ON n.session = f.session AND n.seq = f.seq "
        "ORDER BY f.rowid DESC"
    )
    if not _run_sql(path, [("SELECT 1 FROM sqlite_master WHERE name = 'cli_search'", ())]):
        raise SessionFileNotFoundError(f"nothing is logged yet: {path} holds no CLI log")
    if query.cid is not None:
        _check_exists(path, query.cid)
    return [_row(*row) for row in _run_sql(path, [(sql, (*params, query.limit))])]


def _row(
    session: str, seq: int, started: float, duration: float | None, start: str, end: str | None
) -> dict[str, Any]:
    data, result = json.loads(start), json.loads(end or "{}")
    return {
        "cid": session,
        "id": f"n{seq}",
        "started_at": started,
        "duration_s": duration,
        "model": result.get("model") or data.get("model"),
        "prompt": data.get("prompt"),
        "system": data.get("system"),
        "options": data.get("options", {}),
        "response": result.get("output"),
        "usage": result.get("usage", {}),
        "cost": result.get("cost"),
        "tool_calls": result.get("tool_calls", []),
    }


def iter_usage(rows: list[dict[str, Any]]) -> Iterator[tuple[str, int, int]]:
    """(model, input tokens, output tokens) of each row."""
    for row in rows:
        usage = row["usage"]
        yield (
            str(row["model"]),
            int(usage.get("input_tokens", 0)),
            int(usage.get("output_tokens", 0)),
        )
