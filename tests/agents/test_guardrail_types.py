"""InputGuardrailTripped / OutputGuardrailTripped: the stage says which one is raised."""

from __future__ import annotations

import llmport
import pytest
from agent_helpers import WAY_IDS, WAYS, run, runtime
from llmport import GuardrailTripped, InputGuardrailTripped, OutputGuardrailTripped, hookimpl
from llmport.messages.types import Request, Response
from llmport.testing import Script
from llmport.tools.policy import CallInfo


class PlainInput:
    @hookimpl
    def llmport_before_request(self, request: Request, info: CallInfo) -> Request | None:
        if "password" in request.messages[-1].text:
            raise GuardrailTripped("no secrets", guardrail="secrets", stage="request")
        return None


class TypedOutput:
    @hookimpl
    def llmport_after_response(
        self, request: Request, response: Response, info: CallInfo
    ) -> Response | None:
        if "forbidden" in response.text:
            raise OutputGuardrailTripped("bad words", guardrail="words")
        return None


class PlainOutput:
    @hookimpl
    def llmport_after_response(
        self, request: Request, response: Response, info: CallInfo
    ) -> Response | None:
        if "forbidden" in response.text:
            raise GuardrailTripped("bad words", guardrail="words")
        return None


class WrongType:
    @hookimpl
    def llmport_before_request(self, request: Request, info: CallInfo) -> object:
        return "not a request"


def test_both_are_guardrail_trips_and_exported() -> None:
    assert issubclass(InputGuardrailTripped, GuardrailTripped)
    assert issubclass(OutputGuardrailTripped, GuardrailTripped)
    assert llmport.InputGuardrailTripped is InputGuardrailTripped
    assert InputGuardrailTripped("x").stage == "input"
    assert OutputGuardrailTripped("x", guardrail="g").stage == "output"
    assert "InputGuardrailTripped" in (llmport.errors.__doc__ or "")
    assert "OutputGuardrailTripped" in (llmport.errors.__doc__ or "")


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_a_plain_trip_in_before_request_is_an_input_trip(way: tuple[str, bool]) -> None:
    script = Script(["unused"])
    rt = runtime(script, PlainInput())  # type: ignore[arg-type]
    with pytest.raises(InputGuardrailTripped, match="no secrets") as info:
        await run(way, rt, "my password is 1")
    assert (info.value.guardrail, info.value.stage) == ("secrets", "request")  # kept
    assert isinstance(info.value.__cause__, GuardrailTripped)
    assert script.requests == []  # nothing sent


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
@pytest.mark.parametrize("guard", [TypedOutput, PlainOutput])
async def test_after_response_raises_an_output_trip(way: tuple[str, bool], guard: type) -> None:
    script = Script(["forbidden words", "unused"])
    rt = runtime(script, guard(), max_retries=3)  # type: ignore[arg-type]
    with pytest.raises(OutputGuardrailTripped, match="bad words") as info:
        await run(way, rt, "go")
    assert info.value.stage == "output" and info.value.guardrail == "words"
    assert not isinstance(info.value, InputGuardrailTripped)
    assert len(script.requests) == 1  # never retried


def test_a_hook_returning_the_wrong_type_is_an_input_trip() -> None:
    rt = runtime(Script(["unused"]), WrongType())  # type: ignore[arg-type]
    with pytest.raises(InputGuardrailTripped, match="returned str"):
        rt.run("hi")
