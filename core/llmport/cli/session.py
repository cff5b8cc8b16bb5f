"""``llmport session show PATH|URL|ID`` and ``llmport session list [PATH|URL]``.

``show`` prints a stored session DAG as a tree. ``TARGET`` is a session
database file or store URL (``sqlite:///runs.sqlite``,
``postgresql://...``; every session in it is shown), a file or URL and an
id (``runs.sqlite#a1b2c3``, ``postgresql://host/db#a1b2c3``), or a session
id (or a unique prefix of one) in the configured database
(``LLMPORT_SESSION`` / ``[session] path``). ``--json`` prints one JSON
document instead::

    {"sessions": [{"id": ..., "path": ..., "usage": {...}, "nodes": [Node.to_dict(), ...]}]}

``list`` prints the sessions of a database file or URL (default: the
configured one), newest first: id, creation time and node count. ``--json``::

    {"path": ..., "sessions": [{"id": ..., "created": "2026-05-09T07:35:25+00:00",
                                "created_ts": 1778312125.0, "nodes": 12}, ...]}

A missing file, a file that is not a session database, or an id that names
no session (or several) raises a :class:`~llmport.sessions.session.SessionError`
(an :class:`~llmport.errors.LlmportError`); the command line prints it as
``error: <Type>: <message>``. Everything printed is literal text: brackets
in names, arguments, errors and paths are never read as rich markup.

:func:`tree` builds the rich renderable for any :class:`~llmport.sessions.session.Session`
(in memory too), e.g. to print the DAG at the end of a program.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..observe.redaction import redact_url
from ..sessions.session import (
    Session,
    SessionError,
    SessionFileNotFoundError,
    UnknownSessionError,
    list_sessions,
)
from ..sessions.stores import split_target

if TYPE_CHECKING:
    import argparse

    from rich.console import Console
    from rich.tree import Tree

    from ..sessions.dag import Node

__all__ = ["add_list_parser", "cmd_list", "show", "show_list", "tree"]

_STATUS_STYLE = {"ok": "green", "error": "bold red", "running": "yellow"}


def show(target: str, as_json: bool = False, console: Console | None = None) -> int:
    """Print the session(s) ``target`` names; return the exit status (0).

    Raises :class:`~llmport.sessions.session.SessionError` (``SessionFileNotFoundError``,
    ``UnknownSessionError``) when ``target`` names no stored session.
    """
    sessions = _resolve(target)
    if console is None:
        console = _console()
    try:
        if as_json:
            doc = {"sessions": [{**s.to_dict(), "usage": s.usage().to_dict()} for s in sessions]}
            _print_json(console, doc)
        elif not sessions:
            console.print(f"no sessions in {redact_url(target)}", markup=False, highlight=False)
        else:
            for session in sessions:
                console.print(tree(session))
    finally:
        for session in sessions:
            session.close()
    return 0


def show_list(
    path: str | None = None, as_json: bool = False, console: Console | None = None
) -> int:
    """Print the sessions stored in ``path`` (default: the configured database), newest first."""
    from rich.table import Table
    from rich.text import Text

    path = path or _configured_path("no session database given")
    infos = list_sessions(path)[::-1]
    shown = redact_url(path)  # a store URL's password never reaches the terminal
    if console is None:
        console = _console()
    if as_json:
        rows = [
            {
                "id": info.id,
                "created": _iso(info.created),
                "created_ts": info.created,
                "nodes": info.nodes,
            }
            for info in infos
        ]
        _print_json(console, {"path": shown, "sessions": rows})
        return 0
    if not infos:
        console.print(f"no sessions in {shown}", markup=False, highlight=False)
        return 0
    count = f"{len(infos)} session{'s' if len(infos) != 1 else ''}"
    console.print(Text(f"{shown}: {count}", style="bold"), soft_wrap=True)
    table = Table()
    table.add_column("id", style="cyan", no_wrap=True)
    table.add_column("created", no_wrap=True)
    table.add_column("nodes", justify="right")
    for info in infos:
        local = datetime.fromtimestamp(info.created).strftime("%Y-%m-%d %H:%M:%S")
        table.add_row(Text(info.id), Text(local), Text(str(info.nodes)))
    console.print(table)
    return 0


def add_list_parser(session_commands: argparse._SubParsersAction[Any]) -> None:
    """Add ``list [PATH] [--json]`` to the ``llmport session`` subcommands."""
    parser = session_commands.add_parser(
        "list",
        help="list the sessions in a database file, newest first",
        epilog="example: llmport session list runs.sqlite",
    )
    parser.add_argument(
        "path", nargs="?", help="a session database (default: LLMPORT_SESSION or [session] path)"
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=cmd_list)


def cmd_list(args: argparse.Namespace) -> int:
    """``llmport session list``: the handler :func:`add_list_parser` installs."""
    return show_list(args.path, as_json=args.json)


def _console() -> Console:
    from rich.console import Console

    return Console(highlight=False)


def _print_json(console: Console, doc: Any) -> None:
    console.print(
        json.dumps(doc, ensure_ascii=False), markup=False, highlight=False, soft_wrap=True
    )


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")


def _configured_path(problem: str, error: type[SessionError] = SessionError) -> str:
    from ..provider.config import load_config

    configured = load_config().session_path
    if configured is None:
        raise error(
            f"{problem}, and no session database is configured (LLMPORT_SESSION or [session] path)"
        )
    return str(configured)


def _resolve(target: str) -> list[Session]:
    path, _, wanted = target.rpartition("#") if "#" in target else (target, "", "")
    if _is_url(path) or _file(path).is_file():
        if wanted:
            return [Session(path, id=_match(path, wanted), readonly=True)]
        return [Session(path, id=info.id, readonly=True) for info in list_sessions(path)]
    if wanted:
        raise SessionFileNotFoundError(f"no session database at {path}")
    configured = _configured_path(f"{target!r} is not a session file", SessionFileNotFoundError)
    if not _is_url(configured) and not _file(configured).is_file():
        raise SessionFileNotFoundError(
            f"{target!r} is not a session file, and the configured session database "
            f"{configured} does not exist"
        )
    return [Session(configured, id=_match(configured, target), readonly=True)]


def _is_url(target: str) -> bool:
    """A store URL (``postgresql://...``); ``sqlite:///file`` counts as its file."""
    return split_target(target)[0] != "sqlite"


def _file(target: str) -> Path:
    """The file of a SQLite path or ``sqlite:///`` URL."""
    return Path(split_target(target)[1])


def _match(path: str, wanted: str) -> str:
    ids = [info.id for info in list_sessions(path)]
    if wanted in ids:
        return wanted
    found = [i for i in ids if i.startswith(wanted)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise UnknownSessionError(f"{path} has no session {wanted!r}")
    raise UnknownSessionError(f"{wanted!r} matches several sessions in {path}: {', '.join(found)}")


def tree(session: Session) -> Tree:
    """A rich tree of ``session``: kind, name, status, model, tokens and duration per node."""
    from rich.text import Text
    from rich.tree import Tree

    nodes = session.nodes()
    tokens = _subtree_tokens(nodes)
    usage = session.usage()
    head = Text.assemble(
        ("session ", "bold"),
        (session.id, "bold cyan"),
        f"  {session.path or 'in memory'}  {len(nodes)} nodes  "
        f"{usage.input_tokens} in / {usage.output_tokens} out tokens",
    )
    root = Tree(head)
    branches: dict[int, Tree] = {}
    for node in nodes:
        parent = node.parent
        owner = branches.get(parent.seq, root) if parent is not None else root
        branches[node.seq] = owner.add(_label(node, tokens.get(node.seq, 0)))
        if node.kind == "fix":
            _add_diff(branches[node.seq], node)
    return root


#: Diff lines drawn under a ``fix`` node; the rest is counted (``--json`` has it all).
FIX_DIFF_LINES = 40
_DIFF_STYLE = {"+": "green", "-": "red", "@": "cyan"}


def _diff_counts(diff: str) -> tuple[int, int]:
    lines = diff.splitlines()
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return added, removed


def _add_diff(branch: Tree, node: Node) -> None:
    """Draw a fix node's diff under it, coloured, its first :data:`FIX_DIFF_LINES` lines."""
    from rich.text import Text

    lines = str((node.result or {}).get("diff") or "").splitlines()
    for line in lines[:FIX_DIFF_LINES]:
        branch.add(Text(line, style=_DIFF_STYLE.get(line[:1], "dim")))
    if len(lines) > FIX_DIFF_LINES:
        branch.add(Text(f"... {len(lines) - FIX_DIFF_LINES} more diff lines", style="dim"))


def _subtree_tokens(nodes: list[Node]) -> dict[int, int]:
    totals: dict[int, int] = {}
    for node in reversed(nodes):  # children come after their parents
        own = 0
        if node.kind == "llm" and node.result:
            usage = node.result.get("usage") or {}
            own = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
        total = totals.get(node.seq, 0) + own
        totals[node.seq] = total
        if node.parent is not None and node.parent.kind != "session":
            totals[node.parent.seq] = totals.get(node.parent.seq, 0) + total
    return totals


def _replayed(node: Node) -> bool:
    """Whether a resumed durable run took ``node`` from its record (its parent lists it)."""
    parent = node.parent
    return parent is not None and node.id in ((parent.result or {}).get("replayed") or ())


def _label(node: Node, tokens: int) -> Any:
    from rich.text import Text

    text = Text.assemble(
        (f"{node.id} ", "dim"),
        (f"{node.kind} ", "magenta"),
        (node.name, "bold"),
        "  ",
        (node.status, _STATUS_STYLE.get(node.status, "")),
    )
    result = node.result or {}
    if node.kind == "function" and node.expose != "io":
        text.append(f"  expose={node.expose}", "dim")
    if _replayed(node):  # a resumed durable run got this step's answer from its record
        text.append("  replayed", "yellow")
    workflow = (node.data or {}).get("workflow_id")
    if workflow and node.kind == "function" and (node.parent is None or node.parent.seq == 0):
        text.append(f"  workflow {workflow}", "dim")
    if node.kind == "llm" and result.get("usage"):
        usage = result["usage"]
        text.append(f"  {usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out")
        # ``attempts`` counts every request of the tool loop; more than requests means retries.
        retries = int(result.get("attempts") or 0) - int(usage.get("requests") or 0)
        if retries > 0:
            text.append(f"  {retries} retried", "yellow")
    elif node.kind == "function" and tokens:
        text.append(f"  {tokens} tokens")
    elif node.kind == "handoff":  # the exec's llm node -> the target's function node
        data = node.data or {}
        text.append(f"  {data.get('from')} -> {data.get('to')} {data.get('target') or ''}", "cyan")
    elif node.kind == "fix":  # fix(): what it repaired, with what, and who approved
        data, diff = node.data or {}, str(result.get("diff") or "")
        text.append(f"  {data.get('function')} (fixes {data.get('fixes') or '-'})", "cyan")
        text.append(f"  {data.get('model')}")
        if diff:
            added, removed = _diff_counts(diff)
            text.append(f"  +{added} -{removed}")
        spent = result.get("usage") or {}
        tokens_in, tokens_out = spent.get("input_tokens", 0), spent.get("output_tokens", 0)
        if tokens_in or tokens_out:
            text.append(f"  {tokens_in} in / {tokens_out} out")
        if result.get("approved_by"):
            text.append(f"  approved by {result['approved_by']}", "green")
        if result.get("written"):
            text.append(f"  written to {result['written']}", "dim")
    if node.duration is not None:
        text.append(f"  {_seconds(node.duration)}", "dim")
    error = result.get("error")
    if isinstance(error, dict):
        first = str(error.get("message", "")).splitlines()[0:1]
        text.append(f"  {error.get('type')}: {first[0][:80] if first else ''}", "red")
    elif isinstance(error, str) and error:
        text.append(f"  {error[:80]}", "red")
    return text


def _seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"
