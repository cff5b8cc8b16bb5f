"""The cassette format and matching (llmport.testing.cassette_format/_match)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from botocore.eventstream import EventStreamBuffer
from llmport.testing.cassette_format import (
    MEDIA_MARKER,
    body_bytes,
    encode_event_stream,
    load_media,
    media_dir,
    readable,
    replayable,
    store_media,
    stored_body,
)
from llmport.testing.cassette_match import canonical_body, describe, first_difference
from llmport.testing.loopback import sse_bytes


def test_an_sse_stream_is_stored_as_events_and_replayed_byte_for_byte_equivalent() -> None:
    wire = sse_bytes([{"event": "message_start", "data": {"type": "message_start"}}, "[DONE]"])
    stored = stored_body(wire, "text/event-stream; charset=utf-8")
    assert stored == {
        "events": [
            {"event": "message_start", "data": {"type": "message_start"}},
            {"data": "[DONE]"},
        ]
    }
    assert stored_body(body_bytes(stored), "text/event-stream") == stored


def test_an_aws_event_stream_is_stored_as_frames_and_re_encoded_with_valid_crcs() -> None:
    frames = [
        {"headers": {":event-type": kind, ":message-type": "event"}, "payload": {"json": data}}
        for kind, data in [
            ("messageStart", {"role": "assistant"}),
            ("contentBlockDelta", {"delta": {"text": "hi"}}),
        ]
    ]
    wire = encode_event_stream(frames)
    parsed = EventStreamBuffer()  # botocore's own parser checks both CRCs of every frame
    parsed.add_data(wire)
    assert [json.loads(m.payload) for m in parsed] == [
        {"role": "assistant"},
        {"delta": {"text": "hi"}},
    ]
    stored = stored_body(wire, "application/vnd.amazon.eventstream")
    assert stored is not None and "aws_events" in stored
    assert [f["headers"][":event-type"] for f in stored["aws_events"]] == [
        "messageStart",
        "contentBlockDelta",
    ]
    assert stored["aws_events"][1]["payload"] == {"json": {"delta": {"text": "hi"}}}
    assert body_bytes(stored) == wire


def test_a_non_utf8_body_is_kept_as_base64() -> None:
    assert body_bytes(stored_body(b"\xff\x00\x01", "application/octet-stream")) == b"\xff\x00\x01"


def test_large_media_go_to_a_side_file_by_hash_and_come_back(tmp_path: Path) -> None:
    cassette = tmp_path / "app.yaml"
    image = base64.b64encode(bytes(range(256)) * 40).decode()
    body = {"messages": [{"content": [{"image": image}, {"text": "short"}]}]}
    stored = store_media(body, cassette)
    marker = stored["messages"][0]["content"][0]["image"]
    assert (
        marker.startswith(MEDIA_MARKER) and stored["messages"][0]["content"][1]["text"] == "short"
    )
    assert [p.name for p in media_dir(cassette).iterdir()] == [marker[len(MEDIA_MARKER) :]]
    assert load_media(stored, cassette) == body


def test_an_interaction_round_trips_through_the_readable_form(tmp_path: Path) -> None:
    interaction = {
        "request": {
            "method": "POST",
            "uri": "https://api.example.com/v1/chat",
            "body": json.dumps({"b": 1, "a": [1, 2]}).encode(),
            "headers": {"Content-Type": ["application/json"], "Content-Length": ["20"]},
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["application/json"], "content-length": ["9"]},
            "body": {"string": b'{"ok": 1}'},
        },
    }
    shown = readable(interaction, tmp_path / "c.yaml")
    assert shown["request"]["body"] == {"json": {"b": 1, "a": [1, 2]}}
    assert "Content-Length" not in shown["request"]["headers"]  # re-encoding changes it
    back = replayable(shown, tmp_path / "c.yaml")
    assert json.loads(back["request"]["body"]) == {"b": 1, "a": [1, 2]}
    assert json.loads(back["response"]["body"]["string"]) == {"ok": 1}


def test_bodies_compare_as_json_minus_the_volatile_fields() -> None:
    one = b'{"model": "m", "metadata": {"user_id": "u1"}, "messages": [{"id": 1, "t": "hi"}]}'
    two = b'{"messages": [{"id": 2, "t": "hi"}], "metadata": {"user_id": "u2"}, "model": "m"}'
    assert canonical_body(one) != canonical_body(two)
    ignore = ["metadata.user_id", "messages.*.id"]
    assert canonical_body(one, ignore) == canonical_body(two, ignore)


def multipart(boundary: str, purpose: str) -> bytes:
    return (
        f'--{boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\n{purpose}'
        f'\r\n--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="b.jsonl"'
        f'\r\nContent-Type: application/jsonl\r\n\r\n{{"custom_id": "a"}}\r\n--{boundary}--\r\n'
    ).encode()


def test_an_upload_compares_part_by_part_whatever_its_random_boundary() -> None:
    one, two = multipart("46e65b93", "batch"), multipart("94678698", "batch")
    assert one != two and canonical_body(one) == canonical_body(two)
    parts = canonical_body(one)["multipart"]
    assert parts[1]["content"] == {"custom_id": "a"}  # a JSON part is parsed
    other = canonical_body(multipart("94678698", "user_data"))
    assert first_difference(canonical_body(one), other) == (
        "$.multipart[0].content",
        "batch",
        "user_data",
    )


def test_the_first_difference_names_the_json_path_and_both_values() -> None:
    recorded = {"messages": [{"role": "user", "content": "Hello"}], "model": "m"}
    sent = {"messages": [{"role": "user", "content": "Hi"}], "model": "m"}
    assert first_difference(recorded, sent) == ("$.messages[0].content", "Hello", "Hi")
    assert first_difference({"a": 1}, {"a": 1, "b": 2}) == ("$.b", "<absent>", 2)
    assert first_difference(recorded, recorded) is None


def test_describe_picks_the_candidate_with_the_same_path() -> None:
    candidates = [
        ("POST", "http://h/v1/other", b'{"x": 1}'),
        ("POST", "http://h/v1/chat", b'{"prompt": "old"}'),
    ]
    message, path, was, sent = describe(
        "POST", "http://h/v1/chat", b'{"prompt": "new"}', candidates, ("method", "path", "body"), ()
    )
    assert (path, was, sent) == ("$.prompt", "old", "new")
    assert "POST /v1/chat" in message and "$.prompt" in message


def test_event_times_survive_a_reload_and_pace_the_events_they_belong_to(tmp_path: Path) -> None:
    from llmport.testing.cassette_format import readable, replayable
    from llmport.testing.cassette_timing import PACED_KEY

    frames = [{"headers": {":event-type": "chunk"}, "payload": {"json": {"n": n}}} for n in (1, 2)]
    for body in ({"events": [{"data": {"n": 1}}, {"data": "[DONE]"}]}, {"aws_events": frames}):
        stored = {
            "request": {"method": "POST", "uri": "http://v.example/x", "headers": {}, "body": None},
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": {"content-type": ["text/event-stream"]},
                "body": body,
                "event_times": [0.25, 0.5],
            },
        }
        replayed = replayable(stored, tmp_path / "c.yaml")["response"]
        assert [offset for offset, _ in replayed[PACED_KEY]] == [0.25, 0.5]
        assert b"".join(chunk for _, chunk in replayed[PACED_KEY]) == replayed["body"]["string"]
        reloaded = readable({"request": stored["request"], "response": replayed}, tmp_path)
        assert reloaded["response"]["event_times"] == [0.25, 0.5]  # kept when the file is rewritten


def test_arrivals_become_one_time_per_event_and_none_when_they_do_not_cover_the_body() -> None:
    from llmport.testing.cassette_timing import event_times, sse_event_ends

    data = b"data: 1\n\n\n\ndata: 2\r\n\r\ndata: 3"
    ends = sse_event_ends(data)
    assert len(ends) == 3 and ends[-1] == len(data)
    # Two chunks: the first brings events 1 and half of 2, the second the rest.
    assert event_times(ends, [(12, 0.1), (len(data), 0.4)]) == [0.1, 0.4, 0.4]
    assert event_times(ends, [(12, 0.1)]) is None


def test_a_paced_urllib3_body_gives_one_event_per_read_and_everything_to_a_whole_read() -> None:
    from llmport.testing.cassette_timing import PacedBytes

    paced = [(0.0, b"data: 1\n\n"), (0.0, b"data: 2\n\n")]
    assert PacedBytes(paced, 1.0).read(1024) == b"data: 1\n\n"
    assert PacedBytes(paced, 1.0).read() == b"data: 1\n\ndata: 2\n\n"
