"""Toolsets, registered names, tool sources and the example-tools entry point."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

import pytest
from llmport import Toolset, hookimpl, tool
from llmport.errors import OptionError, UnknownToolError
from llmport.testing import Script, call_tools, reply
from llmport.tools.policy import CallInfo

Run = Callable[..., Any]


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def mul(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


class MathPlugin:
    """A plugin object given to one runtime through hooks=[...]."""

    def __init__(self) -> None:
        self.factory_calls = 0
        self.source_infos: list[CallInfo] = []

    @hookimpl
    def llmport_toolsets(self, register: Callable[..., None]) -> None:
        register("math", Toolset("math", [add, mul]))

        def lazy() -> Toolset:
            self.factory_calls += 1
            return Toolset("lazy", [add])

        register("lazy", lazy)

    @hookimpl
    def llmport_tool_sources(self, register: Callable[..., None]) -> None:
        def source(info: CallInfo) -> list[Any]:
            self.source_infos.append(info)
            return [mul]

        register("dynamic", source)


def tool_names(script: Script, index: int = 0) -> list[str]:
    return [t.name for t in script.requests[index].tools]


def test_toolset_object(run: Run) -> None:
    ts = Toolset("math", [add])

    @ts.add
    def neg(x: int) -> int:
        return -x

    script = Script([call_tools(("neg", {"x": 2})), reply("ok")])
    run(script.runtime(), "go", toolset=ts)
    assert tool_names(script) == ["add", "neg"]
    assert script.requests[1].messages[-1].tool_results[0].content == "-2"


def test_registered_toolset_by_name_and_factory(run: Run) -> None:
    plugin = MathPlugin()
    script = Script([call_tools(("mul", {"a": 3, "b": 4})), reply("12")])
    rt = script.runtime(hooks=[plugin])
    assert run(rt, "go", toolset="math").output == "12"
    assert tool_names(script) == ["add", "mul"]

    script2 = Script([reply("ok")])
    run(script2.runtime(hooks=[plugin]), "go", toolset=["lazy"])
    assert tool_names(script2) == ["add"] and plugin.factory_calls == 1


def test_tool_source_is_called_at_exec_time_with_call_info(run: Run) -> None:
    plugin = MathPlugin()
    script = Script([reply("ok"), reply("ok")])
    rt = script.runtime(hooks=[plugin])
    run(rt, "go", tools_source="dynamic", deps={"k": 1})
    run(rt, "go", tools_source="dynamic", tools=[add])
    assert len(plugin.source_infos) == 2
    assert plugin.source_infos[0].model == "scripted:test"
    assert plugin.source_infos[0].deps == {"k": 1}
    assert tool_names(script, 0) == ["mul"] and tool_names(script, 1) == ["add", "mul"]


@pytest.mark.parametrize(
    "kwargs", [{"toolset": "nope"}, {"tools_source": "nope"}, {"toolset": ["math", "x"]}]
)
def test_unknown_names_fail_before_any_request(run: Run, kwargs: dict[str, Any]) -> None:
    script = Script([reply("never")])
    with pytest.raises(UnknownToolError, match=r"nope|'x'"):
        run(script.runtime(hooks=[MathPlugin()]), "go", **kwargs)
    assert script.requests == []


def test_registered_names_are_per_runtime(run: Run) -> None:
    run(Script([reply("ok")]).runtime(hooks=[MathPlugin()]), "go", toolset="math")
    script = Script([reply("never")])
    with pytest.raises(UnknownToolError):
        run(script.runtime(), "go", toolset="math")


@pytest.mark.parametrize("twice", ["different", "same"])
def test_two_tools_with_one_name_are_an_option_error(run: Run, twice: str) -> None:
    other = tool(lambda a, b: 0, name="add") if twice == "different" else add
    script = Script([reply("never")])
    with pytest.raises(OptionError, match="two tools are named 'add'"):
        run(script.runtime(), "go", tools=[add, other])
    assert script.requests == []


# --- a user's own package: the example-tools distribution -------------------------


def test_example_tools_is_found_through_its_entry_point() -> None:
    found = {ep.name: ep for ep in entry_points(group="llmport")}
    ep = found["example_tools"]
    assert ep.value == "llmport_example_tools"
    assert ep.dist is not None and ep.dist.metadata["Name"] == "llmport-example-tools"
    module = ep.load()
    assert hasattr(module, "llmport_toolsets") and hasattr(module, "llmport_tool_sources")


def test_example_toolset_and_source_by_name(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLMPORT_PLUGINS", raising=False)  # every installed entry point loads
    script = Script(
        [
            call_tools(
                ("convert_temperature", {"value": 100, "from_unit": "C", "to_unit": "F"}),
                ("days_between", {"start": "2024-01-01", "end": "2024-03-01"}),
            ),
            reply("212F, 60 days"),
        ]
    )
    rt = script.runtime()  # no hooks: the plugin comes from its entry point alone
    result = run(rt, "go", toolset="units", tools_source="clock")
    assert result.output == "212F, 60 days"
    assert tool_names(script) == ["convert_length", "convert_temperature", "now", "days_between"]
    assert [r.content for r in script.requests[1].messages[-1].tool_results] == ["212.0", "60"]


def test_entry_point_plugins_can_be_switched_off(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMPORT_PLUGINS", "")
    with pytest.raises(UnknownToolError):
        run(Script([reply("x")]).runtime(), "go", toolset="units")
