"""Bad input fails before any request (SPEC §1, §6), with its typed error, on every target.

Every error here is an :class:`~llmport.errors.InputError` and the loopback
server sees no request at all.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from api_modes import MODES, run_via
from llmport import Backoff, Runtime
from llmport.errors import ConfigError, ContentError, InputError, OptionError
from llmport.testing.loopback import LoopbackServer
from wire import TARGETS, Wire, raised

each_target = pytest.mark.parametrize("wire", TARGETS, ids=str)
each_mode = pytest.mark.parametrize("mode", MODES)
Make = Callable[..., Runtime]

#: (id, exec keyword arguments, error class, fragments its message must contain)
BAD_OPTIONS: list[tuple[str, dict[str, Any], type[InputError], list[str]]] = [
    (
        "tool_choice-required-without-tools",
        {"tool_choice": "required"},
        OptionError,
        ["tool_choice"],
    ),
    (
        "tool_choice-name-without-tools",
        {"tool_choice": {"name": "x"}},
        OptionError,
        ["tool_choice"],
    ),
    ("timeout-negative", {"timeout": -1}, OptionError, ["timeout"]),
    ("temperature-text", {"temperature": "hot"}, OptionError, ["temperature"]),
    ("temperature-negative", {"temperature": -1}, OptionError, ["temperature"]),
    ("max_tokens-zero", {"max_tokens": 0}, OptionError, ["max_tokens"]),
    ("stop-empty-string", {"stop": [""]}, OptionError, ["stop"]),
    ("unknown-option-typo", {"temprature": 0.2}, OptionError, ["'temprature'", "'temperature'"]),
    ("model-empty", {"model": ""}, OptionError, ["model"]),
]


@each_mode
@pytest.mark.parametrize(
    ("kwargs", "cls", "fragments"),
    [case[1:] for case in BAD_OPTIONS],
    ids=[case[0] for case in BAD_OPTIONS],
)
@each_target
async def test_bad_option_fails_before_any_request(
    wire: Wire,
    kwargs: dict[str, Any],
    cls: type[InputError],
    fragments: list[str],
    mode: str,
    runtime: Make,
) -> None:
    with LoopbackServer([wire.text_reply("never")]) as server:
        err = await raised(run_via(mode, runtime(wire, server), "hi", **kwargs))
        sent = len(server.requests)
    assert isinstance(err, cls), f"expected {cls.__name__}, got {err!r} ({sent} request(s) sent)"
    assert sent == 0, f"{sent} request(s) sent for bad input"
    assert isinstance(err, InputError)
    for fragment in fragments:
        assert fragment in str(err), f"{fragment!r} not in {str(err)!r}"


JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
NOT_PNG = {"jpeg-bytes": JPEG, "text-bytes": b"this is plain text, not an image\n"}


@each_mode
@pytest.mark.parametrize("data", list(NOT_PNG.values()), ids=list(NOT_PNG))
@each_target
async def test_png_path_holding_other_bytes_is_a_content_error(
    wire: Wire, data: bytes, mode: str, runtime: Make, tmp_path: Path
) -> None:
    image = tmp_path / "screenshot.png"
    image.write_bytes(data)
    content = [{"type": "text", "text": "What is this?"}, {"type": "image", "path": str(image)}]
    with LoopbackServer([wire.text_reply("never")]) as server:
        err = await raised(run_via(mode, runtime(wire, server), content))
        sent = len(server.requests)
    assert isinstance(err, ContentError), f"expected ContentError, got {err!r} ({sent} sent)"
    assert sent == 0, f"{sent} request(s) sent for a bad image"
    assert isinstance(err, InputError)
    assert err.index == 1


@each_target
def test_misspelt_runtime_argument_fails_at_construction(wire: Wire) -> None:
    with pytest.raises(Exception) as info:
        Runtime(modle=wire.model)
    err = info.value
    assert isinstance(err, OptionError), f"expected OptionError, got {err!r}"
    assert isinstance(err, InputError)
    assert "modle" in str(err)


@each_mode
@each_target
async def test_missing_key_is_a_config_error_naming_the_variable(wire: Wire, mode: str) -> None:
    with LoopbackServer([wire.text_reply("never")]) as server:
        rt = Runtime(
            model=wire.model,
            max_retries=1,
            backoff=Backoff.none(),
            providers={wire.provider: wire.keyless_settings(server.url)},
        )
        try:
            err = await raised(run_via(mode, rt, "hi"))
        finally:
            rt.close()
        sent = len(server.requests)
    assert isinstance(err, ConfigError), f"expected ConfigError, got {err!r} ({sent} sent)"
    assert sent == 0, f"{sent} request(s) sent without a key"
    assert isinstance(err, InputError)
    assert any(name in str(err) for name in wire.key_env), (
        f"the message names none of {wire.key_env}: {str(err)!r}"
    )
