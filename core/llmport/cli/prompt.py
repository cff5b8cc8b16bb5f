"""``llmport "prompt"`` (also ``llmport run``): one prompt, logged, maybe continuing a conversation.

The flags shared with ``llmport chat`` (model, system prompt, options, the
conversation, logging and tools) are added by :func:`add_prompt_options`;
:func:`make_runtime` builds the runtime they ask for (saved keys for the
providers the environment has no key for, the user's aliases and default
model) and :func:`stream_answer` prints an answer as it streams.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..provider.wire import loads as strict_json
from .logbook import Conversation, logging_enabled, open_conversation
from .output import UsageError, emit_json, print_dim
from .tooling import ApproveEveryCall, show_tool_event, tool_params

if TYPE_CHECKING:
    from ..engine.result import RunResult
    from ..runtime import Runtime

__all__ = [
    "add_prompt_options",
    "add_run_parser",
    "call_params",
    "cmd_run",
    "conversation_for",
    "kind_of",
    "load_schema",
    "log_turn",
    "make_runtime",
    "parse_option",
    "print_result",
    "read_prompt",
    "seconds",
    "stream_answer",
]

NO_MODEL = (
    "no model given: pass -m provider:model (an alias or named configuration works too; "
    "see `llmport models`), set one with `llmport models default NAME`, or set "
    "LLMPORT_MODEL or default_model in llmport.toml"
)


def parse_option(raw: str) -> tuple[str, Any]:
    """``-o KEY=VALUE``: the value is JSON if it parses as JSON, else the plain string."""
    key, sep, value = raw.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{raw!r} must be KEY=VALUE, e.g. temperature=0")
    try:
        return key.strip(), strict_json(value)
    except json.JSONDecodeError:
        return key.strip(), value


def add_prompt_options(p: argparse.ArgumentParser) -> None:
    """The flags of ``run`` and ``chat``: model, system, options, conversation, log, tools."""
    p.add_argument(
        "-m", "--model", default="default", help="provider:model, alias or configuration"
    )
    p.add_argument("-s", "--system", help="system prompt")
    p.add_argument(
        "-o",
        "--option",
        action="append",
        type=parse_option,
        metavar="KEY=VALUE",
        help="model option, e.g. temperature=0",
    )
    p.add_argument(
        "-c",
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the latest logged conversation",
    )
    p.add_argument("--cid", metavar="ID", help="continue the conversation with this id")
    p.add_argument(
        "-n",
        "--no-log",
        dest="no_log",
        action="store_true",
        help="do not log this prompt (LLMPORT_LOGS=off does the same)",
    )
    p.add_argument(
        "-T",
        "--tool",
        action="append",
        metavar="NAME",
        help="a toolset registered by a plugin (repeatable)",
    )
    p.add_argument(
        "--toolset", action="append", metavar="NAME", help="a toolset, e.g. mcp:docs (repeatable)"
    )
    p.add_argument(
        "--functions",
        action="append",
        metavar="FILE",
        help="a Python file whose public functions are tools (repeatable)",
    )
    p.add_argument("--approve", action="store_true", help="confirm each tool call")
    p.add_argument(
        "--retries",
        type=int,
        default=None,
        help="total attempts per request (default: configuration, else 2)",
    )
    p.add_argument(
        "--timeout",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="give up on a request the vendor does not answer within SECONDS "
        "(default: the SDK's own, minutes)",
    )


def seconds(raw: str) -> float:
    """``--timeout``: a number of seconds > 0."""
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a number of seconds > 0")
    return value


def add_run_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """``llmport run`` (the default command): one prompt, its attachments and output form."""
    p = sub.add_parser(
        "run",
        epilog='example: llmport "Ten names for a pet pelican" -m openai:gpt-4o-mini',
    )
    p.add_argument(
        "prompt",
        nargs="?",
        help="the prompt; '-' reads it from stdin (as does no prompt with piped input)",
    )
    add_prompt_options(p)
    p.add_argument(
        "-a", "--attach", action="append", metavar="FILE", help="attach an image/audio/file"
    )
    p.add_argument("--schema", help="JSON schema (file or inline JSON) for structured output")
    p.add_argument(
        "--no-stream", dest="stream", action="store_false", help="wait for the whole reply"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_run)


def read_prompt(args: argparse.Namespace) -> str:
    """The prompt argument; ``-`` (or no prompt with piped input) reads stdin."""
    from ..errors import InputError

    if args.prompt is not None and args.prompt != "-":
        return str(args.prompt)
    stdin = sys.stdin
    if stdin is None or (args.prompt is None and stdin.isatty()):
        raise UsageError(
            "the prompt is missing: give it as an argument, pipe it in, or pass '-' to type it"
        )
    try:
        text = stdin.read()
    except UnicodeDecodeError as exc:
        raise InputError(f"the prompt on stdin is not text: {exc}") from exc
    if not text.strip():
        raise UsageError("the prompt read from stdin is empty")
    return text


def load_schema(value: str) -> Any:
    """``--schema``: inline JSON (starts with ``{`` or ``[``), else a JSON file."""
    from ..errors import InputError

    if value.lstrip().startswith(("{", "[")):
        text, where = value, "inline JSON"
    else:
        path = Path(value)
        if not path.is_file():
            problem = "not a file" if path.exists() else "file not found"
            raise FileNotFoundError(
                f"--schema {value}: {problem} (give a JSON file or inline JSON)"
            )
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"--schema {value}: not a UTF-8 text file: {exc}") from exc
        where = value
    try:
        return strict_json(text)
    except json.JSONDecodeError as exc:
        raise json.JSONDecodeError(f"--schema {where}: {exc.msg}", exc.doc, exc.pos) from exc


def make_runtime(args: argparse.Namespace) -> Runtime:
    """The runtime the flags ask for, checked: an unknown model fails here, before any prompt."""
    from ..errors import NoModelError
    from ..provider.config import load_config
    from ..runtime import Runtime
    from .keys import provider_keys
    from .settings import with_user_settings

    hooks = [ApproveEveryCall()] if args.approve else []
    rt = Runtime(
        model=args.model,
        max_retries=args.retries,
        config=with_user_settings(load_config()),
        providers=provider_keys(),
        hooks=hooks,
        **({} if args.timeout is None else {"timeout": args.timeout}),
    )
    try:
        rt.resolve(rt.model)
    except NoModelError as exc:
        if args.model != "default":
            raise
        raise NoModelError(NO_MODEL) from exc
    return rt


def conversation_for(args: argparse.Namespace) -> Conversation:
    """The conversation ``-c`` / ``--cid`` ask for (a new one without them)."""
    if args.cid is not None and not args.cid.strip():
        raise UsageError("--cid needs a conversation id (see `llmport logs`)")
    return open_conversation(log=logging_enabled(args.no_log), cid=args.cid, latest=args.continue_)


def call_params(args: argparse.Namespace, conversation: Conversation) -> dict[str, Any]:
    """The call's parameters: options, system prompt, history and tools."""
    params: dict[str, Any] = dict(args.option or [])
    if args.system:
        params["system"] = args.system
    if conversation.history:
        params["history"] = conversation.history
    params.update(tool_params(args))
    return params


def stream_answer(rt: Runtime, content: Any, params: dict[str, Any]) -> RunResult[Any] | None:
    """Stream the answer to stdout (tool calls to stderr); the final result."""
    from ..messages.types import FinalEvent, TextDelta

    final = None
    started = False
    try:
        for event in rt.stream(content, **params):
            if isinstance(event, TextDelta):
                started = True
                sys.stdout.write(event.text)
                sys.stdout.flush()
            elif isinstance(event, FinalEvent):
                final = event.result
            else:
                show_tool_event(event)
    finally:
        if started:  # end the answer's line, also before an error is reported
            sys.stdout.write("\n")
            sys.stdout.flush()
    return final


def cmd_run(args: argparse.Namespace) -> int:
    """Run one prompt; log it (unless ``--no-log``) in the conversation it belongs to."""
    prompt = read_prompt(args)
    content: list[Any] = [{"type": "text", "text": prompt}]
    for attachment in args.attach or []:
        content.append({"type": kind_of(attachment), "path": attachment})
    schema = load_schema(args.schema) if args.schema else None
    rt = make_runtime(args)
    conversation = conversation_for(args)
    params = call_params(args, conversation)
    if schema is not None:
        params["response_format"] = schema
    with rt, closing(conversation):
        if args.json or not args.stream:
            result: RunResult[Any] | None = rt.run(content, **params)
        else:
            result = stream_answer(rt, content, params)
        if result is None:
            return 0
        print_result(args, result, conversation.id)  # shown first: a log failure loses nothing
        log_turn(conversation, args, prompt, result)
    return 0


def print_result(args: argparse.Namespace, result: RunResult[Any], cid: str | None) -> None:
    """The answer as ``--json`` or ``--no-stream`` asks, else (streamed) the usage line."""
    if args.json:
        emit_json(
            {
                "model": result.model,
                "output": result.output,
                "usage": result.usage.to_dict(),
                "stop_reason": result.stop_reason,
                "attempts": result.attempts,
                "latency_s": round(result.latency, 4),
                "cid": cid,
            }
        )
    elif not args.stream:
        sys.stdout.write(str(result.output) + "\n")
    else:
        print_dim(
            f"{result.model} · {result.usage.input_tokens} in / "
            f"{result.usage.output_tokens} out · {result.latency:.2f}s"
        )


def log_turn(
    conversation: Conversation, args: argparse.Namespace, prompt: str, result: RunResult[Any]
) -> None:
    """Log the turn; a log that cannot be written is a one-line warning, not a lost answer."""
    from ..errors import LlmportError, redact

    try:
        conversation.record(prompt, args.model, dict(args.option or []), result, system=args.system)
    except LlmportError as exc:
        problem = redact(f"{type(exc).__name__}: {exc}").replace("\n", " ")
        sys.stderr.write(f"warning: this turn was not logged: {problem}\n")


def kind_of(path: str) -> str:
    """The content type of an attachment: image, audio or file."""
    from ..messages.content import guess_from_name

    media = guess_from_name(path) or ""
    if media.startswith("image/"):
        return "image"
    if media.startswith("audio/"):
        return "audio"
    return "file"
