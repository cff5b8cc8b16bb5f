"""Routing of model strings, configuration sources and precedence."""

from __future__ import annotations

from pathlib import Path

import pytest
from llmport import ConfigError, ProviderInfo, Runtime, UnknownModelError
from llmport.controls.retry import Backoff
from llmport.provider.config import Config, load_config
from llmport.provider.routing import resolve
from llmport.testing import Script, fail
from support.core_helpers import Driver

NO_ENV: dict[str, str] = {}


def info(prefix: str, **aliases: str) -> ProviderInfo:
    return ProviderInfo(prefix=prefix, factory=lambda **kw: None, aliases=aliases)  # type: ignore[arg-type,return-value]


PROVIDERS = {
    "openai": info("openai", mini="gpt-4o-mini"),
    "anthropic": info("anthropic", sonnet="claude-sonnet-4-5", cross="openai:gpt-4o"),
    "bedrock": info("bedrock"),
}


# --- routing ---------------------------------------------------------------------------------


def test_provider_colon_model() -> None:
    route = resolve("openai:gpt-4o-mini", Config(), PROVIDERS)
    assert (route.prefix, route.model, route.qualified, route.options) == (
        "openai",
        "gpt-4o-mini",
        "openai:gpt-4o-mini",
        {},
    )
    assert route.info is PROVIDERS["openai"]


def test_only_the_first_colon_splits() -> None:
    route = resolve("bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0", Config(), PROVIDERS)
    assert (route.prefix, route.model) == ("bedrock", "anthropic.claude-3-5-sonnet-20240620-v1:0")


def test_plugin_declared_aliases() -> None:
    assert resolve("sonnet", Config(), PROVIDERS).qualified == "anthropic:claude-sonnet-4-5"
    assert resolve("mini", Config(), PROVIDERS).qualified == "openai:gpt-4o-mini"
    assert resolve("cross", Config(), PROVIDERS).qualified == "openai:gpt-4o"  # already qualified


def test_config_aliases_chain_and_override_plugin_aliases() -> None:
    config = Config(aliases={"best": "smart", "smart": "sonnet", "sonnet": "openai:gpt-4.1"})
    assert resolve("best", config, PROVIDERS).qualified == "openai:gpt-4.1"


def test_named_configuration_gives_a_model_and_options() -> None:
    config = Config(
        aliases={"fast-model": "mini"},
        configurations={
            "fast": {"model": "fast-model", "temperature": 0.2},
            "fast-long": {"model": "fast", "max_tokens": 4000, "temperature": 0.5},
        },
    )
    route = resolve("fast", config, PROVIDERS)
    assert route.qualified == "openai:gpt-4o-mini" and route.options == {"temperature": 0.2}
    # A configuration built on another: the outer one's options win.
    route = resolve("fast-long", config, PROVIDERS)
    assert route.options == {"max_tokens": 4000, "temperature": 0.5}


def test_alias_cycle_is_an_error() -> None:
    config = Config(aliases={"a": "b", "b": "a"})
    with pytest.raises(UnknownModelError, match="cycle"):
        resolve("a", config, PROVIDERS)


@pytest.mark.parametrize(
    ("model", "hint"),
    [
        ("mistral:large", "no provider plugin for prefix 'mistral'"),
        ("gpt5", "not an alias"),
        ("openai:", "not an alias"),
    ],
)
def test_unknown_models_list_what_is_available(model: str, hint: str) -> None:
    config = Config(aliases={"house": "openai:gpt-4o"}, configurations={"fast": {"model": "mini"}})
    with pytest.raises(UnknownModelError) as err:
        resolve(model, config, PROVIDERS)
    assert err.value.model == model
    assert hint in str(err.value)
    for name in [
        "anthropic:<model>",
        "bedrock:<model>",
        "openai:<model>",
        "house",
        "fast",
        "sonnet",
        "mini",
    ]:
        assert name in err.value.available
    assert "available: " in str(err.value)


def test_unknown_model_without_plugins_says_so() -> None:
    with pytest.raises(UnknownModelError, match="no provider plugins are loaded"):
        resolve("openai:gpt-4o", Config(), {})


# --- routing through the runtime -----------------------------------------------------------------


