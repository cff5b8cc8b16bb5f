"""``llmport models`` is readable in an 80-column terminal: nothing is cut off.

Rendered with the real plugins installed in the workspace (the CLI conftest
loads none; these tests load them again), at ``COLUMNS=80``: every model
pattern is a whole line of the table, every alias a whole line of its own,
no line is wider than the terminal and no text ends in ``…``. A terminal too
narrow for the table gets a list with the same contents.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llmport.cli.main import main
from llmport.plugins.host import PluginHost

VENDOR_PREFIXES = {"openai", "openai-responses", "anthropic", "gemini", "bedrock"}


@pytest.fixture
def real_plugins(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Every installed entry-point plugin (the workspace's), prefix -> ProviderInfo."""
    monkeypatch.delenv("LLMPORT_PLUGINS")
    providers = PluginHost().providers()
    assert set(providers) >= VENDOR_PREFIXES
    return providers


def render(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    code = main(["models"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    return out


def first_words(out: str) -> set[str]:
    return {line.split()[0] for line in out.splitlines() if line.split()}


@pytest.mark.parametrize("width", [80, 40])
def test_every_pattern_is_shown_whole(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    real_plugins: dict[str, Any],
    width: int,
) -> None:
    out = render(capsys, monkeypatch, width)
    assert "…" not in out
    assert max(len(line.rstrip()) for line in out.splitlines()) <= width
    starts = first_words(out)
    for prefix, info in real_plugins.items():
        assert any(line.startswith(f"{prefix}:  (") for line in out.splitlines()), prefix
        for pattern in info.models:
            assert pattern in starts, f"{prefix}: {pattern!r} is not shown whole"


def test_every_alias_is_one_whole_line_at_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, real_plugins: Any
) -> None:
    out = render(capsys, monkeypatch, 80)
    lines = {line.strip() for line in out.splitlines()}
    aliases = [(a, t) for info in real_plugins.values() for a, t in info.aliases.items()]
    assert ("bedrock-sonnet", "bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0") in aliases
    for alias, target in aliases:
        assert f"{alias} → {target}" in lines, alias


def test_80_columns_is_a_table_not_the_narrow_list(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, real_plugins: Any
) -> None:
    out = render(capsys, monkeypatch, 80)
    headers = [line.split() for line in out.splitlines() if line.split()[:1] == ["model"]]
    assert headers == [["model", "inputs", "files", "tools", "json", "stream"]] * len(real_plugins)
    assert "inputs:" not in out  # the narrow layout's label


def test_neighbouring_patterns_with_equal_capabilities_share_a_row(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, real_plugins: Any
) -> None:
    out = render(capsys, monkeypatch, 80)
    rows = [line.split() for line in out.splitlines()]
    # gpt-4o-audio-preview* opens the OpenAI table's audio row; its neighbour (same
    # capabilities) is on the next line with nothing else, in the original order.
    i = rows.index(["gpt-4o-audio-preview*", "text,", "audio,", "file", "-", "yes", "yes", "yes"])
    assert rows[i + 1] == ["gpt-4o-mini-audio-preview*"]
    # the Office types read as file extensions, not as truncated media types
    bedrock = out[out.index("bedrock:") :]
    assert "docx" in bedrock and "xlsx" in bedrock and "vnd.openxml" not in bedrock


def test_configured_aliases_are_never_cut(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    target = "bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    (tmp_path / "llmport.toml").write_text(
        f'[aliases]\nfast = "openai:gpt-4o-mini"\nclaude-on-aws = "{target}"\n'
    )
    out = render(capsys, monkeypatch, 80)
    assert "No provider plugins are installed." in out  # the conftest loads none
    assert "…" not in out
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 80
    # wrapped between words only: the text is whole once the line breaks are undone
    flat = " ".join(out.split())
    assert f"configured aliases: fast → openai:gpt-4o-mini, claude-on-aws → {target}" in flat


def test_json_keeps_the_full_media_types(
    capsys: pytest.CaptureFixture[str], real_plugins: Any
) -> None:
    assert main(["models", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    bedrock = next(p for p in data["providers"] if p["prefix"] == "bedrock")
    assert "application/vnd.ms-excel" in bedrock["default"]["files"]
    assert list(bedrock["models"]) == list(real_plugins["bedrock"].models)


def test_a_wide_terminal_shows_each_model_window_and_price(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, real_plugins: Any
) -> None:
    from genai_prices import Usage, calc_price

    out = render(capsys, monkeypatch, 140)
    assert out.count("$/MTok in/out") == len(real_plugins)
    row = next(line.split() for line in out.splitlines() if line.startswith(" gpt-4o*"))
    price = calc_price(Usage(input_tokens=1, output_tokens=1), model_ref="gpt-4o").model_price
    assert row[-1] == f"{price.input_mtok:g}/{price.output_mtok:g}"
