"""``llmport mcp serve``: a registered toolset served to MCP clients (the ``mcp`` SDK's client)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from llmport.cli.main import main
from llmport_mcp import MCPServer, MCPToolError
from mcp_support import free_port, wait_for_port

SERVE = [sys.executable, "-m", "llmport.cli", "mcp", "serve"]


def test_an_entry_point_toolset_is_listed_and_called_by_an_mcp_client(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters

    # The child loads entry points as installed (no LLMPORT_PLUGINS): example-tools' "units".
    params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], "units"], cwd=tmp_path)

    async def session() -> tuple[Any, Any, Any]:
        async with Client(params, cache=None) as client:
            listed = await client.list_tools()
            ok = await client.call_tool(
                "convert_length", {"value": 100, "from_unit": "m", "to_unit": "ft"}
            )
            bad = await client.call_tool("convert_length", {"value": "far"})
            return listed, ok, bad

    listed, ok, bad = asyncio.run(asyncio.wait_for(session(), 30))
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == {"convert_length", "convert_temperature"}
    schema = tools["convert_length"].input_schema
    assert schema["required"] == ["value", "from_unit", "to_unit"]
    assert "ft" in schema["properties"]["from_unit"]["enum"]
    assert not ok.is_error and float(ok.content[0].text) == pytest.approx(328.084, rel=1e-4)
    assert bad.is_error and "invalid arguments for 'convert_length'" in bad.content[0].text


def test_a_toolset_served_over_http_works_as_an_mcp_server_toolset(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMPORT_")}  # all plugins
    proc = subprocess.Popen([*SERVE, "units", "--http", f"127.0.0.1:{port}"], cwd=tmp_path, env=env)
    try:
        wait_for_port(port, proc)
        with MCPServer("units", url=f"http://127.0.0.1:{port}/mcp", timeout=10) as served:
            assert [t.name for t in served.tools] == ["convert_length", "convert_temperature"]
            out = served.call_tool(
                "convert_temperature", {"value": 100, "from_unit": "C", "to_unit": "F"}
            )
            assert float(out) == pytest.approx(212.0)
            with pytest.raises(MCPToolError, match="invalid arguments"):
                served.call_tool("convert_temperature", {"value": 1})
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def mcp_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """The MCP plugin's entry point loaded (its ``llmport mcp`` command), no other plugin."""
    monkeypatch.setenv("LLMPORT_PLUGINS", "mcp")


def test_an_unknown_toolset_is_one_line_and_exit_1(
    mcp_plugin: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", "serve", "nope"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "unknown toolset 'nope'" in err and "Traceback" not in err


def test_a_bad_http_address_is_a_usage_error(
    mcp_plugin: None, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["mcp", "serve", "units", "--http", "localhost"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "expected HOST:PORT" in err and "usage: llmport mcp serve" in err


def test_the_plugin_adds_the_command_with_debug(mcp_plugin: None) -> None:
    from llmport.errors import UnknownToolError

    with pytest.raises(UnknownToolError):
        main(["mcp", "serve", "nope", "--debug"])


def test_without_the_plugin_the_cli_names_the_package(capsys: pytest.CaptureFixture[str]) -> None:
    # No entry-point plugin is loaded here (LLMPORT_PLUGINS is empty): no llmport-mcp.
    assert main(["mcp", "serve", "units", "--http", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install llmport-mcp" in err
