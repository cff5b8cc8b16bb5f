"""A small MCP server for the tests (stdio by default; ``--http PORT`` for streamable HTTP)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

mcp = MCPServer("demo", log_level="ERROR")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def env_value(key: str, start: int = 0, end: int | None = None) -> str:
    """The value of an environment variable of the server process (or a slice of it)."""
    value = os.environ.get(key)
    return "<unset>" if value is None else value[start:end]


@mcp.tool()
def env_error(key: str, start: int = 0, end: int | None = None) -> CallToolResult:
    """An error result quoting an environment variable (or a slice of it)."""
    value = os.environ.get(key, "<unset>")[start:end]
    text = TextContent(type="text", text=f"cannot use {value}")
    return CallToolResult(content=[text], is_error=True)


@mcp.tool()
def explode(message: str) -> str:
    """Raise: the server logs the exception, with its traceback, on its stderr."""
    raise RuntimeError(message)


@mcp.tool()
def refuse(reason: str) -> CallToolResult:
    """Answer with an error result."""
    return CallToolResult(
        content=[TextContent(type="text", text=f"refused: {reason}")], is_error=True
    )


@mcp.tool()
async def sleep(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "awake"


@mcp.tool()
def picture() -> list[TextContent | ImageContent | AudioContent | EmbeddedResource]:
    """A caption, a PNG image, a WAV clip and two embedded resources."""
    return [
        TextContent(type="text", text="a red pixel"),
        ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"),
        AudioContent(
            type="audio", data=base64.b64encode(b"RIFF0000WAVE").decode(), mime_type="audio/wav"
        ),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="file:///notes.txt", text="hello notes", mime_type="text/plain"
            ),
        ),
        EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(
                uri="file:///report.pdf",
                blob=base64.b64encode(b"%PDF-1.4").decode(),
                mime_type="application/pdf",
            ),
        ),
    ]


@mcp.tool()
def structured_only() -> CallToolResult:
    """Structured content and no text."""
    return CallToolResult(content=[], structured_content={"temperature": 21.5, "unit": "C"})


@mcp.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@mcp.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    os._exit(3)


@mcp.tool()
async def grow(ctx: Context) -> str:
    """Add the tool ``extra`` and tell the client the list changed."""

    def extra() -> str:
        """A tool that appears later."""
        return "extra!"

    mcp.add_tool(extra)
    await ctx.notify_tools_changed()  # 2026-era clients (subscriptions/listen)
    with contextlib.suppress(Exception):  # not a 2025-era session
        await ctx.session.send_tool_list_changed()  # 2025-era clients
    return "grown"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        mcp.run()
