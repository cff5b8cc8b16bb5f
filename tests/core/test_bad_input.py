"""Bad input fails before any request, with a typed error (sync, async and streaming)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import llmport
import pytest
from api_modes import MODES, run_via
from llmport import NoModelError, OptionError, Runtime, tool
from llmport.errors import ContentError, InputError
from llmport.provider.config import Config
from llmport.testing import Script

STREAM = [False, True]


@tool
def lookup(city: str) -> str:
    """Weather for a city."""
    return "sunny"


def scripted() -> tuple[Script, Runtime]:
    script = Script(["never sent"])
    return script, script.runtime()


BAD_CALLS: list[tuple[dict[str, Any], str]] = [
    ({"tool_choice": "required"}, "needs tools"),
    ({"tool_choice": {"name": "lookup"}}, "needs tools"),
    ({"timeout": -1}, "timeout must be > 0"),
    ({"timeout": "soon"}, "timeout must be a finite number"),
    ({"temperature": "hot"}, "temperature must be a finite number"),
    ({"temperature": -1}, "between 0 and 2"),
    ({"temperature": float("nan")}, "finite number"),
    ({"top_p": 1.5}, "between 0 and 1"),
    ({"max_tokens": 0}, "max_tokens must be >= 1"),
    ({"max_tokens": 2.5}, "must be an integer"),
    ({"seed": "x"}, "must be an integer"),
    ({"stop": [""]}, "stop must be"),
    ({"stop": 3}, "stop must be"),
    ({"reasoning_effort": "extreme"}, "reasoning_effort must be one of"),
    ({"temprature": 0.2}, "did you mean 'temperature'"),
    ({"model": ""}, "model must be a non-empty"),
    ({"model": "   "}, "model must be a non-empty"),
    ({"max_iterations": 0}, "max_iterations"),
    ({"vendor": {"scripted": {"tags": {1, 2}}}}, "not JSON-serialisable"),
    ({"vendor": ["scripted"]}, "vendor must be a dict"),
    ({"system": 3}, "system must be a string"),
]


@pytest.mark.parametrize("stream", STREAM)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("kwargs", "message"), BAD_CALLS)
async def test_bad_call_is_a_typed_error_before_any_request(
    mode: str, stream: bool, kwargs: dict[str, Any], message: str
) -> None:
    script, rt = scripted()
    with pytest.raises(OptionError, match=message):
        await run_via(mode, rt, "hi", stream=stream, **kwargs)
    assert script.requests == []


@pytest.mark.parametrize("mode", MODES)
async def test_tool_choice_naming_a_tool_not_offered(mode: str) -> None:
    script, rt = scripted()
    with pytest.raises(OptionError, match="not among the tools"):
        await run_via(mode, rt, "hi", tools=[lookup], tool_choice={"name": "other"})
    assert script.requests == []


@pytest.mark.parametrize("mode", MODES)
async def test_required_with_every_tool_filtered_out(mode: str) -> None:
    script, rt = scripted()
    with pytest.raises(OptionError, match="needs tools"):
        await run_via(mode, rt, "hi", tools=[lookup], tools_deny=["*"], tool_choice="required")
    assert script.requests == []


@pytest.mark.parametrize("mode", MODES)
async def test_image_path_whose_bytes_are_not_the_named_type(mode: str, tmp_path: Path) -> None:
    fake = tmp_path / "screenshot.png"
    fake.write_text("this is not a PNG")
    script, rt = scripted()
    with pytest.raises(ContentError, match="not image/png"):
        await run_via(mode, rt, ["look", {"type": "image", "path": str(fake)}])
    assert script.requests == []


def test_misspelt_runtime_argument_is_named() -> None:
    with pytest.raises(OptionError, match=r"'modle' \(did you mean 'model'\?\)"):
        Runtime(modle="openai:gpt-4o")
    with pytest.raises(OptionError, match="per-call parameter"):
        Runtime(tools=[lookup])
    with pytest.raises(OptionError, match="model must be a non-empty"):
        Runtime(model="")


def test_runtime_default_options_are_checked_too() -> None:
    script = Script(["never sent"])
    rt = Runtime(model="scripted:m", hooks=[script], config=Config(), temperature="hot")
    with pytest.raises(OptionError, match="temperature"):
        rt.exec("hi")
    assert script.requests == []


@pytest.mark.parametrize("mode", MODES)
async def test_no_model_at_all_is_a_typed_error(mode: str) -> None:
    rt = Runtime(config=Config())
    with pytest.raises(NoModelError, match="no model to call") as info:
        await run_via(mode, rt, "hi")
    # Both what the seed API promised and llmport's own input error.
    assert isinstance(info.value, NotImplementedError) and isinstance(info.value, InputError)


def test_new_errors_are_exported_from_the_user_namespace() -> None:
    assert llmport.OptionError is OptionError and llmport.NoModelError is NoModelError


def test_tool_vendor_fields_reach_the_tool_spec_and_are_checked() -> None:
    @tool(vendor={"anthropic": {"defer_loading": True}})
    def search(query: str) -> str:
        """Search the docs."""
        return query

    assert search.spec().vendor == {"anthropic": {"defer_loading": True}}
    script = Script(["ok"])
    script.runtime().exec("hi", tools=[search])
    assert script.requests[0].tools[0].vendor == {"anthropic": {"defer_loading": True}}
    with pytest.raises(OptionError, match="not JSON-serialisable"):
        tool(name="echo", vendor={"anthropic": {"when": object()}})(lambda q: q)
