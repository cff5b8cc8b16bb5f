"""Re-make cassettes/embeddings/media_*.yaml from the vendors' API references (not a test).

    uv run python tests/make_embed_media_cassettes.py [NAME ...]

No recording of image embeddings exists. For each scenario of
``support/embed_media_scenarios.py``, a loopback server answers as the scenario's API
reference documents, the real plugin (and boto3, google-genai, httpx2) sends the
scenario's ``rt.embed`` call while vcrpy records, the address becomes the vendor's host,
and the cassette's first lines say which document its answers were written from.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from llmport import Runtime  # noqa: E402
from llmport.testing.loopback import LoopbackServer, Reply  # noqa: E402
from make_embed_cassettes import HOSTS, KEEP_REQUEST_HEADERS, KEEP_RESPONSE_HEADERS  # noqa: E402
from support.cassette_support import CASSETTES, make_vcr, rewrite_recording  # noqa: E402
from support.embed_media_scenarios import MEDIA_SCENARIOS, MediaScenario  # noqa: E402
from support.vertex_support import FakeCredentials  # noqa: E402


def settings_of(scenario: MediaScenario) -> dict[str, object]:
    settings = dict(scenario.settings)
    if scenario.provider == "gemini-vertex":
        settings["credentials"] = FakeCredentials()
    return settings


def record(scenario: MediaScenario) -> Path:
    path = CASSETTES / scenario.cassette
    path.unlink(missing_ok=True)
    with LoopbackServer([Reply(handler=scenario.reply)], repeat=True) as server:
        where = "endpoint_url" if scenario.provider == "bedrock" else "base_url"
        rt = Runtime(providers={scenario.provider: {**settings_of(scenario), where: server.url}})
        model = f"{scenario.provider}:{scenario.model}"
        with make_vcr(record_mode="all").use_cassette(scenario.cassette):
            if scenario.one_per_call:  # vcrpy loses interactions recorded from threads at once
                for item in scenario.inputs:
                    rt.embed([item], model=model, **scenario.call)
            else:
                rt.embed(scenario.inputs, model=model, **scenario.call)
        rt.close()
    rewrite_recording(path, HOSTS[scenario.provider], KEEP_REQUEST_HEADERS, KEEP_RESPONSE_HEADERS)
    header = (
        "# Not a recording: no recording of image embeddings exists. The requests are what\n"
        "# llmport's plugin sent; the answers are written from the vendor's API reference:\n"
        f"# {scenario.document}.\n"
    )
    path.write_text(header + path.read_text())
    return path


if __name__ == "__main__":
    for name in sys.argv[1:] or list(MEDIA_SCENARIOS):
        print(record(MEDIA_SCENARIOS[name]))
