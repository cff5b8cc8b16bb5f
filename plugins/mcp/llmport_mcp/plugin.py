"""The ``llmport`` entry point: the toolsets ``"mcp:NAME"`` and the command ``llmport mcp serve``.

Every ``[mcp.servers.NAME]`` is the toolset ``"mcp:NAME"``.

Configuration (``llmport.toml``, or ``[tool.llmport.mcp.servers.NAME]`` in
``pyproject.toml``)::

    [mcp.servers.docs]
    command = ["python", "docs_server.py"]   # or: url = "https://example.com/mcp"
    env = { DOCS_ROOT = "docs" }              # command servers only
    timeout = 30                              # seconds per tool call
    # connect_timeout = 5                     # seconds to start/reach it and list tools
    # headers = { Authorization = "Bearer ..." }   # url servers only
    # cwd = "tools", prefix = "docs"

Then ``rt.exec(..., toolset="mcp:docs")``. Each Runtime gets its own
connection (made on first use, closed with the Runtime). The servers are
read from configuration files and ``LLMPORT_CONFIG`` when the Runtime first
looks up a toolset; a ``Config`` object given to ``Runtime(config=...)`` is
not consulted (pass ``tools=[MCPServer(...)]`` instead).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from llmport import hookimpl
from llmport.errors import ConfigError
from llmport.observe.logs import logger

if TYPE_CHECKING:
    import argparse  # annotations only: every Runtime loads this module, the CLI needs argparse

__all__ = ["cmd_serve", "llmport_register_commands", "llmport_toolsets", "server_from_config"]

log = logger().getChild("mcp")  # llmport.mcp, under llmport's NullHandler

_KEYS = {
    "command",
    "url",
    "env",
    "headers",
    "timeout",
    "connect_timeout",
    "cwd",
    "prefix",
    "description",
}


def server_from_config(name: str, settings: Mapping[str, Any]) -> Any:
    """An ``MCPServer`` from a ``[mcp.servers.NAME]`` table (``ConfigError`` if it is wrong)."""
    from .server import MCPServer

    where = f"[mcp.servers.{name}]"
    if not isinstance(settings, Mapping):
        raise ConfigError(f"{where} must be a table")
    unknown = set(settings) - _KEYS
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))} "
            f"(known: {', '.join(sorted(_KEYS))})"
        )
    for table in ("env", "headers"):
        value = settings.get(table)
        if value is not None and (
            not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values())
        ):
            raise ConfigError(f"{where}: {table} must be a table of strings")
    try:
        return MCPServer(name, **dict(settings))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from exc


def _configured_servers() -> dict[str, Any]:
    from llmport.provider.config import load_config

    try:
        config = load_config()
    except ConfigError as exc:  # the runtime reports it; toolsets of other plugins still work
        log.warning("MCP servers not registered: %s", exc)
        return {}
    servers = dict(getattr(config, "mcp", {}).get("servers", {}) or {})
    return servers


def _factory(name: str, settings: Mapping[str, Any]) -> Callable[[], Any]:
    made: list[Any] = []

    def factory() -> Any:
        # One server object per registration, i.e. per Runtime's plugin host:
        # the connection is reused by every exec of that Runtime.
        if not made:
            made.append(server_from_config(name, settings))
        return made[0]

    return factory


@hookimpl
def llmport_toolsets(register: Callable[..., None]) -> None:
    """Register ``mcp:NAME`` for each configured server (connecting only on use)."""
    for name, settings in _configured_servers().items():
        register(f"mcp:{name}", _factory(name, settings))


@hookimpl
def llmport_register_commands(subparsers: argparse._SubParsersAction[Any]) -> None:
    """``llmport mcp serve TOOLSET [--http HOST:PORT]``: a registered toolset over MCP."""
    mcp = subparsers.add_parser(
        "mcp",
        help="MCP: serve a toolset to MCP clients",
        epilog="example: llmport mcp serve units --http 127.0.0.1:8765",
    )
    commands = mcp.add_subparsers(dest="mcp_command", required=True)
    serve = commands.add_parser(
        "serve",
        help="serve a registered toolset as an MCP server",
        epilog="example: llmport mcp serve units --http 127.0.0.1:8765",
    )
    serve.add_argument("toolset", help="a registered toolset name (see `llmport plugins`)")
    serve.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio",
    )
    serve.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    """``llmport mcp serve``: blocks until the server stops; a bad ``--http`` is a usage error."""
    from llmport.cli.main import UsageError

    from .serve import parse_address, serve

    if args.http is not None:
        try:
            parse_address(args.http)
        except ValueError as exc:
            raise UsageError(f"--http: {exc}") from None
    serve(args.toolset, http=args.http)
    return 0
