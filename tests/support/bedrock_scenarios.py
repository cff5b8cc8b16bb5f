# ruff: noqa: E501  (recorded answer texts are kept whole)
"""The Bedrock cassette scenarios, shared by the tests and the recorder.

Each scenario is the exact ``Runtime.run`` / ``stream`` call a test makes,
plus the answers the (loopback) vendor gave when the cassette was made. The
answers are written from the Converse API's documented format and modelled
on ``../shared/wire-samples/bedrock/``. ``make_cassettes.py`` replays these
calls through the real plugin, boto3 and botocore against a loopback server
to record the request side; see cassettes/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmport.messages.types import (
    MediaBlock,
    Message,
    NativeTool,
    Request,
    TextBlock,
    ToolCall,
    ToolResult,
)
from llmport.testing.loopback import Reply
from llmport_bedrock.eventstream import encode_stream

DATA = Path(__file__).resolve().parents[1] / "bedrock" / "data"
REGION = "us-east-1"
HOST = f"https://bedrock-runtime.{REGION}.amazonaws.com"
#: Fake static credentials: they say they are fake and match no real key shape.
CREDENTIALS = {
    "aws_access_key_id": "AKIDEXAMPLEFAKE",
    "aws_secret_access_key": "fake-secret-access-key-for-tests",
}
EVENTSTREAM = "application/vnd.amazon.eventstream"

NOVA_MICRO = "us.amazon.nova-micro-v1:0"
NOVA_PRO = "us.amazon.nova-pro-v1:0"
SONNET_45 = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
SONNET_35 = "us.anthropic.claude-3-5-sonnet-20241022-v2:0"
SONNET_37 = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"
SONNET_4 = "us.anthropic.claude-sonnet-4-20250514-v1:0"
NOVA_2_LITE = "us.amazon.nova-2-lite-v1:0"


def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    if city not in ("Paris", "London"):
        raise ValueError(f"no weather station in {city}")
    return {"Paris": "Sunny, 22C", "London": "Light rain, 14C"}[city]


CITY_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "country": {"type": "string"},
        "population": {"type": "integer", "minimum": 0},
    },
    "required": ["city", "country", "population"],
}


def usage(
    inp: int, out: int, cache_read: int | None = None, cache_write: int | None = None
) -> dict[str, Any]:
    use: dict[str, Any] = {
        "inputTokens": inp,
        "outputTokens": out,
        "totalTokens": inp + out + (cache_read or 0) + (cache_write or 0),
    }
    if cache_read is not None:
        use.update(
            cacheReadInputTokens=cache_read,
            cacheReadInputTokenCount=cache_read,
            cacheWriteInputTokens=cache_write or 0,
            cacheWriteInputTokenCount=cache_write or 0,
            serverToolUsage={},
        )
    return use


def answer(
    content: list[dict[str, Any]], stop: str, use: dict[str, Any], latency: int = 300
) -> dict[str, Any]:
    """A ``converse`` answer (the shape of wire-samples/bedrock/text.json)."""
    return {
        "metrics": {"latencyMs": latency},
        "output": {"message": {"content": content, "role": "assistant"}},
        "stopReason": stop,
        "usage": use,
    }


def error_reply(
    status: int, code: str, message: str, request_id: str, headers: dict[str, str] | None = None
) -> Reply:
    """An error as Bedrock sends it: status, ``x-amzn-ErrorType`` header, ``{"message"}`` body."""
    return Reply(
        status=status,
        json={"message": message},
        headers={
            "x-amzn-RequestId": request_id,
            "x-amzn-ErrorType": f"{code}:http://internal.amazon.com/coral/com.amazon.bedrock/",
            **(headers or {}),
        },
    )


def _pad(n: int) -> str:
    # Bedrock pads stream payloads with a "p" field of a-zA-Z0-9 (not model output).
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    return alphabet[: n % len(alphabet) or 1]


def ev(event_type: str, **data: Any) -> dict[str, Any]:
    return {
        "message_type": "event",
        "event_type": event_type,
        "data": {**data, "p": _pad(len(event_type) * 3)},
    }


def text_events(
    pieces: list[str], inp: int, out: int, stop: str = "end_turn"
) -> list[dict[str, Any]]:
    """A streamed text answer (the frame sequence of wire-samples/bedrock/stream-text.json)."""
    return [
        ev("messageStart", role="assistant"),
        *(ev("contentBlockDelta", contentBlockIndex=0, delta={"text": p}) for p in pieces),
        ev("contentBlockStop", contentBlockIndex=0),
        ev("messageStop", stopReason=stop),
        ev("metadata", metrics={"latencyMs": 420}, usage=usage(inp, out)),
    ]


def tool_events() -> list[dict[str, Any]]:
    """A streamed turn: text, then two toolUse blocks whose input arrives in fragments."""

    def start(index: int, call_id: str) -> dict[str, Any]:
        return ev(
            "contentBlockStart",
            contentBlockIndex=index,
            start={"toolUse": {"toolUseId": call_id, "name": "get_weather"}},
        )

    def frag(index: int, text: str) -> dict[str, Any]:
        return ev("contentBlockDelta", contentBlockIndex=index, delta={"toolUse": {"input": text}})

    return [
        ev("messageStart", role="assistant"),
        ev("contentBlockDelta", contentBlockIndex=0, delta={"text": "I'll check both cities."}),
        ev("contentBlockStop", contentBlockIndex=0),
        start(1, "tooluse_StreamParis0000000001"),
        frag(1, '{"city'),
        frag(1, '": "Par'),
        frag(1, 'is"}'),
        ev("contentBlockStop", contentBlockIndex=1),
        start(2, "tooluse_StreamLondon000000002"),
        frag(2, '{"ci'),
        frag(2, 'ty": "London"'),
        frag(2, "}"),
        ev("contentBlockStop", contentBlockIndex=2),
        ev("messageStop", stopReason="tool_use"),
        ev("metadata", metrics={"latencyMs": 1800}, usage=usage(610, 98)),
    ]


def stream_reply(events: list[dict[str, Any]], request_id: str) -> Reply:
    return Reply(
        body=encode_stream(events),
        headers={"content-type": EVENTSTREAM, "x-amzn-RequestId": request_id},
    )


def json_reply(body: dict[str, Any], request_id: str) -> Reply:
    return Reply(json=body, headers={"x-amzn-RequestId": request_id})


@dataclass(slots=True)
class Scenario:
    """One cassette: the call the tests make and the answers recorded for it.

    ``count``: the call is ``BedrockProvider.count_tokens(kwargs["request"])``.
    """

    name: str
    model: str
    kwargs: dict[str, Any]
    replies: list[Reply]
    stream: bool = False
    count: bool = False

    @property
    def cassette(self) -> str:
        return f"bedrock/{self.name}.yaml"


# --- vendor depth: reasoning, caching, native tools, files, citations, counting ---


def get_user_country() -> str:
    return "Mexico"


def catalog_lookup() -> str:
    return "catalog"


def diagnostics() -> str:
    return "ok"


def final_result(result: float) -> str:
    """The final response which ends this conversation"""
    return "Final result processed."


#: wire-samples/bedrock/reasoning-tool-loop.json (signature truncated there, opaque here).
THINKING_TEXT = (
    "The user is asking for the largest city in their country. To answer this, I first need to "
    "determine what country the user is from. I can use the `get_user_country` function to "
    "retrieve this information.\n\nOnce I have the user's country, I can then provide "
    "information about the largest city in that country."
)
THINKING_SIGNATURE = (
    "ErcBCkgIBhABGAIiQDYN+P1S3ACL3r24cAMKCrRNiuPPxvmT2uzREPLRyKEUXagRbXn97QCke6L7OEZv"
    "fake-signature-for-tests"
)
MEXICO_CITY = (
    "Based on your location in Mexico, the largest city is Mexico City (Ciudad de México). "
    "It's not only the capital but also the most populous city in Mexico with a metropolitan "
    "area population of over 21 million people, making it one of the largest urban "
    "agglomerations in the world."
)
#: wire-samples/bedrock/reasoning-stream.json: the reasoning deltas, then the signature.
STREAM_THINKING = [
    "The",
    " user has",
    " greeted me with",
    ' a simple "Hello".',
    " I should respond in",
    " a friendly and wel",
    "coming manner.",
]
STREAM_SIGNATURE = (
    "Eu0CCkgIBxABGAIqQJDccbDQkr81n7QjZ0Fi43umSvw0YvnGkMPEpaGAa2btYHyWw06KhwckvsnKzpKc"
    "fake-signature-for-tests"
)
SYSTEM_LONG = "YOU MUST RESPONSE ONLY WITH SINGLE NUMBER\n" * 50
USER_LONG = "Newer response with something except single number\n" * 10
#: A Converse document source with citations (AWS's documented Converse format; no sample).
POLICY = (
    b"Refund policy. Customers may return any item within 30 days of delivery. "
    b"Refunds are paid to the original payment method within 5 business days."
)


def reasoning_stream_events() -> list[dict[str, Any]]:
    """reasoning-stream.json's frames (thinking text, signature, text) ending in a toolUse."""
    return [
        ev("messageStart", role="assistant"),
        *(
            ev("contentBlockDelta", contentBlockIndex=0, delta={"reasoningContent": {"text": t}})
            for t in STREAM_THINKING
        ),
        ev(
            "contentBlockDelta",
            contentBlockIndex=0,
            delta={"reasoningContent": {"signature": STREAM_SIGNATURE}},
        ),
        ev("contentBlockStop", contentBlockIndex=0),
        ev("contentBlockDelta", contentBlockIndex=1, delta={"text": "Let me check your country."}),
        ev("contentBlockStop", contentBlockIndex=1),
        ev(
            "contentBlockStart",
            contentBlockIndex=2,
            start={
                "toolUse": {"toolUseId": "tooluse_StreamThink000000001", "name": "get_user_country"}
            },
        ),
        ev("contentBlockDelta", contentBlockIndex=2, delta={"toolUse": {"input": ""}}),
        ev("contentBlockStop", contentBlockIndex=2),
        ev("messageStop", stopReason="tool_use"),
        ev("metadata", metrics={"latencyMs": 1999}, usage=usage(36, 73)),
    ]


