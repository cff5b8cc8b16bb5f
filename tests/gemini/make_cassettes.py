"""Re-make cassettes/gemini/*.yaml without an API key (not a test).

    uv run python tests/gemini/make_cassettes.py [NAME ...]

For each scenario in ``gemini_scenarios.py``: serve its documented-format
answers from a :class:`~llmport.testing.loopback.LoopbackServer`, run the scenario's
call through the real Runtime, plugin and ``google-genai`` SDK while vcrpy
records, then rewrite the loopback address to
``https://generativelanguage.googleapis.com`` and keep only the headers that
matter (no ``x-goog-api-key``, no ``key=`` parameter, no client details).
With a real key, ``nox -s record -- gemini`` records against the live API.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from llmport import Backoff, ProviderError, Runtime  # noqa: E402
from llmport.testing.loopback import LoopbackServer  # noqa: E402
from support.cassette_support import CASSETTES, make_vcr, rewrite_recording  # noqa: E402
from support.gemini_scenarios import SCENARIOS, Scenario  # noqa: E402

HOST = "https://generativelanguage.googleapis.com"
KEEP_REQUEST_HEADERS = {"content-type"}
KEEP_RESPONSE_HEADERS = {"content-type", "retry-after"}


def record(scenario: Scenario) -> Path:
    path = CASSETTES / scenario.cassette
    path.unlink(missing_ok=True)
    with LoopbackServer(scenario.replies) as server:
        rt = Runtime(
            model=scenario.model,
            max_retries=3,
            backoff=Backoff(sleep=lambda _: None),
            providers={"gemini": {"api_key": "recording-key", "base_url": server.url}},
        )
        with make_vcr(record_mode="all").use_cassette(scenario.cassette):
            try:
                if scenario.count is not None:
                    provider = rt.route(scenario.model)[0]
                    provider.count_tokens(scenario.count())
                elif scenario.stream:
                    final = list(rt.stream(**scenario.kwargs))[-1]
                    if scenario.follow_up is not None:
                        list(rt.stream(**scenario.continued(final.result.messages)))
                else:
                    result = rt.run(**scenario.kwargs)
                    if scenario.follow_up is not None:
                        rt.run(**scenario.continued(result.messages))
            except ProviderError as exc:
                print(f"  {scenario.name}: {type(exc).__name__}: {exc}")
    rewrite_recording(path, HOST, KEEP_REQUEST_HEADERS, KEEP_RESPONSE_HEADERS)
    return path


def main(names: list[str]) -> None:
    for name in names or list(SCENARIOS):
        print(f"recorded {record(SCENARIOS[name]).relative_to(CASSETTES.parent)}")


if __name__ == "__main__":
    main(sys.argv[1:])
