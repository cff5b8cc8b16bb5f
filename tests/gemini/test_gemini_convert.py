"""Request conversion, pre-network rejections and answer mapping, sync and async.

Requests go to a loopback server; for every rejection the test asserts that
no request was sent at all.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import warnings
from typing import Any

import pytest
from gemini_helpers import isolated, run, runtime, stream  # noqa: F401  (isolated: autouse)
from llmport import ConfigError, NativeTool, TextDelta, ToolCallStarted, UnknownModelWarning
from llmport.errors import OptionError, UnsupportedContentError, UnsupportedFeatureError
from llmport.messages.types import (
    FileRef,
    MediaBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
)
from llmport.plugins.host import PluginHost
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_gemini.convert_in import SIGNATURE_KEY, SIGNED_PART_KEY
from support.gemini_scenarios import DATA, SIGNATURE, SIGNATURE_URLSAFE, answer, get_weather, usage

MODES = ["sync", "async"]
FLASH = "gemini:gemini-2.5-flash"
OK = Reply(json=answer("ok", [{"text": "fine"}], usage(5, 1)))


def lookup(name: str) -> str:
    """Look a name up."""
    return f"found {name}"


async def sent(
    mode: str, model: str = FLASH, replies: list[Reply] | None = None, **kwargs: Any
) -> tuple[list[Any], Any]:
    """Run one call against a loopback server; the request bodies and the result."""
    kwargs.setdefault("content", "Hi")
    with LoopbackServer(replies or [OK]) as server:
        result = await run(mode, runtime(model, base_url=server.url), **kwargs)
    return [r.json() for r in server.requests], result


async def rejected(
    mode: str, error: type[Exception], model: str = FLASH, **kwargs: Any
) -> Exception:
    """Assert the call fails with ``error`` before any request is sent."""
    kwargs.setdefault("content", "Hi")
    with LoopbackServer([OK]) as server:
        with pytest.raises(error) as info:
            await run(mode, runtime(model, base_url=server.url), **kwargs)
        assert server.requests == []
    return info.value


# --- tool choice and parallel calls ---------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"mode": "AUTO"}),
        ("required", {"mode": "ANY"}),
        ("none", {"mode": "NONE"}),
        ({"name": "lookup"}, {"mode": "ANY", "allowedFunctionNames": ["lookup"]}),
    ],
)
async def test_tool_choice_mapping(mode: str, choice: Any, expected: dict[str, Any]) -> None:
    bodies, _ = await sent(mode, tools=[lookup, get_weather], tool_choice=choice, max_iterations=1)
    assert bodies[0]["toolConfig"] == {"functionCallingConfig": expected}
    names = [d["name"] for d in bodies[0]["tools"][0]["functionDeclarations"]]
    assert names == ["lookup", "get_weather"]


@pytest.mark.parametrize("mode", MODES)
async def test_parallel_tool_calls_false_runs_every_call_one_at_a_time(mode: str) -> None:
    two_calls = answer(
        "p1",
        [
            {
                "functionCall": {"name": "lookup", "args": {"name": "a"}},
                "thoughtSignature": SIGNATURE,
            },
            {"functionCall": {"name": "lookup", "args": {"name": "b"}}},
        ],
        usage(10, 5),
    )
    bodies, result = await sent(
        mode, tools=[lookup], parallel_tool_calls=False, replies=[Reply(json=two_calls), OK]
    )
    # Gemini has no switch: nothing extra is sent and no call is dropped; the core
    # runs them one at a time (tests/tools cover sequential execution).
    assert "parallel" not in str(bodies[0])
    first, second = result.tool_calls
    assert [first.call.arguments, second.call.arguments] == [{"name": "a"}, {"name": "b"}]
    model_turn, results = bodies[1]["contents"][1:]
    assert [p["functionCall"]["args"] for p in model_turn["parts"]] == [
        {"name": "a"},
        {"name": "b"},
    ]
    assert model_turn["parts"][0]["thoughtSignature"] == SIGNATURE_URLSAFE
    assert results["parts"] == [
        {"functionResponse": {"name": "lookup", "response": {"output": "found a"}}},
        {"functionResponse": {"name": "lookup", "response": {"output": "found b"}}},
    ]
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_tool_errors_go_back_as_error_responses(mode: str) -> None:
    def broken(x: int) -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    call = answer(
        "e1", [{"functionCall": {"id": "c1", "name": "broken", "args": {"x": 1}}}], usage(10, 5)
    )
    bodies, _ = await sent(mode, tools=[broken], replies=[Reply(json=call), OK])
    (part,) = bodies[1]["contents"][2]["parts"]
    assert part["functionResponse"]["id"] == "c1"
    assert set(part["functionResponse"]["response"]) == {"error"}
    assert "disk on fire" in part["functionResponse"]["response"]["error"]


@pytest.mark.parametrize("mode", MODES)
async def test_text_signature_is_echoed_on_the_next_turn(mode: str) -> None:
    first = answer(
        "s1",
        [
            {"text": "Let me check. ", "thoughtSignature": SIGNATURE},
            {"functionCall": {"name": "lookup", "args": {"name": "z"}}},
        ],
        usage(10, 5),
    )
    bodies, result = await sent(mode, tools=[lookup], replies=[Reply(json=first), OK])
    assert bodies[1]["contents"][1] == {
        "role": "model",
        "parts": [
            {"text": "Let me check. ", "thoughtSignature": SIGNATURE_URLSAFE},
            {"functionCall": {"args": {"name": "z"}, "name": "lookup"}},
        ],
    }
    # Kept in the conversation as a neutral block: an empty ThinkingBlock carrying the
    # text part's signature, right before that text.
    carrier, text = result.messages[1].blocks
    assert isinstance(carrier, ThinkingBlock) and isinstance(text, TextBlock)
    assert (carrier.text, carrier.signature, carrier.vendor) == ("", SIGNATURE, "gemini")
    assert carrier.extra == {SIGNED_PART_KEY: "text"}
    assert text.text == "Let me check. "
    assert SIGNATURE_KEY not in result.messages[1].extra
    assert result.output == "fine"


# --- options ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("model", "effort", "expected"),
    [
        ("gemini:gemini-2.5-flash", "none", {"thinkingBudget": 0}),
        ("gemini:gemini-2.5-flash", "high", {"thinkingBudget": 24576}),
        ("gemini:gemini-2.5-flash", False, {"thinkingBudget": 0}),
        ("gemini:gemini-2.5-flash", 3000, {"thinkingBudget": 3000}),
        ("gemini:gemini-2.5-flash", -1, {"thinkingBudget": -1}),
        ("gemini:gemini-2.5-flash-lite", "minimal", {"thinkingBudget": 512}),
        ("gemini:gemini-2.5-pro", "medium", {"thinkingBudget": 8192}),
        ("gemini:gemini-2.5-pro", "minimal", {"thinkingBudget": 512}),
        ("gemini:gemini-2.5-pro", {"budget_tokens": 128}, {"thinkingBudget": 128}),
        ("gemini:gemini-3-pro-preview", "low", {"thinkingLevel": "LOW"}),
        ("gemini:gemini-3-flash-preview", "medium", {"thinkingLevel": "MEDIUM"}),
        ("gemini:gemini-3-flash-preview", 2048, {"thinkingBudget": 2048}),
        (
            "gemini:gemini-3-flash-preview",
            {"effort": "high", "summary": "auto"},
            {"thinkingLevel": "HIGH", "includeThoughts": True},
        ),
        ("gemini:gemini-2.5-pro", {"summary": True}, {"includeThoughts": True}),
    ],
)
async def test_reasoning(mode: str, model: str, effort: Any, expected: dict[str, Any]) -> None:
    bodies, _ = await sent(mode, model, reasoning=effort)
    assert bodies[0]["generationConfig"]["thinkingConfig"] == expected


@pytest.mark.parametrize("mode", MODES)
async def test_reasoning_effort_is_an_alias(mode: str) -> None:
    bodies, _ = await sent(mode, "gemini:gemini-2.5-pro", reasoning_effort="high")
    assert bodies[0]["generationConfig"] == {"thinkingConfig": {"thinkingBudget": 24576}}


@pytest.mark.parametrize("mode", MODES)
async def test_extra_options_pass_through(mode: str) -> None:
    bodies, _ = await sent(mode, top_k=40, presence_penalty=0.5, frequency_penalty=0.25, stop="END")
    config = bodies[0]["generationConfig"]
    assert (config["topK"], config["presencePenalty"], config["frequencyPenalty"]) == (
        40,
        0.5,
        0.25,
    )
    assert config["stopSequences"] == ["END"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("model", "options", "feature"),
    [
        (FLASH, {"stop": ["a", "b", "c", "d", "e", "f"]}, "6 stop sequences"),
        (FLASH, {"labels": {"team": "x"}}, "labels"),
        (FLASH, {"reasoning_effort": "max"}, "reasoning='max'"),
        ("gemini:gemini-3-pro-preview", {"reasoning_effort": "xhigh"}, "reasoning='xhigh'"),
        ("gemini:gemini-3-pro-preview", {"reasoning": "medium"}, "reasoning='medium'"),
        ("gemini:gemini-2.5-pro", {"reasoning_effort": "none"}, "reasoning='none'"),
        ("gemini:gemini-2.5-pro", {"reasoning": 0}, "reasoning budget_tokens=0"),
        ("gemini:gemini-2.5-pro", {"reasoning": 64}, "reasoning budget_tokens=64"),
        (FLASH, {"reasoning": 30000}, "reasoning budget_tokens=30000"),
        ("gemini:gemini-3-pro-preview", {"reasoning_effort": "none"}, "reasoning='none'"),
        ("gemini:gemini-2.0-flash", {"reasoning_effort": "low"}, "reasoning"),
        (FLASH, {"cache": {"key": "k1"}}, "cache key"),
        (FLASH, {"cache": {"retention": "24h"}}, "cache retention"),
        (FLASH, {"cache": {"ttl": "1h"}}, "cache ttl"),
    ],
)
async def test_options_it_cannot_honour_are_rejected(
    mode: str, model: str, options: dict[str, Any], feature: str
) -> None:
    err = await rejected(mode, UnsupportedFeatureError, model, **options)
    assert err.feature == feature  # type: ignore[attr-defined]
    assert err.vendor == "gemini"  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", MODES)
async def test_an_option_gemini_does_not_model_is_an_option_error(mode: str) -> None:
    err = await rejected(mode, OptionError, FLASH, logit_bias={"1": 2})
    assert "'logit_bias'" in str(err) and "vendor=" in str(err)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("options", "named"),
    [
        # Standard options: the core checks their values (either check may answer).
        ({"max_tokens": 0}, "max_tokens"),
        ({"timeout": -1}, "timeout"),
        ({"reasoning_effort": "extreme"}, "reasoning_effort"),
        ({"temperature": "hot"}, "temperature"),
        # Gemini's own options: only the plugin knows their types.
        ({"top_k": "many"}, "top_k='many'"),
        ({"presence_penalty": "lots"}, "presence_penalty='lots'"),
        ({"safety_settings": "strict"}, "safety_settings='strict'"),
    ],
)
async def test_bad_option_values_are_option_errors(
    mode: str, options: dict[str, Any], named: str
) -> None:
    err = await rejected(mode, OptionError, FLASH, **options)
    assert named in str(err)
    assert err.__cause__ is None  # never a raw pydantic error, nor chained to one


def test_prepare_itself_rejects_bad_values_with_option_errors() -> None:
    # Without the core's value checks (a direct caller of the provider contract).
    from llmport.messages.types import Message, Request, TextBlock
    from llmport_gemini.provider import GeminiProvider

    provider = GeminiProvider({"api_key": "k"})
    hi = [Message("user", (TextBlock("Hi"),))]
    for options in ({"temperature": "hot"}, {"max_tokens": "lots"}, {"timeout": "soon"}):
        with pytest.raises(OptionError):
            provider.prepare(Request("gemini-2.5-flash", hi, options=options))


@pytest.mark.parametrize("mode", MODES)
async def test_a_thinking_budget_goes_through_vendor_fields(mode: str) -> None:
    budget = {"gemini": {"generationConfig": {"thinkingConfig": {"thinkingBudget": 2048}}}}
    bodies, _ = await sent(mode, "gemini:gemini-2.5-pro", vendor=budget)
    assert bodies[0]["generationConfig"] == {"thinkingConfig": {"thinkingBudget": 2048}}
    # Beside reasoning=, the vendor field wins (same wire key: no duplicate).
    bodies, _ = await sent(mode, "gemini:gemini-2.5-pro", vendor=budget, reasoning="low")
    assert bodies[0]["generationConfig"] == {"thinkingConfig": {"thinkingBudget": 2048}}


@pytest.mark.parametrize("mode", MODES)
async def test_schema_with_tools_needs_gemini_3(mode: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    err = await rejected(mode, UnsupportedFeatureError, tools=[lookup], response_format=schema)
    assert "Gemini 3" in str(err)
    reply = Reply(json=answer("j", [{"text": '{"a": "x"}'}], usage(5, 3)))
    bodies, result = await sent(
        mode,
        "gemini:gemini-3-flash-preview",
        tools=[lookup],
        response_format=schema,
        replies=[reply],
    )
    assert bodies[0]["generationConfig"]["responseJsonSchema"] == schema
    assert "tools" in bodies[0] and result.output == '{"a": "x"}'


# --- content ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_audio_is_inline_data(mode: str) -> None:
    wav = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 28
    bodies, _ = await sent(mode, content=[{"type": "audio", "data": wav}, "Transcribe."])
    assert bodies[0]["contents"][0]["parts"][0]["inlineData"]["mime_type"] == "audio/wav"


@pytest.mark.parametrize("mode", MODES)
async def test_files_api_url_is_file_data(mode: str) -> None:
    url = "https://generativelanguage.googleapis.com/v1beta/files/abc123"
    bodies, _ = await sent(
        mode, content=[{"type": "file", "url": url, "media_type": "application/pdf"}]
    )
    assert bodies[0]["contents"][0]["parts"][0] == {
        "fileData": {"file_uri": url, "mime_type": "application/pdf"}
    }  # google-genai's spelling


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("block", "reason"),
    [
        ({"type": "image", "url": "https://example.com/kiwi.png"}, "Files API URLs"),
        ({"type": "file", "url": "gs://bucket/doc.pdf"}, "Files API URLs"),
        (
            {"type": "image", "url": "https://generativelanguage.googleapis.com/v1beta/files/x"},
            "pass media_type",
        ),
        ({"type": "image", "data": b"GIF89a" + b"\x00" * 10}, "image/gif not accepted"),
        (
            {"type": "file", "data": b"PK\x03\x04" + b"\x00" * 10, "filename": "notes.docx"},
            "not accepted",
        ),
    ],
)
async def test_content_it_cannot_take_is_rejected(
    mode: str, block: dict[str, Any], reason: str
) -> None:
    err = await rejected(mode, UnsupportedContentError, content=[block])
    assert reason in str(err)


@pytest.mark.parametrize("mode", MODES)
async def test_vertex_takes_gcs_and_https_urls(mode: str) -> None:
    blocks = [
        {"type": "file", "url": "gs://bucket/doc.pdf"},
        {"type": "image", "url": "https://example.com/kiwi.png"},
    ]
    with LoopbackServer([OK]) as server:
        rt = runtime(FLASH, base_url=server.url, vertexai=True)  # Vertex AI express mode (a key)
        await run(mode, rt, content=blocks)
        parts = server.requests[0].json()["contents"][0]["parts"]
    assert parts == [
        {"fileData": {"file_uri": "gs://bucket/doc.pdf", "mime_type": "application/pdf"}},
        {"fileData": {"file_uri": "https://example.com/kiwi.png", "mime_type": "image/png"}},
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_oversized_inline_media_is_rejected(mode: str) -> None:
    big = (DATA / "kiwi.png").read_bytes() + b"\x00" * (16 * 1024 * 1024)
    err = await rejected(
        mode,
        UnsupportedContentError,
        content=[{"type": "image", "data": big, "media_type": "image/png"}],
    )
    assert "request limit" in str(err)


# --- answers ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("finish", "stop"),
    [
        ("MAX_TOKENS", "max_tokens"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
        ("MALFORMED_FUNCTION_CALL", "other"),
    ],
)
async def test_finish_reasons(mode: str, finish: str, stop: str) -> None:
    reply = Reply(json=answer("f", [{"text": "cut"}], usage(5, 1), finish=finish))
    _, result = await sent(mode, replies=[reply])
    assert result.stop_reason == stop


@pytest.mark.parametrize("mode", MODES)
async def test_cached_and_thought_tokens(mode: str) -> None:
    reply = Reply(
        json=answer(
            "c",
            [{"text": "x"}, {"text": "thinking...", "thought": True}],
            usage(1000, 10, thoughts=50, cached=800),
        )
    )
    _, result = await sent(mode, replies=[reply])
    assert result.output == "x"  # thought summaries are not part of the answer
    u = result.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.reasoning_tokens) == (
        1000,
        60,
        800,
        50,
    )


@pytest.mark.parametrize("mode", MODES)
async def test_streamed_call_without_id_gets_one(mode: str) -> None:
    call = [
        {
            "data": answer(
                "n1", [{"functionCall": {"name": "lookup", "args": {"name": "q"}}}], usage(5, 2)
            )
        }
    ]
    done = [{"data": answer("n2", [{"text": "ok"}], usage(9, 1))}]
    with LoopbackServer([Reply(sse=call), Reply(sse=done)]) as server:
        events = await stream(
            mode, runtime(FLASH, base_url=server.url), content="Hi", tools=[lookup]
        )
        second = server.requests[1].json()
    (started,) = [e.call for e in events if isinstance(e, ToolCallStarted)]
    assert started.id == "gemini_call_n1_0" and started.arguments == {"name": "q"}
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["ok"]
    # The made-up id is never sent to the API.
    assert second["contents"][1]["parts"] == [
        {"functionCall": {"args": {"name": "q"}, "name": "lookup"}}
    ]
    assert second["contents"][2]["parts"] == [
        {"functionResponse": {"name": "lookup", "response": {"output": "found q"}}}
    ]


# --- configuration and transport ----------------------------------------------------------


async def test_missing_key_is_a_config_error() -> None:
    with LoopbackServer([OK]) as server:
        rt = runtime(FLASH, base_url=server.url, api_key=None)
        with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
            rt.run("Hi")
        assert server.requests == []


async def test_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key")
    with LoopbackServer([OK]) as server:
        await run("async", runtime(FLASH, base_url=server.url, api_key=None), content="Hi")
        assert server.requests[0].headers["x-goog-api-key"] == "gemini-key"


def test_unknown_setting_is_a_config_error() -> None:
    from llmport_gemini.provider import GeminiProvider

    with pytest.raises(ConfigError, match="colour"):
        GeminiProvider({"colour": "blue"})
    assert "secret-key" not in repr(GeminiProvider({"api_key": "secret-key"}))


async def test_async_client_runs_on_our_aiohttp_session_by_default() -> None:
    import aiohttp
    from llmport_gemini.provider import GeminiProvider

    provider = GeminiProvider({"api_key": "k"})
    held = provider._clients.for_loop()
    api = held.client._api_client
    assert isinstance(held.transport, aiohttp.ClientSession)
    assert api._use_aiohttp() is True
    assert await api._get_aiohttp_session() is held.transport  # ours, not one the SDK makes
    assert await provider.async_client() is await provider.async_client()  # one per loop
    assert api._http_options.retry_options.attempts == 1
    await provider.aclose()
    assert held.transport.closed


async def test_async_transport_httpx_restores_the_httpx2_client() -> None:
    import httpx2
    from llmport_gemini.provider import GeminiProvider

    provider = GeminiProvider({"api_key": "k", "async_transport": "httpx"})
    held = provider._clients.for_loop()
    api = held.client._api_client
    assert api._use_aiohttp() is False  # even though aiohttp is installed
    assert api._async_httpx_client is held.transport
    assert isinstance(held.transport, httpx2.AsyncClient)
    await provider.aclose()
    assert held.transport.is_closed


async def test_a_client_the_sdk_refuses_leaves_no_open_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from google import genai
    from llmport_gemini import aio
    from llmport_gemini.provider import GeminiProvider

    made: list[Any] = []
    real = aio.session

    def session() -> Any:
        made.append(real())
        return made[-1]

    def refuse(**kwargs: Any) -> Any:
        raise ValueError("Project or API key must be set when using the Vertex AI API.")

    monkeypatch.setattr(aio, "session", session)
    monkeypatch.setattr(genai, "Client", refuse)
    with pytest.raises(ValueError, match="Project"):
        await GeminiProvider({"api_key": "k"}).async_client()
    assert len(made) == 1 and made[0].closed


def test_async_transport_setting_is_checked_at_construction() -> None:
    from llmport_gemini.provider import GeminiProvider

    with pytest.raises(ConfigError, match="async_transport"):
        GeminiProvider({"api_key": "k", "async_transport": "curl"})


def test_importing_the_plugin_imports_no_sdk() -> None:
    code = (
        "import sys, llmport, llmport_gemini.plugin; "
        "assert 'google.genai' not in sys.modules, 'SDK imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- vendor depth: files, empty text, tool-result media, what Gemini cannot do -------------


@pytest.mark.parametrize("mode", MODES)
async def test_empty_text_is_sent_as_an_empty_part(mode: str) -> None:
    # content="" is no content at all (a ContentError); an empty text block is sent.
    bodies, result = await sent(mode, content=[{"type": "text", "text": ""}])
    assert bodies[0]["contents"] == [{"parts": [{"text": ""}], "role": "user"}]
    assert result.output == "fine"


@pytest.mark.parametrize("mode", MODES)
async def test_text_files_native_where_gemini_takes_them(mode: str) -> None:
    notes = b"pears 0.90\n"
    content = [
        {"type": "file", "data": notes, "media_type": "text/plain", "filename": "a.txt"},
        {"type": "file", "data": notes, "media_type": "text/plain", "send": "native"},
        {"type": "file", "data": notes, "media_type": "text/plain", "send": "text"},
        {"type": "file", "data": b'{"a": 1}', "media_type": "application/json"},
    ]
    bodies, _ = await sent(mode, content=content)
    auto, native, text, json_file = bodies[0]["contents"][0]["parts"]
    inline = {
        "inlineData": {"data": base64.urlsafe_b64encode(notes).decode(), "mime_type": "text/plain"}
    }
    assert auto == inline and native == inline  # auto picks native: text/plain is taken
    assert text["text"].startswith('<file name="block-2" media_type="text/plain">')
    assert json_file["text"].startswith("<file ")  # JSON is not a native type: inlined


@pytest.mark.parametrize("mode", MODES)
async def test_native_json_file_is_rejected(mode: str) -> None:
    content = [{"type": "file", "data": b"{}", "media_type": "application/json", "send": "native"}]
    err = await rejected(mode, UnsupportedContentError, content=content)
    assert "application/json" in str(err)


@pytest.mark.parametrize("mode", MODES)
async def test_document_citations_are_rejected(mode: str) -> None:
    content = [{"type": "file", "path": str(DATA / "invoice.pdf"), "citations": True}]
    err = await rejected(mode, UnsupportedContentError, content=content)
    assert "citations" in str(err)


def _tool_turns(image: bytes) -> list[Message]:
    call = ToolCall("c1", "snap", {})
    shot = MediaBlock("image", "image/png", data=image)
    return [
        Message("user", (TextBlock("Take a screenshot"),)),
        Message("assistant", tool_calls=(call,)),
        Message("tool", tool_results=(ToolResult("c1", "snap", "done", blocks=(shot,)),)),
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_tool_result_media_on_gemini_3(mode: str) -> None:
    png = (DATA / "kiwi.png").read_bytes()
    bodies, _ = await sent(
        mode, "gemini:gemini-3-flash-preview", content="What is on it?", history=_tool_turns(png)
    )
    # The result and the new question are one user turn (consecutive turns merge).
    response, question = bodies[0]["contents"][2]["parts"]
    assert question == {"text": "What is on it?"}
    # google-genai sends functionResponse.parts with proto field names (inline_data), which
    # the API's JSON parser takes like camelCase (as it takes inlineData.mime_type).
    assert response["functionResponse"]["parts"] == [
        {"inline_data": {"data": base64.urlsafe_b64encode(png).decode(), "mime_type": "image/png"}}
    ]
    assert response["functionResponse"]["response"] == {"output": "done"}


@pytest.mark.parametrize("mode", MODES)
async def test_an_uploaded_file_a_tool_returns_goes_in_the_function_response_on_gemini_3(
    mode: str,
) -> None:
    # A FileRef of the Files API (rt.upload): its URI as file_data, like the inline_data the
    # recordings send (wire-samples gemini-vertex/tool-result-document.json: a PDF, media only).
    uri = "https://generativelanguage.googleapis.com/v1beta/files/report-pdf"
    ref = FileRef("gemini", uri, "application/pdf")
    call = ToolCall("c1", "get_file", {})
    history = [
        Message("user", (TextBlock("Get the report"),)),
        Message("assistant", tool_calls=(call,)),
        Message("tool", tool_results=(ToolResult("c1", "get_file", "", blocks=(ref,)),)),
    ]
    bodies, _ = await sent(
        mode, "gemini:gemini-3-flash-preview", content="Summarise it.", history=history
    )
    response = bodies[0]["contents"][2]["parts"][0]["functionResponse"]
    assert response["parts"] == [{"file_data": {"file_uri": uri, "mime_type": "application/pdf"}}]
    # Media only: the response object is empty, as recorded (no made-up "output": "").
    assert response["response"] == {}


@pytest.mark.parametrize("mode", MODES)
async def test_tool_result_media_before_gemini_3_follow_in_their_own_user_turn(mode: str) -> None:
    # As recorded (wire-samples gemini/tool-result-audio.json): the result names the file, a
    # separate user turn carries it, then the turn's own question.
    png = (DATA / "kiwi.png").read_bytes()
    label = hashlib.sha1(png, usedforsecurity=False).hexdigest()[:6]
    bodies, _ = await sent(mode, FLASH, content="And?", history=_tool_turns(png))
    results, media = bodies[0]["contents"][2:]
    assert results["parts"] == [
        {
            "functionResponse": {
                "id": "c1",
                "name": "snap",
                "response": {"output": f"done\nSee file {label}."},
            }
        }
    ]
    assert media == {
        "role": "user",
        "parts": [
            {"text": f"This is file {label}:"},
            # google-genai writes the blob's mime_type in snake_case, as for any inline part.
            {"inlineData": {"data": base64.b64encode(png).decode(), "mime_type": "image/png"}},
            {"text": "And?"},
        ],
    }


@pytest.mark.parametrize("mode", MODES)
async def test_forcing_a_native_tool_alone_is_refused(mode: str) -> None:
    # Another vendor may force its native tool (OpenAI's image_generation, as recorded);
    # Gemini's functionCallingConfig cannot, so the choice is refused, not dropped.
    err = await rejected(
        mode, UnsupportedFeatureError, tools=[NativeTool("web_search")], tool_choice="required"
    )
    assert "only native tools" in str(err)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("model", "tools", "feature"),
    [
        ("gemini:gemma-3-27b-it", [NativeTool("web_search")], "native tool 'web_search'"),
        (
            "gemini:gemini-2.5-flash-lite",
            [NativeTool("file_search", store_names=["fileSearchStores/x"])],
            "native tool 'file_search'",
        ),
        ("gemini:gemini-1.5-pro", [NativeTool("url_context")], "native tool 'url_context'"),
        (FLASH, [NativeTool("web_search"), lookup], "native tools together with function tools"),
    ],
)
async def test_native_tools_it_cannot_run_are_rejected(
    mode: str, model: str, tools: list[Any], feature: str
) -> None:
    err = await rejected(mode, UnsupportedFeatureError, model, tools=tools)
    assert err.feature == feature  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", MODES)
async def test_native_and_function_tools_together_on_gemini_3(mode: str) -> None:
    bodies, _ = await sent(
        mode,
        "gemini:gemini-3-flash-preview",
        tools=[lookup, NativeTool("web_search"), NativeTool("code_execution")],
        max_iterations=1,
    )
    tools = bodies[0]["tools"]
    assert [next(iter(t)) for t in tools] == [
        "functionDeclarations",
        "googleSearch",
        "codeExecution",
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_native_tool_options_are_checked(mode: str) -> None:
    err = await rejected(mode, OptionError, tools=[NativeTool("web_search", max_uses=3)])
    assert "max_uses" in str(err)
    err = await rejected(mode, OptionError, tools=[NativeTool("file_search")])
    assert "store_names" in str(err)


@pytest.mark.parametrize("mode", MODES)
async def test_cache_marks_are_accepted(mode: str) -> None:
    content = [{"type": "text", "text": "long prefix", "cache": True}, "question"]
    bodies, _ = await sent(mode, content=content, cache="auto")
    assert bodies[0]["contents"][0]["parts"] == [{"text": "long prefix"}, {"text": "question"}]


def test_capability_rows() -> None:
    from llmport_gemini.models import family_for

    for model in ("gemini-3-pro-preview", "gemini-2.5-flash", "gemini-2.0-flash", "gemma-3-4b"):
        caps = family_for(model).caps
        assert caps.context_window and caps.max_output_tokens and caps.count_tokens
    assert family_for("gemini-2.5-pro").caps.native_tool_kinds == {
        "web_search",
        "url_context",
        "code_execution",
        "file_search",
    }
    assert not family_for("gemini-2.0-flash").caps.reasoning
    assert "text/plain" in family_for("gemini-2.5-flash").caps.native_text_files


def test_a_resource_name_is_the_model_it_names() -> None:
    # No UnknownModelWarning: models/gemini-1.5-pro is in the table as gemini-1.5-pro.
    info = PluginHost(load_entry_points=True).providers()["gemini"]
    provider = info.create({"api_key": "k"})
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownModelWarning)
        named = provider.capabilities("models/gemini-1.5-pro")
    assert named == provider.capabilities("gemini-1.5-pro") != info.default


# --- images in answers ----------------------------------------------------------

#: A tiny real JPEG header (the sample's base64 is truncated): what the answer's inlineData holds.
JPEG = bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffd9")


def _image_answer() -> Reply:
    # The shape of wire-samples gemini/image-output.json: a text part and an inlineData part,
    # each with its own thoughtSignature (shortened), IMAGE tokens in the usage details.
    return Reply(
        json={
            "candidates": [
                {
                    "content": {
                        "parts": [
                            {"text": "Archie the axolotl.", "thoughtSignature": "c2lnLXRleHQ="},
                            {
                                "inlineData": {
                                    "data": base64.b64encode(JPEG).decode(),
                                    "mimeType": "image/jpeg",
                                },
                                "thoughtSignature": "c2lnLWltYWdl",
                            },
                        ],
                        "role": "model",
                    },
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "modelVersion": "gemini-3-pro-image-preview",
            "responseId": "QV8oae6ZGKGnmtkPoanu6A0",
            "usageMetadata": {
                "candidatesTokenCount": 1283,
                "candidatesTokensDetails": [{"modality": "IMAGE", "tokenCount": 1120}],
                "promptTokenCount": 14,
                "thoughtsTokenCount": 174,
                "totalTokenCount": 1471,
            },
        }
    )


@pytest.mark.parametrize("mode", MODES)
async def test_an_answered_image_is_a_media_block_and_goes_back_signed(mode: str) -> None:
    _, result = await sent(mode, replies=[_image_answer()], content="Draw an axolotl.")
    (image,) = result.images
    assert (image.type, image.media_type, image.data) == ("image", "image/jpeg", JPEG)
    assert result.output == "Archie the axolotl."
    # Next turn: the image goes back on its own part with its signature, as Gemini's
    # "Thought signatures" page asks for every signed part of an image answer.
    bodies, _ = await sent(mode, history=result.messages, content="Make it blue.")
    text_part, image_part = bodies[0]["contents"][1]["parts"]
    assert text_part == {"text": "Archie the axolotl.", "thoughtSignature": "c2lnLXRleHQ="}
    assert image_part["thoughtSignature"] == "c2lnLWltYWdl"
    assert base64.urlsafe_b64decode(image_part["inlineData"]["data"]) == JPEG