def code_interpreter_events() -> list[dict[str, Any]]:
    """A streamed Nova code-interpreter turn (ConverseStream's documented toolUse/toolResult
    start and delta members, as in botocore's bedrock-runtime model; no recorded sample)."""
    call_id = "tooluse_dV5ehBNfl1hUE-UTM9cIww"
    return [
        ev("messageStart", role="assistant"),
        ev(
            "contentBlockStart",
            contentBlockIndex=0,
            start={
                "toolUse": {
                    "toolUseId": call_id,
                    "name": "nova_code_interpreter",
                    "type": "server_tool_use",
                }
            },
        ),
        ev("contentBlockDelta", contentBlockIndex=0, delta={"toolUse": {"input": '{"snippet": '}}),
        ev(
            "contentBlockDelta", contentBlockIndex=0, delta={"toolUse": {"input": '"1234 * 5678"}'}}
        ),
        ev("contentBlockStop", contentBlockIndex=0),
        ev(
            "contentBlockStart",
            contentBlockIndex=1,
            start={
                "toolResult": {
                    "toolUseId": call_id,
                    "type": "nova_code_interpreter_result",
                    "status": "success",
                }
            },
        ),
        ev(
            "contentBlockDelta",
            contentBlockIndex=1,
            delta={
                "toolResult": [
                    {"json": {"exitCode": 0, "isError": False, "stdErr": "", "stdOut": "7006652"}}
                ]
            },
        ),
        ev("contentBlockStop", contentBlockIndex=1),
        ev("contentBlockDelta", contentBlockIndex=2, delta={"text": "1234 * 5678 = 7006652."}),
        ev("contentBlockStop", contentBlockIndex=2),
        ev("messageStop", stopReason="end_turn"),
        ev("metadata", metrics={"latencyMs": 1604}, usage=usage(1002, 59)),
    ]


