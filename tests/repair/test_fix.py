"""fix() / async_fix(): the model repairs an agentic function, installed only once approved."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from llmport import (
    ExecFailed,
    FixNotApproved,
    FixRejected,
    OptionError,
    ProviderConnectionError,
    Session,
    agentic_function,
    async_fix,
    fix,
    hookimpl,
)
from llmport.cli.session import tree
from llmport.testing import Script, fail, reply
from rich.console import Console

MODULE = '''\
from llmport import agentic_function

rt = None
SENTINEL = []


# a helper above the function
def helper():
    return 1


@agentic_function
def temperature(city: str) -> float:
    """The temperature in a city, in degrees."""
    return float(rt.exec(f"Temperature in {city}?"))


# a helper below the function
def other():
    return 2
'''

FIXED = '''\
@agentic_function(expose=SENTINEL.append("ran") or "io")
def temperature(city: str) -> float:
    """The temperature in a city, in degrees."""
    answer = str(rt.exec(f"Temperature in {city}? Answer with a number only."))
    return float(answer.split()[0])
'''

INSTRUCTION = "the model answers '21 C': read the number before the unit"


def load(tmp_path: Path, source: str | bytes = MODULE, name: str = "weather_mod") -> ModuleType:
    """Import ``source`` from ``tmp_path``/``name``.py (bytes: written as given, any encoding)."""
    path = tmp_path / f"{name}.py"
    path.write_bytes(source if isinstance(source, bytes) else source.encode())
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def weather(tmp_path: Path) -> Any:
    module = load(tmp_path)
    yield module
    sys.modules.pop(module.__name__, None)


def proposal(source: str, rationale: str = "parse the leading number") -> Any:
    return reply(json.dumps({"source": source, "rationale": rationale}))


def failed_once(weather: Any, script: Script) -> BaseException:
    """Call the original with a reply it cannot parse; return what it raised."""
    with pytest.raises(ValueError) as caught:
        weather.temperature("Rome")
    return caught.value


# --- approved: installed, and it passes where the original failed --------------------------


def test_an_approved_fix_installs_a_function_that_passes_where_the_original_failed(
    weather: Any,
) -> None:
    script = Script(["21 C", proposal(FIXED), "21 C", "21 C"])
    weather.rt = script.runtime()
    seen: list[str] = []
    with Session() as session:
        error = failed_once(weather, script)
        fixed = fix(
            weather.temperature,
            runtime=weather.rt,
            instruction=INSTRUCTION,
            approve=lambda diff: seen.append(diff) or True,
            error=error,
        )
        assert weather.SENTINEL == ["ran"]  # the approved source ran, once
        assert fixed("Rome") == 21.0
        with pytest.raises(ValueError):  # the original is left as it was
            weather.temperature("Rome")
    assert fixed.__agentic__.name == "temperature"  # still an agentic function
    assert fixed.__doc__ == "The temperature in a city, in degrees."
    (diff,) = seen
    assert "-    return float(rt.exec(f\"Temperature in {city}?\"))" in diff
    assert "+    return float(answer.split()[0])" in diff
    assert diff.startswith("--- a/") and "weather_mod.py" in diff.splitlines()[0]
    # the new function's call was recorded like the original's
    calls = [n for n in session.nodes() if n.kind == "function"]
    assert [c.status for c in calls] == ["error", "ok", "error"]


def test_the_model_is_given_source_doc_failure_recent_calls_and_instruction(weather: Any) -> None:
    script = Script(["21 C", proposal(FIXED)])
    weather.rt = script.runtime()
    with Session():
        error = failed_once(weather, script)
        fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
            approve=lambda diff: True, error=error)
    request = script.requests[1]
    asked = request.messages[-1].text
    assert '@agentic_function\ndef temperature(city: str) -> float:' in asked
    assert "The temperature in a city, in degrees." in asked
    assert "ValueError: could not convert string to float: '21 C'" in asked
    assert "temperature({\"city\": \"Rome\"}) error" in asked  # the recent call, from the DAG
    assert "exec n2" in asked and "21 C" in asked  # its exec and what the model said
    assert INSTRUCTION in asked
    assert request.response_format is not None  # structured output: source and rationale
    assert set(request.response_format.schema["required"]) == {"source", "rationale"}


def test_an_exec_failed_reaches_the_model_with_its_attempt_report(weather: Any) -> None:
    script = Script([fail(ProviderConnectionError("reset", provider="scripted"))] * 2)
    script.add(proposal(FIXED))
    weather.rt = script.runtime(max_retries=2)
    with pytest.raises(ExecFailed) as failed:
        weather.temperature("Rome")
    fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
        approve=lambda diff: True, error=failed.value)
    asked = script.requests[2].messages[-1].text
    assert "exec() failed after 2 attempts in temperature():" in asked
    assert "Attempt 2: ProviderConnectionError: reset" in asked


def test_the_failure_defaults_to_the_exception_being_handled(weather: Any) -> None:
    script = Script(["21 C", proposal(FIXED)])
    weather.rt = script.runtime()
    try:
        weather.temperature("Rome")
    except ValueError:
        fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
            approve=lambda diff: True)
    assert "could not convert string to float" in script.requests[1].messages[-1].text


# --- not approved: nothing compiled, nothing ran ----------------------------------------------


def test_a_refused_fix_raises_fix_not_approved_and_nothing_runs(weather: Any) -> None:
    script = Script([proposal(FIXED)])
    weather.rt = script.runtime()
    with pytest.raises(FixNotApproved) as refused:
        fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
            approve=lambda diff: False, error=None)
    assert weather.SENTINEL == []  # the proposed decorator expression never ran
    assert "+    return float(answer.split()[0])" in refused.value.diff
    assert refused.value.rationale == "parse the leading number"
    assert "refused" in str(refused.value)


@pytest.mark.parametrize("answer", [None, 1, "yes"])
def test_anything_but_true_refuses(weather: Any, answer: Any) -> None:
    script = Script([proposal(FIXED)])
    weather.rt = script.runtime()
    with pytest.raises(FixNotApproved):
        fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
            approve=lambda diff: answer, error=None)
    assert weather.SENTINEL == []


def test_without_approver_or_hook_it_is_not_approved(weather: Any) -> None:
    script = Script([proposal(FIXED)])
    weather.rt = script.runtime()
    with pytest.raises(FixNotApproved, match="no approve= and no hook answered") as refused:
        fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION, error=None)
    assert refused.value.diff and weather.SENTINEL == []


class Policy:
    def __init__(self, answer: bool | None) -> None:
        self.answer = answer
        self.seen: list[tuple[str, Any, str]] = []

    @hookimpl
    def llmport_approve_fix(self, diff: str, fn: Any, instruction: str) -> bool | None:
        self.seen.append((diff, fn, instruction))
        return self.answer


def test_the_approve_fix_hook_decides_when_no_approve_is_given(weather: Any) -> None:
    no_opinion, approver = Policy(None), Policy(True)
    script = Script([proposal(FIXED), "21 C"])
    weather.rt = script.runtime(hooks=[approver, no_opinion])
    fixed = fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION, error=None)
    assert fixed("Rome") == 21.0
    ((diff, fn, instruction),) = approver.seen
    assert fn is weather.temperature and instruction == INSTRUCTION and "+" in diff


def test_a_refusing_hook_raises_fix_not_approved(weather: Any) -> None:
    script = Script([proposal(FIXED)])
    weather.rt = script.runtime(hooks=[Policy(False)])
    with pytest.raises(FixNotApproved, match="refused"):
        fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION, error=None)
    assert weather.SENTINEL == []


# --- the checks: each rejects a crafted proposal ---------------------------------------------

BODY = '    """The temperature in a city, in degrees."""\n    return 21.0\n'
DEF = "def temperature(city: str) -> float:\n"
CRAFTED = {
    "does not parse": f"@agentic_function\n{DEF}    return (\n",
    "named 'temp'": f"@agentic_function\ndef temp(city: str) -> float:\n{BODY}",
    "signature changed": (
        f"@agentic_function\ndef temperature(city: str, unit: str) -> float:\n{BODY}"
    ),
    "signature changed: def temperature(city: str) -> int": (
        f"@agentic_function\ndef temperature(city: str) -> int:\n{BODY}"
    ),
    "signature changed: async def": f"@agentic_function\nasync {DEF}{BODY}",
    "no longer decorated with @agentic_function": f"{DEF}{BODY}",
    "imports os, not allowed": f"@agentic_function\n{DEF}    import os\n{BODY}",
    "imports subprocess, not allowed": f"import subprocess\n\n@agentic_function\n{DEF}{BODY}",
    "imports shutil, not allowed": f"@agentic_function\n{DEF}    __import__('shutil')\n{BODY}",
    "top-level statement besides the function (line 1: Expr)": (
        f"SENTINEL.append('ran')\n\n@agentic_function\n{DEF}{BODY}"
    ),
    "defines no function": "x = 1\n",
    # Dynamic evaluation and dunder escapes: what the import check alone let through.
    "uses eval()": f"@agentic_function\n{DEF}    eval(\"__imp\" + \"ort__('os')\")\n{BODY}",
    "uses '__import__', __builtins__": (
        f"@agentic_function\n{DEF}    __builtins__['__import__']('os')\n{BODY}"
    ),
    "uses .__base__, .__class__, .__subclasses__": (
        f"@agentic_function\n{DEF}    ().__class__.__base__.__subclasses__()\n{BODY}"
    ),
    "uses exec()": f"@agentic_function\n{DEF}    exec('import os')\n{BODY}",
    "uses compile()": f"@agentic_function\n{DEF}    run = compile\n{BODY}",
    "uses globals()": f"@agentic_function\n{DEF}    globals()['rt'] = None\n{BODY}",
    "uses vars()": f"@agentic_function\n{DEF}    vars(city)\n{BODY}",
    "uses '__globals__'": f"@agentic_function\n{DEF}    getattr(rt, '__globals__')\n{BODY}",
    "uses getattr() with a computed name": (
        f"@agentic_function\n{DEF}    getattr(rt, '__gl' + 'obals__')\n{BODY}"
    ),
    "uses open()": f"@agentic_function\n{DEF}    open('MARK', 'w').close()\n{BODY}",
    # Characters a terminal does not show as themselves: the approver could not see the code.
    "hidden character, U+000D": (
        f"@agentic_function\n{DEF}    open('MARK', 'w').close()\r    pass  # the real fix\n{BODY}"
    ),
    **{
        f"hidden character, U+{ord(char):04X}": (
            f"@agentic_function\n{DEF}    x = 1  # note{char}\n{BODY}"
        )
        for char in "\x1b\u202e\u2066\u200b\u2028\x0c\x0b\x00\ufeff"
    },
}


@pytest.mark.parametrize("reason", sorted(CRAFTED))
def test_each_check_rejects_a_crafted_proposal_after_one_repair_round(
    weather: Any, reason: str
) -> None:
    crafted = CRAFTED[reason]
    script = Script([proposal(crafted), proposal(crafted)])
    weather.rt = script.runtime()
    approvals: list[str] = []
    with pytest.raises(FixRejected) as rejected:
        fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
            approve=lambda diff: approvals.append(diff) or True, error=None)
    assert reason in rejected.value.reason
    assert rejected.value.source.strip() == crafted.strip()
    assert len(script.requests) == 2  # one repair round, then give up
    repair = script.requests[1].messages
    assert reason in repair[-1].text  # the model was told why
    assert "Repair this function" in repair[0].text  # ... in the same conversation
    assert approvals == [] and weather.SENTINEL == []


def test_a_proposal_fixed_in_the_repair_round_is_installed(weather: Any) -> None:
    script = Script([proposal(CRAFTED["imports os, not allowed"]), proposal(FIXED), "21 C"])
    weather.rt = script.runtime()
    fixed = fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
                approve=lambda diff: True, error=None)
    assert fixed("Rome") == 21.0


def test_allow_imports_lets_a_module_in(weather: Any) -> None:
    source = FIXED.replace('    answer = str(', '    import json\n    answer = str(')
    script = Script([proposal(source), "21 C"])
    weather.rt = script.runtime()
    fixed = fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
                approve=lambda diff: True, allow_imports=["json"], error=None)
    assert fixed("Rome") == 21.0


def test_a_source_in_a_code_fence_is_accepted(weather: Any) -> None:
    script = Script([proposal(f"```python\n{FIXED}```"), "21 C"])
    weather.rt = script.runtime()
    fixed = fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
                approve=lambda diff: True, error=None)
    assert fixed("Rome") == 21.0


# --- write=True -----------------------------------------------------------------------------------


def test_write_rewrites_only_the_function_lines(weather: Any, tmp_path: Path) -> None:
    path = tmp_path / "weather_mod.py"
    script = Script([proposal(FIXED), "21 C"])
    weather.rt = script.runtime()
    fixed = fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
                approve=lambda diff: True, write=True, error=None)
    before, after = MODULE.splitlines(), path.read_text().splitlines()
    start = before.index("@agentic_function")
    assert before[start + 3].startswith("    return float(")  # the original's last line
    assert after[:start] == before[:start]
    assert after[start : start + 5] == FIXED.splitlines()
    assert after[start + 5 :] == before[start + 4 :]
    assert fixed("Rome") == 21.0
    # tracebacks and inspect see the rewritten file; a second fix starts from it
    assert fixed.__wrapped__.__code__.co_filename == str(path)
    assert fixed.__wrapped__.__code__.co_firstlineno == start + 1


def test_write_refuses_a_file_changed_meanwhile(weather: Any, tmp_path: Path) -> None:
    path = tmp_path / "weather_mod.py"

    def edit_then_approve(diff: str) -> bool:
        path.write_text(MODULE.replace("temperature in a city", "temperature of a city"))
        return True

    script = Script([proposal(FIXED)])
    weather.rt = script.runtime()
    with pytest.raises(OptionError, match="changed since"):
        fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
            approve=edit_then_approve, write=True, error=None)
    assert "answer.split()" not in path.read_text()
    assert weather.SENTINEL == []  # refused before the approved source ran


def test_a_fixed_function_can_be_fixed_again(weather: Any) -> None:
    again = FIXED.replace("split()[0]", "split()[0].rstrip('C')")
    script = Script([proposal(FIXED), proposal(again), "21C"])
    weather.rt = script.runtime()
    once = fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
               approve=lambda diff: True, error=None)
    diffs: list[str] = []
    twice = fix(once, runtime=weather.rt, instruction="units may touch the number",
                approve=lambda diff: diffs.append(diff) or True, error=None)
    assert twice("Rome") == 21.0
    assert "-    return float(answer.split()[0])" in diffs[0]


# --- the fix node ---------------------------------------------------------------------------------


def test_the_dag_records_a_fix_node_and_session_show_draws_it(weather: Any) -> None:
    script = Script(["21 C", proposal(FIXED), proposal(FIXED)])
    weather.rt = script.runtime()
    with Session() as session:
        error = failed_once(weather, script)
        fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
            approve=lambda diff: True, error=error)
        with pytest.raises(FixNotApproved):
            fix(weather.temperature, runtime=weather.rt, instruction="again",
                approve=lambda diff: False, error=error)
    fixes = [n for n in session.nodes() if n.kind == "fix"]
    assert [f.status for f in fixes] == ["ok", "error"]
    done, refused = fixes
    assert done.data["function"] == "temperature" and done.data["fixes"] == "n1"
    assert done.data["instruction"] == INSTRUCTION and done.data["model"] == "scripted:test"
    assert done.result is not None and "+    return float(answer.split()[0])" in done.result["diff"]
    assert done.result["approved_by"].startswith("approve=")
    assert done.result["usage"]["input_tokens"] > 0  # what the proposal cost
    assert refused.result is not None and refused.result["error"]["type"] == "FixNotApproved"
    assert refused.result["refused_by"].startswith("approve=")
    console = Console(width=200, record=True)
    console.print(tree(session))
    shown = console.export_text()
    assert "fix temperature  ok  temperature (fixes n1)  scripted:test  +3 -2" in shown
    assert "+    return float(answer.split()[0])" in shown
    assert "approved by approve=" in shown


def test_a_stored_fix_node_reloads(weather: Any, tmp_path: Path) -> None:
    script = Script([proposal(FIXED)])
    weather.rt = script.runtime()
    with Session(tmp_path / "runs.sqlite") as session:
        fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
            approve=lambda diff: True, error=None)
    with Session(tmp_path / "runs.sqlite", id=session.id, readonly=True) as reopened:
        (node,) = [n for n in reopened.nodes() if n.kind == "fix"]
        assert node.result is not None and "answer.split()" in node.result["diff"]


# --- input errors, closures, async ----------------------------------------------------------------


def test_fix_needs_an_agentic_function_and_an_instruction(weather: Any) -> None:
    rt = Script().runtime()
    with pytest.raises(OptionError, match="@agentic_function"):
        fix(weather.helper, runtime=rt, instruction="x")
    with pytest.raises(OptionError, match="instruction"):
        fix(weather.temperature, runtime=rt, instruction=" ")


def test_a_nested_function_keeps_what_its_closure_held() -> None:
    plain = FIXED.replace('(expose=SENTINEL.append("ran") or "io")', "")
    script = Script([proposal(plain), "21 C"])
    rt = script.runtime()

    @agentic_function
    def temperature(city: str) -> float:
        """The temperature in a city, in degrees."""
        return float(rt.exec(f"Temperature in {city}?"))

    fixed = fix(temperature, runtime=rt, instruction=INSTRUCTION,
                approve=lambda diff: True, error=None)
    assert fixed("Rome") == 21.0
    with pytest.raises(OptionError, match="write=True needs the source file"):
        fix(fixed, runtime=rt, instruction=INSTRUCTION, write=True)


ASYNC_MODULE = MODULE.replace("def temperature", "async def temperature").replace(
    "return float(rt.exec(", "return float(await rt.async_exec("
)
ASYNC_FIXED = FIXED.replace("def temperature", "async def temperature").replace(
    "str(rt.exec(", "str(await rt.async_exec("
)


async def test_async_fix_with_an_async_approver(tmp_path: Path) -> None:
    weather: Any = load(tmp_path, ASYNC_MODULE, "async_weather_mod")
    script = Script(["21 C", proposal(ASYNC_FIXED), "21 C"])
    weather.rt = script.runtime()

    async def approve(diff: str) -> bool:
        await asyncio.sleep(0)
        return "await rt.async_exec" in diff

    with Session() as session:
        try:
            await weather.temperature("Rome")
        except ValueError:
            fixed = await async_fix(weather.temperature, runtime=weather.rt,
                                    instruction=INSTRUCTION, approve=approve)
        assert await fixed("Rome") == 21.0
    assert "could not convert" in script.requests[1].messages[-1].text
    assert [n.kind for n in session.nodes()].count("fix") == 1


async def test_async_fix_refused_runs_nothing(tmp_path: Path) -> None:
    weather: Any = load(tmp_path, ASYNC_MODULE, "async_weather_mod2")
    script = Script([proposal(ASYNC_FIXED)])
    weather.rt = script.runtime()

    async def refuse(diff: str) -> bool:
        return False

    with pytest.raises(FixNotApproved):
        await async_fix(weather.temperature, runtime=weather.rt, instruction=INSTRUCTION,
                        approve=refuse, error=None)
    assert weather.SENTINEL == []
