"""Regenerate cassettes/openai/*.yaml without an API key.

    uv run python tests/openai/make_cassettes.py [NAME ...]

For each scenario of ``openai_scenarios.py`` this runs the real plugin and
the real ``openai`` SDK against a :class:`~llmport.testing.loopback.LoopbackServer`
that serves the hand-written vendor replies, records the exchange with
vcrpy (the same recorder settings as the tests), then rewrites the host to
``https://api.openai.com`` and keeps only non-identifying headers. So the
request bodies are exactly what the SDK sends; the replies follow OpenAI's
documented format. ``nox -s record -- openai`` records live ones instead.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import llmport_openai.plugin  # noqa: E402
from llmport import Backoff, ExecFailed, ProviderError, Runtime  # noqa: E402
from llmport.plugins.host import PluginHost  # noqa: E402
from llmport.testing.loopback import LoopbackServer  # noqa: E402
from support.cassette_support import CASSETTES, clean_recording, make_vcr  # noqa: E402
from support.openai_scenarios import FAKE_KEY, Scenario, scenarios, write_data  # noqa: E402

KEEP_REQUEST_HEADERS = {"content-type", "accept"}
KEEP_RESPONSE_HEADERS = {
    "content-type",
    "x-request-id",
    "retry-after",
    "retry-after-ms",
    "x-should-retry",
}


def run(rt: Runtime, scenario: Scenario) -> Any:
    kwargs = scenario.kwargs()
    if scenario.kind == "count":
        return count(rt, scenario)
    if scenario.stream:
        return list(rt.stream(model=scenario.model, **kwargs))
    result = rt.run(model=scenario.model, **kwargs)
    if scenario.then is not None:
        result = rt.run(model=scenario.model, **scenario.then(result))
    return result


def count_request(scenario: Scenario) -> Any:
    """The Request a count_tokens scenario counts (the tool of count-tokens.json)."""
    from llmport.messages.types import Message, Request, TextBlock, ToolSpec

    return Request(
        model=scenario.model.split(":", 1)[1],
        messages=[Message("user", (TextBlock(scenario.kwargs()["content"]),))],
        tools=[
            ToolSpec(
                "get_weather",
                "Get the weather for a location",
                {
                    "type": "object",
                    "properties": {"location": {"type": "string"}},
                    "additionalProperties": False,
                },
            )
        ],
        tool_choice="required",
    )


def count(rt: Runtime, scenario: Scenario) -> int:
    provider = rt.route(scenario.model)[0]
    return int(provider.count_tokens(count_request(scenario)))


def record(scenario: Scenario) -> Path:
    prefix = scenario.model.split(":", 1)[0]
    host = PluginHost(extra=[llmport_openai.plugin], load_entry_points=False)
    with LoopbackServer(scenario.replies) as server, tempfile.TemporaryDirectory() as tmp:
        rt = Runtime(
            model=scenario.model,
            plugins=host,
            backoff=Backoff.none(),
            max_retries=3,
            providers={
                prefix: {"base_url": server.url + "/v1", "api_key": FAKE_KEY, **scenario.settings}
            },
        )
        raw = Path(tmp) / "raw.yaml"
        with make_vcr(record_mode="all", cassette_library_dir=tmp).use_cassette(str(raw)):
            try:
                run(rt, scenario)
            except (ProviderError, ExecFailed):
                if not scenario.expect_error:
                    raise
        assert server.unplayed == 0, f"{scenario.name}: {server.unplayed} scripted replies unused"
        data = clean_recording(
            yaml.safe_load(raw.read_text()),
            "https://api.openai.com",
            KEEP_REQUEST_HEADERS,
            KEEP_RESPONSE_HEADERS,
        )
    target = CASSETTES / scenario.cassette
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120))
    return target


def main(names: list[str]) -> None:
    write_data()
    table = scenarios()
    for name in names or list(table):
        print("recorded", record(table[name]).relative_to(CASSETTES.parent))


if __name__ == "__main__":
    main(sys.argv[1:])
