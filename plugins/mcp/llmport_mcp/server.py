"""An MCP server as an llmport toolset: ``tools=[MCPServer(...)]``.

How it runs: each :class:`MCPServer` owns one background thread running an
event loop, started on first use. The MCP session (``mcp.Client``) lives on
that loop, in one task that enters the client's context and waits to be told
to close, so the SDK's task groups are entered and left in the same task.
Sync callers wait on a ``concurrent.futures.Future``; async callers await it
with ``asyncio.wrap_future``, from whatever loop they run on. Both use the
same session, and no caller ever runs the session on its own loop, so a sync
``exec`` inside a running loop, an ``async_exec`` and a tool-loop worker
thread can all share one connection without deadlock.

The tools are listed once per connection and cached; a
``notifications/tools/list_changed`` (sent spontaneously by 2025-era servers,
or through a ``subscriptions/listen`` stream that the client opens on
2026-era connections) marks the list stale and the next exec lists again. A
connection that drops (the server process died) is forgotten; the call that
saw it becomes an error result, and the next use reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import re
import shlex
import sys
import threading
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

from llmport.errors import LlmportError, OptionError
from llmport.observe.logs import logger
from llmport.observe.redaction import header_secrets, looks_secret, redact, register_secret
from llmport.tools.tool import Tool, Toolset

from .convert import MCPOutput, convert_result
from .stderr import StderrCapture, new_lines

__all__ = [
    "MCPConnectionError",
    "MCPServer",
    "MCPServerError",
    "MCPTimeoutError",
    "MCPToolError",
]

T = TypeVar("T")
log = logger().getChild("mcp")  # llmport.mcp, under llmport's NullHandler

#: Seconds to start or reach a server and list its tools, unless ``connect_timeout`` says.
DEFAULT_CONNECT_TIMEOUT = 5.0

_INVALID = re.compile(r"[^A-Za-z0-9_-]")


def _checked_command(
    name: str, command: Sequence[str] | str | None, url: str | None
) -> Sequence[str] | None:
    """The command, a string split like a shell's; exactly one of it and ``url`` is given.

    A bad setting is an OptionError (an InputError, and a ValueError as before):
    the caller's input, refused before any process starts.
    """
    if (command is None) == (url is None):
        raise OptionError(f"MCPServer {name!r}: give exactly one of command=[...] or url=...")
    if isinstance(command, str):
        command = shlex.split(command)
    if command is not None and (
        not isinstance(command, Sequence)
        or not command
        or not all(isinstance(c, str) for c in command)
    ):
        raise OptionError(f"MCPServer {name!r}: command must be a non-empty list of strings")
    return command


def _check_options(
    name: str,
    command: Sequence[str] | None,
    url: str | None,
    env: Mapping[str, str] | None,
    headers: Mapping[str, str] | None,
    timeout: float,
    connect_timeout: float | None,
) -> None:
    """Refuse a bad url or timeout, and env/headers given to the wrong kind of server."""
    if url is not None and (
        not isinstance(url, str) or not url.startswith(("http://", "https://"))
    ):
        raise OptionError(f"MCPServer {name!r}: url must start with http:// or https://")
    if not _positive(timeout):
        raise OptionError(f"MCPServer {name!r}: timeout must be > 0 seconds")
    if connect_timeout is not None and not _positive(connect_timeout):
        raise OptionError(f"MCPServer {name!r}: connect_timeout must be > 0 seconds")
    if headers is not None and url is None:
        raise OptionError(f"MCPServer {name!r}: headers= is for url= servers")
    if env is not None and command is None:
        raise OptionError(f"MCPServer {name!r}: env= is for command= servers")


def _mask(env: dict[str, str], headers: dict[str, str]) -> None:
    """Register the values of ``env`` and ``headers`` as secrets, so they never show."""
    # Every value is masked; by partial echo too when it is a credential (a token,
    # not the PATH given to the server, whose fragments are ordinary text).
    for key, value in env.items():
        register_secret(value, partial=looks_secret(key, value))
    for value in headers.values():
        register_secret(value, partial=False)
        # "Bearer <token>": the token alone may appear too (an echoed header).
        register_secret(value.split(" ", 1)[-1], partial=False)
    for value in header_secrets(headers):
        register_secret(value)


class MCPServerError(LlmportError):
    """Base class of the errors of an MCP server.

    ``service`` names the server (``"MCP server 'docs' (python docs.py)"``);
    ``detail`` says what failed underneath, as text: the SDK's or the
    transport's exception is never chained (``__cause__`` and
    ``__context__`` stay empty), so no foreign exception leaves the plugin.
    """

    def __init__(self, message: str, *, service: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.service = service
        self.detail = detail


class MCPConnectionError(MCPServerError, ConnectionError):
    """The server could not be reached, or the connection dropped."""


class MCPTimeoutError(MCPServerError, TimeoutError):
    """The server did not answer in time."""


class MCPToolError(MCPServerError):
    """The server answered a tool call with ``isError``; the message is its text.

    ``output`` is the whole result (:class:`~llmport_mcp.convert.MCPOutput`).
    """

    def __init__(self, message: str, output: MCPOutput | None = None) -> None:
        super().__init__(message)
        self.output = output


def _positive(seconds: Any) -> bool:
    """A number of seconds above zero (not a bool)."""
    return not isinstance(seconds, bool) and isinstance(seconds, (int, float)) and seconds > 0


def tool_name(name: str, prefix: str | None = None) -> str:
    """The llmport name of an MCP tool: letters, digits, ``_``, ``-``; 64 at most."""
    full = f"{prefix}_{name}" if prefix else name
    return (_INVALID.sub("_", full) or "_")[:64]


class _Session:
    """One live connection: the client, and the task that holds it open."""

    def __init__(self, client: Any, stop: asyncio.Event, task: asyncio.Task[None]) -> None:
        self.client = client
        self.stop = stop
        self.task = task
        self.alive = True


class MCPServer(Toolset):
    """An MCP server whose tools the model may call.

    ``MCPServer(name, command=[...])`` launches a local server over stdio;
    ``MCPServer(name, url="https://.../mcp")`` connects over streamable HTTP.

    * ``env``: extra environment variables for the command (merged over the
      SDK's safe defaults: ``PATH``, ``HOME``, ...);
    * ``headers``: HTTP headers (``{"Authorization": "Bearer ..."}``);
    * ``timeout``: seconds for each tool call; a call that takes longer
      becomes an error result the model sees;
    * ``connect_timeout``: seconds for starting or reaching the server and
      listing its tools (default: 5); a server that is down or does not
      answer is an :class:`MCPConnectionError` or :class:`MCPTimeoutError`
      within it. Importing the ``mcp`` SDK on first use (a second or two,
      off the event loop) is not counted: it is not the server's time;
    * ``cwd``: the working directory of the command;
    * ``prefix``: prepended to every tool name (``prefix_tool``), to tell two
      servers' tools apart.

    The values of ``env`` and ``headers`` are secrets: they never appear in
    ``repr``, logs or error messages. Use the object as ``tools=[server]``;
    the connection opens on first use and closes with the Runtime that used
    it (``rt.close()``, ``await rt.aclose()``, ``with Runtime(...)``), or with
    :meth:`close` / ``with server:`` / ``async with server:``.
    """

    __slots__ = (
        "_capture",
        "_gen",
        "_holding",
        "_listed",
        "_lock",
        "_loop",
        "_names",
        "_pending",
        "_session",
        "_stderr",
        "_thread",
        "_tools",
        "command",
        "connect_timeout",
        "cwd",
        "env",
        "headers",
        "prefix",
        "timeout",
        "url",
    )

    def __init__(
        self,
        name: str,
        command: Sequence[str] | str | None = None,
        *,
        url: str | None = None,
        env: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        connect_timeout: float | None = None,
        cwd: str | None = None,
        prefix: str | None = None,
        description: str = "",
    ) -> None:
        command = _checked_command(name, command, url)
        _check_options(name, command, url, env, headers, timeout, connect_timeout)
        self.name = name
        self.description = description or f"tools of the MCP server {name!r}"
        self.command: list[str] | None = list(command) if command is not None else None
        self.url = url
        self.env: dict[str, str] = {str(k): str(v) for k, v in (env or {}).items()}
        self.headers: dict[str, str] = {str(k): str(v) for k, v in (headers or {}).items()}
        _mask(self.env, self.headers)
        self.timeout = float(timeout)
        self.connect_timeout = float(connect_timeout or DEFAULT_CONNECT_TIMEOUT)
        self.cwd = cwd
        self.prefix = prefix
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._session: _Session | None = None
        self._pending: asyncio.Future[_Session] | None = None
        # Every task holding (or still opening, or winding down) a connection: close()
        # waits for them all, so a connect that timed out leaves no process behind.
        self._holding: set[asyncio.Task[None]] = set()
        self._tools: list[Tool] | None = None
        self._names: dict[str, str] = {}
        self._gen = 0  # bumped by every list-changed notification and reconnect
        self._listed = -1  # the generation the cached tools were listed at
        self._stderr = new_lines()
        self._capture: StderrCapture | None = None  # the latest connection's

    # -- what people see ----------------------------------------------------------

    def __repr__(self) -> str:
        where = f"command={self.command!r}" if self.command is not None else f"url={self.url!r}"
        parts = [repr(self.name), where]
        if self.env:
            parts.append("env={" + ", ".join(f"{k!r}: '***'" for k in self.env) + "}")
        if self.headers:
            parts.append("headers={" + ", ".join(f"{k!r}: '***'" for k in self.headers) + "}")
        parts.append(f"timeout={self.timeout:g}")
        return redact(f"MCPServer({', '.join(parts)})")

    @property
    def tools(self) -> list[Tool]:
        """The server's tools (connects and lists on first use; cached per connection)."""
        return self._run_sync(self._atools(), self.connect_timeout)

    @tools.setter
    def tools(self, value: list[Tool]) -> None:
        raise AttributeError("the tools of an MCPServer come from the server")

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)

    def add(self, fn: Any = None, **options: Any) -> Any:
        raise TypeError("tools cannot be added to an MCPServer; they come from the server")

    @property
    def stderr(self) -> str:
        """The last lines a stdio server wrote to its stderr (redacted; never printed).

        Each line is also logged at DEBUG on the ``llmport.mcp`` logger as it comes.
        """
        return "\n".join(self._stderr)

    @property
    def connected(self) -> bool:
        """Whether a live connection is open now."""
        return self._session is not None and self._session.alive

    @property
    def service(self) -> str:
        """The server as errors name it: ``MCP server 'docs' (python docs.py)`` (redacted)."""
        where = " ".join(self.command) if self.command is not None else str(self.url)
        return redact(f"MCP server {self.name!r} ({where})")

    # -- public calls ------------------------------------------------------------------

    def connect(self) -> MCPServer:
        """Connect and list the tools now (otherwise done on first use); returns self."""
        self._run_sync(self._atools(), self.connect_timeout)
        return self

    async def aconnect(self) -> MCPServer:
        """Async :meth:`connect`: a later sync listing then costs nothing."""
        await self._run_async(self._atools(), self.connect_timeout)
        return self

    def list_tools(self) -> list[Tool]:
        """The tools, listed again from the server now."""
        self._gen += 1
        return self.tools

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> MCPOutput:
        """Call a tool by its MCP name (raises :class:`MCPToolError` on ``isError``)."""
        self._run_sync(self._aconnect(), self.connect_timeout)
        return self._run_sync(self._acall(name, dict(arguments or {})), self.timeout)

    async def acall_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> MCPOutput:
        """Async :meth:`call_tool`."""
        await self._run_async(self._aconnect(), self.connect_timeout)
        return await self._run_async(self._acall(name, dict(arguments or {})), self.timeout)

    def close(self) -> None:
        """Close the connection (stops a stdio server's process); the next use reconnects."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        if threading.current_thread() is thread:
            raise RuntimeError("MCPServer.close() called from its own event loop thread")
        try:
            asyncio.run_coroutine_threadsafe(self._adisconnect(), loop).result(timeout=15)
        except Exception:  # closing must not raise: the process is stopped either way
            log.warning("closing MCP server %r failed", self.name, exc_info=True)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            if not thread.is_alive():
                loop.close()

    async def aclose(self) -> None:
        """Async :meth:`close` (waits in a worker thread: never blocks the caller's loop)."""
        await asyncio.to_thread(self.close)

    def __enter__(self) -> MCPServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> MCPServer:
        return await self.aconnect()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- the background loop --------------------------------------------------------------

    def _loop_now(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name=f"llmport-mcp-{self.name}", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def _submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        loop = self._loop_now()
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("an MCPServer cannot be waited on from its own event loop thread")
        return asyncio.run_coroutine_threadsafe(coro, loop)

    def _run_sync(self, coro: Coroutine[Any, Any, T], timeout: float | None) -> T:
        future = self._submit(self._bounded(coro, timeout))
        return future.result()

    async def _run_async(self, coro: Coroutine[Any, Any, T], timeout: float | None) -> T:
        return await asyncio.wrap_future(self._submit(self._bounded(coro, timeout)))

    async def _bounded(self, coro: Coroutine[Any, Any, T], timeout: float | None) -> T:
        """``coro`` within ``timeout`` s, the SDK imported first (not the server's time)."""
        if not _sdk_imported():
            try:
                await asyncio.to_thread(_import_sdk)
            except BaseException:
                coro.close()
                raise
        if timeout is None:
            return await coro
        try:
            async with asyncio.timeout(timeout):
                return await coro
        except MCPServerError:
            raise  # its own typed error (an MCPTimeoutError is a TimeoutError too)
        except TimeoutError:
            pass  # raised below, outside this block: nothing chained
        raise MCPTimeoutError(
            f"MCP server {self.name!r} did not answer within {timeout:g} s",
            service=self.service,
            detail=f"no answer within {timeout:g} s",
        )

    # -- on the background loop -------------------------------------------------------------

    def _make_client(self, stack: contextlib.AsyncExitStack) -> Any:
        from mcp import Client, StdioServerParameters

        async def on_message(message: Any) -> None:
            if getattr(message, "method", None) == "notifications/tools/list_changed":
                log.debug("MCP server %r: tools list changed", self.name)
                self._gen += 1

        transport: Any
        if self.command is not None:
            from mcp.client.stdio import stdio_client

            params = StdioServerParameters(
                command=self.command[0],
                args=self.command[1:],
                env=self.env or None,
                cwd=self.cwd,
            )
            # Its stderr is captured (stderr.py says why), closed after the client.
            capture = self._capture = StderrCapture(self.name, self._stderr)
            stack.callback(capture.close)
            transport = stdio_client(params, errlog=capture.file)
        else:
            assert self.url is not None
            if self.headers:
                from mcp.client.streamable_http import streamable_http_client

                http = _http_client(dict(self.headers))
                stack.push_async_callback(http.aclose)
                transport = streamable_http_client(self.url, http_client=http)
            else:
                transport = self.url
        return Client(transport, message_handler=on_message, cache=None)

    async def _aconnect(self) -> _Session:
        session = self._session
        if session is not None and session.alive:
            return session
        if self._pending is not None:  # another call is connecting: share its connection
            return await asyncio.shield(self._pending)
        ready: asyncio.Future[_Session] = asyncio.get_running_loop().create_future()
        self._pending = ready
        stop = asyncio.Event()
        task = asyncio.create_task(self._hold(ready, stop))
        self._holding.add(task)
        task.add_done_callback(self._holding.discard)
        try:
            session = await asyncio.shield(ready)
        except BaseException:
            stop.set()
            if not ready.done():
                task.cancel()
            raise
        finally:
            self._pending = None
        self._session = session
        self._gen += 1  # a new connection lists its tools again
        return session

    async def _hold(self, ready: asyncio.Future[_Session], stop: asyncio.Event) -> None:
        """Open the client, hand it out, and keep it open until ``stop`` (one task)."""
        session: _Session | None = None
        failure: BaseException | None = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = self._make_client(stack)
                await stack.enter_async_context(client)
                current = asyncio.current_task()
                assert current is not None
                session = _Session(client, stop, current)
                listen = asyncio.create_task(self._listen(client))
                ready.set_result(session)
                try:
                    await stop.wait()
                finally:
                    listen.cancel()
                    with contextlib.suppress(BaseException):
                        await listen
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
        except BaseException as exc:
            failure = exc  # typed below, outside this block: nothing foreign is chained
        finally:
            if session is not None:
                session.alive = False
            if self._session is session:
                self._session = None
        if failure is None:
            return
        if ready.done():
            log.debug("MCP server %r: connection ended: %s", self.name, redact(str(failure)))
        else:
            ready.set_exception(await self._connect_error(failure))

    async def _listen(self, client: Any) -> None:
        """2026-era connections: ask for list-changed events (2025-era servers send them anyway)."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return
        try:
            async with client.listen(tools_list_changed=True) as events:
                async for _ in events:
                    self._gen += 1  # the message handler saw it too; bumping twice is harmless
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the server does not serve subscriptions: no refresh events
            log.debug("MCP server %r: no list-changed stream: %s", self.name, redact(str(exc)))

    async def _connect_error(self, exc: BaseException) -> MCPServerError:
        """The typed error for a connection that could not be opened (``exc`` kept as text)."""
        if isinstance(exc, MCPServerError):
            return exc
        detail = redact(_describe(exc))
        message = f"cannot connect to {self.service}: {detail}"
        # Its stderr is not printed: its last line (why it stopped, often) joins the message.
        # Waiting for the pipe to end blocks, so it waits in a worker thread, not on the loop.
        capture = self._capture
        last = await asyncio.to_thread(capture.last_line, 1.0) if capture is not None else None
        if last:
            message += f" (its stderr ended with: {last})"
        return MCPConnectionError(redact(message), service=self.service, detail=detail)

    async def _adisconnect(self) -> None:
        """Close the connection, and wait for every connection task to end (its process gone)."""
        session = self._session
        self._session = None
        if session is not None:
            session.stop.set()
        # Also the connects that timed out or were cancelled: their transports are still
        # stopping their processes (the SDK bounds that), and the loop stops after this.
        await asyncio.gather(*self._holding, return_exceptions=True)

    async def _atools(self) -> list[Tool]:
        session = await self._aconnect()
        if self._tools is not None and self._listed == self._gen:
            return self._tools
        gen = self._gen
        listed: list[Any] = []
        cursor: str | None = None
        for _ in range(100):  # a paginator that never ends cannot hang us
            page = await self._guard(session, session.client.list_tools(cursor=cursor))
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        tools: list[Tool] = []
        names: dict[str, str] = {}
        for remote in listed:
            made = self._tool(remote)
            if made is not None:
                tools.append(made)
                names[made.name] = remote.name
        self._tools, self._names = tools, names
        self._listed = gen
        return tools

    def _tool(self, remote: Any) -> Tool | None:
        name = tool_name(remote.name, self.prefix)
        mcp_name = remote.name
        server = self

        async def call(**arguments: Any) -> MCPOutput:
            # No deadline here: the tool loop bounds the call with Tool.timeout.
            return await server._run_async(server._acall(mcp_name, arguments), None)

        call.__name__ = call.__qualname__ = name
        description = remote.description or remote.title or ""
        try:
            return Tool.from_schema(
                name, description, dict(remote.input_schema), call, timeout=self.timeout
            )
        except Exception as exc:  # one bad schema must not hide the server's other tools
            log.warning(
                "MCP server %r: tool %r skipped, its input schema is invalid: %s",
                self.name,
                remote.name,
                exc,
            )
            return None

    async def _acall(self, name: str, arguments: dict[str, Any]) -> MCPOutput:
        session = await self._aconnect()
        result = await self._guard(session, session.client.call_tool(name, arguments))
        output = convert_result(result)
        if output.is_error:
            raise MCPToolError(str(output) or f"tool {name!r} failed", output)
        return output

    async def _guard(self, session: _Session, awaitable: Any) -> Any:
        """Await a request; a dropped connection is forgotten and reported as such."""
        from anyio import BrokenResourceError, ClosedResourceError
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        lost = (OSError, EOFError, BrokenResourceError, ClosedResourceError)
        closed = "the connection closed (did the server exit?)"
        # The typed errors are raised after the except blocks: nothing foreign is chained.
        try:
            return await awaitable
        except MCPError as exc:
            code, detail = exc.code, redact(str(exc.message))
        except lost as exc:
            code, detail = CONNECTION_CLOSED, redact(f"connection lost: {_describe(exc)}")
            closed = detail
        except Exception as exc:  # anything else from the SDK or its transport: typed too
            code, detail = None, redact(_describe(exc))
        typed = {"service": self.service, "detail": detail}
        if code == REQUEST_TIMEOUT:
            raise MCPTimeoutError(f"MCP server {self.name!r}: {detail}", **typed)
        if code != CONNECTION_CLOSED:
            raise MCPServerError(f"MCP server {self.name!r}: {detail}", **typed)
        await self._drop(session)
        raise MCPConnectionError(f"MCP server {self.name!r}: {closed}", **typed)

    async def _drop(self, session: _Session) -> None:
        session.alive = False
        if self._session is session:
            self._session = None
        session.stop.set()


#: The SDK modules a connection uses (imported by :func:`_import_sdk`).
_SDK_MODULES = ("mcp", "mcp.client.stdio", "mcp.client.streamable_http", "mcp_types.version")


def _sdk_imported() -> bool:
    return all(name in sys.modules for name in _SDK_MODULES)


def _import_sdk() -> None:
    """Import the ``mcp`` SDK's client modules (seconds when cold; run in a worker thread)."""
    for name in _SDK_MODULES:
        importlib.import_module(name)


def _http_client(headers: dict[str, str]) -> Any:
    """An HTTP client sending ``headers``, with the MCP SDK's usual timeouts."""
    try:
        from mcp.shared._httpx_utils import create_mcp_http_client
    except ImportError:  # the helper is private to the SDK; its defaults are 30 s, 300 s to read
        import httpx2

        return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
    return create_mcp_http_client(headers=headers)


def _describe(exc: BaseException) -> str:
    """The innermost useful message of an exception (task groups wrap them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"
