"""Configuration: aliases, named configurations, provider settings.

Sources, highest precedence first:

1. arguments given in code (``Runtime(model=..., providers=...)``, ``exec(model=...)``);
2. ``LLMPORT_*`` environment variables: ``LLMPORT_MODEL``, ``LLMPORT_ALIAS_<NAME>``,
   ``LLMPORT_SESSION``, ``LLMPORT_MAX_RETRIES``, ``LLMPORT_LIMITER`` (``LLMPORT_CONFIG``
   names the file of 3);
3. ``llmport.toml`` (``$LLMPORT_CONFIG``, else the nearest one from the working
   directory upwards);
4. ``[tool.llmport]`` in the nearest ``pyproject.toml``;
5. aliases declared by provider plugins.

The file format (the same keys under ``[tool.llmport]``)::

    default_model = "sonnet"

    [aliases]
    sonnet = "anthropic:claude-sonnet-4-5"

    [configurations.fast]          # a named configuration: a model plus options
    model = "openai:gpt-4o-mini"
    temperature = 0.2

    [providers.openai]             # provider settings (never put keys here)
    base_url = "http://localhost:11434/v1"

    [session]
    path = "sessions.sqlite"

    [mcp.servers.docs]             # read by the llmport-mcp plugin: toolset "mcp:docs"
    command = ["python", "docs_server.py"]
    limiter = "redis://localhost:6379/0"   # where the buckets live (default: in process)

    [limits."openai:*"]            # rate limits per provider:model glob (llmport.controls.limits)
    rpm = 500
    tpm = 200000
    concurrency = 20
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from ..controls.limits import Limit, check_limits
from ..errors import ConfigError, redact_settings
from ..observe.redaction import redact_url
from ..slotted import dataclass
from .setting_checks import check_providers

_KNOWN_KEYS = {
    "default_model",
    "aliases",
    "configurations",
    "providers",
    "session",
    "max_retries",
    "mcp",
    "limits",
    "limiter",
}
_TABLES = ("aliases", "configurations", "providers", "session", "mcp", "limits")


@dataclass(slots=True, frozen=True, repr=False)
class Config:
    """Merged configuration. ``sources`` says where each layer came from."""

    default_model: str | None = None
    aliases: dict[str, str] = field(default_factory=dict)
    configurations: dict[str, dict[str, Any]] = field(default_factory=dict)
    providers: dict[str, dict[str, Any]] = field(default_factory=dict)
    session_path: str | None = None
    max_retries: int | None = None
    sources: tuple[str, ...] = ()
    #: The ``[mcp]`` table, read by the llmport-mcp plugin (``servers.NAME``).
    mcp: dict[str, Any] = field(default_factory=dict)
    limits: dict[str, Limit] = field(default_factory=dict)
    limiter: str | None = None

    def __repr__(self) -> str:
        # Provider settings may hold a key someone put in a file: never print it.
        providers = {name: redact_settings(s) for name, s in self.providers.items()}
        return (
            f"Config(default_model={self.default_model!r}, aliases={self.aliases!r}, "
            f"configurations={self.configurations!r}, providers={providers!r}, "
            f"session_path={self.session_path!r}, max_retries={self.max_retries!r}, "
            f"limits={self.limits!r}, limiter={self.limiter and redact_url(self.limiter)!r}, "
            f"sources={self.sources!r}, mcp_servers={sorted(self.mcp.get('servers', {}))!r})"
        )


def _find_upwards(start: str, name: str) -> Path | None:
    """``name`` in ``start`` or its nearest parent folder holding it.

    String paths: it runs on every top-level agentic call, where pathlib's
    objects per folder cost more than the stat calls themselves.
    """
    folder = start
    while True:
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate):
            return Path(candidate)
        parent = os.path.dirname(folder) or "."  # a relative start ends at "."
        if parent == folder:
            return None
        folder = parent


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # only when there is a file to read

    # The messages say what is wrong; the parser's own exceptions stay out of the chain.
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (byte {exc.start})") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _file_layer(path: Path, table: str | None) -> dict[str, Any] | None:
    """The checked layer ``path`` gives (its ``[tool.llmport]`` table when ``table`` says so).

    A fresh copy each time; the file is parsed again only when it changed (its
    stat identity: inode, size, modification and change times), so that a
    top-level agentic call, which reads the configuration for its session,
    does not parse ``pyproject.toml`` on every call.
    """
    try:
        found = path.stat()
    except OSError:  # gone since it was found: reading it says so
        return _checked_file(path, table)
    stamp = (found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
    layer = _parsed_layer(os.fspath(path), table, stamp)  # a str key hashes faster
    if layer is None:
        return None
    import copy  # here: a file layer is rare, the import is not on start-up's path

    return copy.deepcopy(layer)  # the caller's to change: the memo keeps its own


@functools.lru_cache(maxsize=16)
def _parsed_layer(
    path: str, table: str | None, stamp: tuple[int, int, int, int]
) -> dict[str, Any] | None:
    """:func:`_checked_file` memoised by the file's stat identity (``stamp``).

    The memo holds only what parsing the unchanged file gives again; errors are
    not memoised (a broken file raises on every read).
    """
    del stamp  # the memo key: a changed file is parsed again
    return _checked_file(Path(path), table)


def _checked_file(path: Path, table: str | None) -> dict[str, Any] | None:
    data = _read_toml(path)
    if table is None:
        return _check_layer(data, str(path))
    tool = data.get("tool", {}).get("llmport")
    return _check_layer(tool, f"{path} [{table}]") if tool else None


def _check_layer(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    unknown = set(data) - _KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    for table in _TABLES:
        if table in data and not isinstance(data[table], Mapping):
            raise ConfigError(f"{where}: [{table}] must be a table")
    servers = dict(data.get("mcp", {})).get("servers", {})
    if not isinstance(servers, Mapping) or not all(
        isinstance(v, Mapping) for v in servers.values()
    ):
        raise ConfigError(f"{where}: [mcp.servers] must hold one table per server")
    if "default_model" in data and not isinstance(data["default_model"], str):
        raise ConfigError(f"{where}: default_model must be a string")
    check_providers(data.get("providers"), f"{where}: [providers]")
    path = dict(data.get("session", {})).get("path")
    if path is not None and not isinstance(path, str):
        raise ConfigError(f"{where}: session path must be a string")
    for name, target in dict(data.get("aliases", {})).items():
        if not isinstance(target, str):
            raise ConfigError(f"{where}: alias {name!r} must map to a model string")
    for name, conf in dict(data.get("configurations", {})).items():
        if not isinstance(conf, Mapping) or not isinstance(conf.get("model"), str):
            raise ConfigError(f"{where}: configuration {name!r} needs a 'model' string")
    if "limits" in data:
        check_limits(data["limits"], f"{where}: [limits]")
    if "limiter" in data and not isinstance(data["limiter"], str):
        raise ConfigError(f"{where}: limiter must be a URL string")
    retries = data.get("max_retries")
    if "max_retries" in data and (
        isinstance(retries, bool) or not isinstance(retries, int) or retries < 1
    ):
        raise ConfigError(f"{where}: max_retries must be an integer >= 1")
    return dict(data)


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if key in _TABLES:
            merged = dict(out.get(key, {}))
            for k, v in value.items():
                if isinstance(v, Mapping) and isinstance(merged.get(k), Mapping):
                    merged[k] = {**merged[k], **v}
                else:
                    merged[k] = v
            out[key] = merged
        else:
            out[key] = value
    return out


def _env_layer(env: Mapping[str, str], *, aliases: bool = True) -> dict[str, Any]:
    """The ``LLMPORT_*`` variables as a layer; ``aliases=False`` leaves ``LLMPORT_ALIAS_*`` out.

    Finding the aliases means going through every variable's name (each one
    decoded by ``os.environ``); the other variables are single look-ups.
    """
    layer: dict[str, Any] = {}
    if env.get("LLMPORT_MODEL"):
        layer["default_model"] = env["LLMPORT_MODEL"]
    if aliases and (found := _env_aliases(env)):
        layer["aliases"] = found
    if env.get("LLMPORT_SESSION"):
        layer["session"] = {"path": env["LLMPORT_SESSION"]}
    if env.get("LLMPORT_LIMITER"):
        layer["limiter"] = env["LLMPORT_LIMITER"]
    if env.get("LLMPORT_MAX_RETRIES"):
        try:
            layer["max_retries"] = int(env["LLMPORT_MAX_RETRIES"])
        except ValueError as exc:
            raise ConfigError("LLMPORT_MAX_RETRIES must be an integer") from exc
    return layer


def _env_aliases(env: Mapping[str, str]) -> dict[str, str]:
    # Keys first: reading a value of os.environ decodes it, and few are aliases.
    return {
        key[len("LLMPORT_ALIAS_") :].lower().replace("_", "-"): value
        for key in env
        if key.startswith("LLMPORT_ALIAS_") and (value := env[key])
    }


def load_config(
    start: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Config:
    """Read and merge every configuration layer (see the module docs)."""
    return _load(start, os.environ if env is None else env, env_aliases=True)


def configured_session_path(
    start: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> str | None:
    """``load_config(start, env).session_path``, and the same errors, without the env aliases.

    A top-level agentic call asks this on every call (the database it records
    into). An ``LLMPORT_ALIAS_*`` variable can neither change the session path
    nor be invalid (its value is a string), so the scan of every variable's
    name that finding them takes is skipped; the files are read as
    :func:`load_config` reads them (parsed again only when they change), and
    the environment is read on every call, so a change between calls is seen.
    """
    return _load(start, os.environ if env is None else env, env_aliases=False).session_path


def _load(
    start: str | os.PathLike[str] | None, env: Mapping[str, str], *, env_aliases: bool
) -> Config:
    # A string path, spelt as pathlib spells it (the cwd already is).
    here = os.fspath(Path(start)) if start is not None else os.getcwd()
    merged: dict[str, Any] = {}
    sources: list[str] = []

    pyproject = _find_upwards(here, "pyproject.toml")
    if pyproject is not None:
        tool = _file_layer(pyproject, "tool.llmport")
        if tool:
            merged = _merge(merged, tool)
            sources.append(f"{pyproject} [tool.llmport]")

    explicit = env.get("LLMPORT_CONFIG")
    toml_path = Path(explicit) if explicit else _find_upwards(here, "llmport.toml")
    if explicit and not toml_path.is_file():  # type: ignore[union-attr]
        raise ConfigError(f"LLMPORT_CONFIG names {explicit}, which is not a file")
    if toml_path is not None:
        merged = _merge(merged, _file_layer(toml_path, None) or {})
        sources.append(str(toml_path))

    env_layer = _env_layer(env, aliases=env_aliases)
    if env_layer:
        merged = _merge(merged, _check_layer(env_layer, "environment"))
        sources.append("environment")

    return Config(
        default_model=merged.get("default_model"),
        aliases=dict(merged.get("aliases", {})),
        configurations={k: dict(v) for k, v in merged.get("configurations", {}).items()},
        providers={k: dict(v) for k, v in merged.get("providers", {}).items()},
        session_path=merged.get("session", {}).get("path"),
        max_retries=merged.get("max_retries"),
        sources=tuple(sources),
        mcp={k: dict(v) if isinstance(v, Mapping) else v for k, v in merged.get("mcp", {}).items()},
        limits=check_limits(merged.get("limits")),
        limiter=merged.get("limiter"),
    )
