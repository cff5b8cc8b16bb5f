"""``llmport chat``: one conversation across turns, in the terminal.

Each line typed is a turn (``!multi`` ... ``!end`` for several lines);
answers stream as they come, tool calls are shown as they run, every turn
is logged like ``llmport "prompt"`` (same flags: ``-c``, ``--cid``,
``--no-log``, ``-T``...). Ctrl-C during an answer cancels that answer (it is
neither logged nor kept in the conversation) and the chat goes on; ``!exit``
or Ctrl-D leaves.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from contextlib import closing
from typing import Any

from .logbook import Conversation
from .prompt import (
    add_prompt_options,
    call_params,
    conversation_for,
    log_turn,
    make_runtime,
    stream_answer,
)

__all__ = ["add_chat_parser", "cmd_chat", "read_turn"]

EXIT = "!exit"
MULTI, END = "!multi", "!end"
PROMPT, MORE = "> ", "... "


def add_chat_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "chat",
        epilog="example: llmport chat -m openai:gpt-4o-mini  (then type; !exit leaves)",
    )
    add_prompt_options(p)
    p.set_defaults(func=cmd_chat)


def read_turn(ask: Callable[[str], str] = input) -> str | None:
    """The next turn's text: one line, or the lines between ``!multi`` and ``!end``.

    ``None`` means leave (``!exit`` or end of input); an empty string, nothing to send.
    """
    try:
        line = ask(PROMPT)
    except EOFError:
        return None
    if line.strip() == EXIT:
        return None
    if line.strip() != MULTI:
        return line.strip()
    lines: list[str] = []
    while True:
        try:
            more = ask(MORE)
        except EOFError:
            break
        if more.strip() == END:
            break
        lines.append(more)
    return "\n".join(lines).strip()


def cmd_chat(args: argparse.Namespace) -> int:
    rt = make_runtime(args)
    conversation = conversation_for(args)
    print(f"Chatting with {rt.model}. Type {EXIT} to leave, {MULTI} ... {END} for several lines,")
    print("Ctrl-C to cancel an answer.")
    with rt, closing(conversation):
        while True:
            try:
                text = read_turn()
            except KeyboardInterrupt:  # at the prompt: a fresh line, still chatting
                print(f"\n(type {EXIT} to leave)")
                continue
            if text is None:
                return 0
            if text:
                _answer(rt, args, conversation, text)


def _answer(rt: Any, args: argparse.Namespace, conversation: Conversation, text: str) -> None:
    """One turn: stream the answer and log it; Ctrl-C drops the turn and keeps chatting."""
    try:
        result = stream_answer(rt, text, call_params(args, conversation))
    except KeyboardInterrupt:
        sys.stdout.write("[answer cancelled]\n")
        sys.stdout.flush()
        return
    if result is not None:
        log_turn(conversation, args, text, result)