POLICY_CITATION = {
    "title": "refund policy",
    "sourceContent": [{"text": "Customers may return any item within 30 days of delivery."}],
    "location": {"documentChar": {"documentIndex": 0, "start": 15, "end": 73}},
}


def citation_events() -> list[dict[str, Any]]:
    """A streamed cited answer (ConverseStream's documented ``delta.citation``; no sample)."""
    return [
        ev("messageStart", role="assistant"),
        ev("contentBlockDelta", contentBlockIndex=0, delta={"text": "You have 30 days"}),
        ev("contentBlockDelta", contentBlockIndex=0, delta={"text": " to return an item."}),
        ev("contentBlockDelta", contentBlockIndex=0, delta={"citation": POLICY_CITATION}),
        ev("contentBlockStop", contentBlockIndex=0),
        ev("messageStop", stopReason="end_turn"),
        ev("metadata", metrics={"latencyMs": 900}, usage=usage(610, 14)),
    ]


def cache_kwargs() -> dict[str, Any]:
    """prompt-cache.json's request: marked system, document turn, question, and tools."""
    return {
        "content": [
            {"type": "text", "text": USER_LONG},
            {
                "type": "file",
                "data": b"You are a great mathematician",
                "media_type": "text/plain",
                "filename": "Document 1.txt",
            },
            {"type": "text", "text": "\n", "cache": True},
            {"type": "text", "text": "What is 10 + 11?"},
        ],
        "system": [{"type": "text", "text": SYSTEM_LONG}],
        "tools": [catalog_lookup, diagnostics],
        "cache": "auto",
    }


