"""How an embedding exchange is shown (``ShownExchange.embedding`` / ``read_embedding``).

Counts and dimensions, never the vectors; the usage the plugin's reader found;
an answer that reader refuses gives ``None`` (the generic reading).
"""

from __future__ import annotations

from typing import Any

from llmport.errors import MalformedResponseError
from llmport.plugin_api import EmbedResponse, RecordedExchange, ShownExchange, Usage

URL = "https://embed.example/v1/embed"


def rows(answer: dict[str, Any]) -> EmbedResponse:
    return EmbedResponse.from_rows(answer["rows"], usage=Usage(input_tokens=5), model="m")


def refuse(answer: dict[str, Any]) -> EmbedResponse:
    raise MalformedResponseError("no vectors", provider="example")


def test_an_answer_shows_its_vector_count_and_size_with_the_usage() -> None:
    exchange = RecordedExchange("POST", URL, {}, {"json": {"rows": [[1.0, 2.0, 3.0]] * 2}})
    shown = ShownExchange.read_embedding(exchange, "m", 2, rows)
    assert shown is not None and shown.received is not None
    assert shown.sent[0].text == "2 inputs to embed"
    assert shown.received.text == "2 vectors of 3 dimensions"
    assert shown.received.usage.input_tokens == 5


def test_one_input_is_not_plural_and_a_failed_call_has_no_answer() -> None:
    shown = ShownExchange.read_embedding(RecordedExchange("POST", URL, {}, None), "m", 1, rows)
    assert shown == ShownExchange.embedding("m", 1, None)
    assert shown.sent[0].text == "1 input to embed" and shown.received is None


def test_an_answer_the_reader_refuses_is_left_to_the_generic_reading() -> None:
    exchange = RecordedExchange("POST", URL, {}, {"json": {"rows": "garbage"}})
    assert ShownExchange.read_embedding(exchange, "m", 1, refuse) is None


def test_recorded_bytes_decodes_a_field_and_shows_garbage_as_empty() -> None:
    from llmport.plugin_api import recorded_bytes

    assert recorded_bytes("aGVsbG8=") == b"hello"
    assert recorded_bytes("not base64 at all!") == b""  # bad padding: shown empty, no error
    assert recorded_bytes(None) == b"" and recorded_bytes("") == b""
