"""The request goes out as the body serialized once by ``llmport.provider.wire``
(through ``client.post``).

Whatever the SDK's ``create(**payload)`` sent before (the old path), the new
path must send the same: path and query, headers, and the body byte for byte
(the SDK's own serialization of the same JSON). Media are spliced in from the
block's one cached base64 encoding, however many turns resend it.
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path
from typing import Any

import pytest
from llmport import Runtime
from llmport.messages.types import MediaBlock, Message, Request, TextBlock
from llmport.provider.wire import plain
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_openai import plugin
from openai._utils._json import openapi_dumps
from support.openai_scenarios import chat_usage, completion, error_body

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
PDF = b"%PDF-1.4\n" + b"x" * 3000
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 4000
FAKE_KEY = "sk-test-wire-not-a-key"
REFUSE = Reply(status=400, json=error_body("bad", "invalid_request_error", None))
#: The SDK's marker for its ``with_raw_response`` wrapper (which the old path used and
#: the new one does not need): it tells the SDK, not the server, what to return.
VOLATILE = {"x-stainless-raw-response"}


def _provider(prefix: str, server: LoopbackServer, **settings: Any) -> Any:
    info = next(i for i in plugin.provider_infos() if i.prefix == prefix)
    return info.create({"api_key": FAKE_KEY, "base_url": server.url + "/v1", **settings})


def _headers(request: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in request.headers.items() if k.lower() not in VOLATILE}


def _request(model: str, *, stream: bool, audio: bool = False) -> Request:
    image = MediaBlock("image", "image/png", data=PNG, filename="chart.png")
    pdf = MediaBlock("file", "application/pdf", data=PDF, filename="report.pdf")
    media: tuple[Any, ...] = (
        (MediaBlock("audio", "audio/wav", data=WAV),) if audio else (image, pdf)
    )
    blocks = (TextBlock("Look: é ü 漢字 \u2028"), *media)
    return Request(
        model=model,
        messages=[Message("user", blocks)],
        stream=stream,
        options={
            "temperature": 0.25,
            "timeout": 12.5,
            "extra_headers": {"x-trace": "wire-test"},
        },
        vendor={"openai": {"metadata": {"k": "v"}, "user": "u-1"}},
    )


def _old_path(provider: Any, prepared: Any, stream: bool) -> None:
    """What ``send`` did before: the SDK's ``create`` with the payload (media as strings)."""
    import openai

    resource = provider.clients.sync()
    resource = resource.responses if provider.conversation == "input" else resource.chat.completions
    kwargs = plain(prepared.stream_payload if stream else prepared.payload)
    with pytest.raises(openai.BadRequestError):
        if stream:
            resource.create(**kwargs).close()
        else:
            resource.with_raw_response.create(**kwargs)


@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize(
    ("prefix", "model"),
    [
        ("openai", "gpt-4o-mini"),
        ("openai", "gpt-4o-audio-preview"),
        ("openai-responses", "gpt-5-mini"),
    ],
)
def test_the_request_is_what_the_sdk_sent(prefix: str, model: str, stream: bool) -> None:
    with LoopbackServer([REFUSE, REFUSE]) as server:
        provider = _provider(prefix, server)
        prepared = provider.prepare(_request(model, stream=stream, audio="audio" in model))
        _old_path(provider, prepared, stream)
        with pytest.raises(Exception, match="bad"):
            if stream:
                list(provider.send_stream(prepared))
            else:
                provider.send(prepared)
        provider.close()
    old, new = server.requests
    assert new.path == old.path and new.method == old.method == "POST"
    assert new.body == old.body  # byte for byte
    assert json.loads(new.body) == json.loads(old.body)
    assert _headers(new) == _headers(old)
    assert new.headers["x-trace"] == "wire-test"
    assert new.headers["x-stainless-read-timeout"] == "12.5"


def test_the_body_equals_the_sdk_serialization_of_the_same_json() -> None:
    with LoopbackServer([]) as server:
        provider = _provider("openai", server)
        prepared = provider.prepare(_request("gpt-4o-mini", stream=False))
        body, _ = provider.wire(prepared, stream=False)
    sent = body.bytes()
    kwargs = plain(prepared.payload)
    expected = {"model": kwargs["model"], "messages": kwargs["messages"], **kwargs["extra_body"]}
    assert sent == openapi_dumps(expected)
    image_url = json.loads(sent)["messages"][0]["content"][1]["image_url"]["url"]
    assert image_url == "data:image/png;base64," + base64.b64encode(PNG).decode()


def test_azure_without_a_deployment_posts_to_the_model_deployment() -> None:
    with LoopbackServer([Reply(json=completion("c", content="fine", usage=chat_usage(1, 1)))]) as s:
        rt = Runtime(
            model="openai:gpt-4o-mini",
            providers={
                "openai": {
                    "azure_endpoint": s.url,
                    "api_version": "2024-10-21",
                    "api_key": "azure-test-key",
                }
            },
        )
        assert rt.run("hi").output == "fine"
        rt.close()
    request = s.requests[0]
    assert request.path == "/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21"
    assert request.headers["api-key"] == "azure-test-key"


def _tool_turn(final: bool) -> Reply:
    if final:
        return Reply(json=completion("c3", content="a picture", usage=chat_usage(1, 1)))
    answer = completion("c1", content=None, usage=chat_usage(1, 1))
    message = answer["choices"][0]["message"]
    message["tool_calls"] = [
        {"id": "call_1", "type": "function", "function": {"name": "noop", "arguments": "{}"}}
    ]
    answer["choices"][0]["finish_reason"] = "tool_calls"
    return Reply(json=answer)


def noop() -> str:
    """Do nothing."""
    return "ok"


def test_one_encode_over_a_tool_loop_and_the_file_bytes_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = tmp_path / "big.png"
    image.write_bytes(PNG * 40)  # > 400 KB: counted below
    encodes: list[int] = []
    real = binascii.b2a_base64

    def counting(data: Any, *args: Any, **kwargs: Any) -> bytes:
        if len(data) >= 400_000:
            encodes.append(len(data))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(binascii, "b2a_base64", counting)
    seen: list[MediaBlock] = []
    real_bytes = MediaBlock.base64_bytes

    def spy(self: MediaBlock) -> bytes:
        seen.append(self)
        return real_bytes(self)

    monkeypatch.setattr(MediaBlock, "base64_bytes", spy)
    with LoopbackServer([_tool_turn(False), _tool_turn(False), _tool_turn(True)]) as server:
        rt = Runtime(
            model="openai:gpt-4o-mini",
            providers={"openai": {"api_key": FAKE_KEY, "base_url": server.url + "/v1"}},
        )
        result = rt.run(
            [{"type": "text", "text": "look"}, {"type": "image", "path": image}], tools=[noop]
        )
        rt.close()
    assert result.output == "a picture"
    assert encodes == [len(PNG) * 40]  # one encode for three turns
    url = "data:image/png;base64," + base64.b64encode(PNG * 40).decode()
    assert [r.json()["messages"][0]["content"][1]["image_url"]["url"] for r in server.requests] == [
        url
    ] * 3
    block = seen[0]
    assert block._raw() is None and block.inline  # released: llmport read the file
    assert block.size == len(PNG) * 40 and block.data == PNG * 40  # decoded on demand
