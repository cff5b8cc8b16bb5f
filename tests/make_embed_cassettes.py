"""Re-make cassettes/embeddings/*.yaml from the fourth batch's wire samples (not a test).

    uv run python tests/make_embed_cassettes.py [NAME ...]

For each scenario of ``support/embed_scenarios.py`` (every embedding sample but
OpenAI's, whose cassettes come with the OpenAI plugin): serve the sample's
recorded answers from a :class:`~llmport.testing.loopback.LoopbackServer`, run
the scenario's ``rt.embed`` call through the real Runtime, plugin and SDK
(google-genai, boto3, httpx2) while vcrpy records, then rewrite the loopback
address to the vendor's host and keep only the headers that matter (no
``authorization``, no AWS signature). Requests are what the plugins send
(equal to the recorded ones: ``tests/embed_vendors/test_embed_samples.py``);
answers are the recorded ones, except Voyage AI's base64 vectors, which the
samples keep truncated: they are rebuilt at their recorded length with
made values (``embed_scenarios.vectors``).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from llmport import Runtime  # noqa: E402
from llmport.testing.loopback import LoopbackServer  # noqa: E402
from support.cassette_support import CASSETTES, make_vcr, rewrite_recording  # noqa: E402
from support.embed_scenarios import SCENARIOS, Scenario  # noqa: E402
from support.vertex_support import FakeCredentials  # noqa: E402

HOSTS = {
    "gemini": "https://generativelanguage.googleapis.com",
    "gemini-vertex": "https://aiplatform.googleapis.com",
    "bedrock": "https://bedrock-runtime.us-east-1.amazonaws.com",
    "cohere": "https://api.cohere.com",
    "voyage": "https://api.voyageai.com",
}
KEEP_REQUEST_HEADERS = {"content-type"}
KEEP_RESPONSE_HEADERS = {"content-type", "x-amzn-bedrock-input-token-count"}


def replay_settings(scenario: Scenario) -> dict[str, object]:
    """The provider settings of the replay (and of the recording, plus the loopback URL)."""
    settings = dict(scenario.settings)
    if scenario.provider == "gemini-vertex":
        settings["credentials"] = FakeCredentials()
    return settings


def record(scenario: Scenario) -> Path:
    path = CASSETTES / scenario.cassette
    path.unlink(missing_ok=True)
    with LoopbackServer(scenario.replies()) as server:
        where = "endpoint_url" if scenario.provider == "bedrock" else "base_url"
        settings = {**replay_settings(scenario), where: server.url}
        rt = Runtime(providers={scenario.provider: settings})
        model = f"{scenario.provider}:{scenario.model}"
        with make_vcr(record_mode="all").use_cassette(scenario.cassette):
            if scenario.one_per_call:
                # the same requests rt.embed sends concurrently, one at a time: vcrpy
                # loses interactions recorded from several threads at once
                for text in scenario.inputs:
                    rt.embed([text], model=model, **scenario.call)
            else:
                rt.embed(list(scenario.inputs), model=model, **scenario.call)
        rt.close()
    rewrite_recording(path, HOSTS[scenario.provider], KEEP_REQUEST_HEADERS, KEEP_RESPONSE_HEADERS)
    return path


if __name__ == "__main__":
    for name in sys.argv[1:] or list(SCENARIOS):
        print(record(SCENARIOS[name]))
