"""The Gemini cassette scenarios, shared by the tests and the recorder.

Each scenario is the exact ``Runtime.run`` / ``stream`` call a test makes,
plus the answers the (loopback) vendor gave when the cassette was made. The
answers are written from Google's documented ``generateContent`` format and
modelled on ``../shared/wire-samples/gemini/``. ``make_cassettes.py``
replays these calls through the real plugin and ``google-genai`` SDK against
a loopback server to record the request side; see cassettes/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmport.loopback import Reply

DATA = Path(__file__).resolve().parent / "data"
FLASH = "gemini-2.5-flash"
PRO3 = "gemini-3-pro-preview"

#: A thought signature as the API sends it (standard base64, with "+" and "/").
SIGNATURE = (
    "CusBAXLI2nxjqlNFmkZhFvBKYO2Qbvj3E+G7N6BmlLYeobi9hrXb2MqtS/9TkFYVru/pjEa0jD3zRZrq"
    "udzLL1ectLXDfQmjQjWNss+UxBWLP2kFSsqeDK6xeQysB2Q9KyC3EjspvYOkCttBOQu8zmGrAVRFrdMS"
)
#: The same bytes as google-genai sends them back (URL-safe base64).
SIGNATURE_URLSAFE = SIGNATURE.replace("+", "-").replace("/", "_")


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


def usage(
    prompt: int, candidates: int, thoughts: int = 0, cached: int = 0, modality: str = "TEXT"
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "candidatesTokenCount": candidates,
        "promptTokenCount": prompt,
        "promptTokensDetails": [{"modality": modality, "tokenCount": prompt}],
        "totalTokenCount": prompt + candidates + thoughts,
    }
    if thoughts:
        out["thoughtsTokenCount"] = thoughts
    if cached:
        out["cachedContentTokenCount"] = cached
    return out


def answer(
    response_id: str,
    parts: list[dict[str, Any]],
    use: dict[str, Any],
    *,
    model: str = FLASH,
    finish: str | None = "STOP",
) -> dict[str, Any]:
    """A ``GenerateContentResponse`` (the shape of wire-samples/gemini/text.json)."""
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "modelVersion": model,
        "responseId": response_id,
        "usageMetadata": use,
    }


def text_stream(
    response_id: str, pieces: list[str], prompt: int, out: int, model: str = FLASH
) -> list[dict[str, Any]]:
    """SSE chunks of a streamed answer (the shape of wire-samples/gemini/stream-text.json)."""
    chunks = []
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        use = (
            usage(prompt, out) if last else {"promptTokenCount": prompt, "totalTokenCount": prompt}
        )
        chunks.append(
            {
                "data": answer(
                    response_id,
                    [{"text": piece}],
                    use,
                    model=model,
                    finish="STOP" if last else None,
                )
            }
        )
    return chunks


def error(
    code: int, status: str, message: str, details: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A Google API error body (``google.rpc.Status``)."""
    body: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        body["details"] = details
    return {"error": body}


def quota_error(delay: str) -> dict[str, Any]:
    """A 429 RESOURCE_EXHAUSTED with QuotaFailure, Help and RetryInfo details."""
    return error(
        429,
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan and billing details.",
        [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": "generativelanguage.googleapis.com/"
                        "generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                        "quotaDimensions": {"location": "global", "model": FLASH},
                        "quotaValue": "10",
                    }
                ],
            },
            {
                "@type": "type.googleapis.com/google.rpc.Help",
                "links": [
                    {
                        "description": "Learn more about Gemini API quotas",
                        "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
                    }
                ],
            },
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay},
        ],
    )


@dataclass(slots=True)
class Scenario:
    """One cassette: the call the tests make and the answers recorded for it."""

    name: str
    model: str
    kwargs: dict[str, Any]
    replies: list[Reply]
    stream: bool = False

    @property
    def cassette(self) -> str:
        return f"gemini/{self.name}.yaml"


