"""Secrets never leave: the key acceptance test, for every target.

Each target is configured with a vendor-shaped test key (``sk-proj-...``,
``sk-ant-...``, ``AIza...``, ``AKIA...`` + secret) and with a shapeless
gateway key (``LEAKcustomproxykey-...``) that only literal masking can
catch. The loopback "vendor" echoes the key, and the auth headers it
received, in its error bodies. The key must then appear in none of these
channels:

1. ``str(err)``  2. ``repr(err)``  3. the traceback and the whole exception
chain (and no non-llmport exception in it)  4. logs at DEBUG (llmport, the
vendor SDKs, httpx/httpx2, botocore)  5. ``ExecFailed`` and every attempt's
error  6. a successful ``RunResult`` and its messages  7. stream events
8. observer payloads  9. a SQLite session file (and its WAL)
10. ``llmport session show``  11. ``llmport run`` output.

A failure lists every channel that leaked, with a masked excerpt.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from invariant_checks import debug_logging, key_echo_reply
from leaks import LeakCheck, Observer
from llmport import Runtime, Session, agentic_function
from llmport.cli.main import main
from llmport.errors import AuthenticationError, ConfigError, ExecFailed, LlmportError
from llmport.messages.types import FinalEvent
from llmport.testing.loopback import LoopbackServer, Reply
from support.api_modes import MODES
from wire import TARGETS, Wire, targets

KEY_FORMATS = ["standard", "custom"]
MATRIX = [(w, fmt) for w in TARGETS for fmt in KEY_FORMATS]
each_key = pytest.mark.parametrize(("wire", "fmt"), MATRIX, ids=[f"{w}-{fmt}" for w, fmt in MATRIX])
each_mode = pytest.mark.parametrize("mode", MODES)
Make = Callable[..., Runtime]


def echo(wire: Wire, status: int, secrets: list[str], retry_after: str | None = None) -> Reply:
    """An error that echoes the configured key and every auth header the server received."""
    headers = {"retry-after": retry_after} if retry_after is not None else None
    return key_echo_reply(wire, status, secrets, headers)


async def outcome(call: Any) -> tuple[Any, BaseException | None]:
    """(result, None) or (None, the exception) of an awaitable."""
    try:
        return await call, None
    except Exception as exc:
        return None, exc


async def stream_outcome(
    mode: str, rt: Runtime, content: str, **options: Any
) -> tuple[list[Any], BaseException | None]:
    """Every event of a stream, and the exception that ended it (if any)."""
    events: list[Any] = []
    try:
        if mode == "sync":
            for event in rt.stream(content, **options):
                events.append(event)
        else:
            async for event in rt.astream(content, **options):
                events.append(event)
    except Exception as exc:
        return events, exc
    return events, None


async def run(mode: str, rt: Runtime, content: str) -> Any:
    if mode == "sync":
        return rt.run(content)
    return await rt.arun(content)


@each_mode
@each_key
@pytest.mark.parametrize("logs", ["debug", "default"])
async def test_no_secret_in_errors_results_events_logs_or_observers(
    wire: Wire, fmt: str, mode: str, logs: str, runtime: Make, caplog: pytest.LogCaptureFixture
) -> None:
    """Channels 1-8 over five runs on one runtime: 401, ExecFailed, success, two streams.

    At the default log levels too: a vendor SDK logging at DEBUG may take
    another way to the vendor (the Anthropic plugin's direct post steps aside).
    """
    creds = wire.credentials(fmt)
    secrets = wire.secrets(creds)
    check = LeakCheck(secrets)
    observer = Observer()
    if logs == "debug":
        debug_logging(caplog)
    replies = [
        # 1. a permanent 401
        echo(wire, 401, secrets),
        # 2. transient 500s until ExecFailed
        echo(wire, 500, secrets),
        echo(wire, 500, secrets),
        echo(wire, 500, secrets),
        # 3. a success after an echoing 500
        echo(wire, 500, secrets),
        wire.text_reply("fine"),
        # 4. a stream that fails midway: cut, then 500s until ExecFailed
        wire.truncated_stream_reply(["Hel", "lo ", "wor", "ld, ", "how ", "are ", "you?"]),
        echo(wire, 500, secrets),
        echo(wire, 500, secrets),
        # 5. a stream that succeeds after an echoing 500
        echo(wire, 500, secrets),
        wire.stream_text_reply(["fi", "ne"]),
    ]
    problems: list[str] = []
    with LoopbackServer(replies) as server:
        rt = runtime(wire, server, creds=creds, hooks=[observer], max_retries=3)

        def scenario(where: str) -> None:
            check.logs(where, caplog)
            check.observed(where, observer)
            caplog.clear()
            observer.seen.clear()

        # 1. permanent error
        _, err = await outcome(run(mode, rt, "hi"))
        if err is None:
            problems.append("401: no error raised")
        else:
            check.error("401", err)
            if not isinstance(err, AuthenticationError):
                problems.append(f"401: expected AuthenticationError, got {type(err).__name__}")
        scenario("401")

        # 2. ExecFailed
        _, err = await outcome(run(mode, rt, "hi"))
        if err is None:
            problems.append("500s: no error raised")
        else:
            check.error("500s", err)
            check.exec_failed("500s", err)
            if not isinstance(err, ExecFailed):
                problems.append(f"500s: expected ExecFailed, got {type(err).__name__}")
        scenario("500s")

        # 3. success
        result, err = await outcome(run(mode, rt, "hi"))
        if err is not None:
            check.error("success", err)
            problems.append(f"success: raised {type(err).__name__}")
        else:
            check.result("success", result)
        scenario("success")

        # 4. a stream failing midway, restarted (its retries) until ExecFailed
        events, err = await stream_outcome(mode, rt, "hi", stream_retry="restart")
        check.events("stream failing", events)
        if err is None:
            problems.append("failing stream: no error raised")
        else:
            check.error("failing stream", err)
            check.exec_failed("failing stream", err)
        scenario("failing stream")

        # 5. a stream succeeding
        events, err = await stream_outcome(mode, rt, "hi")
        check.events("stream succeeding", events)
        if err is not None:
            check.error("succeeding stream", err)
            problems.append(f"succeeding stream: raised {type(err).__name__}")
        elif events and isinstance(events[-1], FinalEvent):
            check.result("succeeding stream", events[-1].result)
        scenario("succeeding stream")

    check.assert_clean()
    assert not problems, problems


@each_mode
@each_key
async def test_no_secret_in_the_session_database_or_session_show(
    wire: Wire,
    fmt: str,
    mode: str,
    runtime: Make,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Channels 9-10: an agentic function whose execs fail, stored in SQLite, then shown."""
    monkeypatch.setenv("COLUMNS", "1000")  # rich must not wrap a key across lines
    creds = wire.credentials(fmt)
    secrets = wire.secrets(creds)
    check = LeakCheck(secrets)
    debug_logging(caplog)
    path = tmp_path / "session.sqlite"
    replies = [
        echo(wire, 500, secrets),  # first exec: succeeds on its second attempt
        wire.text_reply("fine"),
        echo(wire, 401, secrets),  # second exec: a permanent error (caught)
        echo(wire, 500, secrets),  # third exec: ExecFailed
        echo(wire, 500, secrets),
        echo(wire, 500, secrets),
    ]
    with LoopbackServer(replies) as server:
        rt = runtime(wire, server, creds=creds, max_retries=3)

        if mode == "sync":

            @agentic_function
            def ask(question: str) -> str:
                first = rt.exec(question)
                with contextlib.suppress(LlmportError):
                    rt.exec("and again")
                return f"{first} {rt.exec('once more')}"

            def call() -> Any:
                return ask("hi")

        else:

            @agentic_function
            async def ask(question: str) -> str:  # type: ignore[misc]
                first = await rt.async_exec(question)
                with contextlib.suppress(LlmportError):
                    await rt.async_exec("and again")
                return f"{first} {await rt.async_exec('once more')}"

            async def call() -> Any:  # type: ignore[misc]
                return await ask("hi")

        with Session(path=path):
            try:
                out = call()
                if mode == "async":
                    await out
            except Exception as exc:
                check.error("agentic function", exc)
                raised: BaseException | None = exc
            else:
                raised = None
            for file in sorted(tmp_path.glob(path.name + "*")):
                check.bytes(f"channel 9 {file.name} (session open)", file.read_bytes())
        requests = len(server.requests)
    files = sorted(tmp_path.glob(path.name + "*"))
    assert path in files
    for file in files:
        check.bytes(f"channel 9 {file.name} (session closed)", file.read_bytes())

    capsys.readouterr()
    for argv in (["session", "show", str(path)], ["session", "show", str(path), "--json"]):
        code = main(argv)
        out, err = capsys.readouterr()
        shown = f"channel 10 `llmport session show PATH {' '.join(argv[3:])}`"
        check.text(shown, out + err)
        assert code == 0, err
    check.logs("session", caplog)
    check.assert_clean()
    assert isinstance(raised, ExecFailed), f"the third exec should raise ExecFailed: {raised!r}"
    assert requests == 6


CLI_MATRIX = [(w, fmt) for w in targets("test_no_secret_in_cli_output") for fmt in KEY_FORMATS]


@pytest.mark.parametrize(("wire", "fmt"), CLI_MATRIX, ids=[f"{w}-{f}" for w, f in CLI_MATRIX])
def test_no_secret_in_cli_output(
    wire: Wire,
    fmt: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Channel 11: `llmport run` with the key in the environment prints one line, no key."""
    monkeypatch.setenv("COLUMNS", "1000")
    creds = wire.credentials(fmt)
    secrets = wire.secrets(creds)
    for name, value in wire.env(creds).items():
        monkeypatch.setenv(name, value)
    check = LeakCheck(secrets)
    debug_logging(caplog)
    replies = [
        echo(wire, 401, secrets),  # streamed run: a permanent error
        echo(wire, 500, secrets, retry_after="0"),  # --no-stream --retries 2: ExecFailed
        echo(wire, 500, secrets, retry_after="0"),
    ]
    shapes: list[str] = []
    with LoopbackServer(replies) as server:
        (tmp_path / "llmport.toml").write_text(wire.config_toml(server.url))
        for argv in (
            ["run", "-m", wire.model, "hi"],
            ["run", "-m", wire.model, "--no-stream", "--retries", "2", "hi"],
        ):
            label = f"channel 11 `llmport {' '.join(a for a in argv if a != wire.model)}`"
            try:
                code = main(argv)
            except BaseException as exc:  # a crash is a traceback: report it, and its leaks
                check.error(label, exc)
                shapes.append(f"{label}: raised {type(exc).__name__} instead of printing one line")
                continue
            out, err = capsys.readouterr()
            check.text(f"{label} stdout+stderr", out + err)
            lines = err.strip().splitlines()
            if code != 1:
                shapes.append(f"{label}: exit status {code}, expected 1")
            if "Traceback" in out + err:
                shapes.append(f"{label}: printed a traceback")
            if len(lines) != 1 or not lines[0].startswith("error: "):
                shapes.append(
                    check.mask(f"{label}: stderr is not one 'error: ...' line: {lines!r}")[:400]
                )
        if len(server.requests) != 3:
            shapes.append(f"the CLI made {len(server.requests)} requests, expected 3")
    check.logs("cli", caplog)
    check.assert_clean()
    assert not shapes, shapes


#: Every target and profile: an instance of each, pointed at another host.
KEY_HOST_TARGETS = targets(
    "test_an_instance_with_its_own_endpoint_is_sent_no_environment_key", True
)


def instance_runtime(wire: Wire, settings: dict[str, Any]) -> Runtime:
    """``proxy:MODEL``: a named instance made from ``wire``'s provider with ``settings``."""
    model = wire.model.partition(":")[2]
    return Runtime(
        model=f"proxy:{model}",
        max_retries=1,
        providers={"proxy": {"plugin": wire.provider, **settings}},
    )


def keys_seen(server: LoopbackServer, secrets: list[str]) -> list[str]:
    """The secrets found in any request ``server`` received (headers or body)."""
    sent = [
        json.dumps(dict(r.headers)) + r.body.decode("utf-8", "replace") for r in server.requests
    ]
    return [s for s in secrets if any(s in text for text in sent)]


@pytest.mark.parametrize("wire", KEY_HOST_TARGETS, ids=str)
def test_an_instance_with_its_own_endpoint_is_sent_no_environment_key(
    wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    """I6: the vendor's environment key goes only to the vendor's host.

    The instance either runs keyless (a placeholder, as for a local server) or
    refuses typed before sending; either way the other host sees no key.
    """
    creds = wire.credentials("standard")
    secrets = wire.secrets(creds)
    for name, value in wire.env(creds).items():
        monkeypatch.setenv(name, value)
    with LoopbackServer([wire.text_reply("fine")], repeat=True) as server:
        rt = instance_runtime(wire, wire.endpoint_settings(server.url))
        try:
            rt.exec("hi")
        except LlmportError as exc:
            assert isinstance(exc, ConfigError) or server.requests, repr(exc)
        finally:
            rt.close()
        assert keys_seen(server, secrets) == [], f"{wire}: the other host was sent the key"


#: Bedrock signs with named credentials, not one key variable (no ``api_key_env``).
ONE_KEY_TARGETS = [
    w
    for w in targets("test_an_instance_with_its_own_endpoint_sends_its_api_key_env", True)
    if w.provider != "bedrock"
]


@pytest.mark.parametrize("wire", ONE_KEY_TARGETS, ids=str)
def test_an_instance_with_its_own_endpoint_sends_its_api_key_env(
    wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key the instance names (``api_key_env``) is the one it sends, and only it."""
    vendor_key = wire.credentials("standard")
    own_key = {"api_key": "LEAKproxyownkey-0123456789abcdef"}
    for name, value in wire.env(vendor_key).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PROXY_KEY", own_key["api_key"])
    with LoopbackServer([wire.text_reply("fine")], repeat=True) as server:
        settings = {**wire.endpoint_settings(server.url), "api_key_env": "PROXY_KEY"}
        rt = instance_runtime(wire, settings)
        try:
            assert rt.exec("hi") == "fine"
        finally:
            rt.close()
        assert keys_seen(server, wire.secrets(vendor_key)) == []
        assert keys_seen(server, [own_key["api_key"]]) == [own_key["api_key"]]


@pytest.mark.parametrize(
    "wire", targets("test_the_vendor_provider_still_reads_its_environment_key", True), ids=str
)
def test_the_vendor_provider_still_reads_its_environment_key(
    wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not an instance: the provider the plugin registered reads its vendor's variable."""
    creds = wire.credentials("standard")
    for name, value in wire.env(creds).items():
        monkeypatch.setenv(name, value)
    with LoopbackServer([wire.text_reply("fine")], repeat=True) as server:
        rt = Runtime(
            model=wire.model,
            max_retries=1,
            providers={wire.provider: wire.endpoint_settings(server.url)},
        )
        try:
            assert rt.exec("hi") == "fine"
        finally:
            rt.close()
        expected = [wire.secrets(creds)[0]]
        if wire.provider == "bedrock":
            expected = [creds["aws_access_key_id"]]  # signed with it (the secret never goes)
        assert keys_seen(server, expected) == expected
