"""Re-make cassettes/bedrock/*.yaml without AWS credentials (not a test).

    uv run python tests/bedrock/make_cassettes.py [NAME ...]

For each scenario in ``bedrock_scenarios.py``: serve its documented-format
answers (JSON, or AWS event-stream frames from
``llmport_bedrock.eventstream``) from a :class:`~llmport.testing.loopback.LoopbackServer`,
run the scenario's call through the real Runtime, plugin, boto3 and botocore
(``endpoint_url`` = the loopback) while vcrpy records, then rewrite the
loopback address to the real regional endpoint and keep only the headers
that matter (no ``Authorization``, no ``X-Amz-*``, no client details). The
credentials used while recording are fake static ones.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from llmport import Backoff, ProviderError, Runtime  # noqa: E402
from llmport.testing.loopback import LoopbackServer  # noqa: E402
from support.bedrock_scenarios import CREDENTIALS, HOST, REGION, SCENARIOS, Scenario  # noqa: E402
from support.cassette_support import CASSETTES, make_vcr, rewrite_recording  # noqa: E402

KEEP_REQUEST_HEADERS = {"content-type"}
KEEP_RESPONSE_HEADERS = {"content-type", "x-amzn-requestid", "x-amzn-errortype", "retry-after"}


def record(scenario: Scenario) -> Path:
    path = CASSETTES / scenario.cassette
    path.unlink(missing_ok=True)
    with LoopbackServer(scenario.replies) as server:
        rt = Runtime(
            model=scenario.model,
            max_retries=3,
            backoff=Backoff(sleep=lambda _: None),
            providers={"bedrock": {**CREDENTIALS, "region": REGION, "endpoint_url": server.url}},
        )
        with make_vcr(record_mode="all").use_cassette(scenario.cassette):
            try:
                if scenario.count:
                    provider = rt.targets.resolve(rt, scenario.model)[0]
                    print(f"  counted {provider.count_tokens(scenario.kwargs['request'])}")
                elif scenario.stream:
                    list(rt.stream(**scenario.kwargs))
                else:
                    rt.run(**scenario.kwargs)
            except ProviderError as exc:
                print(f"  {scenario.name}: {type(exc).__name__}: {exc}")
        assert server.unplayed == 0, f"{scenario.name}: {server.unplayed} scripted replies unused"
    rewrite_recording(path, HOST, KEEP_REQUEST_HEADERS, KEEP_RESPONSE_HEADERS)
    return path


def main(names: list[str]) -> None:
    for name in names or list(SCENARIOS):
        print(f"recorded {record(SCENARIOS[name]).relative_to(CASSETTES.parent)}")


if __name__ == "__main__":
    main(sys.argv[1:])