HELLO = answer(
    "bzlXaa_EE_aHqtsPi_zw8Ao",
    [{"text": "Hello! How can I help you today?"}],
    usage(9, 9, thoughts=34),
)

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in [
        Scenario(
            "text",
            "gemini:gemini-2.5-flash",
            {
                "content": "What is the capital of France?",
                "system": "You are a helpful assistant.",
                "temperature": 0.5,
                "top_p": 0.9,
                "max_tokens": 256,
                "stop": ["END"],
                "seed": 7,
                "reasoning_effort": "low",
            },
            [
                Reply(
                    json=answer(
                        "9XhKacP2Av6ekdUPxYmC4Ao",
                        [{"text": "The capital of France is Paris."}],
                        usage(15, 7, thoughts=101),
                    )
                )
            ],
        ),
        Scenario(
            "image",
            "gemini-flash",
            {
                "content": [
                    {"type": "text", "text": "What fruit is in the image?"},
                    {"type": "image", "path": str(DATA / "kiwi.png")},
                ]
            },
            [
                Reply(
                    json=answer(
                        "4YfNaLXqOsKVmtkPqqehuAQ",
                        [{"text": "The fruit in the image is a kiwi."}],
                        usage(265, 9, modality="IMAGE"),
                    )
                )
            ],
        ),
        Scenario(
            "pdf",
            "gemini:gemini-2.5-flash",
            {
                "content": [
                    {"type": "file", "path": str(DATA / "invoice.pdf")},
                    {"type": "file", "path": str(DATA / "prices.csv")},
                    {"type": "text", "text": "What is the invoice total, and what do pears cost?"},
                ]
            },
            [
                Reply(
                    json=answer(
                        "Pd4Fa1nVKtOeqtsP7pa0iQw",
                        [{"text": "The invoice total is 42 EUR; pears cost 0.90."}],
                        usage(301, 14, thoughts=88, modality="DOCUMENT"),
                    )
                )
            ],
        ),
        Scenario(
            "tools",
            "gemini:gemini-2.5-flash",
            {"content": "What's the weather in Paris?", "tools": [get_weather]},
            [
                Reply(
                    json=answer(
                        "78F7aafeKcDVz7IPh4DK-AM",
                        [
                            {
                                "functionCall": {"args": {"city": "Paris"}, "name": "get_weather"},
                                "thoughtSignature": SIGNATURE,
                            }
                        ],
                        usage(49, 15, thoughts=48),
                    )
                ),
                Reply(
                    json=answer(
                        "8cF7aaWfIPShz7IP-YCwkAQ",
                        [{"text": "The weather in Paris is sunny with a temperature of 22C."}],
                        usage(88, 15),
                    )
                ),
            ],
        ),
        Scenario(
            "structured",
            "gemini:gemini-2.5-flash",
            {"content": "Tell me about London", "response_format": CITY_SCHEMA},
            [
                Reply(
                    json=answer(
                        "EfsgaZT5JPbXz7IPqtGJkQ8",
                        [
                            {
                                "text": '{\n  "city": "London",\n  "country": "United Kingdom",\n'
                                '  "population": 9002488\n}'
                            }
                        ],
                        usage(8, 31, thoughts=120),
                    )
                )
            ],
        ),
        Scenario(
            "stream_text",
            "gemini:gemini-2.5-flash",
            {
                "content": "What is the capital of France?",
                "system": "You are a helpful chatbot.",
                "temperature": 0.0,
            },
            [
                Reply(
                    sse=text_stream(
                        "w1peaMz6INOvnvgPgYfPiQY",
                        ["The", " capital of France", " is Paris.\n"],
                        13,
                        8,
                    )
                )
            ],
            stream=True,
        ),
        Scenario(
            "stream_tools",
            "gemini:gemini-3-pro-preview",
            {
                "content": "What's the weather in Paris and in London?",
                "tools": [get_weather],
                "reasoning_effort": "high",
            },
            [
                Reply(
                    sse=[
                        {
                            "data": answer(
                                "Zq1Fa0StreamTools01",
                                [
                                    {
                                        "functionCall": {
                                            "id": "fc_paris01",
                                            "args": {"city": "Paris"},
                                            "name": "get_weather",
                                        },
                                        "thoughtSignature": SIGNATURE,
                                    },
                                    {
                                        "functionCall": {
                                            "id": "fc_london02",
                                            "args": {"city": "London"},
                                            "name": "get_weather",
                                        }
                                    },
                                ],
                                usage(74, 30, thoughts=212),
                                model=PRO3,
                            )
                        }
                    ]
                ),
                Reply(
                    sse=text_stream(
                        "Zq1Fa0StreamTools02",
                        ["Paris is sunny at 22C; ", "London has light rain at 14C."],
                        131,
                        19,
                        model=PRO3,
                    )
                ),
            ],
            stream=True,
        ),
        Scenario(
            "error_400",
            "gemini:gemini-2.5-flash",
            {"content": "Hello", "top_k": 100},
            [
                Reply(
                    status=400,
                    json=error(
                        400,
                        "INVALID_ARGUMENT",
                        "Unable to submit request because it has a topK value of 100 but the "
                        "supported range is "
                        "from 1 (inclusive) to 65 (exclusive). Update the value and try again.",
                    ),
                )
            ],
        ),
        Scenario(
            "error_429",
            "gemini:gemini-2.5-flash",
            {"content": "Hello"},
            [Reply(status=429, json=quota_error("7s")), Reply(json=HELLO)],
        ),
    ]
}