def test_runtime_uses_aliases_and_configuration_options(drive: Driver) -> None:
    script = Script(["one", "two", "three"])
    config = Config(
        aliases={"house": "scripted:big"},
        configurations={"careful": {"model": "house", "temperature": 0.0, "seed": 7}},
    )
    rt = Runtime(
        model="careful", hooks=[script], config=config, backoff=Backoff.none(), max_tokens=10
    )
    result = drive.run(rt, "q")
    assert result.model == "scripted:big"
    assert script.requests[0].model == "big"
    assert script.requests[0].options == {"max_tokens": 10, "temperature": 0.0, "seed": 7}
    drive.exec(rt, "q", temperature=0.9)  # a per-call option beats the configuration
    assert script.requests[1].options["temperature"] == 0.9
    drive.exec(rt, "q", model="house")  # an alias brings no options
    assert script.requests[2].options == {"max_tokens": 10}


def test_runtime_unknown_model_fails_before_any_request(drive: Driver) -> None:
    script = Script(["never"])
    rt = Runtime(model="nope:x", hooks=[script], config=Config())
    with pytest.raises(UnknownModelError) as err:
        drive.exec(rt, "q")
    assert "scripted:<model>" in err.value.available
    assert script.requests == []


def test_default_model_comes_from_configuration(drive: Driver) -> None:
    script = Script(["ok"])
    rt = Runtime(hooks=[script], config=Config(default_model="scripted:configured"))
    assert drive.run(rt, "q").model == "scripted:configured"


