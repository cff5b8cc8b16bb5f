"""``llmport cassette show`` on Bedrock recordings: the plugin's own readers.

Converse and ConverseStream exchanges read into neutral messages
(``llmport_cassette_readers``): media by type and size, tool uses and the
results sent back (named by their call), the AWS event stream assembled by
the plugin's stream reader, and the usage; InvokeModel embeddings as counts
and dimensions. A garbled exchange is left to the generic reading.
"""

from __future__ import annotations

import pytest
from llmport.plugin_api import ShownExchange
from llmport_bedrock.recorded import read_converse, read_embeddings
from support.cassette_support import CASSETTES, hostile_exchanges, shown

SONNET = "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0"


def test_a_streamed_tool_loop_shows_the_calls_and_the_results_sent_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert shown(CASSETTES / "bedrock" / "stream_tools.yaml", capsys) == [
        f"#1 POST {SONNET}/converse-stream  (us.anthropic.claude-sonnet-4-5-20250929-v1:0)",
        "  you: What's the weather in Paris and in London?",
        "  model: I'll check both cities.",
        '  tool call: get_weather({"city": "Paris"})',
        '  tool call: get_weather({"city": "London"})',
        "  usage: 610 in, 98 out",
        f"#2 POST {SONNET}/converse-stream  (us.anthropic.claude-sonnet-4-5-20250929-v1:0)",
        "  tool result: get_weather: Sunny, 22C",
        "  tool result: get_weather: Light rain, 14C",
        "  model: Paris is sunny at 22C; London has light rain at 14C.",
        "  usage: 720 in, 21 out",
    ]


def test_a_whole_answer_shows_the_system_media_and_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert shown(CASSETTES / "bedrock" / "image.yaml", capsys)[1:] == [
        "  system: You are a helpful chatbot.",
        "  you: What fruit is in the image?",
        "  you: [image/png 73 B]",
        "  model: The image is a small square of kiwi green: it shows the colour of a kiwi"
        " fruit's flesh, so the fruit is a kiwi.",
        "  usage: 1839 in, 31 out",
    ]
    assert shown(CASSETTES / "bedrock" / "document.yaml", capsys)[1:3] == [
        "  you: [application/pdf 595 B]",
        "  you: [text/csv 32 B]",
    ]


def test_a_tool_result_sent_with_a_question_shows_both(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert shown(CASSETTES / "bedrock" / "tool_result_blocks_stream.yaml", capsys)[1:] == [
        '  tool result: camera: Photo taken. {"fruits": 1, "bowl": "blue"}',
        "  you: Which fruit is in the bowl?",
        "  model: A kiwi, in a blue bowl.",
        "  usage: 1900 in, 9 out",
    ]


def test_embeddings_show_counts_and_dimensions_not_the_vectors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert shown(CASSETTES / "embeddings" / "bedrock_titan_v2_dimensions.yaml", capsys) == [
        "#1 POST /model/amazon.titan-embed-text-v2%3A0/invoke  (amazon.titan-embed-text-v2:0)",
        "  you: 1 input to embed",
        "  model: 1 vector of 256 dimensions",
        "  usage: 4 in, 0 out",
    ]
    assert shown(CASSETTES / "embeddings" / "media_bedrock_cohere_v4.yaml", capsys)[1:] == [
        "  you: 2 inputs to embed",
        "  model: 2 vectors of 4 dimensions",
    ]


@pytest.mark.parametrize(
    "path", [f"{SONNET}/converse", f"{SONNET}/converse-stream", "/model/cohere.embed-v4%3A0/invoke"]
)
def test_a_garbled_exchange_is_left_to_the_generic_reading(path: str) -> None:
    url = "https://bedrock-runtime.us-east-1.amazonaws.com" + path
    for exchange in hostile_exchanges(url):
        for reader in (read_converse, read_embeddings):
            shown = reader(exchange)
            assert shown is None or isinstance(shown, ShownExchange), (reader, exchange)
