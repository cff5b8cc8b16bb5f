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


def test_every_row_is_whole_no_blank_means_as_above(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, real_plugins: Any
) -> None:
    out = render(capsys, monkeypatch, 80)
    rows = [line.split() for line in out.splitlines()]
    patterns = {p for info in real_plugins.values() for p in info.models} | {"(any"}
    table_rows = [r for r in rows if r and r[0] in patterns]
    assert len(table_rows) >= sum(len(info.models) + 1 for info in real_plugins.values())
    # Every pattern row carries its own tools/json/stream cells (no blank "as above").
    assert all(r[-3] in ("yes", "-") and r[-1] in ("yes", "-") for r in table_rows)
    i = rows.index(["gpt-4o-audio-preview*", "text,", "audio,", "file", "-", "yes", "yes", "yes"])
    assert rows[i + 1][0] == "gpt-4o-mini-audio-preview*" and rows[i + 1][-3:] == rows[i][-3:]
    # the Office types read as file extensions, not as truncated media types
    bedrock = out[out.index("bedrock:") :]
    assert "docx" in bedrock and "xlsx" in bedrock and "vnd.openxml" not in bedrock


def test_provider_filter_shows_one_section(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, real_plugins: Any
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["models", "--provider", "anthropic-vertex"]) == 0
    out = capsys.readouterr().out
    headings = [line for line in out.splitlines() if ":  (" in line]
    assert len(headings) == 1 and headings[0].startswith("anthropic-vertex:  (")
    assert "claude-opus-4@2025*" in first_words(out)
    assert "gpt-4o*" not in out


def test_an_unknown_provider_is_one_line_on_stderr(
    capsys: pytest.CaptureFixture[str], real_plugins: Any
) -> None:
    assert main(["models", "--provider", "nope"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("error: ConfigError: unknown provider 'nope'; known: anthropic,")


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


def test_json_is_one_array_of_whole_records(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    real_plugins: Any,
) -> None:
    (tmp_path / "llmport.toml").write_text('[aliases]\nmine = "bedrock:us.amazon.nova-pro-v1:0"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["models", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data, list) and all(isinstance(r, dict) for r in data)
    keys = list(data[0])
    assert keys[:4] == ["provider", "plugin", "model", "aliases"]
    assert all(list(record) == keys for record in data)  # stable keys, same order
    bedrock = [r for r in data if r["provider"] == "bedrock"]
    assert [r["model"] for r in bedrock] == [*real_plugins["bedrock"].models, "*"]
    assert "application/vnd.ms-excel" in bedrock[-1]["files"]  # full media types
    nova_pro = next(r for r in bedrock if r["model"] == "*amazon.nova-pro*")
    assert set(nova_pro["aliases"]) == {"nova-pro", "mine"}
    assert main(["models", "--json", "--provider", "gemini-vertex"]) == 0
    only = json.loads(capsys.readouterr().out)
    assert {r["provider"] for r in only} == {"gemini-vertex"}


def test_a_wide_terminal_shows_each_model_window_and_price(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, real_plugins: Any
) -> None:
    from genai_prices import Usage, calc_price

    out = render(capsys, monkeypatch, 140)
    assert out.count("$/MTok in/out") == len(real_plugins)
    row = next(line.split() for line in out.splitlines() if line.startswith(" gpt-4o*"))
    price = calc_price(Usage(input_tokens=1, output_tokens=1), model_ref="gpt-4o").model_price
    assert row[-1] == f"{price.input_mtok:g}/{price.output_mtok:g}"


@pytest.mark.parametrize(("width", "shows_prices"), [(80, False), (140, True), (40, True)])
def test_prices_are_looked_up_only_where_they_are_shown(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    real_plugins: Any,
    width: int,
    shows_prices: bool,
) -> None:
    # genai-prices' import and lookups cost more than the rest of the command: the
    # 80-column table has no price column, the wide table and the narrow list have one.
    from llmport.observe import prices

    looked_up: list[tuple[str, str]] = []
    real = prices.model_price

    def counted(provider: str, model: str) -> Any:
        looked_up.append((provider, model))
        return real(provider, model)

    monkeypatch.setattr(prices, "model_price", counted)
    out = render(capsys, monkeypatch, width)
    patterns = sum(len(info.models) for info in real_plugins.values())
    assert len(looked_up) == (patterns if shows_prices else 0)
    assert ("$/MTok in/out" in out or "price: " in out) == shows_prices
