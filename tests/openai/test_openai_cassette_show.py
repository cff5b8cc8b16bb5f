"""``llmport cassette show`` on OpenAI Chat Completions recordings: the plugin's own reader.

The plugin reads its exchanges into neutral messages (``llmport_cassette_readers``):
media by type and size, tool calls and the results sent back (named by their
call), a stream assembled by the plugin's stream reader, and the usage.
"""

from __future__ import annotations

import pytest
from support.cassette_support import CASSETTES, shown


def show(name: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    return shown(CASSETTES / "openai" / name, capsys)


def test_media_shows_as_its_type_and_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert show("audio.yaml", capsys) == [
        "#1 POST /v1/chat/completions  (gpt-4o-audio-preview)",
        "  you: What do you hear?",
        "  you: [audio/wav 684 B]",
        "  model: Only silence.",
        "  usage: 40 in, 4 out",
    ]
    assert show("image.yaml", capsys)[2:4] == [
        "  you: [image/png 73 B]",
        "  you: [image/* https://example.com/kiwi.jpg]",
    ]


def test_a_tool_loop_shows_the_calls_and_the_results_sent_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert show("tool_roundtrip.yaml", capsys) == [
        "#1 POST /v1/chat/completions  (gpt-4o-mini)",
        "  you: What's the weather in Paris and London?",
        '  tool call: get_weather({"city": "Paris"})',
        '  tool call: get_weather({"city": "London"})',
        "  usage: 61 in, 46 out",
        "#2 POST /v1/chat/completions  (gpt-4o-mini)",
        "  tool result: get_weather: Sunny, 22C in Paris",
        "  tool result: get_weather: Light rain, 14C in London",
        "  model: Paris is sunny at 22C; London has light rain at 14C.",
        "  usage: 131 in, 24 out",
    ]


def test_a_stream_is_assembled_by_the_plugins_stream_reader(
    capsys: pytest.CaptureFixture[str],
) -> None:
    shown = show("stream_tools.yaml", capsys)
    assert shown[2:5] == [
        '  tool call: get_weather({"city": "Paris"})',
        '  tool call: get_weather({"city": "London"})',
        "  usage: 61 in, 46 out",
    ]
    assert shown[-2:] == ["  model: Paris sunny; London rainy.", "  usage: 14 in, 6 out"]
