"""``llmport embed``: texts and files in, one vector per line or JSON out, one-line errors."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from llmport.cli.main import main
from llmport.plugins import host as plugins_module
from support.embed_helpers import TablePlugin, vector_of


@pytest.fixture
def table_plugin(monkeypatch: pytest.MonkeyPatch) -> TablePlugin:
    """``table:embed`` served as the only installed entry-point plugin."""
    plugin = TablePlugin()
    load = plugins_module.PluginLoad("table", "tests:TablePlugin", None, None, plugin)
    monkeypatch.setenv("LLMPORT_PLUGINS", "table")
    monkeypatch.setattr(plugins_module, "_loaded", {"table": (load,)})
    return plugin


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_text_arguments_give_one_vector_per_line(
    capsys: pytest.CaptureFixture[str], table_plugin: TablePlugin
) -> None:
    code, out, err = cli(capsys, "embed", "-m", "table:embed", "alpha", "beta")
    assert (code, err) == (0, "")
    rows = [tuple(float(v) for v in line.split()) for line in out.splitlines()]
    assert rows == [tuple(vector_of("alpha")), tuple(vector_of("beta"))]


def test_file_inputs_input_type_and_json(
    capsys: pytest.CaptureFixture[str],
    table_plugin: TablePlugin,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("one\n\ntwo\nthree\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("four\n"))
    code, out, _ = cli(
        capsys,
        "embed",
        "-m",
        "table:embed",
        "zero",
        "-i",
        str(corpus),
        "-i",
        "-",
        "--input-type",
        "query",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    texts = ["zero", "one", "two", "three", "four"]
    assert data["vectors"] == [vector_of(t) for t in texts]
    assert data["dimensions"] == 4 and data["model"] == "embed"
    assert data["usage"]["input_tokens"] == sum(len(t) for t in texts)
    sent = [r for p in table_plugin.providers for r in p.requests]  # type: ignore[attr-defined]
    assert {r.input_type for r in sent} == {"query"}


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["embed", "-m", "table:embed"],
            "error: ContentError: content block 0: embed inputs are empty",
        ),
        (["embed", "-m", "table:chat", "x"], "error: UnsupportedFeatureError: table model 'chat'"),
        (["embed", "-m", "table:embed", "-d", "8", "x"], "error: UnsupportedFeatureError"),
        (["embed", "-m", "table:embed", "-i", "missing.txt"], "error: FileNotFoundError"),
        (["embed", "-m", "nowhere:model", "x"], "error: UnknownModelError"),
    ],
)
def test_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], table_plugin: TablePlugin, argv: list[str], expected: str
) -> None:
    code, out, err = cli(capsys, *argv)
    assert code == 1 and out == ""
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert err.startswith(expected), err


def test_models_shows_which_models_embed_and_their_size(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("LLMPORT_PLUGINS", "openai")
    code, out, _ = cli(capsys, "models", "--provider", "openai")
    assert code == 0
    line = next(x for x in out.splitlines() if x.strip().startswith("text-embedding-3-large*"))
    assert "embeds ≤3072-d" in line
    code, out, _ = cli(capsys, "models", "--provider", "openai", "--json")
    rows = {r["model"]: r for r in json.loads(out)}
    assert rows["text-embedding-ada-002*"]["embeddings"] is True
    assert rows["text-embedding-ada-002*"]["embedding_dimensions"] == 1536
    assert rows["gpt-4o*"]["embeddings"] is False
