"""Installed entry points read without importlib.metadata: the same answer as it gives."""

from __future__ import annotations

import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from llmport.plugins.entrypoints import EntryPoint, installed


def _importlib(group: str) -> set[tuple[str, str, str, str | None, str | None]]:
    return {
        (ep.name, ep.value, ep.group, ep.dist.metadata["Name"], ep.dist.version)
        for ep in metadata.entry_points(group=group)
        if ep.dist is not None
    }


def _ours(group: str) -> set[tuple[str, str, str, str | None, str | None]]:
    return {
        (ep.name, ep.value, ep.group, ep.dist.name, ep.dist.version)
        for ep in installed(group)
        if ep.dist is not None
    }


@pytest.mark.parametrize("group", ["llmport", "console_scripts", "pytest11", "sqlalchemy.plugins"])
def test_the_installed_entry_points_are_importlib_s(group: str) -> None:
    found = _ours(group)
    assert found == _importlib(group)
    assert found or group != "llmport"


def _dist(folder: Path, stem: str, name: str, version: str, entry_points: str) -> None:
    info = folder / stem
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nName: not a header\n"
    )
    (info / "entry_points.txt").write_text(entry_points)


def test_folders_read_as_importlib_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(
        first,
        "my_plugin-1.0.dist-info",
        "My.Plugin",
        "1.0",
        "# a comment\n[console_scripts]\nmine = my_plugin:main\n\n"
        "[llmport]\n  mine  =  my_plugin.hooks : plugin [extra]\nother=my_plugin.other\n",
    )
    # The same distribution again later on the path (another spelling): the first wins.
    _dist(second, "My_Plugin-2.0.dist-info", "my-plugin", "2.0", "[llmport]\nold = old_mod\n")
    _dist(second, "legacy-0.1.egg-info", "legacy", "0.1", "[llmport]\nlegacy = legacy_mod\n")
    _dist(second, "quiet-1.0.dist-info", "quiet", "1.0", "[other]\nx = y\n")
    monkeypatch.setattr(sys, "path", [str(first), str(tmp_path / "missing"), str(second)])
    found = _ours("llmport")
    assert found == _importlib("llmport")
    assert {ep[:2] for ep in found} == {
        ("mine", "my_plugin.hooks : plugin [extra]"),
        ("other", "my_plugin.other"),
        ("legacy", "legacy_mod"),
    }


def test_a_zip_on_the_path_is_read_by_importlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zipped-1.0.dist-info/METADATA", "Name: zipped\nVersion: 1.0\n")
        zipped.writestr("zipped-1.0.dist-info/entry_points.txt", "[llmport]\nzipped = zmod\n")
    monkeypatch.setattr(sys, "path", [str(archive)])
    assert _ours("llmport") == {("zipped", "zmod", "llmport", "zipped", "1.0")}


def test_an_entry_point_loads_its_module_or_object() -> None:
    assert EntryPoint("a", "llmport.plugins", "llmport").load() is sys.modules["llmport.plugins"]
    loaded = EntryPoint("b", "llmport.plugins.entrypoints : EntryPoint.load", "llmport").load()
    assert loaded is EntryPoint.load
    with pytest.raises(ValueError, match="malformed"):
        EntryPoint("c", "not a value!", "llmport").load()
