"""docs/batch.md's first example runs against cassettes/openai/batch_run.yaml as written."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "batch.md"


def example() -> str:
    text = DOC.read_text()
    section = text[text.index("## Submit, wait, read") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def test_docs_example_prints_what_its_comments_say(
    monkeypatch: pytest.MonkeyPatch, batch_cassette: Any
) -> None:
    import llmport.engine.jobs.batch

    monkeypatch.delenv("LLMPORT_PLUGINS")  # the installed vendor plugins, as for a user
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-docs")
    monkeypatch.setattr(llmport.engine.jobs.job.time, "sleep", lambda seconds: None)  # poll=30
    code = example()
    out = io.StringIO()
    with batch_cassette("openai/batch_run.yaml"), contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {})
    expected = [
        line.split("#", 1)[1].split("(")[0].strip()
        for line in code.splitlines()
        if line.startswith("print(") and "#" in line
    ]
    assert out.getvalue().splitlines() == expected
