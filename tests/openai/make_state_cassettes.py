"""Build the server-state cassettes from the recorded OpenAI calls (no API key needed).

    uv run python tests/openai/make_state_cassettes.py [NAME ...]

The replies are the responses of the wire samples (``../shared/wire-samples/
openai-responses/``, next to the checkout) unchanged, streamed variants
derived from them; the real plugin and the real ``openai`` SDK send their
requests to a :class:`~llmport.testing.loopback.LoopbackServer` serving
those replies, recorded by vcrpy and cleaned as in ``make_cassettes.py``. So
the request bodies are exactly what llmport sends; the tests compare them
with the samples' requests.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
#: The first ancestor of the checkout with ``shared/wire-samples`` beside it.
SAMPLES = next(
    (
        p / "shared" / "wire-samples" / "openai-responses"
        for p in HERE.parents
        if (p / "shared" / "wire-samples").is_dir()
    ),
    Path("shared/wire-samples/openai-responses"),
)

import llmport_openai.plugin  # noqa: E402
from llmport import Backoff, Runtime  # noqa: E402
from llmport.plugins.host import PluginHost  # noqa: E402
from llmport.testing.loopback import LoopbackServer, Reply  # noqa: E402
from make_cassettes import KEEP_REQUEST_HEADERS, KEEP_RESPONSE_HEADERS  # noqa: E402
from openai_depth_scenarios import responses_sse  # noqa: E402
from state_scenarios import (  # noqa: E402
    BACKGROUND_MODEL,
    BACKGROUND_QUESTION,
    MODEL,
    chained_turn,
    conversation_turn,
    first_turn,
)
from support.cassette_support import CASSETTES, clean_recording, make_vcr  # noqa: E402
from support.openai_scenarios import FAKE_KEY  # noqa: E402


def sample(name: str) -> list[dict[str, Any]]:
    data: dict[str, Any] = json.loads((SAMPLES / f"{name}.json").read_text())
    return list(data["interactions"])


def responses(name: str) -> list[dict[str, Any]]:
    """The JSON answers of the sample's ``POST /v1/responses`` calls, in order."""
    return [
        i["response"]["body"]
        for i in sample(name)
        if i["request"]["method"] == "POST" and i["request"]["uri"].endswith("/v1/responses")
    ]


def replies(name: str, stream: bool) -> list[Reply]:
    bodies = responses(name)
    return [Reply(sse=responses_sse(b)) if stream else Reply(json=b) for b in bodies]


def previous_id(rt: Runtime, stream: bool) -> None:
    first = rt.run(model=MODEL, **first_turn())
    if stream:
        list(rt.stream(model=MODEL, **chained_turn(str(first.response_id))))
    else:
        rt.run(model=MODEL, **chained_turn(str(first.response_id)))


def conversation(rt: Runtime, stream: bool) -> None:
    conv = rt.create_conversation()
    for index in (0, 1):
        if stream:
            list(rt.stream(model=MODEL, **conversation_turn(index)))
        else:
            rt.run(model=MODEL, **conversation_turn(index))
    rt.delete_conversation(conv)


def background_poll(rt: Runtime, stream: bool) -> None:
    job = rt.submit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL)
    job.wait(poll=0.0)
    job.result()


def background_stream(rt: Runtime, stream: bool) -> None:
    job = rt.submit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL, stream=True)
    list(job.stream())


def background_cancel(rt: Runtime, stream: bool) -> None:
    rt.submit(BACKGROUND_QUESTION, model=BACKGROUND_MODEL).cancel()


def all_replies(name: str) -> list[Reply]:
    """Every answer of the sample, in order (polls included)."""
    out = []
    for i in sample(name):
        body = i["response"]["body"]
        out.append(Reply(sse=body) if isinstance(body, list) else Reply(json=body))
    return out


def cancelled_replies() -> list[Reply]:
    """The queued answer of background-poll.json, then OpenAI's documented cancel answer:
    the same response object in status ``cancelled``."""
    queued = sample("background-poll")[0]["response"]["body"]
    return [Reply(json=queued), Reply(json={**queued, "status": "cancelled"})]


SCENARIOS: dict[str, tuple[str, Callable[[Runtime, bool], None], bool]] = {
    "responses_previous_id": ("previous-response-id-tool-loop", previous_id, False),
    "responses_previous_id_stream": ("previous-response-id-tool-loop", previous_id, True),
    "responses_conversation": ("conversation", conversation, False),
    "responses_conversation_stream": ("conversation", conversation, True),
    "responses_background_poll": ("background-poll", background_poll, False),
    "responses_background_stream": ("background-stream", background_stream, True),
    "responses_background_cancel": ("background-poll", background_cancel, False),
}


def record(name: str) -> Path:
    source, drive, stream = SCENARIOS[name]
    if name.startswith("responses_background"):
        scripted = cancelled_replies() if name.endswith("cancel") else all_replies(source)
    elif source == "conversation":  # create, two turns, delete
        scripted = all_replies(source)
        scripted[1:3] = replies(source, stream)
    else:
        scripted = replies(source, stream)
    if name == "responses_previous_id_stream":
        scripted[0] = Reply(json=responses(source)[0])  # the first run is not streamed
    host = PluginHost(extra=[llmport_openai.plugin], load_entry_points=False)
    with LoopbackServer(scripted) as server, tempfile.TemporaryDirectory() as tmp:
        rt = Runtime(
            plugins=host,
            backoff=Backoff.none(),
            providers={"openai-responses": {"base_url": server.url + "/v1", "api_key": FAKE_KEY}},
        )
        raw = Path(tmp) / "raw.yaml"
        with make_vcr(record_mode="all", cassette_library_dir=tmp).use_cassette(str(raw)):
            drive(rt, stream)
        assert server.unplayed == 0, f"{name}: {server.unplayed} scripted replies unused"
        data = clean_recording(
            yaml.safe_load(raw.read_text()),
            "https://api.openai.com",
            KEEP_REQUEST_HEADERS,
            KEEP_RESPONSE_HEADERS,
        )
    target = CASSETTES / "openai" / f"{name}.yaml"
    target.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120))
    return target


if __name__ == "__main__":
    for name in sys.argv[1:] or list(SCENARIOS):
        print("recorded", record(name).relative_to(CASSETTES.parent))
