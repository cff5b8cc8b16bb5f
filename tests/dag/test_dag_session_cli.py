"""`llmport session show`: the rich tree and the JSON form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llmport import Session, agentic_function, tool
from llmport.cli.session import show
from llmport.errors import LlmportError
from llmport.messages.types import Usage
from llmport.sessions.session import SessionError, SessionFileNotFoundError, UnknownSessionError
from llmport.testing import Script, call_tools
from rich.console import Console


@tool
def lookup(city: str) -> str:
    """Weather."""
    return "sunny"


def record(path: Path) -> Session:
    script = Script([call_tools(("lookup", {"city": "Rome"})), "Sunny.", "Summary."])
    script.steps[0].usage = Usage(input_tokens=10, output_tokens=1)
    script.steps[1].usage = Usage(input_tokens=30, output_tokens=4)
    rt = script.runtime()

    @agentic_function(expose="full")
    def weather(city: str) -> str:
        return str(rt.exec(f"Weather in {city}?", tools=[lookup]))

    @agentic_function
    def report() -> str:
        weather("Rome")
        return str(rt.exec("Summarise."))

    with Session(path) as session:
        report()
    return session


def capture() -> Console:
    return Console(record=True, width=140, color_system=None)


def test_show_prints_the_tree(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    session = record(path)
    console = capture()
    assert show(str(path), False, console) == 0
    out = console.export_text()
    lines = out.splitlines()
    assert session.id in lines[0] and "5 nodes" in lines[0]
    assert "n1 function report  ok" in out
    assert "n2 function weather  ok  expose=full" in out
    assert "n3 llm scripted:test  ok" in out and "40 in / 5 out" in out
    assert "n4 tool lookup  ok" in out
    # The tool is drawn under its llm node, the llm node under its function.
    indent = {name: next(line.index(name) for line in lines if name in line)
              for name in ("n1 ", "n2 ", "n3 ", "n4 ", "n5 ")}
    assert indent["n1 "] < indent["n2 "] < indent["n3 "] < indent["n4 "]
    assert indent["n5 "] == indent["n2 "]


def test_show_json(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    session = record(path)
    console = capture()
    assert show(str(path), True, console) == 0
    doc = json.loads(console.export_text())
    (stored,) = doc["sessions"]
    assert stored["id"] == session.id
    assert [(n["id"], n["kind"], n["parent"]) for n in stored["nodes"]] == [
        ("n1", "function", None), ("n2", "function", "n1"), ("n3", "llm", "n2"),
        ("n4", "tool", "n3"), ("n5", "llm", "n1")]
    assert stored["nodes"][2]["result"]["usage"]["input_tokens"] == 40
    assert stored["usage"]["requests"] == 3


def test_show_by_id_from_the_configured_database(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.sqlite"
    session = record(path)
    Session(path, new=True).close()  # a second session in the file
    monkeypatch.setenv("LLMPORT_SESSION", str(path))
    console = capture()
    assert show(session.id[:6], True, console) == 0
    assert [s["id"] for s in json.loads(console.export_text())["sessions"]] == [session.id]
    console = capture()
    assert show(f"{path}#{session.id}", True, console) == 0
    assert len(json.loads(console.export_text())["sessions"]) == 1
    console = capture()
    assert show(str(path), True, console) == 0
    assert len(json.loads(console.export_text())["sessions"]) == 2


def test_show_unknown_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SessionFileNotFoundError) as missing:
        show("nope", False, capture())
    # One line, brackets intact (rich markup used to eat "[session]").
    assert str(missing.value) == (
        "'nope' is not a session file, and no session database is configured "
        "(LLMPORT_SESSION or [session] path)")
    assert isinstance(missing.value, LlmportError)
    path = tmp_path / "s.sqlite"
    record(path)
    monkeypatch.setenv("LLMPORT_SESSION", str(path))
    with pytest.raises(UnknownSessionError) as unknown:
        show("zzzz", True, capture())
    assert str(unknown.value) == f"{path} has no session 'zzzz'"
    with pytest.raises(SessionFileNotFoundError, match="no session database at"):
        show(f"{tmp_path / 'other.sqlite'}#abc", False, capture())
    (tmp_path / "junk.sqlite").write_text("not a database")
    with pytest.raises(SessionError, match="not an llmport session database"):
        show(str(tmp_path / "junk.sqlite"), False, capture())
