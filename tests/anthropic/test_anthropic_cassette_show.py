"""``llmport cassette show`` on Anthropic Messages recordings: the plugin's own reader.

The plugin reads its exchanges into neutral messages (``llmport_cassette_readers``):
images and documents by type and size, tool uses and the results sent back
(named by their call), a stream assembled by the plugin's stream reader, usage.
A garbled exchange is left to the generic reading, never a traceback.
"""

from __future__ import annotations

import pytest
from llmport.plugin_api import ShownExchange
from llmport_anthropic.recorded import read_messages
from support.cassette_support import CASSETTES, hostile_exchanges, shown


def show(name: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    return shown(CASSETTES / "anthropic" / name, capsys)


def test_images_and_documents_show_as_their_type_and_size(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert show("image.yaml", capsys)[1:4] == [
        "  you: What fruit is in these two images?",
        "  you: [image/png 73 B]",
        "  you: [image/* https://upload.wikimedia.org/wikipedia/commons/b/b8/Kiwi_fruit.jpg]",
    ]
    assert show("pdf.yaml", capsys) == [
        "#1 POST /v1/messages  (claude-sonnet-4-5)",
        "  you: [application/pdf 595 B]",
        "  you: What is the invoice total?",
        "  model: The invoice total is 42 EUR.",
        "  usage: 1590 in, 12 out",
    ]


def test_a_streamed_tool_loop_shows_the_calls_and_the_results_sent_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert show("stream_tools.yaml", capsys) == [
        "#1 POST /v1/messages  (claude-sonnet-4-5)",
        "  you: What's the weather in Paris and in London?",
        "  model: I'll check both cities.",
        '  tool call: get_weather({"city": "Paris"})',
        '  tool call: get_weather({"city": "London"})',
        "  usage: 578 in, 102 out",
        "#2 POST /v1/messages  (claude-sonnet-4-5)",
        "  tool result: get_weather: Sunny, 22C",
        "  tool result: get_weather: Light rain, 14C",
        "  model: Paris is sunny at 22C; London has light rain at 14C.",
        "  usage: 702 in, 21 out",
    ]


def test_a_garbled_exchange_is_left_to_the_generic_reading() -> None:
    for exchange in hostile_exchanges("https://api.anthropic.com/v1/messages"):
        shown = read_messages(exchange)
        assert shown is None or isinstance(shown, ShownExchange), exchange
