"""fix(write=True) against a file that moves: written only as read, atomically, as it was encoded.

And what the approver is shown: every character of the diff as itself or escaped.
"""

from __future__ import annotations

import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llmport import FixRejected, OptionError, fix
from llmport.testing import Script
from test_fix import FIXED, INSTRUCTION, MODULE, load, proposal


@pytest.fixture
def modules() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        sys.modules.pop(name, None)


def module(tmp_path: Path, modules: list[str], data: bytes, name: str) -> tuple[Any, Path]:
    modules.append(name)
    return load(tmp_path, data, name), tmp_path / f"{name}.py"


def fix_and_write(mod: Any, source: str = FIXED, approve: Any = None) -> Any:
    mod.rt = Script([proposal(source), "21 C"]).runtime()
    return fix(mod.temperature, runtime=mod.rt, instruction=INSTRUCTION,
               approve=approve or (lambda diff: True), write=True, error=None)


def test_crlf_line_endings_are_kept(tmp_path: Path, modules: list[str]) -> None:
    mod, path = module(tmp_path, modules, MODULE.replace("\n", "\r\n").encode(), "crlf_mod")
    seen: list[str] = []
    fixed = fix_and_write(mod, approve=lambda diff: seen.append(diff) or True)
    data = path.read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n")  # every line still CRLF
    assert b"answer.split()[0]" in data and fixed("Rome") == 21.0
    assert "\\r" not in seen[0]  # the diff shows lines, not their endings


def test_a_latin1_file_is_written_in_latin1(tmp_path: Path, modules: list[str]) -> None:
    source = "# -*- coding: latin-1 -*-\n# caf\u00e9 au lait\n" + MODULE
    mod, path = module(tmp_path, modules, source.encode("latin-1"), "latin_mod")
    fix_and_write(mod, FIXED.replace("degrees.", "degr\u00e9s."))
    data = path.read_bytes()
    assert b"caf\xe9" in data and b"degr\xe9s." in data
    assert data.decode("latin-1").startswith("# -*- coding: latin-1 -*-")


def test_a_byte_order_mark_is_kept(tmp_path: Path, modules: list[str]) -> None:
    mod, path = module(tmp_path, modules, b"\xef\xbb\xbf" + MODULE.encode(), "bom_mod")
    fix_and_write(mod)
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\xef\xbb\xbf") == 1
    assert b"answer.split()[0]" in data


def test_a_file_replaced_by_another_with_the_same_bytes_is_refused(
    tmp_path: Path, modules: list[str]
) -> None:
    mod, path = module(tmp_path, modules, MODULE.encode(), "replaced_mod")

    def replace_then_approve(diff: str) -> bool:
        other = tmp_path / "other.py"
        other.write_text(MODULE)
        other.replace(path)  # same bytes, another file: someone else's write won the race
        return True

    with pytest.raises(OptionError, match="changed since"):
        fix_and_write(mod, approve=replace_then_approve)
    assert path.read_text() == MODULE


def test_a_fix_the_files_encoding_cannot_hold_is_refused_typed(
    tmp_path: Path, modules: list[str]
) -> None:
    source = "# -*- coding: latin-1 -*-\n" + MODULE
    mod, path = module(tmp_path, modules, source.encode("latin-1"), "latin_mod2")
    with pytest.raises(OptionError, match=r"encoding \(iso-8859-1\) cannot hold"):
        fix_and_write(mod, FIXED.replace("degrees.", "degrees \u20ac."))
    assert path.read_bytes() == source.encode("latin-1")
    assert mod.SENTINEL == []  # refused before the approved source ran


def test_a_change_anywhere_in_the_file_during_approval_refuses(
    tmp_path: Path, modules: list[str]
) -> None:
    mod, path = module(tmp_path, modules, MODULE.encode(), "moved_mod")
    edited = MODULE.replace("return 2", "return 3")  # another function, not the fixed one

    def edit_then_approve(diff: str) -> bool:
        path.write_text(edited)
        return True

    with pytest.raises(OptionError, match="changed since"):
        fix_and_write(mod, approve=edit_then_approve)
    assert path.read_text() == edited and mod.SENTINEL == []


def test_a_symlink_is_refused(tmp_path: Path, modules: list[str]) -> None:
    real = tmp_path / "real.py"
    real.write_text(MODULE)
    mod, link = module(tmp_path, modules, MODULE.encode(), "linked_mod")
    link.unlink()
    link.symlink_to(real)
    script = Script([proposal(FIXED)])
    mod.rt = script.runtime()
    with pytest.raises(OptionError, match="symbolic link"):
        fix(mod.temperature, runtime=mod.rt, instruction=INSTRUCTION,
            approve=lambda diff: True, write=True, error=None)
    assert script.requests == [] and real.read_text() == MODULE


def test_a_symlink_swapped_in_during_approval_is_refused(
    tmp_path: Path, modules: list[str]
) -> None:
    mod, path = module(tmp_path, modules, MODULE.encode(), "swapped_mod")
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_text(MODULE)  # the same bytes: only the link gives it away

    def swap_then_approve(diff: str) -> bool:
        path.unlink()
        path.symlink_to(elsewhere)
        return True

    with pytest.raises(OptionError, match=r"symbolic link|changed since"):
        fix_and_write(mod, approve=swap_then_approve)
    assert elsewhere.read_text() == MODULE and path.is_symlink()
    assert mod.SENTINEL == []


def test_the_write_is_atomic_and_keeps_the_mode_bits(tmp_path: Path, modules: list[str]) -> None:
    mod, path = module(tmp_path, modules, MODULE.encode(), "mode_mod")
    path.chmod(0o640)
    inode = path.stat().st_ino
    fix_and_write(mod)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert path.stat().st_ino != inode  # a new file renamed over the old one
    assert sorted(p.name for p in tmp_path.iterdir() if "mode_mod" in p.name) == [
        "mode_mod.py"
    ]  # no temporary file left behind


METHOD_MODULE = '''\
from llmport import agentic_function

rt = None


class Weather:
    @agentic_function
    def temperature(self, city: str) -> float:
        """The temperature in a city, in degrees."""
        return float(rt.exec(f"Temperature in {city}?"))
'''
METHOD_FIX = '''\
import json


@agentic_function
def temperature(self, city: str) -> float:
    """The temperature in a city, in degrees."""
    return float(json.loads(rt.exec(f"Temperature in {city}?")))
'''


def test_a_methods_fix_cannot_import_at_the_top_when_written(
    tmp_path: Path, modules: list[str]
) -> None:
    mod, path = module(tmp_path, modules, METHOD_MODULE.encode(), "method_mod")
    mod.rt = Script([proposal(METHOD_FIX), proposal(METHOD_FIX)]).runtime()
    with pytest.raises(FixRejected, match="top-level import"):
        fix(mod.Weather.temperature, runtime=mod.rt, instruction=INSTRUCTION,
            approve=lambda diff: True, allow_imports=["json"], write=True, error=None)
    assert path.read_text() == METHOD_MODULE


def test_the_approver_sees_hidden_characters_of_the_file_escaped(
    tmp_path: Path, modules: list[str]
) -> None:
    hidden = MODULE.replace(
        '    """The temperature', '    # \u202e\x1b[2K note\n    """The temperature', 1
    )
    mod, _ = module(tmp_path, modules, hidden.encode(), "hidden_mod")
    seen: list[str] = []
    fix_and_write(mod, approve=lambda diff: seen.append(diff) or True)
    (diff,) = seen
    assert "\u202e" not in diff and "\x1b" not in diff
    assert "-    # \\u202e\\x1b[2K note" in diff
