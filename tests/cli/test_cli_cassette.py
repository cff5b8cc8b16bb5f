"""``llmport cassette show FILE``: a recording printed as a conversation."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from llmport.cli.main import main

TOOL_TURN = {
    "request": {
        "method": "POST",
        "uri": "https://api.openai.com/v1/chat/completions",
        "headers": {},
        "body": {
            "json": {
                "model": "gpt-4o-mini",
                "messages": [{"role": "user", "content": "Weather in Paris?"}],
            }
        },
    },
    "response": {
        "status": {"code": 200, "message": "OK"},
        "headers": {},
        "body": {
            "json": {
                "choices": [
                    {
                        "message": {
                            "content": None,
                            "tool_calls": [
                                {
                                    "id": "call_1",
                                    "type": "function",
                                    "function": {
                                        "name": "weather",
                                        "arguments": '{"city": "Paris"}',
                                    },
                                }
                            ],
                        }
                    }
                ]
            }
        },
    },
}
STREAM_TURN = {
    "request": {
        "method": "POST",
        "uri": "https://api.anthropic.com/v1/messages",
        "headers": {},
        "body": {
            "json": {
                "model": "claude-sonnet-4-5",
                "messages": [{"role": "user", "content": [{"type": "text", "text": "A story"}]}],
            }
        },
    },
    "response": {
        "status": {"code": 529, "message": "Overloaded"},
        "headers": {},
        "body": {
            "events": [
                {
                    "event": "content_block_delta",
                    "data": {"delta": {"type": "text_delta", "text": "Snow "}},
                },
                {
                    "event": "content_block_delta",
                    "data": {"delta": {"type": "text_delta", "text": "falls."}},
                },
            ]
        },
    },
}


def test_a_cassette_prints_as_a_conversation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "app.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "interactions": [TOOL_TURN, STREAM_TURN]}))
    assert main(["cassette", "show", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "#1 POST /v1/chat/completions  (gpt-4o-mini)",
        "  you: Weather in Paris?",
        '  tool call: weather({"city": "Paris"})',
        "#2 POST /v1/messages  (claude-sonnet-4-5)",
        "  you: A story",
        "  status: 529",
        "  model: Snow falls.",
    ]


def test_a_file_that_is_not_a_cassette_is_a_typed_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "notes.yaml"
    path.write_text("just: notes\n")
    assert main(["cassette", "show", str(path)]) == 1
    assert "error: CassetteError:" in capsys.readouterr().err


BROKEN = {
    "not UTF-8": (b"version: 1\ninteractions: []\n\xff\xfe\n", "not UTF-8"),
    "an interaction that is a number": (b"version: 1\ninteractions: [1, 2]\n", "interactions/0"),
    "events that are a number": (
        b"version: 1\ninteractions:\n- {request: {method: POST, uri: x}, "
        b"response: {status: {code: 200}, body: {events: 7}}}\n",
        "interactions/0/response/body",
    ),
    "not YAML": (b"version: 1\ninteractions: [\n  {request: \n", "cannot read cassette"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_cassette_is_one_error_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    text, where = BROKEN[case]
    path = tmp_path / "broken.yaml"
    path.write_bytes(text)
    assert main(["cassette", "show", str(path)]) == 1
    shown = capsys.readouterr()
    assert shown.out == ""
    assert shown.err.startswith("error: CassetteError:") and where in shown.err
    assert shown.err.count("\n") == 1 and "Traceback" not in shown.err


def test_a_plugin_reader_shows_an_exchange_in_neutral_types_and_a_failing_one_is_skipped() -> None:
    from llmport.cli.cassette import conversation
    from llmport.plugin_api import (
        MediaBlock,
        Message,
        RecordedExchange,
        Response,
        ShownExchange,
        TextBlock,
        ToolCall,
        ToolResult,
        Usage,
    )

    def broken(exchange: RecordedExchange) -> ShownExchange | None:
        raise KeyError("not mine after all")

    def reader(exchange: RecordedExchange) -> ShownExchange | None:
        if exchange.path != "/v1/chat/completions":
            return None
        sent = [
            Message(
                "user",
                (TextBlock("Weather here?"), MediaBlock("image", "image/png", b"x" * 12_288)),
            ),
            Message("assistant", tool_calls=(ToolCall("call_1", "weather", {"city": "Paris"}),)),
            Message("tool", tool_results=(ToolResult("call_1", "", "sunny"),)),
        ]
        answer = Response(text="Sunny.", usage=Usage(input_tokens=12, output_tokens=3))
        return ShownExchange(sent, answer, "gpt-test")

    assert conversation([TOOL_TURN, STREAM_TURN], [broken, reader]) == [
        "#1 POST /v1/chat/completions  (gpt-test)",
        "  tool result: weather: sunny",  # this turn: what came after the last assistant turn
        "  model: Sunny.",
        "  usage: 12 in, 3 out",
        "#2 POST /v1/messages  (claude-sonnet-4-5)",  # no reader knows it: read generically
        "  you: A story",
        "  status: 529",
        "  model: Snow falls.",
    ]

    def first_message_only(exchange: RecordedExchange) -> ShownExchange | None:
        shown = reader(exchange)
        return ShownExchange(shown.sent[:1]) if shown is not None else None

    assert conversation([TOOL_TURN], [first_message_only])[1:] == [
        "  you: Weather here?",
        "  you: [image/png 12 KB]",  # media by type and size, never its bytes
    ]
