"""The CLI reports a user error as one line, never a traceback (``--debug`` shows one).

User errors: every llmport error, an ``OSError`` from a file the user named,
bad JSON the user gave (exit 1); Ctrl-C (exit 130); bad arguments (exit 2,
argparse's usage message).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from llmport.cli.main import main
from llmport.errors import ConfigError, RateLimitError
from llmport.messages.types import Request, Response
from llmport.testing import fail, respond

MODEL = "scripted:test"
KEY = "sk-proj-fake-key-for-cli-tests"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def error_line(err: str) -> str:
    """The single ``error: ...`` line of ``err`` (and that it is the only line)."""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    return lines[0]


def prompt_of(request: Request) -> str:
    return request.messages[-1].text


class TtyStdin(io.StringIO):
    def isatty(self) -> bool:
        return True


# --- schema --------------------------------------------------------------------


def test_inline_schema_that_is_not_json_is_one_line(
    capsys: pytest.CaptureFixture[str], scripted: Any
) -> None:
    script = scripted("never sent")
    code, out, err = cli(capsys, "run", "-m", MODEL, "--schema", "{not json", "hi")
    assert code == 1 and out == ""
    line = error_line(err)
    assert line.startswith("error: JSONDecodeError: --schema inline JSON: Expecting property")
    assert script.requests == []


def test_schema_path_that_does_not_exist_says_file_not_found(
    capsys: pytest.CaptureFixture[str], scripted: Any
) -> None:
    script = scripted("never sent")
    code, _, err = cli(capsys, "run", "-m", MODEL, "--schema", "missing.json", "hi")
    assert code == 1
    line = error_line(err)
    assert line.startswith("error: FileNotFoundError: --schema missing.json: file not found")
    assert script.requests == []


def test_schema_file_with_bad_json_names_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, scripted: Any
) -> None:
    scripted("never sent")
    (tmp_path / "bad.json").write_text('{"type": "object",}')
    code, _, err = cli(capsys, "run", "-m", MODEL, "--schema", "bad.json", "hi")
    assert code == 1
    assert error_line(err).startswith("error: JSONDecodeError: --schema bad.json: ")


def test_schema_file_is_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, scripted: Any
) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    script = scripted('{"n": 3}')
    code, out, err = cli(capsys, "run", "-m", MODEL, "--schema", "s.json", "--json", "count")
    assert code == 0, err
    assert json.loads(out)["output"] in ({"n": 3}, '{"n": 3}')
    response_format = script.requests[0].response_format
    assert response_format is not None
    assert response_format.schema["properties"] == schema["properties"]


# --- no model, bad configuration ------------------------------------------------


def test_no_model_tells_the_user_to_pass_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "run", "hi")
    assert code == 1
    line = error_line(err)
    assert line.startswith("error: NoModelError: ")
    assert "-m provider:model" in line and "LLMPORT_MODEL" in line
    assert "_call" not in line  # the library's advice is not the CLI user's


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('default_modle = "openai:gpt-4o"\n', "unknown key(s) default_modle"),
        ("default_model = 3\n", "default_model must be a string"),
        ("default_model = \n", "invalid TOML"),
    ],
)
def test_bad_llmport_toml_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, toml: str, message: str
) -> None:
    (tmp_path / "llmport.toml").write_text(toml)
    code, out, err = cli(capsys, "models")
    assert code == 1 and out == ""
    line = error_line(err)
    assert line.startswith("error: ConfigError: ") and message in line


# --- command-line usage -----------------------------------------------------------


def test_option_without_a_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "-m", MODEL, "-o", "temperature", "hi"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: llmport run")
    assert "argument -o/--option: 'temperature' must be KEY=VALUE" in err


def test_option_values_are_json_or_text(capsys: pytest.CaptureFixture[str], scripted: Any) -> None:
    script = scripted("ok")
    code, _, err = cli(
        capsys, "run", "-m", MODEL, "--no-stream", "-o", "temperature=0.5", "-o", "stop=END", "hi"
    )
    assert code == 0, err
    assert script.requests[0].options == {"temperature": 0.5, "stop": "END"}


def test_dash_reads_the_prompt_from_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, scripted: Any
) -> None:
    script = scripted("Hi there.")
    monkeypatch.setattr(sys, "stdin", io.StringIO("hello from stdin\n"))
    code, out, err = cli(capsys, "run", "-m", MODEL, "--no-stream", "-")
    assert code == 0, err
    assert out == "Hi there.\n"
    assert prompt_of(script.requests[0]).strip() == "hello from stdin"


def test_no_prompt_reads_piped_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, scripted: Any
) -> None:
    script = scripted("Hi there.")
    monkeypatch.setattr(sys, "stdin", io.StringIO("piped prompt"))
    code, _, err = cli(capsys, "run", "-m", MODEL, "--no-stream")
    assert code == 0, err
    assert prompt_of(script.requests[0]) == "piped prompt"


def test_no_prompt_on_a_terminal_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, scripted: Any
) -> None:
    script = scripted("never sent")
    monkeypatch.setattr(sys, "stdin", TtyStdin("must not be read"))
    with pytest.raises(SystemExit) as exc:
        main(["run", "-m", MODEL])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: llmport run")
    assert "llmport run: error: the prompt is missing" in err and "pipe it in" in err
    assert script.requests == []


def test_empty_stdin_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, scripted: Any
) -> None:
    script = scripted("never sent")
    monkeypatch.setattr(sys, "stdin", io.StringIO(" \n"))
    with pytest.raises(SystemExit) as exc:
        main(["run", "-m", MODEL, "-"])
    assert exc.value.code == 2
    assert "the prompt read from stdin is empty" in capsys.readouterr().err
    assert script.requests == []


# --- errors from the call ------------------------------------------------------------


def test_multi_line_error_is_printed_on_one_line(
    capsys: pytest.CaptureFixture[str], scripted: Any
) -> None:
    slow = RateLimitError("slow down", retry_after=0.0)  # retried at once: no sleeping
    scripted(fail(slow), fail(slow))
    code, _, err = cli(capsys, "run", "-m", MODEL, "--retries", "2", "--no-stream", "hi")
    assert code == 1
    assert error_line(err) == (
        "error: ExecFailed: exec() failed after 2 attempts: "
        "Attempt 1: RateLimitError: slow down; Attempt 2: RateLimitError: slow down"
    )


def test_stream_that_fails_ends_its_line_before_the_error(
    capsys: pytest.CaptureFixture[str], scripted: Any
) -> None:
    # The text streams, then the reply (and its repair) fails the schema.
    scripted("not json at all", "still not json")
    schema = '{"type": "object", "required": ["n"]}'
    code, out, err = cli(capsys, "run", "-m", MODEL, "--schema", schema, "hi")
    assert code == 1
    assert out.startswith("not json at all") and out.endswith("\n")
    line = error_line(err)
    assert line.startswith("error: StructuredOutputError: ")
    assert "; reply is not JSON" in line  # the "- ..." detail lines, joined


def test_secrets_in_error_messages_are_redacted(
    capsys: pytest.CaptureFixture[str], scripted: Any
) -> None:
    scripted(fail(ConfigError(f"proxy rejected api_key={KEY}")))
    code, out, err = cli(capsys, "run", "-m", MODEL, "--no-stream", "hi")
    assert code == 1
    line = error_line(err)
    assert line.startswith("error: ConfigError: proxy rejected api_key=")
    assert KEY not in out + err and KEY[8:] not in out + err


def test_ctrl_c_is_error_interrupted_with_status_130(
    capsys: pytest.CaptureFixture[str], scripted: Any
) -> None:
    def interrupt(request: Request) -> Response:
        raise KeyboardInterrupt

    scripted(respond(interrupt))
    code, out, err = cli(capsys, "run", "-m", MODEL, "--no-stream", "hi")
    assert code == 130 and out == ""
    assert error_line(err) == "error: interrupted"


# --- markup safety ------------------------------------------------------------------


def test_bracketed_model_name_is_printed_literally(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "run", "-m", "[session]x:y", "hi")
    assert code == 1
    line = error_line(err)
    assert line.startswith("error: UnknownModelError: unknown model '[session]x:y'")


def test_bracketed_provider_message_is_printed_literally(
    capsys: pytest.CaptureFixture[str], scripted: Any
) -> None:
    scripted(fail(ConfigError("field [bold]x[/bold] is [red] wrong")))
    code, _, err = cli(capsys, "run", "-m", MODEL, "--no-stream", "hi")
    assert code == 1
    assert error_line(err) == "error: ConfigError: field [bold]x[/bold] is [red] wrong"


def test_stream_footer_prints_the_model_literally(
    capsys: pytest.CaptureFixture[str], scripted: Any
) -> None:
    scripted("Hello [b]world[/b].", prefix="[dim]x")
    code, out, err = cli(capsys, "run", "-m", "[dim]x:test", "hi [x]")
    assert code == 0, err
    assert out == "Hello [b]world[/b].\n"
    assert err.startswith("[dim]x:test · ")


def test_models_prints_bracketed_aliases_literally(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "llmport.toml").write_text(
        '[aliases]\n"[fast]" = "openai:[mini]"\n\n[configurations."[session]"]\nmodel = "x:y"\n'
    )
    code, out, err = cli(capsys, "models")
    assert code == 0, err
    assert "configured aliases: [fast] → openai:[mini]" in out
    assert "named configurations: [session]" in out


# --- session subcommands, --debug, a real process ---------------------------------------


def test_session_show_of_a_missing_target_is_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = cli(capsys, "session", "show", "nope.sqlite")
    assert code == 1 and out == ""
    assert "'nope.sqlite'" in error_line(err)


@pytest.mark.parametrize(
    "argv",
    [
        ["--debug", "run", "-m", MODEL, "--schema", "missing.json", "hi"],
        ["run", "--debug", "-m", MODEL, "--schema", "missing.json", "hi"],
    ],
)
def test_debug_reraises(argv: list[str], scripted: Any) -> None:
    scripted("never sent")
    with pytest.raises(FileNotFoundError, match="file not found"):
        main(argv)


def test_debug_reraises_llmport_errors(scripted: Any) -> None:
    scripted(fail(ConfigError("boom")))
    with pytest.raises(ConfigError, match="boom"):
        main(["--debug", "run", "-m", MODEL, "--no-stream", "hi"])


def test_installed_command_prints_no_traceback(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMPORT_")}
    env["LLMPORT_PLUGINS"] = ""
    proc = subprocess.run(
        [sys.executable, "-m", "llmport.cli", "run", "-m", "x:y", "--schema", "{not json", "hi"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert error_line(proc.stderr).startswith("error: JSONDecodeError: --schema inline JSON")


def test_session_list_is_wired_into_the_command(tmp_path: Path, capsys: Any) -> None:
    from llmport import Runtime, agentic_function
    from llmport.sessions.session import Session

    path = tmp_path / "runs.sqlite"

    @agentic_function
    def step() -> str:
        """One step."""
        return str(Runtime(call=lambda content, model, rf: "ok").exec("hi"))

    for _ in range(2):
        with Session(path=path, new=True):
            step()
    assert main(["session", "list", str(path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [s["nodes"] for s in listed["sessions"]] == [2, 2]


def test_session_show_of_a_missing_file_keeps_its_brackets(tmp_path: Path, capsys: Any) -> None:
    assert main(["session", "show", str(tmp_path / "nope.sqlite")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: SessionFileNotFoundError: ")
    assert "Traceback" not in err and err.count("\n") == 1


def test_debug_shows_llmport_debug_logs_on_stderr_and_only_with_debug(
    capsys: pytest.CaptureFixture[str], scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An MCP server's stderr is logged at DEBUG on llmport.mcp: shown with --debug only."""
    import logging

    from llmport.cli import main as cli_module

    def noisy(args: Any) -> int:
        logging.getLogger("llmport.mcp").debug("server stderr: Traceback (most recent call last)")
        return 0

    monkeypatch.setattr(cli_module, "cmd_models", noisy)
    # A logging.config call elsewhere in the same process may have disabled it.
    monkeypatch.setattr(logging.getLogger("llmport.mcp"), "disabled", False)
    assert main(["models"]) == 0
    assert "server stderr" not in capsys.readouterr().err
    assert main(["--debug", "models"]) == 0
    assert "llmport.mcp: server stderr" in capsys.readouterr().err
    assert not logging.getLogger("llmport").handlers or all(
        not isinstance(h, logging.StreamHandler) or h.stream is not sys.stderr
        for h in logging.getLogger("llmport").handlers
    )
