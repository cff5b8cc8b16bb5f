"""The CLI against loopback servers standing in for OpenAI and Anthropic.

``llmport "hi"``, ``llmport -c "and?"`` (continued on the other vendor),
``llmport logs``, saved keys, and ``llmport chat`` in a real terminal (tmux):
two turns with a Ctrl-C in the middle of a streamed answer between them.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from llmport.cli.main import main
from llmport.testing.loopback import LoopbackServer, Reply
from support.anthropic_scenarios import message, usage
from support.openai_scenarios import chat_usage, chunk, completion

OPENAI_KEY = "sk-test-openai-env-0123456789"
ANTHROPIC_KEY = "sk-ant-test-env-0123456789"
GPT = "openai:gpt-4o-mini"
CLAUDE = "anthropic:claude-haiku-4-5"

Serve = Callable[[list[Reply], list[Reply]], tuple[LoopbackServer, LoopbackServer]]


@pytest.fixture
def vendors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Serve]:
    """``gpt, claude = vendors(openai_replies, anthropic_replies)``: the two plugins aimed at
    loopback servers by an ``llmport.toml``, with keys in the environment."""
    monkeypatch.setenv("LLMPORT_PLUGINS", "openai,anthropic")
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    with ExitStack() as stack:

        def serve(
            openai: list[Reply], anthropic: list[Reply]
        ) -> tuple[LoopbackServer, LoopbackServer]:
            gpt = stack.enter_context(LoopbackServer(openai))
            claude = stack.enter_context(LoopbackServer(anthropic))
            (tmp_path / "llmport.toml").write_text(
                f'[providers.openai]\nbase_url = "{gpt.url}/v1"\n'
                f'[providers.anthropic]\nbase_url = "{claude.url}"\n'
            )
            return gpt, claude

        yield serve


def gpt_answer(text: str, inp: int, out: int) -> Reply:
    return Reply(json=completion("chatcmpl-1", content=text, usage=chat_usage(inp, out)))


def claude_answer(text: str, inp: int, out: int) -> Reply:
    content = [{"type": "text", "text": text}]
    return Reply(json=message("msg_1", "claude-haiku-4-5", content, "end_turn", usage(inp, out)))


def gpt_stream(words: list[str], inp: int, out: int, hold: float = 0.0) -> Reply:
    """A streamed answer; with ``hold``, the words only, then silence for ``hold`` seconds
    (an answer that stalls mid-stream)."""
    events: list[dict[str, Any] | str] = [chunk("c", {"role": "assistant", "content": ""})]
    events += [chunk("c", {"content": word}) for word in words]
    if hold:
        return Reply(sse=events, stall=hold)
    events += [chunk("c", {}, finish="stop"), chunk("c", None, usage=chat_usage(inp, out))]
    return Reply(sse=[*events, "[DONE]"])


def auth(server: LoopbackServer) -> str:
    """The Authorization header of the server's first request."""
    headers = {k.lower(): v for k, v in server.requests[0].headers.items()}
    return headers["authorization"]


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def logged(capsys: pytest.CaptureFixture[str], *flags: str) -> list[dict[str, Any]]:
    status, out, err = cli(["logs", "--json", *flags], capsys)
    assert status == 0, err
    rows: list[dict[str, Any]] = json.loads(out)
    return rows


