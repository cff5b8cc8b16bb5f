"""docs/features/server-state.md and background.md run as written against their cassettes.

Each Python block runs with the installed plugins, as for a user (a fake
key; the cassette answers), and prints what its comments say.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "features"
#: (page, block index) -> the cassette it replays.
EXAMPLES = {
    ("server-state.md", 0): "openai/responses_previous_id.yaml",
    ("server-state.md", 1): "openai/responses_conversation.yaml",
    ("background.md", 0): "openai/responses_background_poll.yaml",
    ("background.md", 1): "openai/responses_background_stream.yaml",
}


def block(page: str, index: int) -> str:
    found: list[str] = re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.S)
    return found[index]


def test_every_block_of_the_pages_is_run() -> None:
    for page in {p for p, _ in EXAMPLES}:
        count = len(re.findall(r"```python\n", (DOCS / page).read_text()))
        assert {i for p, i in EXAMPLES if p == page} == set(range(count)), page


@pytest.mark.parametrize(("page", "index"), sorted(EXAMPLES), ids=lambda v: str(v))
def test_docs_example_prints_what_its_comments_say(
    page: str, index: int, monkeypatch: pytest.MonkeyPatch, cassette: Any
) -> None:
    import llmport.engine.jobs.job

    monkeypatch.delenv("LLMPORT_PLUGINS", raising=False)  # the installed plugins, as for a user
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-docs")
    monkeypatch.setattr(llmport.engine.jobs.job.time, "sleep", lambda seconds: None)  # wait(poll=5)
    code = block(page, index)
    out = io.StringIO()
    with cassette(EXAMPLES[(page, index)]), contextlib.redirect_stdout(out):
        exec(compile(code, f"{page}[{index}]", "exec"), {})
    expected = [
        line.split("#", 1)[1].strip()
        for line in code.splitlines()
        if line.lstrip().startswith("print(") and "#" in line
    ]
    assert out.getvalue().splitlines() == expected
