"""MCP servers as toolsets: a scripted model calls real MCP servers through the tool loop."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest
from llmport import Runtime, hookimpl
from llmport.messages.types import MediaBlock, TextBlock
from llmport.testing import Script, call_tools, reply
from llmport_mcp import MCPConnectionError, MCPOutput, MCPServer, MCPToolError
from mcp_support import demo, process_gone


def results(script: Script, request: int = 1) -> list[Any]:
    """The tool results the model got in request ``request``."""
    return list(script.requests[request].messages[-1].tool_results)


def offered(script: Script, request: int = 0) -> list[str]:
    return [t.name for t in script.requests[request].tools]


# --- list and call -------------------------------------------------------------------


def test_stdio_tools_are_listed_with_their_schemas_and_called(
    stdio_server: MCPServer, run: Any
) -> None:
    script = Script([call_tools(("add", {"a": 2, "b": 3})), reply("five")])
    run_result = run(script.runtime(), "2+3?", tools=[stdio_server])
    assert run_result.output == "five"
    spec = {t.name: t for t in script.requests[0].tools}["add"]
    assert spec.description == "Add two integers."
    assert spec.parameters["properties"]["a"]["type"] == "integer"
    assert spec.parameters["required"] == ["a", "b"]
    (result,) = results(script)
    assert (result.content, result.is_error) == ("5", False)
    assert run_result.tool_calls[0].status == "ok"


def test_http_tools_are_listed_and_called(http_url: str, run: Any) -> None:
    server = MCPServer("web", url=http_url, timeout=10)
    try:
        script = Script([call_tools(("add", {"a": 40, "b": 2})), reply("ok")])
        assert run(script.runtime(), "sum", tools=[server]).output == "ok"
        assert "add" in offered(script)
        assert results(script)[0].content == "42"
    finally:
        server.close()


def test_tools_are_listed_once_per_connection(stdio_server: MCPServer) -> None:
    first = stdio_server.tools
    assert stdio_server.tools is first  # cached: no second tools/list
    assert {"add", "picture", "grow"} <= {t.name for t in first}


def test_parallel_calls_of_one_turn_share_the_session_concurrently(
    stdio_server: MCPServer, run: Any
) -> None:
    script = Script([call_tools(("sleep", {"seconds": 1.0}), ("sleep", {"seconds": 1.0})), "ok"])
    rt = script.runtime()
    stdio_server.connect()
    started = time.perf_counter()
    run(rt, "sleep twice", tools=[stdio_server])
    elapsed = time.perf_counter() - started
    assert [r.content for r in results(script)] == ["awake", "awake"]
    # one after the other they take at least 2 s; the rest is room for a loaded machine
    assert elapsed < 1.9, f"the two calls ran one after the other ({elapsed:.2f} s)"


def test_sync_exec_inside_a_running_event_loop_does_not_deadlock(
    stdio_server: MCPServer,
) -> None:
    script = Script([call_tools(("add", {"a": 1, "b": 1})), reply("two")])
    rt = script.runtime()

    async def main() -> str:
        return str(rt.exec("1+1", tools=[stdio_server]))  # blocking call in a running loop

    assert asyncio.run(asyncio.wait_for(main(), 20)) == "two"
    assert results(script)[0].content == "2"


# --- results -----------------------------------------------------------------------------


def test_media_and_resources_become_neutral_blocks(stdio_server: MCPServer, run: Any) -> None:
    script = Script([call_tools(("picture", {})), reply("seen")])
    run(script.runtime(), "show me", tools=[stdio_server])
    (result,) = results(script)
    # The text the model reads names every part; the media travel as ToolResult.blocks.
    assert [b.media_type for b in result.blocks] == ["image/png", "audio/wav", "application/pdf"]  # type: ignore[union-attr]
    assert result.content.splitlines() == [
        "a red pixel",
        "[image image/png, 70 bytes]",
        "[audio audio/wav, 12 bytes]",
        "[resource file:///notes.txt]",
        "hello notes",
        "[resource file:///report.pdf: file application/pdf, 8 bytes]",
    ]
    # ... and the neutral blocks ride along with it, bytes included.
    output = result.content
    assert isinstance(output, MCPOutput)
    kinds = [(b.type, getattr(b, "media_type", None)) for b in output.blocks]
    assert kinds == [
        ("text", None),
        ("image", "image/png"),
        ("audio", "audio/wav"),
        ("text", None),
        ("file", "application/pdf"),
    ]
    image = output.blocks[1]
    assert isinstance(image, MediaBlock)
    assert image.data is not None and image.data.startswith(b"\x89PNG")
    pdf = output.blocks[4]
    assert isinstance(pdf, MediaBlock)
    assert (pdf.data, pdf.filename) == (b"%PDF-1.4", "report.pdf")


def test_structured_content_without_text_is_sent_as_json(stdio_server: MCPServer) -> None:
    output = stdio_server.call_tool("structured_only")
    assert json.loads(output) == {"temperature": 21.5, "unit": "C"}
    assert output.structured == {"temperature": 21.5, "unit": "C"}
    assert isinstance(output.blocks[0], TextBlock)


def test_an_is_error_result_goes_back_as_an_error_and_the_run_goes_on(
    stdio_server: MCPServer, run: Any
) -> None:
    script = Script([call_tools(("refuse", {"reason": "not today"})), reply("understood")])
    run_result = run(script.runtime(), "try", tools=[stdio_server])
    assert run_result.output == "understood"
    (result,) = results(script)
    assert result.is_error
    assert "MCPToolError: refused: not today" in result.content
    assert run_result.tool_calls[0].status == "error"
    with pytest.raises(MCPToolError, match="refused: again"):
        stdio_server.call_tool("refuse", {"reason": "again"})


def test_invalid_arguments_are_caught_before_the_server_is_called(
    stdio_server: MCPServer, run: Any
) -> None:
    script = Script([call_tools(("add", {"a": "two", "b": 3})), reply("sorry")])
    run(script.runtime(), "add", tools=[stdio_server])
    (result,) = results(script)
    assert result.is_error and "invalid arguments for 'add'" in result.content


def test_a_slow_call_times_out_as_an_error_result_and_the_server_stays_usable(
    run: Any,
) -> None:
    with demo("slow", timeout=0.5, connect_timeout=10) as server:
        server.connect()
        script = Script(
            [call_tools(("sleep", {"seconds": 5})), call_tools(("add", {"a": 1, "b": 2})), "ok"]
        )
        started = time.perf_counter()
        run_result = run(script.runtime(), "nap", tools=[server])
        assert time.perf_counter() - started < 4.5  # the tool sleeps 5 s
        (timed_out,) = results(script, 1)
        assert timed_out.is_error and "timed out after 0.5 s" in timed_out.content
        assert run_result.tool_calls[0].status == "timeout"
        assert results(script, 2)[0].content == "3"


def test_a_server_crashing_mid_call_is_a_typed_error_result_then_it_reconnects() -> None:
    with demo("fragile") as server:
        first_pid = int(server.call_tool("pid"))
        script = Script([call_tools(("crash", {})), call_tools(("pid", {})), "ok"])
        started = time.perf_counter()
        asyncio.run(script.runtime().arun("crash", tools=[server]))
        assert time.perf_counter() - started < 8  # no hang until the 10 s timeout
        (crashed,) = results(script, 1)
        assert crashed.is_error and "MCPConnectionError" in crashed.content
        # The next run lists again on a fresh connection (a new process).
        script2 = Script([call_tools(("pid", {})), "ok"])
        script2.runtime().run("pid", tools=[server])
        assert int(results(script2)[0].content) != first_pid


def test_list_changed_refreshes_the_tools_for_the_next_run() -> None:
    with demo("growing") as server:
        script = Script([call_tools(("grow", {})), "grown", call_tools(("extra", {})), "done"])
        rt = script.runtime()
        asyncio.run(rt.arun("grow", tools=[server]))
        assert "extra" not in offered(script, 0)
        deadline = time.monotonic() + 5
        while "extra" not in {t.name for t in server.tools} and time.monotonic() < deadline:
            time.sleep(0.05)  # the notification arrives asynchronously
        rt.run("use it", tools=[server])
        assert "extra" in offered(script, 2)
        assert results(script, 3)[0].content == "extra!"


# --- filters and policies --------------------------------------------------------------


def test_allow_and_deny_globs_filter_mcp_tools(stdio_server: MCPServer) -> None:
    script = Script(["a", "b"])
    rt = script.runtime()
    rt.exec("x", tools=[stdio_server], tools_allow=["add", "s*"], tools_deny=["sleep"])
    assert offered(script, 0) == ["add", "structured_only"]
    rt.exec("y", tools=[stdio_server], tools_deny=["*"], tool_choice="none")
    assert offered(script, 1) == []


def test_policy_hooks_apply_to_mcp_tools(stdio_server: MCPServer) -> None:
    class NoCrashes:
        @hookimpl
        def llmport_tool_policy(self, check: Any) -> str | None:
            if check.tool_name == "crash":
                return "deny"
            if check.tool_name == "refuse" and check.stage == "run":
                return "deny"
            return None

    script = Script([call_tools(("refuse", {"reason": "x"})), "ok"])
    rt = script.runtime(hooks=[NoCrashes()])
    rt.exec("x", tools=[stdio_server])
    assert "crash" not in offered(script) and "refuse" in offered(script)
    (result,) = results(script)
    assert result.is_error and "denied" in result.content.lower()


# --- lifecycle ------------------------------------------------------------------------


def test_the_connection_closes_with_the_runtime(mode: str) -> None:
    server = demo("owned")
    script = Script([call_tools(("pid", {})), "ok"])
    rt = script.runtime()
    if mode == "sync":
        with rt:
            rt.exec("pid", tools=[server])
            assert server.connected
    else:

        async def main() -> None:
            async with rt:
                await rt.async_exec("pid", tools=[server])
                assert server.connected

        asyncio.run(main())
    pid = int(results(script)[0].content)
    assert not server.connected
    assert process_gone(pid), "the server process outlived the Runtime"


def test_a_connection_failure_names_the_server_and_hides_secrets() -> None:
    token = "s3cret-token-0123456789"
    server = MCPServer(
        "down", url="http://127.0.0.1:9/mcp", headers={"Authorization": f"Bearer {token}"}
    )
    assert token not in repr(server) and "Authorization" in repr(server)
    script = Script(["never"])
    with pytest.raises(MCPConnectionError) as caught:
        script.runtime().exec("x", tools=[server])
    assert "'down'" in str(caught.value) and token not in str(caught.value)
    server.close()


def test_env_values_are_secret() -> None:
    value = "env-secret-value-42"
    server = demo("env", env={"DEMO_TOKEN": value})
    assert value not in repr(server) and "DEMO_TOKEN" in repr(server)


def test_bad_arguments_to_mcpserver_are_value_errors() -> None:
    with pytest.raises(ValueError, match="exactly one of"):
        MCPServer("x")
    with pytest.raises(ValueError, match="exactly one of"):
        MCPServer("x", command=["a"], url="http://h/mcp")
    with pytest.raises(ValueError, match="timeout"):
        MCPServer("x", command=["a"], timeout=0)
    with pytest.raises(ValueError, match="headers"):
        MCPServer("x", command=["a"], headers={"A": "b"})


# --- configuration --------------------------------------------------------------------


def test_configured_servers_are_toolsets_named_mcp_colon_name(tmp_path: Any) -> None:
    import sys

    import llmport_mcp.plugin
    from mcp_support import DEMO

    (tmp_path / "llmport.toml").write_text(
        "[mcp.servers.demo]\n"
        f"command = [{json.dumps(sys.executable)}, {json.dumps(str(DEMO))}]\n"
        'env = { DEMO_TOKEN = "from-config" }\n'
        "timeout = 10\n"
        "connect_timeout = 20\n"
    )
    script = Script([call_tools(("env_value", {"key": "DEMO_TOKEN"}), ("pid", {})), "ok"])
    rt: Runtime = script.runtime(hooks=[llmport_mcp.plugin])
    rt.exec("x", toolset="mcp:demo", tools_deny=["crash"])  # env reaches the server
    rt.close()
    env_result, pid_result = results(script)
    # The value reached the server (else "<unset>"), and came back masked: env values are secrets.
    assert env_result.content == "***"
    assert "crash" not in offered(script)
    assert process_gone(int(pid_result.content))


def test_a_bad_server_table_is_a_config_error(tmp_path: Any) -> None:
    import llmport_mcp.plugin
    from llmport.errors import ConfigError

    (tmp_path / "llmport.toml").write_text('[mcp.servers.bad]\nurl = "http://h/mcp"\nport = 1\n')
    rt = Script(["x"]).runtime(hooks=[llmport_mcp.plugin])
    with pytest.raises(ConfigError, match=r"\[mcp.servers.bad\]: unknown key\(s\) port"):
        rt.exec("x", toolset="mcp:bad")


def test_a_failing_tools_traceback_stays_off_the_users_stderr(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """The server logs the exception with its traceback: kept and logged at DEBUG, not printed."""
    caplog.set_level(logging.DEBUG, logger="llmport.mcp")
    server = demo("noisy")
    try:
        with pytest.raises(MCPToolError):
            server.call_tool("explode", {"message": "kaboom-1234"})
        deadline = time.monotonic() + 10  # the server's lines arrive through a pipe
        while "kaboom-1234" not in server.stderr and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        server.close()
    printed = capfd.readouterr().err
    assert "kaboom-1234" not in printed and "Traceback" not in printed, printed[:2000]
    assert "Traceback" in server.stderr and "kaboom-1234" in server.stderr
    logged = [r.getMessage() for r in caplog.records if r.name == "llmport.mcp"]
    assert any("kaboom-1234" in line for line in logged)


def test_a_server_that_exits_at_start_says_why_in_the_error_not_on_stderr(
    capfd: pytest.CaptureFixture[str],
) -> None:
    import sys

    script = "import sys; print('boom: no config file found', file=sys.stderr); sys.exit(2)"
    server = MCPServer("broken", command=[sys.executable, "-c", script], connect_timeout=20)
    try:
        with pytest.raises(MCPConnectionError) as caught:
            server.connect()
    finally:
        server.close()
    assert "its stderr ended with: boom: no config file found" in str(caught.value)
    assert "boom" not in capfd.readouterr().err
    assert "boom: no config file found" in server.stderr


def test_env_credentials_are_masked_in_part_and_other_env_values_whole() -> None:
    token = "tok-" + "9f8e7d6c5b4a" * 2
    folder = "/srv/mcp-demo-data/reports"
    server = demo("mixed", env={"DEMO_TOKEN": token, "DATA_DIR": folder})
    try:
        assert server.call_tool("env_value", {"key": "DEMO_TOKEN", "start": 4, "end": 16}) == "***"
        assert server.call_tool("env_value", {"key": "DATA_DIR"}) == "***"
        # A fragment of a path is ordinary text (the folder is not a credential).
        assert server.call_tool("env_value", {"key": "DATA_DIR", "end": 18}) == folder[:18]
    finally:
        server.close()
