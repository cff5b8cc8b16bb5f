"""``llmport cassette show`` on Gemini recordings: the plugin's own reader.

The plugin reads its exchanges into neutral messages (``llmport_cassette_readers``):
inline media by type and size, function calls and the responses sent back, a
stream assembled by the plugin's stream reader, usage.
A garbled exchange is left to the generic reading, never a traceback.
"""

from __future__ import annotations

import pytest
from llmport.plugin_api import ShownExchange
from llmport_gemini.recorded import read_embeddings, read_generate
from support.cassette_support import CASSETTES, hostile_exchanges, shown


def show(name: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    return shown(CASSETTES / "gemini" / name, capsys)


def test_inline_media_shows_as_its_type_and_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert show("image.yaml", capsys) == [
        "#1 POST /v1beta/models/gemini-2.5-flash:generateContent  (gemini-2.5-flash)",
        "  you: What fruit is in the image?",
        "  you: [image/png 73 B]",
        "  model: The fruit in the image is a kiwi.",
        "  usage: 265 in, 9 out",
    ]
    assert show("pdf.yaml", capsys)[1] == "  you: [application/pdf 594 B]"


def test_a_streamed_tool_loop_shows_the_calls_and_the_results_sent_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = "gemini-3-pro-preview"
    assert show("stream_tools.yaml", capsys) == [
        f"#1 POST /v1beta/models/{model}:streamGenerateContent  ({model})",
        "  you: What's the weather in Paris and in London?",
        '  tool call: get_weather({"city": "Paris"})',
        '  tool call: get_weather({"city": "London"})',
        "  usage: 74 in, 242 out",
        f"#2 POST /v1beta/models/{model}:streamGenerateContent  ({model})",
        "  tool result: get_weather: Sunny, 22C",
        "  tool result: get_weather: Light rain, 14C",
        "  model: Paris is sunny at 22C; London has light rain at 14C.",
        "  usage: 131 in, 19 out",
    ]


@pytest.mark.parametrize(
    "method", [":generateContent", ":streamGenerateContent", ":batchEmbedContents", ":predict"]
)
def test_a_garbled_exchange_is_left_to_the_generic_reading(method: str) -> None:
    url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash" + method
    for exchange in hostile_exchanges(url):
        for reader in (read_generate, read_embeddings):
            shown = reader(exchange)
            assert shown is None or isinstance(shown, ShownExchange), (reader, exchange)


def test_embeddings_show_counts_and_dimensions_not_the_vectors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    embeddings = CASSETTES / "embeddings"
    assert shown(embeddings / "gemini_task_prefix.yaml", capsys) == [
        "#1 POST /v1beta/models/gemini-embedding-2:batchEmbedContents  (gemini-embedding-2)",
        "  you: 1 input to embed",
        "  model: 1 vector of 3072 dimensions",
        "  usage: 11 in, 0 out",
    ]
    assert shown(embeddings / "media_vertex_multimodal.yaml", capsys)[1:] == [
        "  you: 1 input to embed",
        "  model: 1 vector of 128 dimensions",
    ]


def test_an_image_models_predict_is_not_read_as_embeddings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = shown(CASSETTES / "images" / "vertex_imagen.yaml", capsys)
    assert not any("embed" in line or "vector" in line for line in lines)
