"""``llmport logs``: the logged prompts and answers, newest first.

``-n N`` rows (default 3), ``-m MODEL``, ``--cid ID``, ``-q TEXT`` (every
word must occur in the prompt or the answer: SQLite FTS5), ``--json`` (a
JSON array, one object per turn) and ``--usage`` (token totals per model
over the rows selected), ``--path`` (print the database's path).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from .logbook import LogQuery, iter_usage, search
from .output import UsageError, console, emit_json, escape
from .paths import logs_path

__all__ = ["add_logs_parser", "cmd_logs"]


def positive(raw: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{raw!r} must be at least 1")
    return value


def add_logs_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "logs",
        epilog="example: llmport logs -q pelican -n 10",
    )
    p.add_argument("-n", "--count", type=positive, default=3, metavar="N", help="rows (default 3)")
    p.add_argument("-m", "--model", help="only this model (as logged: provider:model)")
    p.add_argument("--cid", metavar="ID", help="only this conversation")
    p.add_argument("-q", "--query", metavar="TEXT", help="full-text search of prompts and answers")
    p.add_argument("--usage", action="store_true", help="token totals per model")
    p.add_argument("--path", action="store_true", help="print the log database's path")
    p.add_argument("--json", action="store_true", help="one JSON array of turns")
    p.set_defaults(func=cmd_logs)


def cmd_logs(args: argparse.Namespace) -> int:
    if args.path:
        print(logs_path())
        return 0
    for flag, value in (("-q", args.query), ("--cid", args.cid), ("-m", args.model)):
        if value is not None and not value.strip():
            raise UsageError(f"{flag} needs a value")
    rows = search(LogQuery(args.count, args.model, args.cid, args.query))
    if args.usage:
        totals = _totals(rows)
        if args.json:
            emit_json(totals)
        else:
            for model, (inp, out) in totals.items():
                print(f"{model}: {inp} in / {out} out")
        return 0
    if args.json:
        emit_json(rows)
        return 0
    _print_rows(rows)
    return 0


def _totals(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for model, inp, out in iter_usage(rows):
        totals[model][0] += inp
        totals[model][1] += out
    return {model: (inp, out) for model, (inp, out) in totals.items()}


def _print_rows(rows: list[dict[str, Any]]) -> None:
    out = console()
    if not rows:
        out.print("no logged prompts match")
    for row in reversed(rows):  # oldest of the selection first, as a conversation reads
        when = datetime.fromtimestamp(row["started_at"], UTC).strftime("%Y-%m-%d %H:%M:%S")
        usage = row["usage"]
        cost = f" · ${row['cost']}" if row["cost"] else ""
        took = f" · {row['duration_s']:.2f}s" if row["duration_s"] is not None else ""
        out.print(
            f"[bold]{when}[/] · {escape(row['model'])} · cid {escape(row['cid'])} · "
            f"{usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out"
            f"{escape(cost)}{took}",
        )
        out.print("[dim]prompt:[/] " + escape(row["prompt"]), overflow="fold")
        for call in row["tool_calls"]:
            out.print(f"[dim]tool:[/] {escape(call['name'])}", overflow="fold")
        out.print("[dim]answer:[/] " + escape(row["response"]) + "\n", overflow="fold")