def count_request() -> Request:
    """count-tokens.json's request: one user turn and one tool, Claude Sonnet 4."""
    from llmport.messages.types import ToolSpec

    return Request(
        model=SONNET_4,
        messages=[Message("user", (TextBlock("What is the weather in Paris?"),))],
        tools=[
            ToolSpec(
                "get_weather",
                "Get the weather for a location",
                {"type": "object", "properties": {"location": {"type": "string"}}},
            )
        ],
    )


KIWI_HISTORY = [
    Message("user", (TextBlock("Take a photo of the fruit bowl."),)),
    Message("assistant", tool_calls=(ToolCall("tooluse_Camera00000000000001", "camera", {}),)),
    Message(
        "tool",
        tool_results=(
            ToolResult(
                "tooluse_Camera00000000000001",
                "camera",
                "Photo taken.",
                blocks=(
                    MediaBlock("image", "image/png", (DATA / "kiwi.png").read_bytes()),
                    MediaBlock("file", "application/json", b'{"fruits": 1, "bowl": "blue"}'),
                ),
            ),
        ),
    ),
]


def camera() -> str:
    """Take a photo."""
    return "Photo taken."


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in [
        Scenario(
            "text",
            f"bedrock:{NOVA_MICRO}",
            {
                "content": "Hello!",
                "system": "You are a chatbot.",
                "temperature": 0.5,
                "top_p": 0.9,
                "max_tokens": 512,
                "stop": ["END"],
            },
            [
                json_reply(
                    answer(
                        [
                            {
                                "text": "Hello! How can I assist you today? Whether you have questions, need "
                                "information, or just want to chat, I'm here to help."
                            }
                        ],
                        "end_turn",
                        usage(7, 30),
                        268,
                    ),
                    "b1f3c2a0-0001-4e6b-9a7e-5d1c2b3a4f01",
                )
            ],
        ),
        Scenario(
            "image",
            f"bedrock:{NOVA_PRO}",
            {
                "content": [
                    {"type": "text", "text": "What fruit is in the image?"},
                    {"type": "image", "path": str(DATA / "kiwi.png")},
                ],
                "system": "You are a helpful chatbot.",
            },
            [
                json_reply(
                    answer(
                        [
                            {
                                "text": "The image is a small square of kiwi green: it shows the colour of a "
                                "kiwi fruit's flesh, so the fruit is a kiwi."
                            }
                        ],
                        "end_turn",
                        usage(1839, 31),
                        1054,
                    ),
                    "b1f3c2a0-0002-4e6b-9a7e-5d1c2b3a4f02",
                )
            ],
        ),
        Scenario(
            "document",
            f"bedrock:{SONNET_45}",
            {
                "content": [
                    {"type": "file", "path": str(DATA / "invoice_2024.03.pdf")},
                    {"type": "file", "path": str(DATA / "prices.csv")},
                    {"type": "file", "path": str(DATA / "settings.json")},
                    {
                        "type": "text",
                        "text": "What is the invoice total, and what does a pear cost?",
                    },
                ]
            },
            [
                json_reply(
                    answer(
                        [{"text": "The invoice total is 42 EUR. A pear costs 0.90 EUR."}],
                        "end_turn",
                        usage(1702, 19, 0, 0),
                        2100,
                    ),
                    "b1f3c2a0-0003-4e6b-9a7e-5d1c2b3a4f03",
                )
            ],
        ),
        Scenario(
            "tool_roundtrip",
            f"bedrock:{SONNET_45}",
            {"content": "What's the weather in Paris and in Atlantis?", "tools": [get_weather]},
            [
                json_reply(
                    answer(
                        [
                            {"text": "I'll check the weather in both places."},
                            {
                                "toolUse": {
                                    "input": {"city": "Paris"},
                                    "name": "get_weather",
                                    "toolUseId": "tooluse_XjTErzm6TpyMMpDviNVY3g",
                                    "type": "tool_use",
                                }
                            },
                            {
                                "toolUse": {
                                    "input": {"city": "Atlantis"},
                                    "name": "get_weather",
                                    "toolUseId": "tooluse_Q8wLk2Rr5NmZpVe7Tx1Ya4",
                                    "type": "tool_use",
                                }
                            },
                        ],
                        "tool_use",
                        usage(572, 96, 0, 0),
                        2245,
                    ),
                    "b1f3c2a0-0004-4e6b-9a7e-5d1c2b3a4f04",
                ),
                json_reply(
                    answer(
                        [
                            {
                                "text": "Paris is sunny at 22C. I could not get the weather for Atlantis: "
                                "there is no weather station there."
                            }
                        ],
                        "end_turn",
                        usage(710, 31, 0, 0),
                        2257,
                    ),
                    "b1f3c2a0-0005-4e6b-9a7e-5d1c2b3a4f05",
                ),
            ],
        ),
        Scenario(
            "structured",
            f"bedrock:{SONNET_45}",
            {
                "content": "What is the capital of France? Give me the city name, country, and population.",
                "response_format": CITY_SCHEMA,
            },
            [
                json_reply(
                    answer(
                        [{"text": '{"city":"Paris","country":"France","population":2161000}'}],
                        "end_turn",
                        usage(211, 18, 0, 0),
                        2780,
                    ),
                    "b1f3c2a0-0006-4e6b-9a7e-5d1c2b3a4f06",
                )
            ],
        ),
        Scenario(
            "structured_forced_tool",
            f"bedrock:{SONNET_35}",
            {
                "content": "What is the capital of France? Give me the city name, country, and population.",
                "response_format": CITY_SCHEMA,
            },
            [
                json_reply(
                    answer(
                        [
                            {
                                "toolUse": {
                                    "input": {
                                        "city": "Paris",
                                        "country": "France",
                                        "population": 2161000,
                                    },
                                    "name": "response",
                                    "toolUseId": "tooluse_Fx7RtQe9Wm2Kp4Yz6Lb8Nc",
                                }
                            }
                        ],
                        "tool_use",
                        usage(452, 61),
                        1900,
                    ),
                    "b1f3c2a0-0007-4e6b-9a7e-5d1c2b3a4f07",
                )
            ],
        ),
        Scenario(
            "stream_text",
            f"bedrock:{NOVA_MICRO}",
            {
                "content": "What is the capital of France?",
                "system": "You are a helpful chatbot.",
                "temperature": 0.0,
            },
            [
                stream_reply(
                    text_events(
                        [
                            "The",
                            " capital of France is Paris.",
                            " Paris is not",
                            " only the capital city but also the most populous city in France.",
                        ],
                        13,
                        82,
                    ),
                    "b1f3c2a0-0008-4e6b-9a7e-5d1c2b3a4f08",
                )
            ],
            stream=True,
        ),
        Scenario(
            "stream_tools",
            f"bedrock:{SONNET_45}",
            {"content": "What's the weather in Paris and in London?", "tools": [get_weather]},
            [
                stream_reply(tool_events(), "b1f3c2a0-0009-4e6b-9a7e-5d1c2b3a4f09"),
                stream_reply(
                    text_events(
                        ["Paris is sunny at 22C; ", "London has light rain at 14C."], 720, 21
                    ),
                    "b1f3c2a0-0010-4e6b-9a7e-5d1c2b3a4f10",
                ),
            ],
            stream=True,
        ),
        Scenario(
            "stream_exception",
            f"bedrock:{NOVA_MICRO}",
            {"content": "Say just hello"},
            [
                stream_reply(
                    [
                        ev("messageStart", role="assistant"),
                        ev("contentBlockDelta", contentBlockIndex=0, delta={"text": "Hel"}),
                        {
                            "message_type": "exception",
                            "exception_type": "modelStreamErrorException",
                            "data": {
                                "message": "The model stopped producing output. Retry your request."
                            },
                        },
                    ],
                    "b1f3c2a0-0011-4e6b-9a7e-5d1c2b3a4f11",
                ),
                stream_reply(
                    text_events(["Hel", "lo!"], 10, 3), "b1f3c2a0-0012-4e6b-9a7e-5d1c2b3a4f12"
                ),
            ],
            stream=True,
        ),
        Scenario(
            "error_validation",
            f"bedrock:{NOVA_MICRO}",
            {"content": "Hello", "max_tokens": 100000},
            [
                error_reply(
                    400,
                    "ValidationException",
                    "The maximum tokens you requested exceeds the model limit of 10000. Try again with a "
                    "maximum tokens value that is lower than 10000.",
                    "b1f3c2a0-0013-4e6b-9a7e-5d1c2b3a4f13",
                )
            ],
        ),
        Scenario(
            "error_throttling",
            f"bedrock:{NOVA_MICRO}",
            {"content": "Hello"},
            [
                error_reply(
                    429,
                    "ThrottlingException",
                    "Too many requests, please wait before trying again.",
                    "b1f3c2a0-0014-4e6b-9a7e-5d1c2b3a4f14",
                ),
                json_reply(
                    answer([{"text": "Hello! How can I help you today?"}], "end_turn", usage(5, 9)),
                    "b1f3c2a0-0015-4e6b-9a7e-5d1c2b3a4f15",
                ),
            ],
        ),
        Scenario(
            "reasoning_tool_loop",
            f"bedrock:{SONNET_37}",
            {
                "content": "What is the largest city in the user country?",
                "tools": [get_user_country],
                "reasoning": 1024,
            },
            [
                json_reply(
                    answer(
                        [
                            {
                                "reasoningContent": {
                                    "reasoningText": {
                                        "signature": THINKING_SIGNATURE,
                                        "text": THINKING_TEXT,
                                    }
                                }
                            },
                            {
                                "text": "I'll need to check what country you're from to answer that question."
                            },
                            {
                                "toolUse": {
                                    "input": {},
                                    "name": "get_user_country",
                                    "toolUseId": "tooluse_W9DaUFg4Tj2cRPpndqxWSg",
                                }
                            },
                        ],
                        "tool_use",
                        usage(397, 130, 0, 0),
                        3896,
                    ),
                    "b1f3c2a0-0016-4e6b-9a7e-5d1c2b3a4f16",
                ),
                json_reply(
                    answer([{"text": MEXICO_CITY}], "end_turn", usage(539, 106, 0, 0), 4529),
                    "b1f3c2a0-0017-4e6b-9a7e-5d1c2b3a4f17",
                ),
            ],
        ),
        Scenario(
            "reasoning_stream",
            f"bedrock:{SONNET_4}",
            {
                "content": "What is the largest city in the user country?",
                "tools": [get_user_country],
                "reasoning": "minimal",
            },
            [
                stream_reply(reasoning_stream_events(), "b1f3c2a0-0018-4e6b-9a7e-5d1c2b3a4f18"),
                stream_reply(
                    text_events(["Mexico City is the ", "largest city in Mexico."], 120, 12),
                    "b1f3c2a0-0019-4e6b-9a7e-5d1c2b3a4f19",
                ),
            ],
            stream=True,
        ),
        Scenario(
            "reasoning_nova",
            f"bedrock:{NOVA_2_LITE}",
            {"content": "Is 221 a prime number?", "reasoning": "high"},
            [
                json_reply(
                    answer(
                        [
                            {"reasoningContent": {"reasoningText": {"text": "[REDACTED]"}}},
                            {"text": "No: 221 = 13 x 17."},
                        ],
                        "end_turn",
                        usage(12, 240),
                        2100,
                    ),
                    "b1f3c2a0-0020-4e6b-9a7e-5d1c2b3a4f20",
                )
            ],
        ),
        Scenario(
            "prompt_cache",
            f"bedrock:{SONNET_45}",
            cache_kwargs(),
            [
                json_reply(
                    answer([{"text": "21"}], "end_turn", usage(2, 5, 0, 1322), 2023),
                    "b1f3c2a0-0021-4e6b-9a7e-5d1c2b3a4f21",
                )
            ],
        ),
        Scenario(
            "prompt_cache_stream",
            f"bedrock:{SONNET_45}",
            cache_kwargs(),
            [
                stream_reply(
                    [
                        *text_events(["21"], 2, 5)[:-1],
                        ev("metadata", metrics={"latencyMs": 1990}, usage=usage(2, 5, 1322, 0)),
                    ],
                    "b1f3c2a0-0022-4e6b-9a7e-5d1c2b3a4f22",
                )
            ],
            stream=True,
        ),
        Scenario(
            "code_interpreter",
            f"bedrock:{NOVA_2_LITE}",
            {
                "content": "What is 1234 * 5678?",
                "system": "You are a helpful chatbot.",
                "tools": [final_result, NativeTool("code_execution")],
            },
            [
                json_reply(
                    answer(
                        [
                            {
                                "toolUse": {
                                    "input": {"snippet": "1234 * 5678"},
                                    "name": "nova_code_interpreter",
                                    "toolUseId": "tooluse_dV5ehBNfl1hUE-UTM9cIww",
                                    "type": "server_tool_use",
                                }
                            },
                            {
                                "toolResult": {
                                    "content": [
                                        {
                                            "json": {
                                                "exitCode": 0,
                                                "isError": False,
                                                "stdErr": "",
                                                "stdOut": "7006652",
                                            }
                                        }
                                    ],
                                    "status": "success",
                                    "toolUseId": "tooluse_dV5ehBNfl1hUE-UTM9cIww",
                                    "type": "nova_code_interpreter_result",
                                }
                            },
                            {
                                "toolUse": {
                                    "input": {"result": 7006652.0},
                                    "name": "final_result",
                                    "toolUseId": "tooluse_DaRsVjwcShCI_3pOsIsWqg",
                                    "type": "tool_use",
                                }
                            },
                        ],
                        "tool_use",
                        usage(1002, 59),
                        1604,
                    ),
                    "b1f3c2a0-0023-4e6b-9a7e-5d1c2b3a4f23",
                ),
                json_reply(
                    answer([{"text": "1234 * 5678 = 7006652."}], "end_turn", usage(1148, 12), 1730),
                    "b1f3c2a0-0024-4e6b-9a7e-5d1c2b3a4f24",
                ),
            ],
        ),
        Scenario(
            "code_interpreter_stream",
            f"bedrock:{NOVA_2_LITE}",
            {"content": "What is 1234 * 5678?", "tools": [NativeTool("code_execution")]},
            [stream_reply(code_interpreter_events(), "b1f3c2a0-0025-4e6b-9a7e-5d1c2b3a4f25")],
            stream=True,
        ),
        Scenario(
            "citations",
            f"bedrock:{SONNET_45}",
            {
                "content": [
                    {
                        "type": "file",
                        "data": POLICY,
                        "media_type": "text/plain",
                        "filename": "refund_policy.txt",
                        "citations": True,
                    },
                    {"type": "text", "text": "How long do I have to return an item?"},
                ]
            },
            [
                json_reply(
                    answer(
                        [
                            {"text": "According to the policy, "},
                            {
                                "citationsContent": {
                                    "content": [{"text": "you have 30 days to return an item."}],
                                    "citations": [POLICY_CITATION],
                                }
                            },
                        ],
                        "end_turn",
                        usage(610, 22),
                        1200,
                    ),
                    "b1f3c2a0-0026-4e6b-9a7e-5d1c2b3a4f26",
                )
            ],
        ),
        Scenario(
            "citations_stream",
            f"bedrock:{SONNET_45}",
            {
                "content": [
                    {
                        "type": "file",
                        "data": POLICY,
                        "media_type": "text/plain",
                        "filename": "refund_policy.txt",
                        "citations": True,
                    },
                    {"type": "text", "text": "How long do I have to return an item?"},
                ]
            },
            [stream_reply(citation_events(), "b1f3c2a0-0027-4e6b-9a7e-5d1c2b3a4f27")],
            stream=True,
        ),
        Scenario(
            "tool_result_blocks",
            f"bedrock:{NOVA_PRO}",
            {"content": "Which fruit is in the bowl?", "history": KIWI_HISTORY, "tools": [camera]},
            [
                json_reply(
                    answer([{"text": "A kiwi, in a blue bowl."}], "end_turn", usage(1900, 9)),
                    "b1f3c2a0-0028-4e6b-9a7e-5d1c2b3a4f28",
                )
            ],
        ),
        Scenario(
            "tool_result_blocks_stream",
            f"bedrock:{NOVA_PRO}",
            {"content": "Which fruit is in the bowl?", "history": KIWI_HISTORY, "tools": [camera]},
            [
                stream_reply(
                    text_events(["A kiwi, ", "in a blue bowl."], 1900, 9),
                    "b1f3c2a0-0029-4e6b-9a7e-5d1c2b3a4f29",
                )
            ],
            stream=True,
        ),
        Scenario(
            "count_tokens",
            f"bedrock:{SONNET_4}",
            {"request": count_request()},
            [json_reply({"inputTokens": 375}, "b1f3c2a0-0030-4e6b-9a7e-5d1c2b3a4f30")],
            count=True,
        ),
    ]
}
