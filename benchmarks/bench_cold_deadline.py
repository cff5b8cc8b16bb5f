"""Deadlines: an async cold first call ends at its deadline, client creation included.

Each sample is a fresh interpreter (nothing imported yet) running
``await rt.async_exec("hi", deadline=1)`` against a loopback socket that
accepts and never answers; the figure is how long past the deadline the
RunTimeout came, and apart, when ``asyncio.run`` returned (it would also wait
for a default-executor thread still importing the SDK). Target: well under
0.5 s for every vendor, however long its SDK takes to import.

    uv run python benchmarks/bench_cold_deadline.py [--runs 3] [--vendors openai,anthropic]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap

#: One cold async call per interpreter: prints {"outcome", "elapsed"} as JSON.
CHILD = textwrap.dedent(
    """
    import asyncio, json, socket, sys, time
    from llmport import Runtime, RunTimeout

    vendor, deadline = sys.argv[1], float(sys.argv[2])
    with socket.socket() as mute:  # accepts connections (its backlog), never answers
        mute.bind(("127.0.0.1", 0))
        mute.listen(64)
        url = f"http://127.0.0.1:{mute.getsockname()[1]}"
        settings = {
            "openai": ("openai:gpt-4o-mini", {"base_url": url + "/v1", "api_key": "sk-test"}),
            "anthropic": ("anthropic:claude-sonnet-4-5", {"base_url": url, "api_key": "test"}),
            "gemini": ("gemini:gemini-2.5-flash", {"base_url": url, "api_key": "test"}),
            "bedrock": (
                "bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0",
                {
                    "endpoint_url": url, "region": "us-east-1",
                    "aws_access_key_id": "AKIATESTTESTTESTTEST", "aws_secret_access_key": "test",
                },
            ),
        }
        model, provider = settings[vendor]
        rt = Runtime(model=model, max_retries=1, providers={vendor: provider})

        async def main() -> tuple[str, float]:
            started = time.monotonic()
            try:
                await rt.async_exec("hi", deadline=deadline)
                outcome = "returned"
            except RunTimeout:
                outcome = "RunTimeout"
            except Exception as exc:
                outcome = type(exc).__name__
            return outcome, time.monotonic() - started

        started = time.monotonic()
        outcome, elapsed = asyncio.run(main())
        whole = time.monotonic() - started  # asyncio.run also waits for its worker threads
    print(json.dumps({"outcome": outcome, "elapsed": elapsed, "whole": whole}))
    """
)

VENDORS = ("openai", "anthropic", "gemini", "bedrock")


def sample(vendor: str, deadline: float) -> dict[str, object]:
    """One fresh interpreter's cold call: its outcome and how long it took."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLMPORT_", "AWS_"))}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, vendor, str(deadline)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    figures: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--deadline", type=float, default=1.0)
    parser.add_argument("--vendors", default=",".join(VENDORS))
    args = parser.parse_args()
    for vendor in args.vendors.split(","):
        runs = [sample(vendor, args.deadline) for _ in range(args.runs)]
        overruns = [float(str(r["elapsed"])) - args.deadline for r in runs]
        wholes = [float(str(r["whole"])) - args.deadline for r in runs]
        outcomes = sorted({str(r["outcome"]) for r in runs})
        print(
            f"{vendor:9s} overrun beyond {args.deadline:g} s: median "
            f"{statistics.median(overruns) * 1000:.0f} ms, max {max(overruns) * 1000:.0f} ms; "
            f"asyncio.run returned after +{statistics.median(wholes) * 1000:.0f} ms "
            f"({', '.join(outcomes)}; {args.runs} cold runs)"
        )


if __name__ == "__main__":
    main()
