"""System blocks on the google-genai path too (Vertex AI, safety settings, counting, batch).

The wire path is covered at the wire by the contract suite
(``tests/contract/test_contract_system_blocks.py``); requests the SDK writes
get their ``system_instruction`` as a Content of one part per block.
"""

from __future__ import annotations

from llmport.messages.types import Message, Request, TextBlock
from llmport_gemini.convert_in import sdk_arguments


def _request(*system: str, messages: list[Message] | None = None) -> Request:
    blocks = tuple(TextBlock(t) for t in system)
    return Request(
        model="gemini-2.5-flash",
        messages=messages or [Message("user", (TextBlock("hi"),))],
        system="\n\n".join(system) or None,
        system_blocks=blocks,
    )


def test_several_system_blocks_are_one_part_each() -> None:
    config = sdk_arguments(_request("You are terse.", "Answer in French."), None, None, {})[
        "config"
    ]
    assert [p.text for p in config.system_instruction.parts] == [
        "You are terse.",
        "Answer in French.",
    ]


def test_system_messages_follow_the_blocks_as_parts() -> None:
    history = [Message("system", (TextBlock("Be kind."),)), Message("user", (TextBlock("hi"),))]
    request = _request("You are terse.", "Answer in French.", messages=history)
    config = sdk_arguments(request, None, None, {})["config"]
    assert [p.text for p in config.system_instruction.parts] == [
        "You are terse.",
        "Answer in French.",
        "Be kind.",
    ]


def test_one_system_string_stays_a_string() -> None:
    config = sdk_arguments(_request("You are terse."), None, None, {})["config"]
    assert config.system_instruction == "You are terse."
