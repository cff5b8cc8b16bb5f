"""Re-make cassettes/anthropic/*.yaml without an API key (not a test).

    uv run python tests/anthropic/make_cassettes.py [NAME ...]

For each scenario in ``anthropic_scenarios.py``: serve its documented-format
answers from a :class:`~llmport.testing.loopback.LoopbackServer`, run the scenario's
call through the real Runtime, plugin and ``anthropic`` SDK while vcrpy
records, then rewrite the loopback address to ``https://api.anthropic.com``
and keep only the headers that matter (no credentials, no client details).
With a real key, ``nox -s record -- anthropic`` records against the live API.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from llmport import Backoff, ProviderError, Runtime  # noqa: E402
from llmport.testing.loopback import LoopbackServer  # noqa: E402
from support.anthropic_scenarios import COUNT_TOKENS, SCENARIOS, Scenario, count_request  # noqa: E402
from support.cassette_support import CASSETTES, make_vcr, rewrite_recording  # noqa: E402

KEEP_REQUEST_HEADERS = {"content-type", "accept", "anthropic-version"}
KEEP_RESPONSE_HEADERS = {
    "content-type",
    "retry-after",
    "retry-after-ms",
    "request-id",
    "x-should-retry",
}


def play(rt: Runtime, scenario: Scenario) -> list[Any]:
    """The scenario's call(s): one run/stream, then the follow-up turn if it has one."""
    results: list[Any] = []
    kwargs = dict(scenario.kwargs)
    for turn in range(2 if scenario.then else 1):
        if turn:
            kwargs["content"] = [*results[-1].messages, scenario.then]
        if scenario.stream:
            events = list(rt.stream(**kwargs))
            results.append(events[-1].result)
        else:
            results.append(rt.run(**kwargs))
    return results


def record(scenario: Scenario) -> Path:
    path = CASSETTES / scenario.cassette
    path.unlink(missing_ok=True)
    with LoopbackServer(scenario.replies) as server:
        rt = Runtime(
            model=scenario.model,
            max_retries=3,
            backoff=Backoff(sleep=lambda _: None),
            providers={"anthropic": {"api_key": "recording-key", "base_url": server.url}},
        )
        with make_vcr(record_mode="all").use_cassette(scenario.cassette):
            try:
                play(rt, scenario)
            except ProviderError as exc:
                print(f"  {scenario.name}: {type(exc).__name__}: {exc}")
    rewrite_recording(
        path, "https://api.anthropic.com", KEEP_REQUEST_HEADERS, KEEP_RESPONSE_HEADERS
    )
    return path


def record_count_tokens() -> Path:
    from llmport.testing.loopback import Reply
    from llmport_anthropic.provider import AnthropicProvider

    path = CASSETTES / COUNT_TOKENS
    path.unlink(missing_ok=True)
    with LoopbackServer([Reply(json={"input_tokens": 19})]) as server:
        provider = AnthropicProvider({"api_key": "recording-key", "base_url": server.url})
        with make_vcr(record_mode="all").use_cassette(COUNT_TOKENS):
            provider.count_tokens(count_request())
    rewrite_recording(
        path, "https://api.anthropic.com", KEEP_REQUEST_HEADERS, KEEP_RESPONSE_HEADERS
    )
    return path


def main(names: list[str]) -> None:
    for name in names or [*SCENARIOS, "count_tokens"]:
        path = record_count_tokens() if name == "count_tokens" else record(SCENARIOS[name])
        print(f"recorded {path.relative_to(CASSETTES.parent)}")


if __name__ == "__main__":
    main(sys.argv[1:])
