"""Serve a registered llmport toolset as an MCP server (``llmport mcp serve``).

Every tool of the toolset is offered with its llmport schema
(:class:`~llmport.messages.types.ToolSpec`); a call runs through llmport's own tool
machinery (:meth:`~llmport.tools.tool.ToolBox.arun`), so arguments are checked
against the schema, timeouts apply, a failing tool answers with an MCP
``isError`` result instead of breaking the session, and every result is
redacted (the vendors' keys in the environment are masked).
"""

from __future__ import annotations

import itertools
from typing import Any

from llmport.errors import UnknownToolError
from llmport.messages.types import ToolCall
from llmport.observe.redaction import register_environment
from llmport.plugins.host import PluginHost
from llmport.tools.context import RunContext
from llmport.tools.policy import CallInfo
from llmport.tools.tool import ToolBox, build_toolbox

__all__ = ["build_server", "parse_address", "serve"]

_ids = itertools.count(1)


def toolbox_of(toolset: str, host: PluginHost | None = None) -> ToolBox:
    """The tools of a registered toolset (``UnknownToolError`` if none is registered)."""
    host = host or PluginHost()
    info = CallInfo(model="mcp", provider="mcp")
    box = build_toolbox(None, toolset, None, host, info)
    if box is None:
        raise UnknownToolError(f"toolset {toolset!r} has no tools")
    return box


def build_server(toolset: str, host: PluginHost | None = None) -> Any:
    """A low-level ``mcp`` ``Server`` offering the tools of ``toolset``."""
    import mcp.types as types
    from mcp.server import Server

    # No Runtime runs here: the keys of the environment are learnt now, so a
    # tool that quotes one answers with it masked (its results are redacted).
    register_environment()
    box = toolbox_of(toolset, host)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=s.name, description=s.description, input_schema=s.parameters)
                for s in box.specs
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        call_id = f"mcp_{next(_ids)}"
        call = ToolCall(call_id, params.name, dict(params.arguments or {}))
        run_ctx: RunContext[Any] = RunContext(
            deps=None, model="mcp", tool_call_id=call_id, tool_name=params.name
        )
        (outcome,) = await box.arun([call], [run_ctx], parallel=False)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=outcome.result.content)],
            is_error=outcome.result.is_error,
        )

    def input_schema(name: str) -> dict[str, Any] | None:
        found = box.tools.get(name)
        return found.parameters if found is not None else None

    return Server(
        f"llmport-{toolset}",
        description=f"the llmport toolset {toolset!r}",
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (or ``:PORT`` for 127.0.0.1) -> (host, port); ``ValueError`` if malformed."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    return (host.strip("[]") or "127.0.0.1"), int(port)


def serve(toolset: str, http: str | None = None, host: PluginHost | None = None) -> None:
    """Serve ``toolset`` over stdio (default) or streamable HTTP at ``http="HOST:PORT"``.

    Over HTTP the endpoint is ``http://HOST:PORT/mcp``. Blocks until stopped.
    """
    import anyio

    server = build_server(toolset, host)
    if http is None:
        from mcp.server.stdio import stdio_server

        async def run_stdio() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(run_stdio)
        return
    import uvicorn

    address, port = parse_address(http)
    app = server.streamable_http_app(host=address)
    uvicorn.Server(uvicorn.Config(app, host=address, port=port, log_level="warning")).run()
