"""llmport-mcp: MCP servers as llmport toolsets, and llmport toolsets as MCP servers.

Use an MCP server's tools in a run::

    from llmport import Runtime
    from llmport_mcp import MCPServer

    docs = MCPServer("docs", command=["python", "docs_server.py"])
    with Runtime(model="openai:gpt-4o-mini") as rt:
        rt.exec("What does the changelog say?", tools=[docs])

or configure it once (``[mcp.servers.docs]`` in ``llmport.toml``) and write
``exec(toolset="mcp:docs")``. Serve any registered llmport toolset to MCP
clients with ``llmport mcp serve TOOLSET [--http HOST:PORT]``.

Importing this package does not import the ``mcp`` SDK (connecting does),
nor its own client machinery (first use of a name below does): llmport loads
the plugin's entry point, ``llmport_mcp.plugin``, with every runtime.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .convert import MCPOutput
    from .server import (
        MCPConnectionError,
        MCPServer,
        MCPServerError,
        MCPTimeoutError,
        MCPToolError,
    )

_LAZY = {
    "MCPOutput": ".convert",
    "MCPConnectionError": ".server",
    "MCPServer": ".server",
    "MCPServerError": ".server",
    "MCPTimeoutError": ".server",
    "MCPToolError": ".server",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'llmport_mcp' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "MCPConnectionError",
    "MCPOutput",
    "MCPServer",
    "MCPServerError",
    "MCPTimeoutError",
    "MCPToolError",
    "server_from_config",
]


def server_from_config(name: str, settings: dict[str, object]) -> MCPServer:
    """An :class:`MCPServer` from a ``[mcp.servers.NAME]`` table."""
    from .plugin import server_from_config as make

    server: MCPServer = make(name, settings)
    return server
