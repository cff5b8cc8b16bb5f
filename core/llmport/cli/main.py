"""The ``llmport`` command line: a prompt (``run``, the default), chat, logs, keys, aliases,
models, plugins, embed, demo, session show and list.

Plugins add subcommands through the ``llmport_register_commands`` hook
(``llmport mcp serve`` comes from llmport-mcp); see :func:`add_plugin_commands`.

Output goes through rich; ``--json`` prints machine-readable JSON instead.

Errors: a user error (any :class:`~llmport.errors.LlmportError`, an
``OSError`` from a file the user named, bad JSON the user gave) prints one
line, ``error: <Type>: <message>`` (secrets redacted), to stderr and exits
1; Ctrl-C prints ``error: interrupted`` and exits 130; bad arguments exit 2
with argparse's usage message. ``llmport --debug ...`` re-raises instead, so
the full traceback shows.

``llmport --version`` prints the version before any parser is built: this
module imports only what every command needs, and each command's own
module (chat, logs, prompts, management) is imported when the parser is.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from .. import __version__
from .output import UsageError as UsageError  # re-exported: plugins' commands raise it
from .output import console as _console
from .output import emit_json as _emit_json
from .output import escape as _esc

#: What ``llmport --version`` prints.
VERSION = f"llmport {__version__}"


def _caps_dict(caps: Any) -> dict[str, Any]:
    return {
        "inputs": sorted(caps.input_modalities),
        "files": sorted(caps.file_types),
        "audio": sorted(caps.audio_types),
        "tools": caps.native_tools,
        "structured_output": caps.native_structured_output,
        "streaming": caps.streaming,
        "context_window": caps.context_window,
        "max_output_tokens": caps.max_output_tokens,
        "reasoning": caps.reasoning,
        "caching": caps.caching,
        "citations": caps.citations,
        "native_tools": sorted(caps.native_tool_kinds),
        "count_tokens": caps.count_tokens,
        "embeddings": caps.embeddings,
        "embedding_dimensions": caps.embedding_dimensions,
        "flexible_dimensions": caps.flexible_dimensions,
        "max_embed_inputs": caps.max_embed_inputs,
        "images": None if caps.images is None else caps.images.max_images,
    }


def _price_of(prefix: str, pattern: str) -> dict[str, str | None] | None:
    """USD per million input/output tokens from genai-prices (a glob is priced by its stem)."""
    from ..observe.prices import model_price

    found = model_price(prefix, pattern.rstrip("*").rstrip("-"))
    if found is None or found.input is None:
        return None
    # An embedding model has an input price only (its output is vectors, not tokens).
    output = str(found.output) if found.output is not None else None
    return {"input_per_mtok": str(found.input), "output_per_mtok": output}


def _with_prices(row: dict[str, Any]) -> None:
    """Fill in the price of each of a provider's patterns (``None`` until then).

    Only for an output that shows prices: genai-prices' import and lookups
    cost more than the rest of ``llmport models`` together.
    """
    for pattern, caps in row["models"].items():
        caps["price"] = _price_of(row["prefix"], pattern)


def _tokens(n: int | None) -> str:
    if not n:
        return "-"
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{round(n / 1000)}k"


def cmd_models(args: argparse.Namespace) -> int:
    """``llmport models``: one section per provider, one whole row per model pattern.

    ``--provider NAME`` (repeatable) keeps those providers (an unknown name
    is a :class:`~llmport.errors.ConfigError`: one line). ``--json`` prints
    one JSON array with an object per provider and model pattern (see
    :func:`_model_records`).
    """
    from ..plugins.host import PluginHost
    from ..provider.config import load_config
    from ..provider.instances import with_instances

    config = load_config()
    table = with_instances(PluginHost().providers(), config.providers)  # named instances
    providers = _chosen_providers(table, args.provider)
    rows = []
    for prefix, info in sorted(providers.items()):
        rows.append(
            {
                "prefix": prefix,
                "plugin": info.plugin,
                "description": info.description,
                # Priced only where the output shows prices: see _with_prices.
                "models": {
                    pattern: {**_caps_dict(c), "price": None} for pattern, c in info.models.items()
                },
                "default": {**_caps_dict(info.default), "price": None},
                "aliases": info.aliases,
            }
        )
    if args.json:
        for row in rows:
            _with_prices(row)
        _emit_json(_model_records(rows, config.aliases))
        return 0

    console = _console()
    if not rows:
        console.print(
            "[yellow]No provider plugins are installed.[/] Try: pip install llmport-openai"
        )
    for row in rows:
        _print_models(console, row)
        _print_aliases(console, "  aliases:", row["aliases"])
    if config.aliases and not args.provider:
        console.print(
            "[bold]configured aliases:[/] "
            + _esc(", ".join(f"{a} → {t}" for a, t in config.aliases.items())),
            overflow="fold",
        )
    if config.configurations and not args.provider:
        console.print("[bold]named configurations:[/] " + _esc(", ".join(config.configurations)))
    return 0


def _chosen_providers(providers: dict[str, Any], names: list[str] | None) -> dict[str, Any]:
    """The providers ``--provider`` names (all without it); an unknown name is a ConfigError."""
    if not names:
        return providers
    unknown = [name for name in names if name not in providers]
    if unknown:
        from ..errors import ConfigError

        known = ", ".join(sorted(providers)) or "none (no provider plugins are installed)"
        raise ConfigError(f"unknown provider {', '.join(map(repr, unknown))}; known: {known}")
    return {name: providers[name] for name in names}


#: What stands for "any other model" (the provider's default capabilities) in --json.
ANY_OTHER = "*"


def _model_records(rows: list[dict[str, Any]], configured: dict[str, str]) -> list[dict[str, Any]]:
    """One object per provider and model pattern, in table order; every object has every key.

    ``model`` is the pattern (first match wins; ``"*"`` last: any other
    model), ``aliases`` the names (the plugin's and the configured ones) whose
    target that pattern is the first to match; the rest are the capabilities
    and the price (USD per million tokens, or null).
    """
    from fnmatch import fnmatchcase

    records: list[dict[str, Any]] = []
    for row in rows:
        patterns = list(row["models"])
        if ANY_OTHER not in patterns:  # a table may already end with its own "*" row
            patterns.append(ANY_OTHER)
        named: dict[str, list[str]] = {pattern: [] for pattern in patterns}
        for alias, target in {**row["aliases"], **configured}.items():
            prefix, _, model = target.partition(":")
            if prefix == row["prefix"] and model:
                first = next(p for p in patterns if p == model or fnmatchcase(model, p))
                named[first].append(alias)
        for pattern in patterns:
            caps = row["models"].get(pattern, row["default"])
            records.append(
                {
                    "provider": row["prefix"],
                    "plugin": row["plugin"],
                    "model": pattern,
                    "aliases": named[pattern],
                    **caps,
                }
            )
    return records


#: Input modalities in reading order (the JSON output keeps them sorted).
_MODALITY_ORDER = ("text", "image", "audio", "file", "video")

#: Short names for the file types whose subtype is long or unfamiliar.
_SHORT_FILE_TYPES = {
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/plain": "txt",
    "text/markdown": "md",
    "video/quicktime": "mov",
    "video/x-msvideo": "avi",
    "video/x-ms-wmv": "wmv",
    "video/3gpp": "3gp",
}


def _short_file_type(media_type: str) -> str:
    """``application/pdf`` -> ``pdf``; long Office types -> ``docx``, ``xlsx``, ..."""
    short = _SHORT_FILE_TYPES.get(media_type)
    if short is not None:
        return short
    return media_type.rpartition("/")[2].removeprefix("x-")


def _model_rows(row: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The provider's patterns in order (first match wins), then ``(any other)``: each whole."""
    return [*row["models"].items(), ("(any other)", row["default"])]


#: Room the table needs beside the model column: below that, a list is printed.
_TABLE_ROOM = 44
#: Room for the window and price columns too.
_WIDE_TABLE_ROOM = 72


def _print_models(console: Any, row: dict[str, Any]) -> None:
    """One provider's models and capabilities: a table, or a list on a narrow terminal.

    Every row is whole: a pattern and all its cells (no blank meaning "as
    above"). Patterns and aliases are never cut (no ``…``): a pattern is one
    line of the table's first column, as wide as the longest pattern, and the
    other columns wrap; a terminal too narrow for that gets one paragraph per
    pattern instead.
    """
    widest = max([len(p) for p in row["models"]] + [len("(any other)")])
    wide = console.width >= widest + _WIDE_TABLE_ROOM
    table = console.width >= widest + _TABLE_ROOM
    if wide or not table:  # the narrow table is the one layout without a price
        _with_prices(row)
    rows = _model_rows(row)
    if table:
        console.print(_models_table(row, rows, widest, wide))
        return
    console.print(
        _esc(f"{row['prefix']}:  ({row['plugin']}) {row['description']}"), overflow="fold"
    )
    for pattern, caps in rows:
        console.print(_esc(pattern), overflow="fold")
        inputs, files = _inputs_and_files(caps)
        features = [
            name
            for name, key in (
                ("tools", "tools"),
                ("json", "structured_output"),
                ("stream", "streaming"),
            )
            if caps[key]
        ]
        console.print(
            _esc(
                f"    inputs: {inputs}; files: {files}; {', '.join(features) or '-'}; "
                f"window: {_tokens(caps['context_window'])}; price: {_price_text(caps)}"
            ),
            overflow="fold",
        )
    console.print("  (first matching pattern wins)")


def _inputs_and_files(caps: dict[str, Any]) -> tuple[str, str]:
    inputs = [m for m in _MODALITY_ORDER if m in caps["inputs"]]
    inputs += [m for m in caps["inputs"] if m not in _MODALITY_ORDER]
    files = sorted({_short_file_type(f) for f in caps["files"]})
    if caps.get("embeddings"):  # an embedding model: what it answers, and its size (text
        # in is implied; other inputs are named), kept as narrow as a chat model's cell
        inputs = [m for m in inputs if m != "text"] + [_embeds(caps)]
    if caps.get("images"):  # an image model (rt.generate_image): images out, up to n a call
        inputs = [m for m in inputs if m != "text"] + [f"makes ≤{caps['images']} images"]
    return ", ".join(inputs), ", ".join(files) or "-"


def _embeds(caps: dict[str, Any]) -> str:
    """``embeds 1536-d`` (``≤1536-d`` when ``dimensions=`` may shorten it)."""
    size = caps.get("embedding_dimensions")
    if not size:
        return "embeds"
    return f"embeds {'≤' if caps.get('flexible_dimensions') else ''}{size}-d"


def _models_table(
    row: dict[str, Any], rows: list[tuple[str, dict[str, Any]]], widest: int, wide: bool
) -> Any:
    """One provider's capability table: a row per pattern, the other columns wrap."""
    from rich import box
    from rich.table import Table

    table = Table(
        title=_esc(f"{row['prefix']}:  ({row['plugin']}) {row['description']}"),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        caption="first matching pattern wins",
        caption_justify="left",
    )
    table.add_column("model", no_wrap=True, overflow="fold", min_width=widest)
    table.add_column("inputs", overflow="fold")
    table.add_column("files", overflow="fold")
    table.add_column("tools", overflow="fold")
    table.add_column("json", overflow="fold")
    table.add_column("stream", overflow="fold")
    if wide:  # window and price need a wide terminal (--json always has them)
        table.add_column("window", overflow="fold")
        table.add_column("$/MTok in/out", overflow="fold")
    for pattern, caps in rows:
        inputs, files = _inputs_and_files(caps)
        cells = [
            _esc(pattern),
            _esc(inputs),
            _esc(files),
            _yes(caps["tools"]),
            _yes(caps["structured_output"]),
            _yes(caps["streaming"]),
        ]
        if wide:
            cells += [_tokens(caps["context_window"]), _esc(_price_text(caps))]
        table.add_row(*cells)
    return table


def _price_text(caps: dict[str, Any]) -> str:
    price = caps.get("price")
    if not price:
        return "-"
    output = price["output_per_mtok"]
    return f"{_money(price['input_per_mtok'])}/{_money(output) if output is not None else '-'}"


def _money(value: str) -> str:
    return value.rstrip("0").rstrip(".") if "." in value else value


def _print_aliases(console: Any, heading: str, aliases: dict[str, str]) -> None:
    """``heading`` then one ``alias → target`` per line (never cut, folded if too long)."""
    if not aliases:
        return
    console.print(heading)
    for alias, target in aliases.items():
        console.print(f"    {_esc(alias)} → {_esc(target)}", overflow="fold")


def _yes(flag: bool) -> str:
    return "yes" if flag else "-"


def cmd_plugins(args: argparse.Namespace) -> int:
    from ..plugins.host import discover

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
        status = "[green]loaded[/]" if row["ok"] else f"[red]failed:[/] {_esc(row['error'])}"
        table.add_row(
            _esc(row["name"]),
            _esc(row["distribution"] or ""),
            _esc(row["version"] or ""),
            status,
        )
    _console().print(table if data else "No plugins found.")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(as_json=args.json)


def cmd_session(args: argparse.Namespace) -> int:
    from .session import show

    return int(show(args.target, as_json=args.json, console=_console()))


_DEBUG_HELP = "show the full traceback of an error, and DEBUG logs (an MCP server's stderr)"

#: Subcommands a plugin adds: without the plugin the command says what to install
#: (name -> what it needs, the distribution, the help line).
PLUGIN_COMMANDS = {
    "mcp": ("the MCP plugin", "llmport-mcp", "MCP: serve a toolset to MCP clients"),
}


class CommandParser(argparse.ArgumentParser):
    """The parser of ``llmport`` and of each (sub)command, a plugin's included.

    Each has ``--debug`` and is its command's ``parser`` default (the usage a
    :class:`UsageError` prints). Subparsers made from one are of this class too
    (argparse's ``parser_class``), so a plugin's commands get both unasked.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # SUPPRESS: a subcommand without --debug leaves an outer --debug alone.
        self.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP
        )
        self.set_defaults(parser=self)


#: The core's commands in the order ``llmport --help`` lists them: name, help line, and
#: the ``"module:function"`` (in :mod:`llmport.cli`) that adds the command's parser when
#: the command is used (see :mod:`llmport.cli.subcommands`).
CORE_COMMANDS = (
    ("models", "list providers, models, capabilities and aliases", "main:add_models_parser"),
    ("plugins", "list installed plugins and load errors", "main:add_plugins_parser"),
    (
        "run",
        'run one prompt (the default command: `llmport "hi"` is `llmport run "hi"`)',
        "prompt:add_run_parser",
    ),
    ("chat", "chat: one conversation across turns, answers streamed", "chat:add_chat_parser"),
    ("logs", "list and search the logged prompts and answers", "logs:add_logs_parser"),
    ("keys", "API keys saved for providers", "manage:add_keys_parser"),
    ("aliases", "your model aliases", "manage:add_aliases_parser"),
    ("embed", "embed texts: one vector per line, or JSON", "embed:add_embed_parser"),
    ("demo", "the offline showcase (replays shipped cassettes)", "main:add_demo_parser"),
    ("session", "inspect stored sessions", "main:add_session_parser"),
    ("cassette", "inspect recorded cassettes (llmport.testing)", "cassette:add_cassette_parser"),
)


def build_parser() -> argparse.ArgumentParser:
    """The ``llmport`` parser: the core's subcommands, then the plugins' (their hook).

    A core command's parser is built when it is used (or read): a call builds
    its own command's parser only.
    """
    from .subcommands import add_lazy_subcommands

    parser = CommandParser(prog="llmport", description="llmport: one SDK, every LLM vendor.")
    parser.add_argument("--version", action="version", version=VERSION)
    sub = add_lazy_subcommands(parser, dest="command", required=True)
    for name, help_line, builder in CORE_COMMANDS:
        sub.add_later(name, help_line, builder)
    add_plugin_commands(sub)
    return parser


def add_models_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """``llmport models [--json] [--provider NAME]`` and ``llmport models default``."""
    from .manage import add_models_default

    p = sub.add_parser("models", epilog="example: llmport models --provider openai")
    add_models_default(p)
    p.add_argument("--json", action="store_true", help="one JSON array: a provider's model a row")
    p.add_argument(
        "--provider", action="append", metavar="NAME", help="only this provider (repeatable)"
    )
    p.set_defaults(func=cmd_models)


def add_plugins_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """``llmport plugins [--json]``."""
    p = sub.add_parser("plugins", epilog="example: llmport plugins")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_plugins)


def add_demo_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """``llmport demo [--json]``."""
    p = sub.add_parser("demo", epilog="example: llmport demo")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_demo)


def add_session_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """``llmport session show`` and ``llmport session list``."""
    from .session import add_list_parser

    p = sub.add_parser("session", epilog="example: llmport session list")
    ssub = p.add_subparsers(dest="session_command", required=True)
    show = ssub.add_parser(
        "show",
        help="print a session's DAG as a tree",
        epilog="example: llmport session show runs.sqlite",
    )
    show.add_argument("target", help="a session database path, or a session id")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cmd_session)
    add_list_parser(ssub)


def add_plugin_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """The subcommands of every plugin's ``llmport_register_commands`` hook.

    A plugin whose hook fails (it raised, or took a name already in use) is
    reported as a warning and left out; the other commands still work. A
    :data:`PLUGIN_COMMANDS` name no plugin added says what to install.
    """
    import warnings

    from ..plugins.host import PluginHost

    for impl in PluginHost().hook.llmport_register_commands.get_hookimpls():
        try:
            impl.function(subparsers=sub)
        except Exception as exc:  # a broken plugin never breaks the other commands
            warnings.warn(
                f"llmport plugin {impl.plugin_name!r} added no commands: "
                f"{type(exc).__name__}: {exc}",
                RuntimeWarning,
                stacklevel=2,
            )
    for name, (needs, distribution, help_line) in PLUGIN_COMMANDS.items():
        if name not in sub.choices:
            p = sub.add_parser(
                name,
                help=f"{help_line} (needs {distribution})",
                epilog=f"example: pip install {distribution}",
            )
            p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            p.set_defaults(
                func=_needs_plugin(f"llmport {name} needs {needs}: pip install {distribution}")
            )


def _needs_plugin(message: str) -> Any:
    """A command that prints ``error: <message>`` and exits 2 (its plugin is not installed)."""

    def command(args: argparse.Namespace) -> int:
        sys.stderr.write(f"error: {message}\n")
        return 2

    return command


def _one_line(exc: BaseException) -> str:
    """``<Type>: <message>`` on one line, redacted.

    Continuation lines (ExecFailed's attempts, a schema error's ``- ...``
    list) are joined with "; " (just a space after a line ending in ":").
    """
    from ..errors import redact

    message = ""
    for line in (part.strip() for part in str(exc).splitlines()):
        if message and line.startswith("- "):
            line = line[2:].strip()
        if not line:
            continue
        if not message:
            message = line
        elif message.endswith(":"):
            message += " " + line
        else:
            message += "; " + line
    name = type(exc).__name__
    return redact(f"{name}: {message}" if message else name)


def _report(text: str) -> None:
    """Print ``error: <text>`` as one stderr line; ``text`` is never read as markup."""
    from rich.text import Text

    line = Text("error:", style="bold red")
    line.append(" " + text)
    _console(stderr=True).print(line, soft_wrap=True)


@contextlib.contextmanager
def _debug_logs(debug: bool) -> Iterator[None]:
    """With ``--debug``, the ``llmport`` logger's records go to stderr at DEBUG.

    That is where an MCP server's own stderr shows (``llmport.mcp``); without
    ``--debug`` it is kept, never printed. Records are redacted like every log.
    """
    if not debug:
        yield
        return
    import logging

    logger = logging.getLogger("llmport")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def with_default_command(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> list[str]:
    """``argv`` with ``run`` put before the first word that names no command.

    So ``llmport "hi"`` and ``llmport -m sonnet "hi"`` are ``llmport run ...``;
    ``llmport``, ``llmport --help``, ``llmport --version`` and every named
    command are left alone.
    """
    words = list(sys.argv[1:] if argv is None else argv)
    commands = next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    first = next((i for i, word in enumerate(words) if word != "--debug"), None)
    if first is None or words[first] in commands or words[first] in ("-h", "--help", "--version"):
        return words
    return [*words[:first], "run", *words[first:]]


def asks_version(argv: Sequence[str]) -> bool:
    """``llmport --version`` (``--debug`` aside): answered without building the parser."""
    return [word for word in argv if word != "--debug"] == ["--version"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``llmport`` command; returns the exit status.

    Bad arguments raise ``SystemExit(2)`` (argparse). User errors print one
    line and return 1 (130 for Ctrl-C) unless ``--debug`` was given.
    """
    if asks_version(sys.argv[1:] if argv is None else argv):
        sys.stdout.write(VERSION + "\n")  # no parser, no plugin: a version check is instant
        return 0
    from json import JSONDecodeError

    from ..errors import LlmportError

    parser = build_parser()
    args = parser.parse_args(with_default_command(parser, argv))
    debug = bool(getattr(args, "debug", False))
    try:
        with _debug_logs(debug):
            result = int(args.func(args))
    except UsageError as exc:
        command_parser: argparse.ArgumentParser = getattr(args, "parser", parser)
        command_parser.error(str(exc))  # prints the usage and exits 2
    except KeyboardInterrupt:
        if debug:
            raise
        _report("interrupted")
        return 130
    except (LlmportError, OSError, JSONDecodeError) as exc:
        if debug:
            raise
        _report(_one_line(exc))
        return 1
    return result


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