def test_prompt_continue_on_another_vendor_and_search_the_logs(
    vendors: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    gpt, claude = vendors([gpt_answer("Hello there!", 5, 3)], [claude_answer("And more.", 9, 4)])

    status, out, err = cli(["hi", "-m", GPT, "--no-stream"], capsys)
    assert (status, out) == (0, "Hello there!\n"), err
    status, out, err = cli(["-c", "and?", "-m", CLAUDE, "--no-stream"], capsys)
    assert (status, out) == (0, "And more.\n"), err

    assert [m["role"] for m in gpt.requests[0].json()["messages"]] == ["user"]
    sent = claude.requests[0].json()["messages"]  # the first turn went along as history
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "Hello there!" in json.dumps(sent[1]) and "and?" in json.dumps(sent[2])

    rows = logged(capsys, "-n", "10")
    assert [r["prompt"] for r in rows] == ["and?", "hi"]  # newest first
    assert rows[0]["cid"] == rows[1]["cid"]
    assert [r["model"] for r in rows] == [CLAUDE, GPT]
    assert [r["usage"]["input_tokens"] for r in rows] == [9, 5]
    assert [r["usage"]["output_tokens"] for r in rows] == [4, 3]
    assert [r["response"] for r in logged(capsys, "-q", "hi")] == ["Hello there!"]
    assert [r["prompt"] for r in logged(capsys, "-q", "more")] == ["and?"]
    assert logged(capsys, "-q", "pelican") == []
    status, out, _ = cli(["logs", "--usage", "-n", "10"], capsys)
    assert out.splitlines() == [f"{CLAUDE}: 9 in / 4 out", f"{GPT}: 5 in / 3 out"]


def test_cid_continues_a_given_conversation(
    vendors: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    gpt, _ = vendors([gpt_answer("one", 1, 1), gpt_answer("two", 1, 1), gpt_answer("3", 1, 1)], [])
    cli(["first", "-m", GPT, "--no-stream"], capsys)
    cid = logged(capsys)[0]["cid"]
    cli(["elsewhere", "-m", GPT, "--no-stream"], capsys)  # a new conversation
    status, _, err = cli(["--cid", cid, "back", "-m", GPT, "--no-stream"], capsys)
    assert status == 0, err
    sent = gpt.requests[2].json()["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["first", "back"]
    assert [r["prompt"] for r in logged(capsys, "--cid", cid)] == ["back", "first"]


def test_no_log_and_logs_off_write_nothing(
    vendors: Serve, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    vendors([gpt_answer("a", 1, 1), gpt_answer("b", 1, 1)], [])
    assert cli(["hi", "-m", GPT, "--no-stream", "--no-log"], capsys)[0] == 0
    monkeypatch.setenv("LLMPORT_LOGS", "off")
    assert cli(["hi", "-m", GPT, "--no-stream"], capsys)[0] == 0
    status, _, err = cli(["logs"], capsys)
    assert status == 1 and "nothing is logged yet" in err


def test_continue_with_nothing_logged_is_one_line(
    vendors: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    gpt, _ = vendors([], [])
    status, out, err = cli(["-c", "and?", "-m", GPT], capsys)
    assert status == 1 and out == "" and len(err.strip().splitlines()) == 1
    assert "UnknownSessionError: no conversation to continue" in err
    assert gpt.requests == []  # refused before any request


def test_a_saved_key_reaches_the_vendor_and_is_never_printed(
    vendors: Serve, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = "sk-fake-saved-in-keyfile-9876543210"
    gpt, _ = vendors([gpt_answer("keyed", 2, 1)], [])
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setattr(sys, "stdin", io.StringIO(saved + "\n"))
    outputs = [cli(["keys", "set", "openai"], capsys)]
    outputs.append(cli(["keys", "list"], capsys))
    outputs.append(cli(["keys", "path"], capsys))
    outputs.append(cli(["hi", "-m", GPT, "--no-stream"], capsys))
    outputs.append(cli(["logs", "--json"], capsys))

    assert [status for status, _, _ in outputs] == [0] * 5
    assert outputs[1][1] == "openai\n"
    path = Path(outputs[2][1].strip())
    assert path.stat().st_mode & 0o777 == 0o600
    assert auth(gpt) == f"Bearer {saved}"
    assert not any(saved in out or saved in err for _, out, err in outputs)


def test_the_environment_wins_over_a_saved_key(
    vendors: Serve, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gpt, _ = vendors([gpt_answer("env", 2, 1)], [])
    monkeypatch.setattr(sys, "stdin", io.StringIO("sk-fake-saved-but-unused-000\n"))
    cli(["keys", "set", "openai"], capsys)
    assert cli(["hi", "-m", GPT, "--no-stream"], capsys)[0] == 0
    assert auth(gpt) == f"Bearer {OPENAI_KEY}"


def test_aliases_and_the_default_model(vendors: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    gpt, _ = vendors([gpt_answer("aliased", 1, 1), gpt_answer("default", 1, 1)], [])
    assert cli(["aliases", "set", "fast", GPT], capsys)[0] == 0
    assert cli(["aliases", "list"], capsys)[1] == f"fast: {GPT}\n"
    assert cli(["hi", "-m", "fast", "--no-stream"], capsys)[1] == "aliased\n"
    assert cli(["models", "default", "fast"], capsys)[0] == 0
    assert cli(["models", "default"], capsys)[1] == "fast\n"
    assert cli(["hi", "--no-stream"], capsys)[1] == "default\n"
    assert cli(["aliases", "remove", "fast"], capsys)[0] == 0
    status, _, err = cli(["aliases", "remove", "fast"], capsys)
    assert status == 1 and "no alias 'fast'" in err
    assert [r.json()["model"] for r in gpt.requests] == ["gpt-4o-mini", "gpt-4o-mini"]


# -- llmport chat in a real terminal ------------------------------------------------------


class Terminal:
    """A tmux session on its own server socket: type keys, read the screen."""

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.socket = f"llmport-test-{os.getpid()}-{time.monotonic_ns()}"
        shell = " ".join(f"'{part}'" for part in command)
        self._tmux(
            "new-session",
            "-d",
            "-s",
            "chat",
            "-x",
            "160",
            "-y",
            "50",
            "-c",
            str(cwd),
            *[f"-e{key}={value}" for key, value in env.items()],
            f"{shell}; sleep 30",
        )

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def type(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "chat", *keys)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "chat", "-S", "-200")

    def wait_for(self, text: str, after: int = 0, timeout: float = 30.0) -> None:
        """Wait until ``text`` shows at least ``after + 1`` times on the screen."""
        deadline = time.monotonic() + timeout
        while self.screen().count(text) <= after:
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never showed:\n{self.screen()}")
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def test_chat_two_turns_and_a_cancelled_answer_in_a_terminal(
    vendors: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert shutil.which("tmux"), "tmux is needed (.ci/run installs it)"
    gpt, _ = vendors(
        [
            gpt_stream(["Hi! ", "How can ", "I help?"], 4, 5),
            gpt_stream(["Once ", "upon ", "a ", "time ", "there ", "was"], 9, 6, hold=60.0),
            gpt_stream(["Yes, ", "still ", "here."], 12, 3),
        ],
        [claude_answer("Hello from Claude.", 4, 2)],
    )
    status, _, err = cli(["hi", "-m", CLAUDE, "--no-stream"], capsys)  # then chat goes on with it
    assert status == 0, err
    env = {k: os.environ[k] for k in os.environ if k.startswith(("LLMPORT_", "OPENAI_", "PATH"))}
    term = Terminal([sys.executable, "-m", "llmport.cli", "chat", "-c", "-m", GPT], tmp_path, env)
    try:
        term.wait_for("Chatting with")
        term.type("hello", "Enter")
        term.wait_for("How can I help?")
        term.type("tell me a story", "Enter")
        term.wait_for("Once upon")  # the answer is streaming, then stalls
        term.type("C-c")
        term.wait_for("[answer cancelled]")
        term.type("!multi", "Enter", "still", "Enter", "there?", "Enter", "!end", "Enter")
        term.wait_for("Yes, still here.")
        term.type("!exit", "Enter")
    finally:
        screen = term.screen()
        term.close()
    assert "Traceback" not in screen and "error" not in screen.lower(), screen
    third = gpt.requests[2].json()["messages"]
    users = [m["content"] for m in third if m["role"] == "user"]
    assert users == ["hi", "hello", "still\nthere?"]  # Claude's turn, then the chat's
    rows = logged(capsys, "-n", "10")
    assert [r["prompt"] for r in rows] == ["still\nthere?", "hello", "hi"]  # not the cancelled
    assert len({r["cid"] for r in rows}) == 1
    assert [r["model"] for r in rows] == [GPT, GPT, CLAUDE]
    assert [r["usage"]["output_tokens"] for r in rows] == [3, 5, 2]


# -- tools from the command line ----------------------------------------------------------

TOOLS_FILE = '''
def clock(city: str) -> str:
    """The time in a city."""
    return f"12:00 in {city}"


def _helper() -> None:
    """Private: not a tool."""
'''


def gpt_tool_call(name: str, arguments: dict[str, Any]) -> Reply:
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    events: list[dict[str, Any] | str] = [
        chunk("c", {"role": "assistant", "content": None, "tool_calls": [call]}),
        chunk("c", {}, finish="tool_calls"),
        chunk("c", None, usage=chat_usage(20, 8)),
        "[DONE]",
    ]
    return Reply(sse=events)


class Typed(io.StringIO):
    """Answers typed at a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("answer", "ran"), [("y", True), ("n", False)])
def test_functions_file_tools_run_shown_and_approved(
    vendors: Serve,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    answer: str,
    ran: bool,
) -> None:
    gpt, _ = vendors(
        [gpt_tool_call("clock", {"city": "Paris"}), gpt_stream(["It is ", "noon."], 30, 4)], []
    )
    (tmp_path / "tools.py").write_text(TOOLS_FILE)
    monkeypatch.setattr(sys, "stdin", Typed(answer + "\n"))
    argv = ["time in Paris?", "-m", GPT, "--functions", "tools.py", "--approve"]
    status, out, err = cli(argv, capsys)
    assert status == 0, err
    assert out.startswith("It is noon.")
    assert 'Run clock({"city": "Paris"})? [y/N]' in err
    assert '[tool] clock({"city": "Paris"})' in err
    offered = [t["function"]["name"] for t in gpt.requests[0].json()["tools"]]
    assert offered == ["clock"]  # _helper is not a tool
    result = json.dumps(gpt.requests[1].json()["messages"][-1])
    assert ("12:00 in Paris" in result) is ran
    assert logged(capsys)[0]["tool_calls"] == [{"name": "clock", "arguments": {"city": "Paris"}}]


def test_an_unknown_toolset_is_one_line_before_any_request(
    vendors: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    gpt, _ = vendors([], [])
    status, _, err = cli(["hi", "-m", GPT, "-T", "no-such-tools"], capsys)
    assert status == 1 and "UnknownToolError: unknown toolset 'no-such-tools'" in err
    assert gpt.requests == []


# -- hostile files ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [["logs"], ["logs", "-q", "hi"], ["-c", "and?", "-m", GPT], ["hi", "-m", GPT]],
    ids=["logs", "search", "continue", "prompt"],
)
def test_a_log_file_that_is_not_a_database_is_one_line_before_any_request(
    vendors: Serve, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    gpt, _ = vendors([], [])
    home = Path(os.environ["LLMPORT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "logs.sqlite").write_bytes(b"not sqlite at all, " * 100)
    status, out, err = cli(argv, capsys)
    assert status == 1 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "SessionError" in err and "Traceback" not in err
    assert gpt.requests == []


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("keys.json", b"{not json", "keys file"),
        ("keys.json", b'{"openai": 42}', "keys file"),
        ("keys.json", b"\xff\xfe", "keys file"),
        ("settings.json", b"[1, 2]", "settings file"),
        ("settings.json", b'{"aliases": {}, "default_model": 7}', "settings file"),
        ("settings.json", b"\xff", "cannot read"),
    ],
)
def test_a_damaged_keys_or_settings_file_is_one_line_before_any_request(
    vendors: Serve, capsys: pytest.CaptureFixture[str], name: str, content: bytes, says: str
) -> None:
    gpt, _ = vendors([], [])
    home = Path(os.environ["LLMPORT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / name).write_bytes(content)
    status, out, err = cli(["hi", "-m", GPT], capsys)
    assert status == 1 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "ConfigError" in err and says in err
    assert gpt.requests == []


def test_a_saved_key_the_vendor_echoes_in_an_error_is_masked(
    vendors: Serve, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = "plainwordsecretvalue4242xyz"  # no vendor prefix: only the registry knows it
    refused = {
        "error": {
            "message": f"Incorrect API key provided: {saved}.",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    gpt, _ = vendors([Reply(status=401, json=refused)], [])
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setattr(sys, "stdin", io.StringIO(saved + "\n"))
    cli(["keys", "set", "openai"], capsys)
    status, out, err = cli(["hi", "-m", GPT, "--no-stream"], capsys)
    assert status == 1 and "AuthenticationError" in err
    assert auth(gpt) == f"Bearer {saved}"
    assert saved not in out + err and saved[:12] not in out + err


def test_dash_t_offers_a_toolset_a_plugin_registers_through_its_entry_point(
    vendors: Serve, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gpt, _ = vendors([gpt_answer("about 3.28 feet", 40, 5)], [])
    monkeypatch.setenv("LLMPORT_PLUGINS", "openai,example_tools")
    status, out, err = cli(["1 m in feet?", "-m", GPT, "-T", "units", "--no-stream"], capsys)
    assert (status, out) == (0, "about 3.28 feet\n"), err
    offered = sorted(t["function"]["name"] for t in gpt.requests[0].json()["tools"])
    assert offered == ["convert_length", "convert_temperature"]


def test_chat_reads_turns_from_a_pipe_and_logs_them_in_one_conversation(
    vendors: Serve, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gpt, _ = vendors([gpt_stream(["One."], 3, 1), gpt_stream(["Two."], 9, 1)], [])
    typed = "hello\n\n!multi\nfirst line\nsecond line\n!end\n!exit\nnever sent\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    status, out, err = cli(["chat", "-m", GPT], capsys)
    assert status == 0, err
    assert "One.\n" in out and "Two.\n" in out
    users = [m["content"] for m in gpt.requests[1].json()["messages"] if m["role"] == "user"]
    assert users == ["hello", "first line\nsecond line"]
    assert len(gpt.requests) == 2  # the empty line sent nothing; !exit left
    status, out, _ = cli(["logs", "-n", "5"], capsys)
    assert out.count(f"· {GPT} · cid ") == 2 and "3 in / 1 out" in out and "9 in / 1 out" in out
    assert out.index("prompt: hello") < out.index("prompt: first line")  # oldest first


def test_toolset_mcp_name_calls_a_configured_mcp_server(
    vendors: Serve,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    demo = Path(__file__).parents[1] / "mcp" / "servers" / "demo_server.py"
    gpt, _ = vendors([gpt_tool_call("add", {"a": 2, "b": 3}), gpt_stream(["Five."], 30, 2)], [])
    with (tmp_path / "llmport.toml").open("a") as toml:
        toml.write(f"[mcp.servers.demo]\ncommand = [{json.dumps(sys.executable)}, ")
        toml.write(f"{json.dumps(str(demo))}]\nconnect_timeout = 60\n")
    monkeypatch.setenv("LLMPORT_PLUGINS", "openai,mcp")
    status, out, err = cli(["2 + 3?", "-m", GPT, "--toolset", "mcp:demo"], capsys)
    assert status == 0, err
    assert out.startswith("Five.") and '[tool] add({"a": 2, "b": 3})' in err
    tool_turn = gpt.requests[1].json()["messages"][-1]
    assert tool_turn["role"] == "tool" and "5" in json.dumps(tool_turn["content"])


def test_a_log_that_cannot_be_written_loses_no_answer(
    vendors: Serve, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from llmport.errors import SessionStoreUnavailable
    from llmport.sessions.session import Session

    def down(*args: Any, **kwargs: Any) -> Any:
        raise SessionStoreUnavailable("SQLite at logs.sqlite", "disk I/O error")

    vendors([gpt_answer("Still answered.", 2, 2)], [])
    monkeypatch.setattr(Session, "record", down)
    status, out, err = cli(["hi", "-m", GPT, "--no-stream"], capsys)
    assert (status, out) == (0, "Still answered.\n"), err
    [line] = err.splitlines()
    assert line.startswith("warning: this turn was not logged: SessionStoreUnavailable: ")


def test_logs_of_an_unknown_conversation_is_one_line(
    vendors: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    vendors([gpt_answer("a", 1, 1)], [])
    cli(["hi", "-m", GPT, "--no-stream"], capsys)
    status, out, err = cli(["logs", "--cid", "no-such-cid"], capsys)
    assert status == 1 and out == "" and "UnknownSessionError: no conversation 'no-such-cid'" in err
