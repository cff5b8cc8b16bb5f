"""``llmport session show PATH|ID``: print a stored session DAG as a tree.

``TARGET`` is a session database file (every session in it is shown), a
file and an id (``runs.sqlite#a1b2c3``), or a session id (or a unique
prefix of one) in the configured database (``LLMPORT_SESSION`` /
``[session] path``). ``--json`` prints one JSON document instead::

    {"sessions": [{"id": ..., "path": ..., "usage": {...}, "nodes": [Node.to_dict(), ...]}]}

:func:`tree` builds the rich renderable for any :class:`~llmport.session.Session`
(in memory too), e.g. to print the DAG at the end of a program.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .session import Session, list_sessions

if TYPE_CHECKING:
    from rich.console import Console
    from rich.tree import Tree

    from .dag import Node

__all__ = ["show", "tree"]

_STATUS_STYLE = {"ok": "green", "error": "bold red", "running": "yellow"}


def show(target: str, as_json: bool = False, console: Console | None = None) -> int:
    """Print the session(s) ``target`` names; return the exit status (0 ok, 1 not found)."""
    if console is None:
        from rich.console import Console

        console = Console()
    try:
        sessions = _resolve(target)
    except (FileNotFoundError, KeyError, ValueError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        if as_json:
            console.print(
                json.dumps({"error": message}), markup=False, highlight=False, soft_wrap=True
            )
        else:
            console.print(f"[red]error:[/] {message}", highlight=False)
        return 1
    if as_json:
        doc = {"sessions": [{**s.to_dict(), "usage": s.usage().to_dict()} for s in sessions]}
        console.print(
            json.dumps(doc, ensure_ascii=False), markup=False, highlight=False, soft_wrap=True
        )
    else:
        for session in sessions:
            console.print(tree(session))
    return 0


def _resolve(target: str) -> list[Session]:
    path, _, wanted = target.partition("#")
    if Path(path).is_file():
        if wanted:
            return [Session(path, id=_match(path, wanted), readonly=True)]
        return [Session(path, id=info.id, readonly=True) for info in list_sessions(path)]
    from .config import load_config

    configured = load_config().session_path
    if configured is None or not Path(configured).is_file():
        raise FileNotFoundError(
            f"{target!r} is not a session file, and no session database is configured "
            "(LLMPORT_SESSION or [session] path) to look the id up in"
        )
    return [Session(configured, id=_match(configured, target), readonly=True)]


def _match(path: str, wanted: str) -> str:
    ids = [info.id for info in list_sessions(path)]
    if wanted in ids:
        return wanted
    found = [i for i in ids if i.startswith(wanted)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise KeyError(f"{path} has no session {wanted!r}")
    raise KeyError(f"{wanted!r} matches several sessions in {path}: {', '.join(found)}")


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
    return root


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
    if node.kind == "llm" and result.get("usage"):
        usage = result["usage"]
        text.append(f"  {usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out")
        # ``attempts`` counts every request of the tool loop; more than requests means retries.
        retries = int(result.get("attempts") or 0) - int(usage.get("requests") or 0)
        if retries > 0:
            text.append(f"  {retries} retried", "yellow")
    elif node.kind == "function" and tokens:
        text.append(f"  {tokens} tokens")
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
