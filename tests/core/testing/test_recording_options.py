"""llmport.testing.cassette's options and the pytest plugin's record mode."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from llmport import CassetteError
from llmport.observe.redaction import Redactor
from llmport.testing import cassette
from llmport.testing.cassette_scrub import find_secret, scrub
from llmport.testing.pytest_plugin import record_mode, replay_timing


class Config:
    def __init__(self, chosen: str | None, option: str = "llmport_record") -> None:
        self.chosen, self.option = chosen, option

    def getoption(self, name: str, default: Any = None) -> Any:
        assert name == self.option
        return self.chosen


def test_without_vcrpy_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "vcr", None)  # import vcr now raises ImportError
    with pytest.raises(CassetteError, match=r"llmport\[testing\]") as missing:
        cassette(tmp_path / "c.yaml").__enter__()
    assert missing.value.__cause__ is None and missing.value.__suppress_context__


def test_a_bad_mode_or_match_part_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="record must be one of"):
        cassette(tmp_path / "c.yaml", record="sometimes")
    with pytest.raises(CassetteError, match="cannot match on"):
        cassette(tmp_path / "c.yaml", match=("method", "headers"))


@pytest.mark.parametrize(
    "timing", ["recorded ", "fast", "scale:0", "scale:-1", "scale:nan", "scale:inf", "scale:1e9"]
)
def test_a_bad_timing_is_refused_before_anything_runs(tmp_path: Path, timing: str) -> None:
    with pytest.raises(CassetteError, match="timing must be 'none', 'recorded' or 'scale:F'"):
        cassette(tmp_path / "c.yaml", timing=timing)


def test_timing_reads_as_a_pace_on_the_recorded_gaps(tmp_path: Path) -> None:
    assert cassette(tmp_path / "c.yaml").pace is None  # instant, the default
    assert cassette(tmp_path / "c.yaml", timing="recorded").pace == 1.0
    assert cassette(tmp_path / "c.yaml", timing="scale:0.1").pace == 0.1


def test_the_replay_timing_option_defaults_to_none() -> None:
    option = "llmport_replay_timing"
    assert replay_timing(Config(None, option)) == "none"  # type: ignore[arg-type]
    assert replay_timing(Config("scale:0.5", option)) == "scale:0.5"  # type: ignore[arg-type]


def test_the_record_mode_is_once_locally_none_in_ci_and_the_option_wins() -> None:
    assert record_mode(Config(None), {}) == "once"  # type: ignore[arg-type]
    assert record_mode(Config(None), {"CI": "true"}) == "none"  # type: ignore[arg-type]
    assert record_mode(Config("all"), {"CI": "true"}) == "all"  # type: ignore[arg-type]


def test_every_channel_is_scrubbed_url_passwords_and_query_keys_included() -> None:
    key = "LEAKrecordingkey-5f1e2d3c4b5a69788796"
    interaction = {
        "request": {
            "method": "POST",
            "uri": f"https://user:pw-{key}@gw.example/v1/chat?key={key}&api_key=other-{key}",
            "headers": {"Authorization": [f"Bearer {key}"], "x-custom-auth": [key]},
            "body": {"json": {"prompt": "hi", "token": f"sk-proj-{key}"}},
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"x-echo": [key]},
            "body": {"events": [{"data": {"text": f"your key ends {key[-12:]}"}}]},
        },
    }
    keys = Redactor([key])  # the cassette's keys: not registered in the process
    scrubbed = scrub(interaction, keys)
    assert key not in repr(scrubbed) and key[-12:] not in repr(scrubbed)
    assert "gw.example/v1/chat" in scrubbed["request"]["uri"]
    assert find_secret(scrubbed, keys) is None
    assert find_secret(interaction, keys, "i") == "i.request.uri"
