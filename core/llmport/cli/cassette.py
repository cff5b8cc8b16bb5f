"""``llmport cassette show FILE``: a recorded cassette printed as a conversation.

For each interaction: the request (method, path, model), what the app sent
this turn, then what came back: the answer's text (a stream's pieces
joined), the tool calls it asked for, media as ``[image/png 12 KB]``, the
usage, and the HTTP status when it is not 200.

A vendor plugin reads its own exchanges into neutral messages (the
``llmport_cassette_readers`` hook, :mod:`llmport.provider.recorded`); an
exchange no installed plugin reads is read generically (strings under
``text`` / ``content`` / ``delta`` keys, objects with a ``name`` and
``arguments`` / ``input`` / ``args``), so any recording prints something.

A file that is not a cassette (the same checks as replaying it) raises
:class:`~llmport.errors.CassetteError`; the command line prints it as one
line, ``error: <Type>: <message>``, never a traceback.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import CassetteError
from ..messages.types import MediaBlock, Message, TextBlock
from ..provider.recorded import CassetteReader, RecordedExchange, ShownExchange

_TEXT_KEYS = ("text", "content", "delta", "output_text")
_ARGUMENT_KEYS = ("arguments", "input", "args")
_MESSAGE_LISTS = ("messages", "contents", "input")


def add_cassette_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``cassette show FILE`` to the ``llmport`` subcommands."""
    parser = sub.add_parser(
        "cassette",
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
    path = Path(args.file)
    for line in conversation(with_media(load(path), path), plugin_readers()):
        print(line)
    return 0


def plugin_readers() -> list[CassetteReader]:
    """The readers the installed plugins register (``llmport_cassette_readers``)."""
    from ..plugins.host import PluginHost

    readers: list[CassetteReader] = []
    PluginHost().hook.llmport_cassette_readers(register=readers.append)
    return readers


def with_media(interactions: list[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    """The interactions with their media side files read back (a reader sees real bytes).

    A side file that is missing or changed leaves the marker in place: the
    exchange still prints, its media as the marker.
    """
    from ..testing.cassette_format import load_media

    try:
        return list(load_media(interactions, path))
    except (OSError, ValueError):
        return interactions


def load(path: Path) -> list[dict[str, Any]]:
    """The interactions of the cassette at ``path``, checked as replay checks them.

    A cassette written by vcrpy itself (bodies as strings) is read too. Anything
    that is not a cassette (not UTF-8, not YAML, not a cassette's shape, an
    alias bomb) is a one-line :class:`CassetteError`.
    """
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        raise CassetteError(
            'reading a cassette needs PyYAML: pip install "llmport[testing]"'
        ) from None
    from ..testing.cassette_format import check_stored, is_plain_vcrpy, readable

    try:
        data = yaml.safe_load(path.read_bytes().decode("utf-8"))
        if is_plain_vcrpy(data):  # recorded with vcrpy directly: read it as llmport's form
            data = {"interactions": [readable(i, path, False) for i in data["interactions"]]}
        check_stored(data)
    except UnicodeDecodeError as exc:
        raise CassetteError(f"cannot read cassette {path}: not UTF-8 (byte {exc.start})") from None
    except RecursionError:
        raise CassetteError(f"cannot read cassette {path}: nested too deeply") from None
    except (OSError, yaml.YAMLError, ValueError, KeyError, TypeError, AttributeError) as exc:
        reason = " ".join(str(exc).split())[:300]  # one line: YAML errors span several
        raise CassetteError(f"cannot read cassette {path}: {reason}") from None
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise CassetteError(f"{path} is not a cassette (no interactions)")
    return list(data["interactions"])


def conversation(
    interactions: list[dict[str, Any]], readers: Sequence[CassetteReader] = ()
) -> list[str]:
    """The lines :func:`cmd_show` prints: each exchange by the first reader that knows it."""
    lines: list[str] = []
    for number, interaction in enumerate(interactions, 1):
        exchange = _exchange(interaction)
        shown = _read(exchange, readers)
        sent = exchange.sent
        model = (shown.model if shown else "") or (
            sent.get("model") if isinstance(sent, dict) else None
        )
        lines.append(
            f"#{number} {exchange.method} {exchange.path}" + (f"  ({model})" if model else "")
        )
        lines += _shown_or_generic(shown, exchange)
    return lines


def _shown_or_generic(shown: ShownExchange | None, exchange: RecordedExchange) -> list[str]:
    """The reader's neutral view, or the generic one when there is none or it cannot print."""
    if shown is not None:
        try:
            return shown_lines(shown, exchange.status)
        except Exception:  # a reader's odd values (a vendor's variant it did not expect)
            pass
    return _generic_lines(exchange)


def _exchange(interaction: dict[str, Any]) -> RecordedExchange:
    request, response = interaction.get("request", {}), interaction.get("response", {})
    return RecordedExchange(
        method=str(request.get("method", "?")),
        url=str(request.get("uri", "")),
        sent=(request.get("body") or {}).get("json"),
        received=response.get("body"),
        status=int((response.get("status") or {}).get("code") or 0),
    )


def _read(exchange: RecordedExchange, readers: Sequence[CassetteReader]) -> ShownExchange | None:
    for reader in readers:
        try:
            shown = reader(exchange)
        except Exception:  # a reader that cannot read this exchange: the next one may
            continue
        if shown is not None:
            return shown
    return None


def shown_lines(shown: ShownExchange, status: int) -> list[str]:
    """One exchange in neutral types: this turn's messages, the status, the answer."""
    lines: list[str] = []
    names = {call.id: call.name for message in shown.sent for call in message.tool_calls}
    for message in _this_turn(shown.sent):
        lines += _message_lines(message, names)
    if status not in (0, 200):
        lines.append(f"  status: {status}")
    answer = shown.received
    if answer is not None:
        lines += _message_lines(answer.as_message())
        usage = answer.usage
        if usage.input_tokens or usage.output_tokens:
            lines.append(f"  usage: {usage.input_tokens} in, {usage.output_tokens} out")
    return lines


def _this_turn(messages: list[Message]) -> list[Message]:
    """The messages after the last assistant turn: what this request added."""
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    return messages[last + 1 :]


_LABELS = {"user": "you", "assistant": "model", "system": "system", "tool": "tool"}


def _message_lines(message: Message, names: dict[str, str] | None = None) -> list[str]:
    """A message's text, media, tool calls and tool results (named by their call's tool)."""
    label = _LABELS.get(message.role, message.role)
    lines: list[str] = []
    for block in message.blocks:
        if isinstance(block, TextBlock) and block.text:
            lines.append(f"  {label}: {_short(block.text)}")
        elif isinstance(block, MediaBlock):
            lines.append(f"  {label}: {_media(block)}")
    for call in message.tool_calls:
        lines.append(f"  tool call: {call.name}({_short(json.dumps(call.arguments))})")
    for result in message.tool_results:
        name = result.name or (names or {}).get(result.call_id) or result.call_id
        lines.append(f"  tool result: {name}: {_short(result.content)}")
    return lines


def _media(block: MediaBlock) -> str:
    """``[image/png 12 KB]`` (or the URL a remote medium is sent by)."""
    if block.url is not None:
        return f"[{block.media_type} {_short(block.url, 80)}]"
    size = block.size or 0
    shown = f"{size / 1024:.0f} KB" if size >= 1024 else f"{size} B"
    return f"[{block.media_type} {shown}]"


def _generic_lines(exchange: RecordedExchange) -> list[str]:
    """An exchange no plugin reads: text and tool calls found by their keys."""
    lines: list[str] = []
    last = _last_message(exchange.sent)
    if last:
        lines.append(f"  you: {_short(last)}")
    if exchange.status not in (0, 200):
        lines.append(f"  status: {exchange.status}")
    body = exchange.received or {}
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
