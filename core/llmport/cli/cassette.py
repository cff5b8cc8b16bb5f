"""``llmport cassette show FILE``: a recorded cassette printed as a conversation.

For each interaction: the request (method, path, model), the last message
the app sent, then what came back: the answer's text (a stream's pieces
joined), the tool calls it asked for, and the HTTP status when it is not
200. The cassette's bodies are read generically (strings under ``text`` /
``content`` / ``delta`` keys, objects with a ``name`` and ``arguments`` /
``input`` / ``args``), so any vendor's recording reads the same way without
loading its plugin. Media side files are named, not printed.

A file that is not a cassette (the same checks as replaying it) raises
:class:`~llmport.errors.CassetteError`; the command line prints it as one
line, ``error: <Type>: <message>``, never a traceback.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..errors import CassetteError

_TEXT_KEYS = ("text", "content", "delta", "output_text")
_ARGUMENT_KEYS = ("arguments", "input", "args")
_MESSAGE_LISTS = ("messages", "contents", "input")


def add_cassette_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``cassette show FILE`` to the ``llmport`` subcommands."""
    parser = sub.add_parser(
        "cassette",
        help="inspect recorded cassettes (llmport.testing)",
        epilog="example: llmport cassette show tests/cassettes/test_app.yaml",
    )
    commands = parser.add_subparsers(dest="cassette_command", required=True)
    show = commands.add_parser(
        "show",
        help="print a cassette as a conversation",
        epilog="example: llmport cassette show tests/cassettes/test_app.yaml",
    )
    show.add_argument("file", help="a cassette YAML file")
    show.set_defaults(func=cmd_show)


def cmd_show(args: argparse.Namespace) -> int:
    """``llmport cassette show``: the handler :func:`add_cassette_parser` installs."""
    for line in conversation(load(Path(args.file))):
        print(line)
    return 0


def load(path: Path) -> list[dict[str, Any]]:
    """The interactions of the cassette at ``path``, checked as replay checks them.

    Anything that is not a stored cassette (not UTF-8, not YAML, not a
    cassette's shape, an alias bomb) is a one-line :class:`CassetteError`.
    """
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        raise CassetteError(
            'reading a cassette needs PyYAML: pip install "llmport[testing]"'
        ) from None
    from ..testing.cassette_format import check_stored

    try:
        data = yaml.safe_load(path.read_bytes().decode("utf-8"))
        check_stored(data)
    except UnicodeDecodeError as exc:
        raise CassetteError(f"cannot read cassette {path}: not UTF-8 (byte {exc.start})") from None
    except RecursionError:
        raise CassetteError(f"cannot read cassette {path}: nested too deeply") from None
    except (OSError, yaml.YAMLError, ValueError) as exc:
        reason = " ".join(str(exc).split())[:300]  # one line: YAML errors span several
        raise CassetteError(f"cannot read cassette {path}: {reason}") from None
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise CassetteError(f"{path} is not a cassette (no interactions)")
    return list(data["interactions"])


def conversation(interactions: list[dict[str, Any]]) -> list[str]:
    """The lines :func:`cmd_show` prints."""
    lines: list[str] = []
    for number, interaction in enumerate(interactions, 1):
        request, response = interaction.get("request", {}), interaction.get("response", {})
        sent = (request.get("body") or {}).get("json")
        model = sent.get("model") if isinstance(sent, dict) else None
        path = urlsplit(str(request.get("uri", ""))).path
        lines.append(
            f"#{number} {request.get('method', '?')} {path}" + (f"  ({model})" if model else "")
        )
        last = _last_message(sent)
        if last:
            lines.append(f"  you: {_short(last)}")
        status = (response.get("status") or {}).get("code")
        if status not in (None, 200):
            lines.append(f"  status: {status}")
        body = response.get("body") or {}
        received = body.get("events", body.get("aws_events", body.get("json")))
        text = "".join(_texts(received))
        if text:
            lines.append(f"  model: {_short(text)}")
        for name, arguments in _tool_calls(received):
            lines.append(f"  tool call: {name}({_short(arguments)})")
    return lines


def _last_message(sent: Any) -> str:
    if not isinstance(sent, dict):
        return ""
    for key in _MESSAGE_LISTS:
        messages = sent.get(key)
        if isinstance(messages, list) and messages:
            return "".join(_texts(messages[-1]))
        if isinstance(messages, str):
            return messages
    return ""


def _texts(value: Any, key: str = "") -> list[str]:
    """Every string under a text-like key, in document order."""
    if isinstance(value, str):
        return [value] if key in _TEXT_KEYS else []
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in _texts(v, str(k))]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v, key)]
    return []


def _tool_calls(value: Any) -> list[tuple[str, str]]:
    """(name, arguments) of every object that names a tool and carries its arguments."""
    found: list[tuple[str, str]] = []
    if isinstance(value, dict):
        argument = next((value[k] for k in _ARGUMENT_KEYS if k in value), None)
        if isinstance(value.get("name"), str) and argument not in (None, ""):
            shown = argument if isinstance(argument, str) else json.dumps(argument)
            found.append((value["name"], shown))
        for item in value.values():
            found += _tool_calls(item)
    elif isinstance(value, list):
        for item in value:
            found += _tool_calls(item)
    return found


def _short(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
