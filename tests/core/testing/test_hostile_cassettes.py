"""A cassette file is input too: whatever is in it is refused typed, in bounded time.

Cassettes are checked in and edited by hand; one may be truncated by a merge,
saved in another encoding, or written by someone hostile. Each case below is
a file that is not a stored cassette: replaying it (or opening it to record
more) raises one ``CassetteError`` naming the file and the place, with no
foreign exception inside, never hangs, never reads a file the cassette names,
and never writes over the file.
"""

from __future__ import annotations

import hashlib
import struct
import threading
from collections.abc import Callable
from pathlib import Path

import llmport_openai.plugin
import pytest
from llmport import CassetteError, Runtime
from llmport.testing import cassette
from llmport.testing.cassette_format import (
    MEDIA_MARKER,
    body_bytes,
    decode_event_stream,
    media_dir,
    stored_body,
)

URI = "http://vendor.example/v1/chat/completions"
#: No case may take longer than this to be refused (the alias bomb took minutes).
BOUND = 60.0


def interaction(request_body: str = "{json: {}}", response: str = "") -> str:
    response = response or "{status: {code: 200, message: OK}, headers: {}, body: {json: {}}}"
    return (
        "version: 1\ninteractions:\n"
        f"- request: {{method: POST, uri: '{URI}', headers: {{}}, body: {request_body}}}\n"
        f"  response: {response}\n"
    )


def timed_stream(times: str) -> bytes:
    """A streamed response of two events whose ``event_times`` are ``times`` (YAML)."""
    events = "{events: [{data: {a: 1}}, {data: {a: 2}}]}"
    headers = "{content-type: [text/event-stream]}"
    response = (
        f"{{status: {{code: 200}}, headers: {headers}, body: {events}, event_times: {times}}}"
    )
    return interaction(response=response).encode()


def alias_bomb() -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return "\n".join(lines) + "\n" + interaction("{json: *a8}")


def media_case(folder: Path, name: str, marker: str, side: bytes | None = None) -> bytes:
    if side is not None:
        media = media_dir(folder / name)
        media.mkdir(parents=True, exist_ok=True)
        (media / marker).write_bytes(side)
    return interaction(f"{{json: {{image: '{MEDIA_MARKER}{marker}'}}}}").encode()


def secret_beside(folder: Path) -> None:
    (folder / "secret.txt").write_text("not for the cassette")


#: name -> (file bytes, what the error names)
Case = Callable[[Path, str], tuple[bytes, str]]
CASES: dict[str, Case] = {
    "a list, not a mapping": lambda d, n: (b"- 1\n- 2\n", "<root>"),
    "an interaction that is a string": lambda d, n: (
        b"version: 1\ninteractions:\n- hello\n",
        "interactions/0",
    ),
    "a request that is a string": lambda d, n: (
        b"version: 1\ninteractions:\n- {request: x, response: y}\n",
        "interactions/0/request",
    ),
    "a status that is a string": lambda d, n: (
        interaction(response="{status: two hundred, headers: {}, body: null}").encode(),
        "interactions/0/response/status",
    ),
    "a status code out of range": lambda d, n: (
        interaction(response="{status: {code: 7}, headers: {}, body: null}").encode(),
        "interactions/0/response/status/code",
    ),
    "headers of the wrong type": lambda d, n: (
        interaction(response="{status: {code: 200}, headers: 7, body: null}").encode(),
        "interactions/0/response/headers",
    ),
    "a stream that is a number": lambda d, n: (
        interaction(response="{status: {code: 200}, headers: {}, body: {events: 5}}").encode(),
        "interactions/0/response/body",
    ),
    "a body in two forms": lambda d, n: (
        interaction(response="{status: {code: 200}, body: {json: 1, text: x}}").encode(),
        "interactions/0/response/body",
    ),
    "base64 that is not": lambda d, n: (
        interaction(response="{status: {code: 200}, headers: {}, body: {base64: '!!!'}}").encode(),
        "cannot read cassette",
    ),
    "nesting 5,000 deep": lambda d, n: (b"a: " + b"[" * 5_000 + b"]" * 5_000 + b"\n", "nested"),
    "an alias bomb": lambda d, n: (alias_bomb().encode(), "aliases"),
    "not UTF-8": lambda d, n: (b"version: 1\ninteractions: []\n\xff\xfe\n", "not UTF-8"),
    "a NUL byte": lambda d, n: (b"\t\x00\x01: :: [\n", "cannot read cassette"),
    "not YAML": lambda d, n: (b"version: 1\ninteractions: [\n  {request: \n", "cannot read"),
    "a side file named by a path": lambda d, n: (
        (secret_beside(d), media_case(d, n, "../secret.txt"))[1],
        "does not name a media side file",
    ),
    "a negative event time": lambda d, n: (timed_stream("[-1, 0.5]"), "event_times/0"),
    "a NaN event time": lambda d, n: (timed_stream("[0.1, .nan]"), "event_times/1"),
    "an infinite event time": lambda d, n: (timed_stream("[0.1, .inf]"), "event_times/1"),
    "an event time of a day": lambda d, n: (timed_stream("[0.1, 86400]"), "event_times/1"),
    "event times going back": lambda d, n: (timed_stream("[0.5, 0.1]"), "event_times/1"),
    "an event time that is text": lambda d, n: (timed_stream("[0.1, soon]"), "event_times/1"),
    "more event times than events": lambda d, n: (
        timed_stream("[0.1, 0.2, 0.3]"),
        "3 event_times for 2 events",
    ),
    "event times on a body that is no stream": lambda d, n: (
        interaction(
            response="{status: {code: 200}, headers: {}, body: {json: {}}, event_times: [0.1]}"
        ).encode(),
        "1 event_times for 0 events",
    ),
    "a side file changed after recording": lambda d, n: (
        media_case(d, n, hashlib.sha256(b"the original").hexdigest(), b"something else"),
        "was changed after recording",
    ),
}


