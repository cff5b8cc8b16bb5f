"""The stream path's own frame reader and event shaping against botocore's.

``llmport_bedrock.eventstream.Frames`` cuts the bytes and
``direct.StreamShape`` shapes each event as botocore's parser would; a frame
they do not read goes to botocore. Here: frames cut the same at any chunk
boundary, each event (shaped here or handed over) equals botocore's, and a
plain stream never reaches botocore's decoder (that is the speed-up).
"""

from __future__ import annotations

import base64
import random
import struct
import zlib
from typing import Any

import boto3
import pytest
from botocore.eventstream import EventStreamBuffer
from llmport_bedrock import direct
from llmport_bedrock.eventstream import Frames, encode_frame, encode_stream
from support.bedrock_scenarios import REGION, ev, stream_reply
from test_bedrock_direct import CREDENTIALS
from test_bedrock_direct_stream import STREAMS, raw_events


@pytest.fixture(scope="module")
def wire() -> direct.Wire:
    session = boto3.session.Session(region_name=REGION, **CREDENTIALS)
    return direct.Wire(session.client("bedrock-runtime", endpoint_url="http://127.0.0.1:9"))


def botocore_events(wire: direct.Wire, data: bytes) -> list[Any]:
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [wire.event(message) for message in buffer]


def our_events(wire: direct.Wire, data: bytes, chunk: int) -> list[Any]:
    frames = Frames()
    out = []
    for at in range(0, len(data), chunk):
        out += [wire.frame_event(*frame) for frame in frames.feed(data[at : at + chunk])]
    return out


@pytest.mark.parametrize("case", list(STREAMS))
def test_any_chunking_gives_botocores_events(wire: direct.Wire, case: str) -> None:
    data = encode_stream(STREAMS[case])
    expected = botocore_events(wire, data)
    chunks = [1, 7, 13, 64, len(data)] + [random.Random(i).randint(2, 300) for i in range(3)]
    for chunk in chunks:
        assert our_events(wire, data, chunk) == expected, chunk


#: Events the plan must hand to botocore, or shape exactly as it does.
UNUSUAL = {
    "unknown union member": ev(
        "contentBlockDelta", contentBlockIndex=0, delta={"somethingNew": {"x": 1}}
    ),
    "two union members": ev("contentBlockDelta", contentBlockIndex=0, delta={"text": "a", "b": 1}),
    "image delta": ev(
        "contentBlockDelta",
        contentBlockIndex=0,
        delta={
            "image": {"format": "png", "source": {"bytes": base64.b64encode(b"\x89PNG").decode()}}
        },
    ),
    "null member": ev("messageStop", stopReason="end_turn", additionalModelResponseFields=None),
    "guardrail trace": ev(
        "metadata",
        usage={"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        metrics={"latencyMs": 1},
        trace={
            "guardrail": {
                "outputAssessments": {
                    "g": [
                        {"contextualGroundingPolicy": {"filters": [{"threshold": 1, "score": 0.5}]}}
                    ]
                }
            }
        },
    ),
    "unknown event": ev("somethingElse", a=1),
}


@pytest.mark.parametrize("case", list(UNUSUAL))
def test_unusual_events_equal_botocores(wire: direct.Wire, case: str) -> None:
    data = encode_stream([UNUSUAL[case]])
    try:
        expected: Any = botocore_events(wire, data)
    except Exception as error:
        expected = repr(error)
    try:
        ours: Any = our_events(wire, data, len(data))
    except Exception as error:
        ours = repr(error)
    assert ours == expected


def test_a_non_string_header_leaves_the_frame_to_botocore() -> None:
    data = encode_frame({":event-type": "messageStart"}, b'{"role": "assistant"}')
    assert Frames().feed(data)[0][0] == {":event-type": "messageStart"}
    # The same header typed 6 (bytes) instead of 7 (string), the CRC made again.
    patched = bytearray(data)
    patched[12 + 1 + len(":event-type")] = 6
    patched[-4:] = struct.pack("!I", zlib.crc32(bytes(patched[:-4])))
    headers, _, raw = Frames().feed(bytes(patched))[0]
    assert headers is None and raw == bytes(patched)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_plain_stream_never_reaches_botocores_decoder(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = await raw_events(mode, stream_reply(STREAMS["tools"], "req-7"), False, monkeypatch)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("botocore's decoder was used")

    monkeypatch.setattr("botocore.eventstream.EventStreamBuffer", refused)
    ours = await raw_events(mode, stream_reply(STREAMS["tools"], "req-7"), True, monkeypatch)
    assert ours == expected
