"""Regenerate cassettes/compat/*.yaml (no key needed).

    uv run python tests/compat/make_cassettes.py [NAME ...]

Each scenario of ``compat_scenarios.py`` runs through the real plugin and the
real ``openai`` SDK against a :class:`~llmport.testing.loopback.LoopbackServer`
serving the scenario's replies (a recorded sample's responses verbatim, or a
documented-format stream), recorded by vcrpy with the tests' settings; the
host is then rewritten to the service's and only non-identifying headers are
kept. So every request body is what llmport sends; every recorded reply is
the service's own.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import llmport_openai.plugin  # noqa: E402
from compat_scenarios import Scenario, scenarios  # noqa: E402
from llmport import Backoff, Runtime  # noqa: E402
from llmport.plugins.host import PluginHost  # noqa: E402
from llmport.testing.loopback import LoopbackServer  # noqa: E402
from support.cassette_support import CASSETTES, clean_recording, make_vcr  # noqa: E402

KEEP_REQUEST_HEADERS = {"content-type", "accept"}
KEEP_RESPONSE_HEADERS = {"content-type", "retry-after", "x-request-id"}


def record(sc: Scenario) -> Path:
    host = PluginHost(extra=[llmport_openai.plugin], load_entry_points=False)
    old = dict(os.environ)
    os.environ.update(sc.env)
    try:
        with LoopbackServer(sc.replies) as server, tempfile.TemporaryDirectory() as tmp:
            settings: dict[str, Any] = {**sc.settings, "base_url": server.url + sc.host[1]}
            rt = Runtime(
                model=sc.model,
                plugins=host,
                backoff=Backoff.none(),
                providers={sc.prefix: settings},
            )
            raw = Path(tmp) / "raw.yaml"
            with make_vcr(record_mode="all", cassette_library_dir=tmp).use_cassette(str(raw)):
                sc.run(rt)
            assert server.unplayed == 0, f"{sc.name}: {server.unplayed} replies unused"
            data = clean_recording(
                yaml.safe_load(raw.read_text()),
                sc.host[0],
                KEEP_REQUEST_HEADERS,
                KEEP_RESPONSE_HEADERS,
            )
    finally:
        os.environ.clear()
        os.environ.update(old)
    target = CASSETTES / sc.cassette
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120))
    return target


def main(names: list[str]) -> None:
    table = scenarios()
    for name in names or list(table):
        print("recorded", record(table[name]).relative_to(CASSETTES.parent))


if __name__ == "__main__":
    main(sys.argv[1:])
