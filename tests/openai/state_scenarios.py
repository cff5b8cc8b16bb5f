"""Cassette scenarios for server-side state and background runs.

Each reply is a response of the recorded OpenAI calls in the third batch of
wire samples (``openai-responses/previous-response-id-tool-loop.json``,
``conversation.json``, ``background-poll.json``, ``background-stream.json``),
copied unchanged; streamed variants are derived from the same final objects by
:func:`openai_depth_scenarios.responses_sse`. :mod:`make_state_cassettes`
records what the real plugin and SDK send for them.
"""

from __future__ import annotations

from typing import Any

from llmport import Tool

MODEL = "openai-responses:gpt-4.1"
#: What the recorded tool said to the first call (city="New York").
RETRY_TEXT = (
    'Location not recognized. The tool only supports the airport code "NYC". '
    'Call again with city="NYC".\n\nFix the errors and try again.'
)
#: The recorded conversation's instructions and its two user turns.
INSTRUCTIONS = (
    "Follow the user instructions exactly. When asked for a code, reply only with that code."
)
CONV_TURNS = (
    "Remember this exact code for later in this conversation: CONV-PAI-5222. Reply exactly: stored",
    "What exact code did I ask you to remember? Reply with only the code.",
)
#: The recorded background runs' model and question.
BACKGROUND_MODEL = "openai-responses:gpt-4o"
BACKGROUND_QUESTION = "What is 2 + 2?"
CONV_ID = "conv_010000000000000000000000000000000000000000000000"


def get_weather(city: str) -> str:
    """The recorded tool: only the airport code is recognized."""
    return "Sunny, 72F" if city == "NYC" else RETRY_TEXT


def weather_tool() -> Tool:
    return Tool.from_schema(
        "get_weather",
        "",
        {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
        get_weather,
    )


def first_turn() -> dict[str, Any]:
    return {"content": "Say hi in one word, no punctuation.", "tools": [weather_tool()]}


def chained_turn(previous: str) -> dict[str, Any]:
    return {
        "content": "What's the weather in New York?",
        "tools": [weather_tool()],
        "previous_response_id": previous,
    }


def conversation_turn(index: int) -> dict[str, Any]:
    return {"content": CONV_TURNS[index], "system": INSTRUCTIONS, "conversation": CONV_ID}
