"""The Anthropic cassette scenarios, shared by the tests and the recorder.

Each scenario is the exact ``Runtime.run`` / ``stream`` call a test makes,
plus the answers the (loopback) vendor gave when the cassette was made. The
answers are written from Anthropic's documented Messages API format and
modelled on ``../shared/wire-samples/anthropic/``. ``make_cassettes.py``
replays these calls through the real plugin and SDK against a loopback
server to record the request side; see cassettes/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmport.testing.loopback import Reply

DATA = Path(__file__).resolve().parents[1] / "anthropic" / "data"
IMAGE_URL = "https://upload.wikimedia.org/wikipedia/commons/b/b8/Kiwi_fruit.jpg"


def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return {"Paris": "Sunny, 22C", "London": "Light rain, 14C"}.get(city, "unknown")


CITY_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "country": {"type": "string"},
        "population": {"type": "integer", "minimum": 0},
    },
    "required": ["city", "country", "population"],
}


LONDON_JSON = '{"city":"London","country":"United Kingdom","population":9002488}'


def usage(inp: int, out: int, cache_read: int = 0, cache_write: int = 0) -> dict[str, Any]:
    return {
        "cache_creation": {
            "ephemeral_1h_input_tokens": 0,
            "ephemeral_5m_input_tokens": cache_write,
        },
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
        "input_tokens": inp,
        "output_tokens": out,
        "service_tier": "standard",
    }


def message(
    msg_id: str, model: str, content: list[dict[str, Any]], stop: str, use: dict[str, Any]
) -> dict[str, Any]:
    return {
        "content": content,
        "id": msg_id,
        "model": model,
        "role": "assistant",
        "stop_reason": stop,
        "stop_sequence": None,
        "type": "message",
        "usage": use,
    }


def error(kind: str, text: str, request_id: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": text}, "request_id": request_id}


def text_stream(
    msg_id: str, model: str, pieces: list[str], inp: int, out: int
) -> list[dict[str, Any]]:
    """SSE events of a streamed text answer (as in wire-samples/anthropic/stream-text.json)."""
    events: list[dict[str, Any]] = [
        _start(msg_id, model, inp),
        {
            "event": "content_block_start",
            "data": {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        },
        {"event": "ping", "data": {"type": "ping"}},
    ]
    events += [
        {
            "event": "content_block_delta",
            "data": {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": p},
            },
        }
        for p in pieces
    ]
    events += [
        {"event": "content_block_stop", "data": {"type": "content_block_stop", "index": 0}},
        *_end("end_turn", inp, out),
    ]
    return events


def _start(msg_id: str, model: str, inp: int) -> dict[str, Any]:
    return {
        "event": "message_start",
        "data": {
            "type": "message_start",
            "message": {
                "model": model,
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {**usage(inp, 1)},
            },
        },
    }


def _end(stop: str, inp: int, out: int) -> list[dict[str, Any]]:
    return [
        {
            "event": "message_delta",
            "data": {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {
                    "input_tokens": inp,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": out,
                },
            },
        },
        {"event": "message_stop", "data": {"type": "message_stop"}},
    ]


def tool_stream(msg_id: str, model: str) -> list[dict[str, Any]]:
    """A streamed turn: some text, then two tool_use blocks whose input arrives in fragments."""

    def delta(index: int, partial: str) -> dict[str, Any]:
        return {
            "event": "content_block_delta",
            "data": {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": partial},
            },
        }

    def start(index: int, call_id: str) -> dict[str, Any]:
        return {
            "event": "content_block_start",
            "data": {
                "type": "content_block_start",
                "index": index,
                "content_block": {
                    "type": "tool_use",
                    "id": call_id,
                    "name": "get_weather",
                    "input": {},
                },
            },
        }

    def stop(index: int) -> dict[str, Any]:
        return {
            "event": "content_block_stop",
            "data": {"type": "content_block_stop", "index": index},
        }

    return [
        _start(msg_id, model, 578),
        {
            "event": "content_block_start",
            "data": {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        },
        {
            "event": "content_block_delta",
            "data": {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "I'll check both cities."},
            },
        },
        stop(0),
        start(1, "toolu_01StreamParis0000000001"),
        delta(1, ""),
        delta(1, '{"city'),
        delta(1, '": "Par'),
        delta(1, 'is"}'),
        stop(1),
        start(2, "toolu_01StreamLondon00000002"),
        delta(2, '{"ci'),
        delta(2, 'ty": "London"'),
        delta(2, "}"),
        stop(2),
        *_end("tool_use", 578, 102),
    ]


@dataclass(slots=True)
class Scenario:
    """One cassette: the call the tests make and the answers recorded for it."""

    name: str
    model: str
    kwargs: dict[str, Any]
    replies: list[Reply]
    stream: bool = False
    runtime: dict[str, Any] = field(default_factory=dict)
    #: A follow-up turn: ``run(result.messages + [then])`` after the first call.
    then: str | None = None

    @property
    def cassette(self) -> str:
        return f"anthropic/{self.name}.yaml"


SONNET = "claude-sonnet-4-5-20250929"
HAIKU = "claude-haiku-4-5-20251001"

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in [
        Scenario(
            "text",
            "anthropic:claude-sonnet-4-5",
            {
                "content": "What is the capital of France?",
                "system": "You are a helpful assistant.",
                "temperature": 0.5,
                "stop": ["END"],
                "max_tokens": 1024,
            },
            [
                Reply(
                    json=message(
                        "msg_01Fg1JVgvCYUHWsxrj9GkpEv",
                        SONNET,
                        [{"type": "text", "text": "The capital of France is Paris."}],
                        "end_turn",
                        usage(20, 10),
                    )
                )
            ],
        ),
        Scenario(
            "image",
            "haiku",
            {
                "content": [
                    {"type": "text", "text": "What fruit is in these two images?"},
                    {"type": "image", "path": str(DATA / "kiwi.png")},
                    {"type": "image", "url": IMAGE_URL},
                ]
            },
            [
                Reply(
                    json=message(
                        "msg_01KHctj7AyWoJWmwcFoXsDH6",
                        HAIKU,
                        [
                            {
                                "type": "text",
                                "text": "Both images show a **kiwi**: the small green square "
                                "is a flat kiwi-green swatch, the photo a cut kiwi fruit.",
                            }
                        ],
                        "end_turn",
                        usage(1612, 31),
                    )
                )
            ],
        ),
        Scenario(
            "pdf",
            "anthropic:claude-sonnet-4-5",
            {
                "content": [
                    {"type": "file", "path": str(DATA / "invoice.pdf")},
                    {"type": "text", "text": "What is the invoice total?"},
                ]
            },
            [
                Reply(
                    json=message(
                        "msg_01PdfQ2wL6dX9JkRr7aT1NcE",
                        SONNET,
                        [{"type": "text", "text": "The invoice total is 42 EUR."}],
                        "end_turn",
                        usage(1590, 12),
                    )
                )
            ],
        ),
        Scenario(
            "text_document",
            "anthropic:claude-sonnet-4-5",
            {
                "content": [
                    {"type": "file", "path": str(DATA / "notes.txt")},
                    {"type": "file", "path": str(DATA / "prices.csv")},
                    {"type": "text", "text": "Summarise the notes and list the prices."},
                ]
            },
            [
                Reply(
                    json=message(
                        "msg_01TxtD0cVb7Hq3Zs8Lm2Pw4K",
                        SONNET,
                        [
                            {
                                "type": "text",
                                "text": "The notes plan to ship the Anthropic plugin and "
                                "write the docs. Prices: apple 1.20, pear 0.90.",
                            }
                        ],
                        "end_turn",
                        usage(142, 29),
                    )
                )
            ],
        ),
        Scenario(
            "tools",
            "anthropic:claude-sonnet-4-5",
            {
                "content": "What's the weather in Paris and in London?",
                "tools": [get_weather],
                "cache_control": {"type": "ephemeral"},
            },
            [
                Reply(
                    json=message(
                        "msg_0157RbBMVd2po91eocfMnSDy",
                        SONNET,
                        [
                            {"type": "text", "text": "I'll check the weather in both cities."},
                            {
                                "type": "tool_use",
                                "id": "toolu_01WN4AuToBnJyXNQXwQBBebj",
                                "name": "get_weather",
                                "input": {"city": "Paris"},
                            },
                            {
                                "type": "tool_use",
                                "id": "toolu_01Lq8mY3vRkUe2sZtD9cXwPo",
                                "name": "get_weather",
                                "input": {"city": "London"},
                            },
                        ],
                        "tool_use",
                        usage(8, 96, cache_write=572),
                    )
                ),
                Reply(
                    json=message(
                        "msg_016ZQ7FNypND5WzmJJ8stJRh",
                        SONNET,
                        [
                            {
                                "type": "text",
                                "text": "Paris is sunny at 22C; London has light rain at 14C.",
                            }
                        ],
                        "end_turn",
                        usage(61, 24, cache_read=572),
                    )
                ),
            ],
        ),
        Scenario(
            "structured",
            "anthropic:claude-sonnet-4-5",
            {"content": "Tell me about London", "response_format": CITY_SCHEMA},
            [
                Reply(
                    json=message(
                        "msg_01Hfgh959WDWjL5jkM2FQXTL",
                        SONNET,
                        [
                            {
                                "type": "text",
                                "text": LONDON_JSON,
                            }
                        ],
                        "end_turn",
                        usage(196, 19),
                    )
                )
            ],
        ),
        Scenario(
            "structured_forced_tool",
            "anthropic:claude-3-7-sonnet-20250219",
            {"content": "Tell me about London", "response_format": CITY_SCHEMA},
            [
                Reply(
                    json=message(
                        "msg_01Fx7RtQe9Wm2Kp4Yz6Lb8Nc",
                        "claude-3-7-sonnet-20250219",
                        [
                            {
                                "type": "tool_use",
                                "id": "toolu_01Rk3Ve8Lp1Qz7Mn5Xw2Ty9A",
                                "name": "response",
                                "input": {
                                    "city": "London",
                                    "country": "United Kingdom",
                                    "population": 9002488,
                                },
                            }
                        ],
                        "tool_use",
                        usage(452, 61),
                    )
                )
            ],
        ),
        Scenario(
            "stream_text",
            "haiku",
            {"content": "Say just hello", "temperature": 1.0},
            [
                Reply(
                    sse=text_stream(
                        "msg_01T8kTq7cYyYJeQ5DxcVUc6D", HAIKU, ["Hel", "lo", "!"], 10, 5
                    ),
                    headers={"request-id": "req_011CZknL2bUdgvrtea9HYSrj"},
                )
            ],
            stream=True,
        ),
        Scenario(
            "stream_tools",
            "anthropic:claude-sonnet-4-5",
            {"content": "What's the weather in Paris and in London?", "tools": [get_weather]},
            [
                Reply(sse=tool_stream("msg_01StreamTools0000000001", SONNET)),
                Reply(
                    sse=text_stream(
                        "msg_01StreamTools0000000002",
                        SONNET,
                        ["Paris is sunny at 22C; ", "London has light rain at 14C."],
                        702,
                        21,
                    )
                ),
            ],
            stream=True,
        ),
        Scenario(
            "error_400",
            "anthropic:claude-sonnet-4-5",
            {"content": "Hello", "max_tokens": 100000, "timeout": 120},
            [
                Reply(
                    status=400,
                    json=error(
                        "invalid_request_error",
                        "max_tokens: 100000 > 64000, which is the maximum allowed number of "
                        "output tokens "
                        "for claude-sonnet-4-5-20250929",
                        "req_011CTfrnTsra8hsUuM24BzEC",
                    ),
                    headers={
                        "request-id": "req_011CTfrnTsra8hsUuM24BzEC",
                        "x-should-retry": "false",
                    },
                )
            ],
        ),
        Scenario(
            "error_429",
            "anthropic:claude-sonnet-4-5",
            {"content": "Hello"},
            [
                Reply(
                    status=429,
                    json=error(
                        "rate_limit_error",
                        "This request would exceed the rate limit for your organization "
                        "of 50 requests per minute.",
                        "req_011CUq4RateLimit00000001",
                    ),
                    headers={
                        "retry-after": "7",
                        "request-id": "req_011CUq4RateLimit00000001",
                        "x-should-retry": "true",
                    },
                ),
                Reply(
                    json=message(
                        "msg_01Rl9AfterWait0000000001",
                        SONNET,
                        [{"type": "text", "text": "Hello! How can I help you today?"}],
                        "end_turn",
                        usage(8, 12),
                    )
                ),
            ],
        ),
        Scenario(
            "error_529",
            "anthropic:claude-sonnet-4-5",
            {"content": "Hello"},
            [
                Reply(
                    status=529,
                    json=error("overloaded_error", "Overloaded", "req_011CUq4Overloaded0000001"),
                    headers={
                        "request-id": "req_011CUq4Overloaded0000001",
                        "x-should-retry": "true",
                    },
                ),
                Reply(
                    json=message(
                        "msg_01Ov9AfterWait0000000001",
                        SONNET,
                        [{"type": "text", "text": "Hello! How can I help you today?"}],
                        "end_turn",
                        usage(8, 12),
                    )
                ),
            ],
        ),
    ]
}


# --- vendor depth: responses from ../shared/wire-samples/anthropic/ ---------------

WIRE = Path(__file__).resolve().parents[4] / "shared" / "wire-samples" / "anthropic"


def sample_replies(name: str) -> list[dict[str, Any]]:
    """The recorded response bodies of a wire sample (``json`` replies), in order.

    Only recording needs them (tests replay the cassettes): without the
    samples folder, empty placeholders keep the scenarios importable.
    """
    import json

    path = WIRE / name
    if not path.is_file():
        empty = {"content": [], "stop_reason": "end_turn", "usage": {}}
        return [empty, empty]
    data = json.loads(path.read_text())
    return [i["response"]["body"] for i in data["interactions"]]


def as_sse(msg: dict[str, Any], chunk: int = 24) -> list[dict[str, Any]]:
    """A whole Messages API answer as the SSE events Anthropic streams for it.

    Text arrives as ``text_delta`` pieces (citations first, as ``citations_delta``),
    thinking as ``thinking_delta`` then ``signature_delta``, tool and server-tool
    input as ``input_json_delta``, result blocks whole in ``content_block_start``,
    the container in ``message_delta`` (as in reasoning-stream.json / stream-text.json).
    """
    import json

    def ev(kind: str, **data: Any) -> dict[str, Any]:
        return {"event": kind, "data": {"type": kind, **data}}

    def pieces(text: str, size: int = chunk) -> list[str]:
        return [text[i : i + size] for i in range(0, len(text), size)] or [""]

    start = {k: v for k, v in msg.items() if k not in ("content", "container")}
    start.update(content=[], stop_reason=None, stop_sequence=None)
    out = [ev("message_start", message=start)]
    for i, block in enumerate(msg["content"]):
        kind = block["type"]
        if kind == "text":
            first = {"type": "text", "text": ""}
            if "citations" in block:
                first["citations"] = []
            out.append(ev("content_block_start", index=i, content_block=first))
            for c in block.get("citations", []):
                out.append(
                    ev(
                        "content_block_delta",
                        index=i,
                        delta={"type": "citations_delta", "citation": c},
                    )
                )
            out += [
                ev("content_block_delta", index=i, delta={"type": "text_delta", "text": p})
                for p in pieces(block["text"])
            ]
        elif kind == "thinking":
            out.append(
                ev(
                    "content_block_start",
                    index=i,
                    content_block={"type": "thinking", "thinking": "", "signature": ""},
                )
            )
            out += [
                ev("content_block_delta", index=i, delta={"type": "thinking_delta", "thinking": p})
                for p in pieces(block["thinking"])
            ]
            out.append(
                ev(
                    "content_block_delta",
                    index=i,
                    delta={"type": "signature_delta", "signature": block["signature"]},
                )
            )
        elif kind in ("tool_use", "server_tool_use"):
            out.append(ev("content_block_start", index=i, content_block={**block, "input": {}}))
            out += [
                ev(
                    "content_block_delta",
                    index=i,
                    delta={"type": "input_json_delta", "partial_json": p},
                )
                for p in pieces(json.dumps(block["input"]), 10)
            ]
        else:  # redacted_thinking and *_tool_result blocks arrive whole
            out.append(ev("content_block_start", index=i, content_block=block))
        out.append(ev("content_block_stop", index=i))
    delta: dict[str, Any] = {"stop_reason": msg["stop_reason"], "stop_sequence": None}
    if msg.get("container") is not None:
        delta["container"] = msg["container"]
    out.append(ev("message_delta", delta=delta, usage=msg["usage"]))
    out.append(ev("message_stop"))
    return out


def get_user_country() -> str:
    return "Mexico"


def get_text_document() -> str:
    return "Dummy TXT file"


REDACTED_TRIGGER = (
    "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_"
    "46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"
)
NOTES = "Meeting notes, 3 March\n- ship the Anthropic plugin\n- write the docs\n"


def document_citation_answer() -> dict[str, Any]:
    """Documented format (no sample exists): text with a ``char_location`` citation."""
    return message(
        "msg_01DocCite00000000000001",
        SONNET,
        [
            {"type": "text", "text": "According to the notes, "},
            {
                "type": "text",
                "text": "the plan is to ship the Anthropic plugin",
                "citations": [
                    {
                        "type": "char_location",
                        "cited_text": "- ship the Anthropic plugin\n",
                        "document_index": 0,
                        "document_title": "notes.txt",
                        "start_char_index": 23,
                        "end_char_index": 51,
                    }
                ],
            },
            {"type": "text", "text": "."},
        ],
        "end_turn",
        usage(610, 31),
    )


def cache_answer(msg_id: str, write: int, read: int) -> dict[str, Any]:
    return message(
        msg_id,
        "claude-sonnet-4-6",
        [{"type": "text", "text": "OK"}],
        "end_turn",
        usage(12, 4, cache_read=read, cache_write=write),
    )


def _depth() -> list[Scenario]:
    """One scenario per feature; each also has a ``stream_`` twin with the same answers."""
    from llmport import NativeTool, Reasoning
    from llmport.messages.types import MediaBlock, Message, TextBlock, ToolCall, ToolResult
    from llmport.testing.loopback import Reply

    loop = sample_replies("reasoning-tool-loop.json")
    redacted = sample_replies("reasoning-redacted.json")
    search = sample_replies("citations-web-search.json")
    code = sample_replies("native-code-execution.json")
    document = sample_replies("text-plain-document.json")
    long_text = "Stable harness state.\n" + "".join(
        f"Fact {i:04d}: workspace file {i} has revision {i}.\n" for i in range(40)
    )
    base = [
        Scenario(
            "thinking_tools",
            "anthropic:claude-sonnet-4-0",
            {
                "content": "What is the largest city in the user country?",
                "tools": [get_user_country],
                "reasoning": Reasoning(budget_tokens=3000),
                "max_tokens": 4096,
            },
            [Reply(json=loop[0]), Reply(json=loop[1])],
        ),
        Scenario(
            "thinking_redacted",
            "anthropic:claude-sonnet-4-5-20250929",
            {"content": REDACTED_TRIGGER, "reasoning": 1024, "max_tokens": 4096},
            [Reply(json=redacted[0]), Reply(json=redacted[1])],
            then="What was that?",
        ),
        Scenario(
            "cache_blocks",
            "anthropic:claude-sonnet-4-6",
            {
                "content": [
                    {"type": "text", "text": long_text, "cache": {"ttl": "1h"}},
                    {"type": "text", "text": "Reply with OK."},
                ],
                "system": [{"type": "text", "text": "You are terse.", "cache": True}],
            },
            [Reply(json=cache_answer("msg_01CacheBlocks000000001", 1590, 0))],
        ),
        Scenario(
            "cache_auto",
            "anthropic:claude-sonnet-4-6",
            {
                "content": long_text,
                "system": "You are terse.",
                "tools": [get_user_country],
                "cache": {"ttl": "5m"},
            },
            [Reply(json=cache_answer("msg_01CacheAuto0000000001", 0, 1711))],
        ),
        Scenario(
            "citations_web_search",
            "anthropic:claude-sonnet-4-5",
            {
                "content": "What is the top news story today? Use web search.",
                "tools": [
                    NativeTool(
                        "web_search",
                        allowed_domains=None,
                        blocked_domains=None,
                        max_uses=None,
                        user_location=None,
                    )
                ],
                "reasoning": Reasoning(budget_tokens=16384),
                "max_tokens": 20000,
            },
            [Reply(json=search[0])],
        ),
        Scenario(
            "citations_document",
            "anthropic:claude-sonnet-4-5",
            {
                "content": [
                    {"type": "file", "path": str(DATA / "notes.txt"), "citations": True},
                    {"type": "text", "text": "What is the plan? Cite the notes."},
                ]
            },
            [Reply(json=document_citation_answer())],
        ),
        Scenario(
            "code_execution",
            "anthropic:claude-sonnet-4-6",
            {
                "content": "How much is 3 * 12390?",
                "system": "Always use the code execution tool for math.",
                "tools": [NativeTool("code_execution")],
                "reasoning": Reasoning(budget_tokens=3000),
                "max_tokens": 4096,
            },
            [Reply(json=code[0]), Reply(json=code[1])],
            then="How about 4 * 12390?",
        ),
        Scenario(
            "tool_result_document",
            "anthropic:claude-sonnet-4-5",
            {
                "content": [
                    Message(
                        "user",
                        (
                            TextBlock(
                                "Call the get_text_document tool and describe the document content."
                            ),
                        ),
                    ),
                    Message(
                        "assistant",
                        tool_calls=(
                            ToolCall("toolu_01P84KgBph6WqH2De4QJ1PPm", "get_text_document", {}),
                        ),
                    ),
                    Message(
                        "tool",
                        tool_results=(
                            ToolResult(
                                "toolu_01P84KgBph6WqH2De4QJ1PPm",
                                "get_text_document",
                                "",
                                blocks=(
                                    MediaBlock("file", "text/plain", data=b"Dummy TXT file\n"),
                                ),
                            ),
                        ),
                    ),
                ],
                "tools": [get_text_document],
            },
            [Reply(json=document[1])],
        ),
    ]
    streams = [
        Scenario(
            "stream_" + s.name,
            s.model,
            s.kwargs,
            [Reply(sse=as_sse(r.json)) for r in s.replies if r.json is not None],
            stream=True,
            then=s.then,
        )
        for s in base
    ]
    return base + streams


SCENARIOS.update({s.name: s for s in _depth()})


COUNT_TOKENS = "anthropic/count_tokens.yaml"


def count_request() -> Any:
    """The request count_tokens.yaml counts (as in wire-samples/anthropic/count-tokens.json)."""
    from llmport.messages.types import Message, Request, TextBlock

    text = "The quick brown fox jumps over the lazydog."
    return Request("claude-sonnet-4-5", [Message("user", (TextBlock(text),))])


# --- deferred tools and tool search: wire-samples/anthropic/tool-search.json ---------


def deferred_tools() -> list[Any]:
    """The recording's two deferred tools; llmport adds the tool search tool itself."""
    from llmport import Tool
    from support.tool_search_data import (
        RATE_DESCRIPTION,
        RATE_SCHEMA,
        STOCK_DESCRIPTION,
        STOCK_SCHEMA,
        get_exchange_rate,
        stock_lookup,
    )

    rate = Tool.from_schema(
        "get_exchange_rate", RATE_DESCRIPTION, RATE_SCHEMA, get_exchange_rate, defer_loading=True
    )
    stock = Tool.from_schema(
        "stock_lookup", STOCK_DESCRIPTION, STOCK_SCHEMA, stock_lookup, defer_loading=True
    )
    return [rate, stock]


def _deferred() -> list[Scenario]:
    from llmport.testing.loopback import Reply

    answers = sample_replies("tool-search.json")
    kwargs = {
        "content": "What is the current USD to EUR exchange rate?",
        "tools": deferred_tools(),
        "max_tokens": 4096,
    }
    model = "anthropic:claude-sonnet-4-5"
    return [
        Scenario("tool_search", model, kwargs, [Reply(json=a) for a in answers]),
        Scenario(
            "stream_tool_search",
            model,
            kwargs,
            [Reply(sse=as_sse(a)) for a in answers],
            stream=True,
        ),
    ]


SCENARIOS.update({s.name: s for s in _deferred()})
