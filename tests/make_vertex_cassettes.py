"""Re-make cassettes/vertex/*.yaml without Google credentials (not a test).

    uv run python tests/make_vertex_cassettes.py

For each scenario in :data:`SCENARIOS`: serve the recorded answers of a
wire sample (``../shared/wire-samples/{anthropic,gemini}/``, the same
Messages API and ``generateContent`` answers Vertex AI returns) from a
:class:`~llmport.testing.loopback.LoopbackServer`, run the call through the
real Runtime, plugin and vendor SDK (``AnthropicVertex``, google-genai's
Vertex AI client) while vcrpy records, then rewrite the loopback address to
the region's ``aiplatform.googleapis.com`` host and keep only the headers
that matter (no ``authorization``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from llmport import Runtime  # noqa: E402
from llmport.testing.loopback import LoopbackServer, Reply  # noqa: E402
from support.cassette_support import CASSETTES, make_vcr, rewrite_recording  # noqa: E402
from support.vertex_support import SCENARIOS, Scenario  # noqa: E402

WIRE = HERE.parents[2] / "shared" / "wire-samples"
KEEP_REQUEST_HEADERS = {"content-type", "anthropic-version"}
KEEP_RESPONSE_HEADERS = {"content-type", "request-id"}


def sample_reply(scenario: Scenario) -> Reply:
    """The wire sample's first answer: JSON, or its SSE events."""
    data = json.loads((WIRE / scenario.sample).read_text())
    body = data["interactions"][0]["response"]["body"]
    return Reply(sse=body) if scenario.stream else Reply(json=body)


def record(scenario: Scenario) -> Path:
    path = CASSETTES / scenario.cassette
    path.unlink(missing_ok=True)
    base = "/v1" if scenario.provider == "anthropic-vertex" else ""
    with LoopbackServer([sample_reply(scenario)]) as server:
        settings = {**scenario.settings(), "base_url": server.url + base}
        rt = Runtime(
            model=f"{scenario.provider}:{scenario.model}",
            providers={scenario.provider: settings},
        )
        with make_vcr(record_mode="all").use_cassette(scenario.cassette):
            if scenario.stream:
                list(rt.stream(scenario.prompt, system=scenario.system))
            else:
                rt.run(scenario.prompt, system=scenario.system)
        rt.close()
    rewrite_recording(path, scenario.host(), KEEP_REQUEST_HEADERS, KEEP_RESPONSE_HEADERS)
    return path


if __name__ == "__main__":
    for name in sys.argv[1:] or list(SCENARIOS):
        print(record(SCENARIOS[name]))
