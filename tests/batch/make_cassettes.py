"""Regenerate cassettes/<vendor>/batch_*.yaml without any key.

    uv run python tests/batch/make_cassettes.py [NAME ...]

Each scenario of ``batch_scenarios.py`` runs its flow (``batch_flows.py``)
through the real plugin and the real vendor SDK against a
:class:`~llmport.testing.loopback.LoopbackServer` serving the scripted answers
(written from the vendor's documented batch format: no batch recording
exists), recorded by vcrpy with the tests' settings; then the loopback host
becomes the vendor's and only non-identifying headers are kept.
"""

from __future__ import annotations

import importlib
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from batch_flows import resume_flow, run_flow  # noqa: E402
from batch_scenarios import Scenario, scenarios  # noqa: E402
from batch_vcr import batch_vcr  # noqa: E402
from llmport import Runtime  # noqa: E402
from llmport.plugins.host import PluginHost  # noqa: E402
from llmport.testing.loopback import LoopbackServer  # noqa: E402
from support.cassette_support import CASSETTES  # noqa: E402

KEEP_REQUEST = {"content-type", "accept", "anthropic-beta"}
KEEP_RESPONSE = {"content-type", "x-request-id", "request-id", "x-amzn-requestid"}


def runtime(scenario: Scenario, settings: dict[str, Any]) -> Runtime:
    plugin = importlib.import_module(f"llmport_{scenario.vendor}.plugin")
    prefix = scenario.model.split(":", 1)[0]
    return Runtime(
        model=scenario.model,
        plugins=PluginHost(extra=[plugin], load_entry_points=False),
        providers={prefix: settings},
    )


def play(rt: Runtime, scenario: Scenario, mode: str = "sync") -> Any:
    if scenario.flow == "run":
        return run_flow(rt, scenario.model, mode, scenario.batch_options)
    return resume_flow(rt, scenario.job_id, mode)


def rewrite(uri: str, vendor: str) -> str:
    """The loopback URI as the vendor's (the default endpoints the SDKs use)."""
    from batch_scenarios import rewrite_uri

    return rewrite_uri(re.sub(r"^http://127\.0\.0\.1:\d+", "", uri), vendor)


def record(scenario: Scenario) -> Path:
    from batch_scenarios import loopback_settings

    with LoopbackServer(scenario.replies) as server, tempfile.TemporaryDirectory() as tmp:
        rt = runtime(scenario, loopback_settings(scenario, server.url))
        raw = Path(tmp) / "raw.yaml"
        with batch_vcr(record_mode="all", cassette_library_dir=tmp).use_cassette(str(raw)):
            play(rt, scenario)
        rt.close()
        assert server.unplayed == 0, f"{scenario.name}: {server.unplayed} scripted replies unused"
        data = yaml.safe_load(raw.read_text())
    for interaction in data["interactions"]:
        request, response = interaction["request"], interaction["response"]
        request["uri"] = rewrite(request["uri"], scenario.vendor)
        request["headers"] = {
            k: [x.decode() if isinstance(x, bytes) else x for x in v]
            for k, v in request["headers"].items()
            if k.lower() in KEEP_REQUEST
        }
        response["headers"] = {
            k: v for k, v in response["headers"].items() if k.lower() in KEEP_RESPONSE
        }
        body = response.get("body", {}).get("string")
        if isinstance(body, str) and "127.0.0.1" in body:  # e.g. Anthropic's results_url
            host = rewrite("/", scenario.vendor).rstrip("/")
            response["body"]["string"] = re.sub(r"http://127\.0\.0\.1:\d+", host, body)
    target = CASSETTES / scenario.cassette
    target.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120))
    return target


def main(names: list[str]) -> None:
    table = scenarios()
    for name in names or list(table):
        print("recorded", record(table[name]).relative_to(CASSETTES.parent))


if __name__ == "__main__":
    main(sys.argv[1:])
