"""The request goes out as the body serialized once by ``llmport.provider.wire``
(through ``client.post``).

It must be what ``messages.create(**params)`` sent before (the old path):
path, headers (the effort beta header included) and the body byte for byte;
media come from the block's one cached base64 encoding over a tool loop.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic._utils._json import openapi_dumps
from llmport import Runtime
from llmport.messages.types import MediaBlock, Message, Reasoning, Request, TextBlock
from llmport.provider.wire import plain
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_anthropic.provider import AnthropicProvider, wire_body
from support.anthropic_scenarios import error, message, usage

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
PDF = b"%PDF-1.4\n" + b"x" * 3000
REFUSE = Reply(status=400, json=error("invalid_request_error", "bad", "req_1"))
#: The SDK's marker for its ``with_raw_response`` wrapper (the old path's): it tells the
#: SDK, not the server, what to return.
VOLATILE = {"x-stainless-raw-response"}


def _headers(request: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in request.headers.items() if k.lower() not in VOLATILE}


def _request(model: str, *, stream: bool, **extra: Any) -> Request:
    image = MediaBlock("image", "image/png", data=PNG, filename="chart.png")
    pdf = MediaBlock("file", "application/pdf", data=PDF, filename="report.pdf")
    return Request(
        model=model,
        messages=[Message("user", (TextBlock("Look: é ü 漢字 \u2028"), image, pdf))],
        stream=stream,
        system="Be brief.",
        options={"temperature": 1, "stop": ["END"], "metadata": {"user_id": "u"}},
        vendor={"anthropic": {"inference_geo": "us", "custom_field": {"a": 1}}},
        **extra,
    )


CASES = [
    ("claude-haiku-4-5", {}),
    ("claude-opus-4-5", {"reasoning": Reasoning("medium")}),  # thinking + effort beta header
]


@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize(("model", "extra"), CASES, ids=[c[0] for c in CASES])
def test_the_request_is_what_the_sdk_sent(model: str, extra: dict[str, Any], stream: bool) -> None:
    with LoopbackServer([REFUSE, REFUSE]) as server:
        provider = AnthropicProvider({"api_key": "test-key", "base_url": server.url})
        prepared = provider.prepare(_request(model, stream=stream, **extra))
        client = provider.clients.sync()
        params = plain(prepared.params)
        with pytest.raises(anthropic.BadRequestError):
            if stream:
                client.messages.create(**{**params, "stream": True}).close()
            else:
                client.messages.with_raw_response.create(**params)
        with pytest.raises(Exception, match="bad"):
            if stream:
                list(provider.send_stream(prepared))
            else:
                provider.send(prepared)
        provider.close()
    old, new = server.requests
    assert new.path == old.path == "/v1/messages"
    assert new.body == old.body  # byte for byte
    assert json.loads(new.body)["custom_field"] == {"a": 1}
    assert _headers(new) == _headers(old)
    if "reasoning" in extra:
        assert new.headers["anthropic-beta"] == "effort-2025-11-24"


def test_the_body_equals_the_sdk_serialization_and_options_keep_the_timeout() -> None:
    provider = AnthropicProvider({"api_key": "test-key", "base_url": "http://127.0.0.1:9"})
    prepared = provider.prepare(_request("claude-haiku-4-5", stream=False))
    body, options = wire_body(prepared, provider.clients.sync(), stream=False)
    params = plain(prepared.params)
    # create()'s field order; an extra field it knows (inference_geo) takes its place.
    order = ["max_tokens", "messages", "model", "inference_geo", "metadata"]
    order += ["stop_sequences", "stream", "system", "temperature", "custom_field"]
    merged = {**params, **params["extra_body"]}
    expected = {k: merged[k] for k in order}
    assert set(merged) - set(expected) == {"extra_body"}
    assert body.bytes() == openapi_dumps(expected)
    source = json.loads(body.bytes())["messages"][0]["content"][1]["source"]
    assert source == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode(),
    }
    assert options["timeout"].read == 600  # what create() computes for a non-streamed call
    provider.close()


def test_a_given_timeout_goes_to_the_request() -> None:
    provider = AnthropicProvider({"api_key": "test-key", "base_url": "http://127.0.0.1:9"})
    request = _request("claude-haiku-4-5", stream=False)
    prepared = provider.prepare(replace(request, options={**request.options, "timeout": 7.0}))
    _, options = wire_body(prepared, provider.clients.sync(), stream=False)
    assert options["timeout"] == 7.0
    provider.close()


def _turn(final: bool) -> Reply:
    content = (
        [{"type": "text", "text": "a picture"}]
        if final
        else [{"type": "tool_use", "id": "toolu_1", "name": "noop", "input": {}}]
    )
    stop = "end_turn" if final else "tool_use"
    return Reply(json=message("msg_1", "claude-haiku-4-5", content, stop, usage(1, 1)))


def noop() -> str:
    """Do nothing."""
    return "ok"


def test_one_encode_over_a_tool_loop_and_the_file_bytes_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = tmp_path / "big.png"
    image.write_bytes(PNG * 40)
    encodes: list[int] = []
    real = binascii.b2a_base64

    def counting(data: Any, *args: Any, **kwargs: Any) -> bytes:
        if len(data) >= 400_000:
            encodes.append(len(data))
        return real(data, *args, **kwargs)

    expected = base64.b64encode(PNG * 40).decode()
    monkeypatch.setattr(binascii, "b2a_base64", counting)
    seen: list[MediaBlock] = []
    real_bytes = MediaBlock.base64_bytes

    def spy(self: MediaBlock) -> bytes:
        seen.append(self)
        return real_bytes(self)

    monkeypatch.setattr(MediaBlock, "base64_bytes", spy)
    with LoopbackServer([_turn(False), _turn(False), _turn(True)]) as server:
        rt = Runtime(
            model="anthropic:claude-haiku-4-5",
            providers={"anthropic": {"api_key": "test-key", "base_url": server.url}},
        )
        content = [{"type": "text", "text": "look"}, {"type": "image", "path": image}]
        result = rt.run(content, tools=[noop])
        rt.close()
    assert result.output == "a picture"
    assert encodes == [len(PNG) * 40]  # one encode for three turns
    sources = [r.json()["messages"][0]["content"][1]["source"]["data"] for r in server.requests]
    assert sources == [expected] * 3
    assert seen[0]._raw() is None and seen[0].size == len(PNG) * 40
