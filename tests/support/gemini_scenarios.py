"""The Gemini cassette scenarios, shared by the tests and the recorder.

Each scenario is the exact ``Runtime.run`` / ``stream`` call a test makes,
plus the answers the (loopback) vendor gave when the cassette was made. The
answers are written from Google's documented ``generateContent`` format and
modelled on ``../shared/wire-samples/gemini/``. ``make_cassettes.py``
replays these calls through the real plugin and ``google-genai`` SDK against
a loopback server to record the request side; see cassettes/README.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmport import NativeTool
from llmport.messages.types import Message, Request, TextBlock, ToolSpec
from llmport.testing.loopback import Reply

DATA = Path(__file__).resolve().parents[1] / "gemini" / "data"
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
    #: A second call continuing the first (``history=`` the first run's messages).
    follow_up: dict[str, Any] | None = None
    #: A token-counting scenario: the provider request ``count_tokens`` is given.
    count: Callable[[], Request] | None = None

    @property
    def cassette(self) -> str:
        return f"gemini/{self.name}.yaml"

    def continued(self, messages: list[Message]) -> dict[str, Any]:
        """The follow-up call's arguments: same options, the first run's messages as history."""
        return {**self.kwargs, **(self.follow_up or {}), "history": messages}


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
                    {"type": "file", "path": str(DATA / "prices.csv"), "send": "text"},
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


# ---------------------------------------------------------------------------
# Vendor depth: reasoning, caching, grounding, native tools,
# token counting. Answers copy the shapes (and texts) of the second batch of
# ../shared/wire-samples/gemini/; the signatures there are truncated, so each
# one here is its first 80 characters (valid base64, standard alphabet, as the
# API sends signatures).
# ---------------------------------------------------------------------------

PRO25 = "gemini-2.5-pro"
FLASH3 = "gemini-3-flash-preview"
#: reasoning-stream.json: the signature on the first answer text part.
SIG_TEXT = "CiIB0e2Kb6Syj1a961EfbWv4W5C8RgAA/hGleV9VYJtnJFh4CmkB0e2Kb2qMva5NvDLuUvN8VpUjtONd"
#: reasoning-tool-loop-stream.json: the signature on the functionCall part.
SIG_CALL = "Et0BCtoBAXLI2nwMB4momyXTj+K3OPELPDi5Mq6bA5ZHuiKVF9m94gyxd+zdlC+s73nWxHx1ImnA9wPR"
#: native-code-execution.json: signatures on its two code parts and its text (first turn).
SIG_CODE1 = "EtUBCtIBAQw51sfL/SAuQCRC96UmBI4zPfDgGg70SF40qC1iToPEPC537P72F3qLw6wuAGL0n5hMg07O"
SIG_CODE2 = "EpYPCpMPAQw51sd1pR7C6so1EoTmzR0IgO15ViBHaNmaM6/pkn1FziUIVvpa3sZfwWHVUnRX0wlCkqdv"
SIG_CODE_TEXT = "ErYGCrMGAQw51sfvm/kq+9KzwXfUoGITZ9dzfSQeSQjk2QWR5fKpwO9/mbnSsc7Vh4Lv1+3D6COLn5jz"
STORE = "fileSearchStores/testfilesearchstore-q7prdj5dqu8p"
CACHE_NAME = "cachedContents/7lf5him5ev4iemi1yjv2gwli5bhpz3yidzejwllo"


def multiply(x: int, y: int) -> int:
    """Multiply two numbers."""
    return x * y


def sse(*answers: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"data": a} for a in answers]


def with_candidate(base: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """``base`` with extra fields on its candidate (groundingMetadata, urlContextMetadata)."""
    base["candidates"][0].update(fields)
    return base


THOUGHTS = [
    "**Clarifying User Goals**\n\nI'm currently focused on defining the user's ultimate goal: "
    "ensuring their safety while crossing the street.\n\n\n",
    "**Developing a Safety Protocol**\n\nI'm now formulating a comprehensive safety "
    "procedure.\n\n\n",
]
CROSS = [
    "This is a great question! Safely crossing the street is all about being aware and "
    "predictable. Here is a step-by-step",
    " guide that is widely taught for safety:\n\n### 1. Find a Safe Place to Cross\n",
    "The best place is always at a designated **crosswalk**.",
]

WEATHER_SF = (
    "It is currently 3:56 AM PDT on Tuesday, June 9, 2026, in San Francisco, California. "
    "The weather is cloudy with a temperature of 58\u00b0F (14\u00b0C), feeling like "
    "57\u00b0F (14\u00b0C). There is a 19% chance of rain, and the humidity is around 94%."
)
#: citations-grounding-web-search.json (searchEntryPoint.renderedContent shortened).
SEARCH_GROUNDING = {
    "groundingChunks": [
        {
            "web": {
                "title": "Current time information in San Francisco, CA, US.",
                "uri": "https://www.google.com/search?q=time+in+San+Francisco,+CA,+US",
            }
        },
        {
            "web": {
                "title": "Weather information for San Francisco, CA, US",
                "uri": "https://www.google.com/search?q=weather+in+San Francisco, CA,+US",
            }
        },
    ],
    "groundingSupports": [
        {
            "groundingChunkIndices": [0, 1],
            "segment": {
                "endIndex": 233,
                "startIndex": 171,
                "text": "There is a 19% chance of rain, and the humidity is around 94%.",
            },
        }
    ],
    "searchEntryPoint": {
        "renderedContent": '<div class="container"><a class="chip" href="https://vertexaisearch'
        '.cloud.google.com/grounding-api-redirect/AUZIYQGMdtG2">weather in San Francisco right '
        "now</a></div>\n"
    },
    "webSearchQueries": ["current time in San Francisco", "weather in San Francisco right now"],
}
SEARCH_USAGE = {
    "candidatesTokenCount": 105,
    "promptTokenCount": 11,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 11}],
    "serviceTier": "standard",
    "thoughtsTokenCount": 131,
    "toolUsePromptTokenCount": 90,
    "toolUsePromptTokensDetails": [{"modality": "TEXT", "tokenCount": 90}],
    "totalTokenCount": 337,
}
PYDANTIC_AI = (
    "Pydantic AI is a Python agent framework designed to make it less painful to build "
    "production grade applications with Generative AI."
)
#: native-url-context.json
URL_GROUNDING = {
    "groundingChunks": [{"web": {"uri": "https://ai.pydantic.dev", "title": "Pydantic AI"}}],
    "groundingSupports": [
        {"segment": {"endIndex": 131, "text": PYDANTIC_AI}, "groundingChunkIndices": [0]}
    ],
}
URL_METADATA = {
    "urlMetadata": [
        {
            "retrievedUrl": "https://ai.pydantic.dev",
            "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS",
        }
    ]
}
URL_USAGE = {
    "promptTokenCount": 32,
    "candidatesTokenCount": 41,
    "totalTokenCount": 2515,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 32}],
    "toolUsePromptTokenCount": 2395,
    "toolUsePromptTokensDetails": [{"modality": "TEXT", "tokenCount": 2395}],
    "thoughtsTokenCount": 47,
}
CODE1 = (
    "from datetime import datetime\nimport pytz\n\n# Get the current time in Utrecht, "
    "Netherlands (Europe/Amsterdam timezone)\nutrecht_timezone = pytz.timezone("
    "'Europe/Amsterdam')\nutrecht_time = datetime.now(utrecht_timezone)\n\n# Format the date\n"
    'today_date = utrecht_time.strftime("%A, %B %d, %Y")\n'
    'print(f"Current day in Utrecht: {today_date}")\n'
)
#: native-code-execution.json, first turn.
CODE_PARTS: list[dict[str, Any]] = [
    {
        "executableCode": {"code": CODE1, "id": "h0mwtrhs", "language": "PYTHON"},
        "thoughtSignature": SIG_CODE1,
    },
    {
        "codeExecutionResult": {
            "id": "h0mwtrhs",
            "outcome": "OUTCOME_OK",
            "output": "Current day in Utrecht: Tuesday, May 05, 2026\n",
        }
    },
    {
        "executableCode": {
            "code": "import datetime\nprint(datetime.datetime.now())\n",
            "id": "7lr99y60",
            "language": "PYTHON",
        },
        "thoughtSignature": SIG_CODE2,
    },
    {
        "codeExecutionResult": {
            "id": "7lr99y60",
            "outcome": "OUTCOME_OK",
            "output": "2026-05-05 20:40:33.367937\n",
        }
    },
    {
        "text": "Today is **Thursday, May 23, 2024**, in Utrecht, Netherlands. Utrecht is "
        "currently in the Central European Summer Time (CEST) zone.",
        "thoughtSignature": SIG_CODE_TEXT,
    },
]
CODE_USAGE = {
    "candidatesTokenCount": 170,
    "promptTokenCount": 257,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 196}],
    "thoughtsTokenCount": 773,
    "toolUsePromptTokenCount": 1732,
    "toolUsePromptTokensDetails": [{"modality": "TEXT", "tokenCount": 1732}],
    "totalTokenCount": 2932,
}
TOMORROW = "Tomorrow in Utrecht will be **Friday, May 24, 2024**."
EIFFEL = (
    "The capital of France is Paris. Paris is also known for its famous landmarks, "
    "such as the Eiffel Tower."
)
#: native-file-search.json, first call.
FILE_GROUNDING = {
    "groundingChunks": [
        {
            "retrievedContext": {
                "fileSearchStore": STORE,
                "text": "Paris is the capital of France. The Eiffel Tower is a famous landmark "
                "in Paris.",
            }
        }
    ],
    "groundingSupports": [
        {
            "groundingChunkIndices": [0],
            "segment": {"endIndex": 31, "text": "The capital of France is Paris."},
        },
        {
            "groundingChunkIndices": [0],
            "segment": {
                "endIndex": 103,
                "startIndex": 32,
                "text": "Paris is also known for its famous landmarks, such as the Eiffel Tower.",
            },
        },
    ],
}
FILE_USAGE = {
    "candidatesTokenCount": 40,
    "promptTokenCount": 15,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 15}],
    "thoughtsTokenCount": 257,
    "toolUsePromptTokenCount": 288,
    "toolUsePromptTokensDetails": [{"modality": "TEXT", "tokenCount": 288}],
    "totalTokenCount": 600,
}
#: cached-content.json, first generateContent call.
CACHED_USAGE = {
    "cacheTokensDetails": [{"modality": "TEXT", "tokenCount": 3512}],
    "cachedContentTokenCount": 3512,
    "candidatesTokenCount": 2,
    "promptTokenCount": 3520,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 3520}],
    "serviceTier": "standard",
    "thoughtsTokenCount": 42,
    "totalTokenCount": 3564,
}
FOX = "The quick brown fox jumps over the lazydog."


def _fox_request() -> Request:
    return Request(FLASH, [Message("user", (TextBlock(FOX),))])


def _fox_request_with_system_and_tools() -> Request:
    spec = ToolSpec(
        "multiply",
        "Multiply two numbers.",
        {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
            "required": ["x", "y"],
        },
    )
    return Request(
        FLASH,
        [Message("user", (TextBlock(FOX),))],
        system="You are a helpful assistant.",
        tools=[spec],
    )


def _depth() -> list[Scenario]:
    reasoning = {
        "content": "How do I cross the street?",
        "system": "You are a helpful assistant.",
        "reasoning": {"summary": True},
    }
    loop3 = {
        "content": "What is 5 times 3?",
        "tools": [multiply],
        "reasoning": {"effort": "low", "summary": True},
    }
    search = {
        "content": "What is the weather in San Francisco right now?",
        "tools": [NativeTool("web_search")],
    }
    url = {
        "content": "What is the first sentence on the page https://ai.pydantic.dev? Reply with "
        "only the sentence.",
        "system": "You are a helpful chatbot.",
        "tools": [NativeTool("url_context")],
    }
    code = {
        "content": "What day is today in Utrecht?",
        "system": "You are a helpful chatbot.",
        "tools": [NativeTool("code_execution")],
    }
    files = {
        "content": "What is the capital of France?",
        "system": "You are a helpful assistant.",
        "tools": [NativeTool("file_search", store_names=[STORE])],
    }
    cached = {
        "content": "What is the capital of France?",
        "vendor": {"gemini": {"cachedContent": CACHE_NAME}},
    }
    split = WEATHER_SF.index("The weather")
    return [
        Scenario(
            "reasoning",
            f"gemini:{PRO25}",
            reasoning,
            [
                Reply(
                    json=answer(
                        "beHBaJfEMIi-qtsP3769-Q8",
                        [
                            {"text": THOUGHTS[0], "thought": True},
                            {"text": THOUGHTS[1], "thought": True},
                            {"text": "".join(CROSS), "thoughtSignature": SIG_TEXT},
                        ],
                        usage(34, 74, thoughts=787),
                        model=PRO25,
                    )
                )
            ],
        ),
        Scenario(
            "reasoning_stream",
            f"gemini:{PRO25}",
            reasoning,
            [
                Reply(
                    sse=sse(
                        answer(
                            "beHBaJfEMIi-qtsP3769-Q8",
                            [{"text": THOUGHTS[0], "thought": True}],
                            {"promptTokenCount": 34, "thoughtsTokenCount": 68},
                            model=PRO25,
                            finish=None,
                        ),
                        answer(
                            "beHBaJfEMIi-qtsP3769-Q8",
                            [{"text": THOUGHTS[1], "thought": True}],
                            {"promptTokenCount": 34, "thoughtsTokenCount": 298},
                            model=PRO25,
                            finish=None,
                        ),
                        answer(
                            "beHBaJfEMIi-qtsP3769-Q8",
                            [{"text": CROSS[0], "thoughtSignature": SIG_TEXT}],
                            usage(34, 23, thoughts=787),
                            model=PRO25,
                            finish=None,
                        ),
                        answer(
                            "beHBaJfEMIi-qtsP3769-Q8",
                            [{"text": CROSS[1]}],
                            usage(34, 47, thoughts=787),
                            model=PRO25,
                            finish=None,
                        ),
                        answer(
                            "beHBaJfEMIi-qtsP3769-Q8",
                            [{"text": CROSS[2]}],
                            usage(34, 74, thoughts=787),
                            model=PRO25,
                        ),
                    )
                )
            ],
            stream=True,
        ),
        Scenario(
            "thinking_tool_loop",
            f"gemini:{FLASH3}",
            loop3,
            [
                Reply(
                    json=answer(
                        "6XJFadi3PJOx-sAPgJ3S6Qs",
                        [
                            {"text": "**Multiplying**\n\nI'll call multiply.", "thought": True},
                            {"text": "Let me multiply.", "thoughtSignature": SIG_TEXT},
                            {
                                "functionCall": {"name": "multiply", "args": {"y": 3, "x": 5}},
                                "thoughtSignature": SIG_CALL,
                            },
                        ],
                        usage(60, 16, thoughts=32),
                        model=FLASH3,
                    )
                ),
                Reply(
                    json=answer(
                        "6nJFaZPBLriWjMcPkf_q8Ac",
                        [{"text": "5 times 3 is 15."}],
                        usage(89, 9),
                        model=FLASH3,
                    )
                ),
            ],
        ),
        # reasoning-tool-loop-stream.json (gemini-3, signature on the streamed functionCall).
        Scenario(
            "thinking_tool_loop_stream",
            f"gemini:{FLASH3}",
            {"content": "What is 5 times 3?", "tools": [multiply]},
            [
                Reply(
                    sse=sse(
                        answer(
                            "6XJFadi3PJOx-sAPgJ3S6Qs",
                            [
                                {
                                    "functionCall": {"name": "multiply", "args": {"y": 3, "x": 5}},
                                    "thoughtSignature": SIG_CALL,
                                }
                            ],
                            usage(60, 16, thoughts=32),
                            model=FLASH3,
                            finish=None,
                        ),
                        answer(
                            "6XJFadi3PJOx-sAPgJ3S6Qs",
                            [{"text": ""}],
                            usage(60, 16, thoughts=32),
                            model=FLASH3,
                        ),
                    )
                ),
                Reply(
                    sse=sse(
                        answer(
                            "6nJFaZPBLriWjMcPkf_q8Ac",
                            [{"text": "5 times 3"}],
                            usage(89, 4),
                            model=FLASH3,
                            finish=None,
                        ),
                        answer(
                            "6nJFaZPBLriWjMcPkf_q8Ac",
                            [{"text": " is 15."}],
                            usage(89, 9),
                            model=FLASH3,
                            finish=None,
                        ),
                        answer(
                            "6nJFaZPBLriWjMcPkf_q8Ac",
                            [{"text": ""}],
                            usage(121, 9),
                            model=FLASH3,
                        ),
                    )
                ),
            ],
            stream=True,
        ),
        Scenario(
            "grounding",
            "gemini:gemini-2.5-flash",
            search,
            [
                Reply(
                    json=with_candidate(
                        answer("QPEnaqaxJqWdjuMPl5zNsQI", [{"text": WEATHER_SF}], SEARCH_USAGE),
                        groundingMetadata=SEARCH_GROUNDING,
                    )
                )
            ],
        ),
        Scenario(
            "grounding_stream",
            "gemini:gemini-2.5-flash",
            search,
            [
                Reply(
                    sse=sse(
                        answer(
                            "QPEnaqaxJqWdjuMPl5zNsQI",
                            [{"text": WEATHER_SF[:split]}],
                            {"promptTokenCount": 11},
                            finish=None,
                        ),
                        with_candidate(
                            answer(
                                "QPEnaqaxJqWdjuMPl5zNsQI",
                                [{"text": WEATHER_SF[split:]}],
                                SEARCH_USAGE,
                            ),
                            groundingMetadata=SEARCH_GROUNDING,
                        ),
                    )
                )
            ],
            stream=True,
        ),
        Scenario(
            "url_context",
            "gemini:gemini-2.5-flash",
            url,
            [
                Reply(
                    json=with_candidate(
                        answer("qgqkaI-iDLrTjMcP0bP24A4", [{"text": PYDANTIC_AI}], URL_USAGE),
                        groundingMetadata=URL_GROUNDING,
                        urlContextMetadata=URL_METADATA,
                    )
                )
            ],
        ),
        Scenario(
            "url_context_stream",
            "gemini:gemini-2.5-flash",
            url,
            [
                Reply(
                    sse=sse(
                        answer(
                            "qgqkaI-iDLrTjMcP0bP24A4",
                            [{"text": PYDANTIC_AI[:40]}],
                            {"promptTokenCount": 32},
                            finish=None,
                        ),
                        with_candidate(
                            answer(
                                "qgqkaI-iDLrTjMcP0bP24A4", [{"text": PYDANTIC_AI[40:]}], URL_USAGE
                            ),
                            groundingMetadata=URL_GROUNDING,
                            urlContextMetadata=URL_METADATA,
                        ),
                    )
                )
            ],
            stream=True,
        ),
        Scenario(
            "code_execution",
            f"gemini:{FLASH3}",
            code,
            [
                Reply(json=answer("vFX6ae-WJvWYqtsP8-bz6AQ", CODE_PARTS, CODE_USAGE, model=FLASH3)),
                Reply(
                    json=answer(
                        "w1X6aeb8KteEz7IP69j0sA4",
                        [{"text": TOMORROW}],
                        usage(893, 106),
                        model=FLASH3,
                    )
                ),
            ],
            follow_up={"content": "What day is tomorrow?"},
        ),
        Scenario(
            "code_execution_stream",
            f"gemini:{FLASH3}",
            code,
            [
                Reply(
                    sse=sse(
                        *[
                            answer(
                                "vFX6ae-WJvWYqtsP8-bz6AQ",
                                [p],
                                CODE_USAGE,
                                model=FLASH3,
                                finish="STOP" if i == len(CODE_PARTS) - 1 else None,
                            )
                            for i, p in enumerate(CODE_PARTS)
                        ]
                    )
                ),
                Reply(
                    sse=text_stream("w1X6aeb8KteEz7IP69j0sA4", [TOMORROW], 893, 106, model=FLASH3)
                ),
            ],
            stream=True,
            follow_up={"content": "What day is tomorrow?"},
        ),
        Scenario(
            "file_search",
            f"gemini:{PRO25}",
            files,
            [
                Reply(
                    json=with_candidate(
                        answer(
                            "0hkqacGsFZXjz7IPwIXNwA8", [{"text": EIFFEL}], FILE_USAGE, model=PRO25
                        ),
                        groundingMetadata=FILE_GROUNDING,
                    )
                )
            ],
        ),
        Scenario(
            "file_search_stream",
            f"gemini:{PRO25}",
            files,
            [
                Reply(
                    sse=sse(
                        answer(
                            "0hkqacGsFZXjz7IPwIXNwA8",
                            [{"text": EIFFEL[:32]}],
                            {"promptTokenCount": 15},
                            model=PRO25,
                            finish=None,
                        ),
                        with_candidate(
                            answer(
                                "0hkqacGsFZXjz7IPwIXNwA8",
                                [{"text": EIFFEL[32:]}],
                                FILE_USAGE,
                                model=PRO25,
                            ),
                            groundingMetadata=FILE_GROUNDING,
                        ),
                    )
                )
            ],
            stream=True,
        ),
        Scenario(
            "cached_content",
            "gemini:gemini-2.5-flash",
            cached,
            [Reply(json=answer("_VQYaqvRGbW6qtsPg4TDoAg", [{"text": "Paris."}], CACHED_USAGE))],
        ),
        Scenario(
            "cached_content_stream",
            "gemini:gemini-2.5-flash",
            {**cached, "cache": "auto"},
            [Reply(sse=sse(answer("_VQYaqvRGbW6qtsPg4TDoAg", [{"text": "Paris."}], CACHED_USAGE)))],
            stream=True,
        ),
        # count-tokens.json
        Scenario(
            "count_tokens",
            f"gemini:{FLASH}",
            {},
            [
                Reply(
                    json={
                        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 12}],
                        "totalTokens": 12,
                    }
                )
            ],
            count=_fox_request,
        ),
        Scenario(
            "count_tokens_full",
            f"gemini:{FLASH}",
            {},
            [
                Reply(
                    json={
                        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 41}],
                        "totalTokens": 41,
                    }
                )
            ],
            count=_fox_request_with_system_and_tools,
        ),
        Scenario(
            "error_api_key",
            f"gemini:{FLASH}",
            {"content": "Hello"},
            [
                Reply(
                    status=400,
                    json=error(
                        400,
                        "INVALID_ARGUMENT",
                        "API key not valid. Please pass a valid API key.",
                        [
                            {
                                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                "reason": "API_KEY_INVALID",
                                "domain": "googleapis.com",
                                "metadata": {"service": "generativelanguage.googleapis.com"},
                            },
                            {
                                "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
                                "locale": "en-US",
                                "message": "API key not valid. Please pass a valid API key.",
                            },
                        ],
                    ),
                )
            ],
        ),
    ]


SCENARIOS.update({s.name: s for s in _depth()})
