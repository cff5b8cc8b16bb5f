"""Media bytes on the direct path: spliced in as the block's cached base64, encoded once.

A prepared payload carries a :class:`MediaBytes` marker per inline medium;
the direct path sends exactly the bytes botocore would have serialized from
the real payload, the boto3 fallback, token counting and batch files get the
real bytes, and a tool loop encodes an image once however many turns it takes.
"""

from __future__ import annotations

import base64
import binascii
import json
import operator
from pathlib import Path
from typing import Any

import pytest
from llmport import Runtime, tool
from llmport.messages.types import MediaBlock, Message, Request, TextBlock
from llmport.plugin_api import BatchItem
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_bedrock import provider as provider_module
from llmport_bedrock.convert_in import MediaBytes, materialize, media_of
from llmport_bedrock.plugin import provider_info
from llmport_bedrock.provider import BedrockProvider
from support.api_modes import MODES
from support.bedrock_scenarios import REGION, answer, usage

MODEL = "us.amazon.nova-pro-v1:0"
CREDENTIALS = {
    "aws_access_key_id": "AKIDEXAMPLEFAKE",
    "aws_secret_access_key": "fake-secret-access-key-for-tests",
}
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
OK = Reply(json=answer([{"text": "a picture"}], "end_turn", usage(5, 2)))


def provider(server: LoopbackServer) -> BedrockProvider:
    return BedrockProvider(
        {**CREDENTIALS, "region": REGION, "endpoint_url": server.url}, provider_info()
    )


def image_request() -> Request:
    block = MediaBlock("image", "image/png", data=PNG)
    return Request(MODEL, [Message("user", (TextBlock("look"), block))])


def test_the_payload_holds_a_marker_that_equals_the_real_bytes() -> None:
    with LoopbackServer([OK]) as server:
        prepared = provider(server).prepare(image_request())
    (marker,) = media_of(prepared.payload)
    assert isinstance(marker, MediaBytes)
    assert marker == PNG and marker != PNG + b"x"
    assert operator.eq(PNG, marker)  # the reflected comparison too
    assert len(marker) < 64  # a marker, not a copy of the image
    real = materialize(prepared.payload)
    source = real["messages"][0]["content"][1]["image"]["source"]["bytes"]
    assert type(source) is bytes and source == PNG
    assert materialize({"a": [1, "b"]}) == {"a": [1, "b"]}
    assert PNG.hex()[:16] not in repr(marker)


@pytest.mark.parametrize("mode", MODES)
async def test_the_direct_body_is_what_botocore_sends_for_the_real_bytes(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    bodies = []
    for direct in (True, False):
        with monkeypatch.context() as patch:
            if not direct:  # client.converse with the materialized payload
                patch.setattr(provider_module, "usable", lambda client: False)
            with LoopbackServer([OK]) as server:
                p = provider(server)
                prepared = p.prepare(image_request())
                try:
                    if mode == "sync":
                        assert p.send(prepared).text == "a picture"
                    else:
                        assert (await p.asend(prepared)).text == "a picture"
                finally:
                    p.close()
                (sent,) = server.requests
        bodies.append(sent.body)
    assert bodies[0] == bodies[1]
    sent_image = json.loads(bodies[0])["messages"][0]["content"][1]["image"]["source"]["bytes"]
    assert base64.b64decode(sent_image) == PNG


@tool
def noop() -> str:
    """Do nothing."""
    return "ok"


def test_a_tool_loop_encodes_a_file_once_and_sends_it_every_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.png"
    path.write_bytes(PNG * 300)  # ~ 3 MB
    call = answer(
        [{"toolUse": {"toolUseId": "t1", "name": "noop", "input": {}}}], "tool_use", usage(1, 1)
    )
    encodes: list[int] = []
    real = binascii.b2a_base64

    def counting(data: Any, *args: Any, **kwargs: Any) -> bytes:
        if len(data) >= 1 << 20:
            encodes.append(len(data))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(binascii, "b2a_base64", counting)
    with LoopbackServer([Reply(json=call), Reply(json=call), OK]) as server:
        rt = Runtime(
            model=f"bedrock:{MODEL}",
            providers={"bedrock": {**CREDENTIALS, "region": REGION, "endpoint_url": server.url}},
        )
        try:
            content = [{"type": "text", "text": "look"}, {"type": "image", "path": str(path)}]
            assert rt.exec(content, tools=[noop]) == "a picture"
        finally:
            rt.close()
        bodies = [json.loads(r.body) for r in server.requests]
    assert len(encodes) == 1, encodes
    assert len(bodies) == 3
    for body in bodies:
        sent = body["messages"][0]["content"][1]["image"]["source"]["bytes"]
        assert base64.b64decode(sent) == PNG * 300


def test_token_counting_and_batch_files_carry_the_real_bytes() -> None:
    with LoopbackServer([OK]) as server:
        p = provider(server)
        claude = Request("us.anthropic.claude-sonnet-4-5-20250929-v1:0", image_request().messages)
        arguments = p.build_count_request(claude)
        content = arguments["input"]["converse"]["messages"][0]["content"]
        assert type(content[1]["image"]["source"]["bytes"]) is bytes
        assert content[1]["image"]["source"]["bytes"] == PNG
        batch = p.batch_backend()
        req = image_request()
        line = batch.jsonl([BatchItem("r1", req, p.prepare(req))]).decode()
        record = json.loads(line)
        sent = record["modelInput"]["messages"][0]["content"][1]["image"]["source"]["bytes"]
        assert base64.b64decode(sent) == PNG
        p.close()