def replay(path: Path, record: str) -> BaseException | None:
    """Run one exec inside ``cassette(path)`` in a thread; the error it raised."""
    rt = Runtime(
        model="openai:gpt-4o-mini",
        hooks=[llmport_openai.plugin],
        providers={
            "openai": {"api_key": "sk-fake-cassette", "base_url": "http://vendor.example/v1"}
        },
    )
    caught: list[BaseException] = []

    def run() -> None:
        try:
            with cassette(path, record=record):
                rt.exec("hi")
        except BaseException as exc:  # the test inspects whatever came out
            caught.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(BOUND)
    assert not worker.is_alive(), f"still reading the cassette after {BOUND} s"
    return caught[0] if caught else None


@pytest.mark.parametrize("record", ["none", "once"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_file_that_is_not_a_cassette_is_refused_typed(
    tmp_path: Path, case: str, record: str
) -> None:
    name = "hostile.yaml"
    text, where = CASES[case](tmp_path, name)
    path = tmp_path / name
    path.write_bytes(text)
    error = replay(path, record)
    assert isinstance(error, CassetteError), repr(error)
    message = str(error)
    assert str(path) in message and where in message, message
    assert "\n" not in message and len(message) < 600  # one line, not a dump of the file
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)
    assert "not for the cassette" not in message  # the named file was never read
    assert path.read_bytes() == text  # never written over


# --- a hostile peer while recording: bytes that claim to be an AWS event stream -------------

GARBAGE_STREAMS = {
    "zeros (a frame of length 0)": b"\x00" * 32,
    "a prelude only": struct.pack(">II", 16, 0),
    "headers longer than the frame": struct.pack(">III", 20, 500, 0) + b"\x00" * 8,
    "a header name that is not UTF-8": (
        struct.pack(">III", 24, 4, 0) + b"\x02\xff\xfe\x07" + b"\x00" * 4
    ),
    "a header cut short": struct.pack(">III", 22, 6, 0) + b"\x09abc" + b"\x00" * 6,
    "random bytes": bytes(range(256)) * 4,
}


@pytest.mark.parametrize("case", list(GARBAGE_STREAMS))
def test_garbage_under_the_event_stream_type_is_stored_as_its_exact_bytes(case: str) -> None:
    data = GARBAGE_STREAMS[case]
    found: list[object] = []
    worker = threading.Thread(target=lambda: found.append(decode_event_stream(data)), daemon=True)
    worker.start()
    worker.join(BOUND)
    assert not worker.is_alive(), "the decoder loops on this input"
    assert found == [None]
    stored = stored_body(data, "application/vnd.amazon.eventstream")
    assert stored is not None and "aws_events" not in stored  # kept as text or base64
    assert body_bytes(stored) == data  # replayed byte for byte
