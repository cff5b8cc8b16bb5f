"""Vendor batch backends: what is checked before any request, and how bodies are built."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from batch_flows import FAKE_KEY
from batch_scenarios import BEDROCK_OPTIONS, BEDROCK_SETTINGS
from llmport import OptionError, Runtime, UnsupportedFeatureError
from llmport.plugins.host import PluginHost

HERE = Path(__file__).resolve().parent


def runtime(vendor: str, model: str, **settings: Any) -> Runtime:
    import importlib

    plugin = importlib.import_module(f"llmport_{vendor}.plugin")
    prefix = model.split(":", 1)[0]
    return Runtime(
        model=model,
        plugins=PluginHost(extra=[plugin], load_entry_points=False),
        providers={prefix: settings},
    )


def test_gemini_extra_body_fields_reach_each_inline_request() -> None:
    """Function declarations travel in prepare's extra_body: merged into the request's wire form."""
    rt = runtime("gemini", "gemini:gemini-2.5-flash", api_key=FAKE_KEY)
    from llmport.engine.jobs.batch import plan_items

    def get_weather(city: str) -> str:
        """Weather in a city."""
        return "sunny"

    provider, model, items = plan_items(
        rt, [{"custom_id": "w", "content": "Weather in Paris?", "tools": [get_weather]}], None, {}
    )
    backend = provider.batch_backend()
    args = backend.create_args(items, model, {})
    wire = args["config"].http_options.extra_body["batch"]["inputConfig"]["requests"]["requests"]
    assert wire[0]["metadata"] == {"key": "w"}
    declarations = wire[0]["request"]["tools"][0]["functionDeclarations"]
    assert declarations[0]["name"] == "get_weather"
    assert wire[0]["request"]["contents"][0]["parts"][0]["text"] == "Weather in Paris?"
    rt.close()


def test_gemini_on_vertex_cannot_batch_inline() -> None:
    rt = runtime("gemini", "gemini:gemini-2.5-flash", vertexai=True, project="p", location="l")
    with pytest.raises(UnsupportedFeatureError, match="Vertex"):
        rt.batch([{"custom_id": "a", "content": "hi"}])


def test_bedrock_needs_its_s3_locations_and_role_before_any_request() -> None:
    rt = runtime("bedrock", "bedrock:amazon.nova-lite-v1:0", **BEDROCK_SETTINGS)
    with pytest.raises(OptionError, match="role_arn"):
        rt.batch([{"custom_id": "a", "content": "hi"}], batch_options={"input_uri": "s3://b/in/"})
    with pytest.raises(OptionError, match="s3://"):
        rt.batch(
            [{"custom_id": "a", "content": "hi"}],
            batch_options={**BEDROCK_OPTIONS, "output_uri": "/tmp/out"},
        )


def test_openai_jsonl_lines_carry_the_prepared_bodies() -> None:
    rt = runtime("openai", "openai-responses:gpt-5-mini", api_key=FAKE_KEY)
    from llmport.engine.jobs.batch import plan_items

    provider, _, items = plan_items(
        rt, [{"custom_id": "a", "content": "hi", "vendor": {"openai": {"user": "u1"}}}], None, {}
    )
    line = json.loads(provider.batch_backend().jsonl(items))
    assert line["custom_id"] == "a" and line["url"] == "/v1/responses"
    assert line["body"]["model"] == "gpt-5-mini" and line["body"]["user"] == "u1"
    assert line["body"]["input"][0]["role"] == "user"


SCRIPT = """
import sys
sys.path[:0] = [{here!r}, {tests!r}]
from batch_vcr import batch_vcr
from test_batch_cassettes import SC, runtime
sc = SC["openai_resume"]
rt = runtime(sc)
with batch_vcr().use_cassette(sc.cassette) as cass:
    job = rt.batch_job(sc.job_id)
    print(job.status().state)
    job.cancel()
    print(job.wait(poll=0.001).state)
    print(sorted((k, type(v).__name__) for k, v in job.results().items()))
assert cass.all_played
"""


def test_resume_in_a_new_process() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLMPORT_"))}
    env["LLMPORT_PLUGINS"] = ""
    script = SCRIPT.format(here=str(HERE), tests=str(HERE.parent))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "running" and lines[1] == "cancelled"
    assert "('capital', 'RunResult')" in lines[2] and "BatchError" in lines[2]
