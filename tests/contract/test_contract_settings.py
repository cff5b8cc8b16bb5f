"""Provider settings of the wrong type are a ConfigError before any request (the input boundary).

ONE table, :data:`BAD_SETTINGS`: each row is a setting and a value of the
wrong type (or range). Every row is given to every target (the bases and
the built-in profiles), each in two ways: as the target's own settings and
as a named instance made from it (``{"inst": {"plugin": ..., ...}}``). The
runtime is built and, if that did not refuse, asked for an answer: either
way the error must be a :class:`ConfigError` naming the setting, the
loopback server must have seen no request, and a key given with the bad
setting must not be in the message.

:data:`BAD_TABLES` does the same for the shape of ``providers=`` itself
(a table that is not a table, names that cannot route), and
:func:`test_a_config_file_setting_of_the_wrong_type_fails_before_any_request`
for a setting read from ``llmport.toml``.
"""

from __future__ import annotations

from typing import Any

import pytest
from llmport import Runtime
from llmport.errors import ConfigError
from llmport.testing.loopback import LoopbackServer, Reply
from wire import PROFILE_TARGETS, TARGETS, Wire

EVERY_TARGET = TARGETS + PROFILE_TARGETS

#: (setting, a value of the wrong type or range). Every target gets every row.
BAD_SETTINGS: list[tuple[str, Any]] = [
    ("base_url", 5),
    ("base_url", ["http://127.0.0.1"]),
    ("base_url", "http://127.0.0.1/v1\r\nX-Injected: 1"),
    ("endpoint_url", 5),
    ("timeout", "abc"),
    ("timeout", -1),
    ("timeout", 0),
    ("timeout", float("nan")),
    ("timeout", float("inf")),
    ("timeout", True),
    ("default_headers", ["a"]),
    ("default_headers", {"X": 5}),
    ("default_headers", {"X": "a\nb"}),
    ("default_headers", {"bad name": "v"}),
    ("api_key", 5),
    ("api_key", b"bytes-key-value"),
    ("api_key", "sk-secret-with\na-line-break"),
    ("region", 5),
    ("api_version", 5),
    ("connect_timeout", "abc"),
    ("max_workers", 0),
    ("aliases", ["fast"]),
    ("api_key_env", 5),
]

#: (id, ``providers=``): the table itself of the wrong shape; every row a ConfigError.
BAD_TABLES: list[tuple[str, Any]] = [
    ("settings-a-string", {"x": "openai"}),
    ("settings-a-list", {"openai": ["base_url"]}),
    ("table-a-list", [("openai", {})]),
    ("table-a-string", "openai"),
    ("name-empty", {"": {"plugin": "openai", "api_key": "k"}}),
    ("name-with-space", {"my inst": {"plugin": "openai", "api_key": "k"}}),
    ("name-with-colon", {"a:b": {"plugin": "openai", "api_key": "k"}}),
    ("name-not-text", {5: {"plugin": "openai", "api_key": "k"}}),
    ("setting-name-not-text", {"openai": {5: "x"}}),
    ("plugin-not-text", {"inst": {"plugin": 5}}),
]


def settings_for(wire: Wire, url: str, name: str, value: Any) -> dict[str, Any]:
    """The target's working settings (endpoint and key) with setting ``name`` set to ``value``."""
    return {**wire.endpoint_settings(url), **wire.credentials("custom"), name: value}


def as_instance(wire: Wire, settings: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(model, providers=) of a named instance ``inst`` made from ``wire``'s provider."""
    model = wire.model.partition(":")[2]
    return f"inst:{model}", {"inst": {"plugin": wire.provider, **settings}}


def refusal(model: str, providers: Any, server: LoopbackServer) -> BaseException | None:
    """What building a runtime with ``providers`` and asking it once raised (None: nothing)."""
    try:
        rt = Runtime(model=model, max_retries=1, providers=providers)
    except Exception as exc:  # the subject of the test
        return exc
    try:
        rt.exec("hi")
    except Exception as exc:
        return exc
    finally:
        rt.close()
    return None


def problem(
    label: str, err: BaseException | None, setting: str, server: LoopbackServer
) -> list[str]:
    """What is wrong with ``err`` as the refusal of ``setting`` (empty: nothing)."""
    found: list[str] = []
    if not isinstance(err, ConfigError):
        found.append(f"{label}: {type(err).__name__}: {err}")
    elif setting not in str(err):
        found.append(f"{label}: the ConfigError does not name {setting!r}: {err}")
    elif "secret-with" in str(err) or "bytes-key-value" in str(err):
        found.append(f"{label}: the key is in the message: {err}")
    if server.requests:
        found.append(f"{label}: {len(server.requests)} request(s) reached the vendor")
    return found


@pytest.mark.parametrize(
    ("setting", "value"), BAD_SETTINGS, ids=[f"{s}={v!r}" for s, v in BAD_SETTINGS]
)
def test_a_setting_of_the_wrong_type_fails_before_any_request(setting: str, value: Any) -> None:
    problems: list[str] = []
    with LoopbackServer([Reply(json={})], repeat=True) as server:
        for wire in EVERY_TARGET:
            settings = settings_for(wire, server.url, setting, value)
            err = refusal(wire.model, {wire.provider: settings}, server)
            problems += problem(f"{wire.id} base", err, setting, server)
            model, providers = as_instance(wire, settings)
            err = refusal(model, providers, server)
            problems += problem(f"{wire.id} instance", err, setting, server)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("providers",), [(t,) for _, t in BAD_TABLES], ids=[i for i, _ in BAD_TABLES]
)
def test_a_providers_table_of_the_wrong_shape_is_refused(providers: Any) -> None:
    with pytest.raises(ConfigError):
        Runtime(model="openai:gpt-4o", providers=providers)


@pytest.mark.parametrize("wire", TARGETS, ids=str)
def test_a_config_file_setting_of_the_wrong_type_fails_before_any_request(wire: Wire) -> None:
    with LoopbackServer([Reply(json={})], repeat=True) as server:
        toml = wire.config_toml(server.url) + 'timeout = "abc"\n'
        with open("llmport.toml", "w") as fh:  # the suite runs in an empty directory
            fh.write(toml)
        err = refusal(wire.model, {wire.provider: wire.credentials("custom")}, server)
        assert not (wrong := problem(wire.id, err, "timeout", server)), wrong