def test_llmport_model_env_sets_the_default(drive: Driver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMPORT_MODEL", "scripted:from-env")
    script = Script(["ok"])
    assert drive.run(Runtime(hooks=[script]), "q").model == "scripted:from-env"


def test_provider_settings_from_config_and_code(drive: Driver) -> None:
    script = Script(["ok"])
    config = Config(providers={"scripted": {"base_url": "http://from-config", "timeout": 5}})
    rt = Runtime(
        model="scripted:m",
        hooks=[script],
        config=config,
        providers={"scripted": {"base_url": "http://from-code"}},
    )
    drive.exec(rt, "q")
    (provider,) = rt.targets.providers()
    assert provider.settings == {"base_url": "http://from-code", "timeout": 5}


def test_max_retries_from_configuration(drive: Driver, monkeypatch: pytest.MonkeyPatch) -> None:
    from llmport import ExecFailed, ProviderConnectionError

    monkeypatch.setenv("LLMPORT_MAX_RETRIES", "4")
    script = Script([fail(ProviderConnectionError("x")) for _ in range(4)])
    rt = Runtime(model="scripted:m", hooks=[script], backoff=Backoff.none())
    assert rt.max_retries == 4
    with pytest.raises(ExecFailed, match="after 4 attempts"):
        drive.exec(rt, "q")
    assert Runtime(call=print, max_retries=1).max_retries == 1  # an argument beats configuration
    assert Runtime(call=print, config=Config()).max_retries == 2


# --- configuration files and environment --------------------------------------------------------


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8", "surrogateescape"))  # "\udcff" writes the byte 0xff
    return path


PYPROJECT = """
[project]
name = "app"

[tool.llmport]
default_model = "from-pyproject"
max_retries = 5

[tool.llmport.aliases]
fast = "openai:gpt-4o-mini"
smart = "anthropic:claude-sonnet-4-5"

[tool.llmport.configurations.review]
model = "smart"
temperature = 0.1

[tool.llmport.providers.openai]
base_url = "http://pyproject"
organization = "kept"
"""

LLMPORT_TOML = """
default_model = "from-toml"

[aliases]
fast = "openai:gpt-4.1-mini"

[configurations.review]
model = "smart"
max_tokens = 100

[providers.openai]
base_url = "http://toml"

[session]
path = "sessions.sqlite"
"""


def test_pyproject_section_alone(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", PYPROJECT)
    config = load_config(tmp_path, NO_ENV)
    assert config.default_model == "from-pyproject"
    assert config.aliases == {"fast": "openai:gpt-4o-mini", "smart": "anthropic:claude-sonnet-4-5"}
    assert config.configurations == {"review": {"model": "smart", "temperature": 0.1}}
    assert config.providers == {"openai": {"base_url": "http://pyproject", "organization": "kept"}}
    assert config.max_retries == 5
    assert config.sources == (f"{tmp_path / 'pyproject.toml'} [tool.llmport]",)


def test_llmport_toml_overrides_pyproject_key_by_key(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", PYPROJECT)
    write(tmp_path / "llmport.toml", LLMPORT_TOML)
    config = load_config(tmp_path, NO_ENV)
    assert config.default_model == "from-toml"
    assert config.aliases == {"fast": "openai:gpt-4.1-mini", "smart": "anthropic:claude-sonnet-4-5"}
    # Tables merge: a key set in llmport.toml wins, the others stay.
    assert config.configurations["review"] == {
        "model": "smart",
        "temperature": 0.1,
        "max_tokens": 100,
    }
    assert config.providers["openai"] == {"base_url": "http://toml", "organization": "kept"}
    assert config.session_path == "sessions.sqlite"
    assert config.max_retries == 5
    assert len(config.sources) == 2


def test_environment_overrides_files(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", PYPROJECT)
    write(tmp_path / "llmport.toml", LLMPORT_TOML)
    env = {
        "LLMPORT_MODEL": "from-env",
        "LLMPORT_ALIAS_FAST": "openai:from-env",
        "LLMPORT_ALIAS_MY_MODEL": "anthropic:x",
        "LLMPORT_SESSION": "env.sqlite",
        "LLMPORT_MAX_RETRIES": "7",
        "UNRELATED": "x",
    }
    config = load_config(tmp_path, env)
    assert config.default_model == "from-env"
    assert config.aliases["fast"] == "openai:from-env"
    assert config.aliases["my-model"] == "anthropic:x"
    assert config.aliases["smart"] == "anthropic:claude-sonnet-4-5"
    assert config.session_path == "env.sqlite"
    assert config.max_retries == 7
    assert config.sources[-1] == "environment"


def test_files_are_found_upwards(tmp_path: Path) -> None:
    write(tmp_path / "llmport.toml", 'default_model = "root"\n')
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert load_config(deep, NO_ENV).default_model == "root"
    write(tmp_path / "a" / "llmport.toml", 'default_model = "nearer"\n')
    assert load_config(deep, NO_ENV).default_model == "nearer"


def test_llmport_config_names_the_file(tmp_path: Path) -> None:
    write(tmp_path / "llmport.toml", 'default_model = "found"\n')
    chosen = write(tmp_path / "elsewhere" / "team.toml", 'default_model = "chosen"\n')
    assert load_config(tmp_path, {"LLMPORT_CONFIG": str(chosen)}).default_model == "chosen"


def test_runtime_reads_configuration_from_the_working_directory(
    drive: Driver, tmp_path: Path
) -> None:
    write(tmp_path / "llmport.toml", '[aliases]\nhouse = "scripted:from-file"\n')
    script = Script(["ok"])
    assert drive.run(Runtime(model="house", hooks=[script]), "q").model == "scripted:from-file"


def test_no_configuration_at_all(tmp_path: Path) -> None:
    assert load_config(tmp_path, NO_ENV) == Config()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("default_model = ", "invalid TOML"),
        ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        ("default_model = '\udcff'\n", "not UTF-8"),
        ("colour = 'blue'\n", "unknown key(s) colour"),
        ("aliases = 'x'\n", "[aliases] must be a table"),
        ("[aliases]\nfast = 3\n", "alias 'fast' must map to a model string"),
        (
            "[configurations.fast]\ntemperature = 0.1\n",
            "configuration 'fast' needs a 'model' string",
        ),
        ("max_retries = 0\n", "max_retries must be an integer >= 1"),
        ("max_retries = true\n", "max_retries must be an integer >= 1"),
        ("default_model = 3\n", "default_model must be a string"),
        ("[providers]\nopenai = 'x'\n", "provider 'openai' settings must be a table"),
        ("[session]\npath = 3\n", "session path must be a string"),
    ],
)
def test_bad_configuration_is_a_config_error(tmp_path: Path, text: str, problem: str) -> None:
    path = write(tmp_path / "llmport.toml", text)
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, NO_ENV)
    assert problem in str(err.value)
    assert str(path) in str(err.value)
    assert err.value.__cause__ is None  # no parser exception inside
    assert err.value.__context__ is None or err.value.__suppress_context__


def test_bad_pyproject_section_is_a_config_error(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.llmport]\nmodle = 'typo'\n")
    with pytest.raises(ConfigError, match=r"\[tool.llmport\]: unknown key\(s\) modle"):
        load_config(tmp_path, NO_ENV)


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"LLMPORT_MAX_RETRIES": "many"}, "LLMPORT_MAX_RETRIES must be an integer"),
        ({"LLMPORT_MAX_RETRIES": "0"}, "max_retries must be an integer >= 1"),
        ({"LLMPORT_CONFIG": "/nonexistent/llmport.toml"}, "not a file"),
    ],
)
def test_bad_environment_is_a_config_error(
    tmp_path: Path, env: dict[str, str], problem: str
) -> None:
    with pytest.raises(ConfigError, match=problem):
        load_config(tmp_path, env)


def test_runtime_reports_bad_configuration(drive: Driver, tmp_path: Path) -> None:
    write(tmp_path / "llmport.toml", "nonsense = 1\n")
    with pytest.raises(ConfigError):
        drive.exec(Runtime(model="anything"), "q")
