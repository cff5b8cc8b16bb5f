"""``llmport cassette show`` on OpenAI recordings: the plugin's own readers.

The plugin reads its Chat Completions, Responses and Embeddings exchanges into
neutral messages (``llmport_cassette_readers``): media by type and size, tool
calls and the results sent back (named by their call), a stream assembled by
the plugin's stream reader, embeddings as counts and dimensions, and the usage.
A garbled exchange is left to the generic reading, never a traceback.
"""

from __future__ import annotations

import pytest
from llmport.plugin_api import ShownExchange
from llmport_openai.recorded import read_chat, read_embeddings, read_responses
from support.cassette_support import CASSETTES, hostile_exchanges, shown


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


def test_a_responses_tool_loop_shows_the_calls_and_the_results_sent_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert show("responses_tool_roundtrip.yaml", capsys) == [
        "#1 POST /v1/responses  (gpt-5-mini)",
        "  you: What's the weather in Paris?",
        '  tool call: get_weather({"city": "Paris"})',
        "  usage: 50 in, 81 out",
        "#2 POST /v1/responses  (gpt-5-mini)",
        "  tool result: get_weather: Sunny, 22C in Paris",
        "  model: It is sunny in Paris, 22C.",
        "  usage: 149 in, 17 out",
    ]


def test_a_responses_stream_is_assembled_by_the_plugins_stream_reader(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert show("responses_reasoning_loop_stream.yaml", capsys) == [
        "#1 POST /v1/responses  (gpt-5)",
        "  system: You are a helpful assistant that uses planning. Use the update_plan tool.",
        """  you: Compose a 6-line poem whose odd lines spell "SAM" and even lines "DAW".""",
        '  tool call: update_plan({"plan": "1) Pick capitals per letter. 2) Write lines. '
        '3) Check acrostics."})',
        "  usage: 124 in, 1926 out",
        "#2 POST /v1/responses  (gpt-5)",
        "  tool result: update_plan: plan updated",
        "  model: Softly old fountains illumine alleys Dunes over harbor aglow",
        "  usage: 2087 in, 124 out",
    ]


def test_a_responses_file_input_shows_as_its_type_and_size(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert show("responses_text_file.yaml", capsys)[1:3] == [
        "  you: What does the note say?",
        "  you: [text/plain 11 B]",
    ]


def test_embeddings_show_counts_and_dimensions_not_the_vectors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert show("embed_documents.yaml", capsys) == [
        "#1 POST /v1/embeddings  (text-embedding-3-small)",
        "  you: 2 inputs to embed",
        "  model: 2 vectors of 1536 dimensions",
        "  usage: 2 in, 0 out",
    ]
    assert show("embed_dimensions.yaml", capsys)[1:3] == [
        "  you: 1 input to embed",
        "  model: 1 vector of 128 dimensions",
    ]


@pytest.mark.parametrize(
    "path",
    ["/v1/chat/completions", "/v1/responses", "/v1/responses/resp_1/cancel", "/v1/embeddings"],
)
def test_a_garbled_exchange_is_left_to_the_generic_reading(path: str) -> None:
    for exchange in hostile_exchanges("https://api.openai.com" + path):
        for reader in (read_chat, read_responses, read_embeddings):
            shown = reader(exchange)
            assert shown is None or isinstance(shown, ShownExchange), (reader, exchange)


def test_a_background_response_read_back_shows_its_answer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = "/v1/responses/resp_06a562f31ab7703300698b9df109c481979ebf760b2ff5fc75"
    assert show("responses_background_poll.yaml", capsys) == [
        "#1 POST /v1/responses  (gpt-4o)",
        "  you: What is 2 + 2?",
        f"#2 GET {path}  (gpt-4o-2024-08-06)",
        f"#3 GET {path}  (gpt-4o-2024-08-06)",
        "  model: 2 + 2 equals 4.",
        "  usage: 15 in, 9 out",
    ]
