"""The ``llmport`` command line: models, plugins, run, demo, session show.

Output goes through rich; ``--json`` prints machine-readable JSON instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def _emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def _caps_dict(caps: Any) -> dict[str, Any]:
    return {
        "inputs": sorted(caps.input_modalities),
        "files": sorted(caps.file_types),
        "audio": sorted(caps.audio_types),
        "tools": caps.native_tools,
        "structured_output": caps.native_structured_output,
        "streaming": caps.streaming,
    }


def cmd_models(args: argparse.Namespace) -> int:
    from .config import load_config
    from .plugins import PluginHost

    host = PluginHost()
    config = load_config()
    rows = []
    for prefix, info in sorted(host.providers().items()):
        rows.append(
            {
                "prefix": prefix,
                "plugin": info.plugin,
                "description": info.description,
                "models": {pattern: _caps_dict(c) for pattern, c in info.models.items()},
                "default": _caps_dict(info.default),
                "aliases": info.aliases,
            }
        )
    data = {
        "providers": rows,
        "aliases": config.aliases,
        "configurations": config.configurations,
        "default_model": config.default_model,
    }
    if args.json:
        _emit_json(data)
        return 0
    from rich.table import Table

    console = _console()
    if not rows:
        console.print(
            "[yellow]No provider plugins are installed.[/] Try: pip install llmport-openai"
        )
    for row in rows:
        table = Table(
            title=f"{row['prefix']}:  ({row['plugin']}) {row['description']}", title_justify="left"
        )
        for col in ("model", "inputs", "files", "tools", "structured", "stream"):
            table.add_column(col)
        for pattern, caps in [*row["models"].items(), ("(other)", row["default"])]:
            table.add_row(
                pattern,
                ", ".join(caps["inputs"]),
                ", ".join(f.split("/")[-1] for f in caps["files"]),
                _yes(caps["tools"]),
                _yes(caps["structured_output"]),
                _yes(caps["streaming"]),
            )
        console.print(table)
        if row["aliases"]:
            console.print(
                "  aliases: " + ", ".join(f"{a} → {t}" for a, t in row["aliases"].items())
            )
    if config.aliases:
        console.print(
            "[bold]configured aliases:[/] "
            + ", ".join(f"{a} → {t}" for a, t in config.aliases.items())
        )
    if config.configurations:
        console.print("[bold]named configurations:[/] " + ", ".join(config.configurations))
    return 0


def _yes(flag: bool) -> str:
    return "yes" if flag else "-"


def cmd_plugins(args: argparse.Namespace) -> int:
    from .plugins import discover

    loads = discover()
    data = [
        {
            "name": x.name,
            "entry_point": x.value,
            "distribution": x.distribution,
            "version": x.version,
            "ok": x.error is None,
            "error": x.error,
        }
        for x in loads
    ]
    if args.json:
        _emit_json(data)
        return 0
    from rich.table import Table

    table = Table(title="llmport plugins (entry-point group 'llmport')", title_justify="left")
    for col in ("name", "distribution", "version", "status"):
        table.add_column(col)
    for row in data:
        status = "[green]loaded[/]" if row["ok"] else f"[red]failed:[/] {row['error']}"
        table.add_row(
            str(row["name"]), str(row["distribution"] or ""), str(row["version"] or ""), status
        )
    _console().print(table if data else "No plugins found.")
    return 0


def _parse_option(raw: str) -> tuple[str, Any]:
    key, sep, value = raw.partition("=")
    if not sep:
        raise SystemExit(f"option {raw!r} must be key=value")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def cmd_run(args: argparse.Namespace) -> int:
    from .errors import LlmportError
    from .runtime import Runtime
    from .types import FinalEvent, TextDelta

    content: list[Any] = [{"type": "text", "text": args.prompt}]
    for attachment in args.attach or []:
        content.append({"type": _kind_of(attachment), "path": attachment})
    options = dict(_parse_option(o) for o in args.option or [])
    if args.system:
        options["system"] = args.system
    schema = None
    if args.schema:
        text = Path(args.schema).read_text() if Path(args.schema).is_file() else args.schema
        schema = json.loads(text)
    rt = Runtime(model=args.model, max_retries=args.retries)
    err = _console(stderr=True)
    try:
        if args.json or not args.stream:
            result = rt.run(content, response_format=schema, **options)
            if args.json:
                _emit_json(
                    {
                        "model": result.model,
                        "output": result.output,
                        "usage": result.usage.to_dict(),
                        "stop_reason": result.stop_reason,
                        "attempts": result.attempts,
                        "latency_s": round(result.latency, 4),
                    }
                )
            else:
                sys.stdout.write(str(result.output) + "\n")
            return 0
        final = None
        for event in rt.stream(content, response_format=schema, **options):
            if isinstance(event, TextDelta):
                sys.stdout.write(event.text)
                sys.stdout.flush()
            elif isinstance(event, FinalEvent):
                final = event.result
        sys.stdout.write("\n")
        if final is not None:
            err.print(
                f"[dim]{final.model} · {final.usage.input_tokens} in / "
                f"{final.usage.output_tokens} out · {final.latency:.2f}s[/]"
            )
        return 0
    except LlmportError as exc:
        err.print(f"[red]error:[/] {type(exc).__name__}: {exc}")
        return 1


def _kind_of(path: str) -> str:
    from .content import guess_from_name

    media = guess_from_name(path) or ""
    if media.startswith("image/"):
        return "image"
    if media.startswith("audio/"):
        return "audio"
    return "file"


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(as_json=args.json)


def cmd_session(args: argparse.Namespace) -> int:
    from .session_cli import show

    return int(show(args.target, as_json=args.json, console=_console()))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="llmport", description="llmport: one SDK, every LLM vendor."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("models", help="list providers, models, capabilities and aliases")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("plugins", help="list installed plugins and load errors")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_plugins)

    p = sub.add_parser("run", help="run one prompt")
    p.add_argument("prompt")
    p.add_argument(
        "-m", "--model", default="default", help="provider:model, alias or configuration"
    )
    p.add_argument(
        "-a", "--attach", action="append", metavar="FILE", help="attach an image/audio/file"
    )
    p.add_argument("-s", "--system", help="system prompt")
    p.add_argument("--schema", help="JSON schema (file or inline JSON) for structured output")
    p.add_argument(
        "-o",
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="model option, e.g. temperature=0",
    )
    p.add_argument(
        "--no-stream", dest="stream", action="store_false", help="wait for the whole reply"
    )
    p.add_argument(
        "--retries",
        type=int,
        default=None,
        help="total attempts per request (default: configuration, else 2)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("demo", help="the offline showcase (replays shipped cassettes)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("session", help="inspect stored sessions")
    ssub = p.add_subparsers(dest="session_command", required=True)
    show = ssub.add_parser("show", help="print a session's DAG as a tree")
    show.add_argument("target", help="a session database path, or a session id")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cmd_session)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``llmport`` command."""
    args = build_parser().parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
