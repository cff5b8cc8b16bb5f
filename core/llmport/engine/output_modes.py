"""Output modes: structured output and decisions on a run's final answer.

:class:`OutputMode` says how a structured output travels (native, an output
tool, or the prompt) and shapes each turn's request (:func:`turn_request`);
:func:`structured_output` parses the reply after one repair round if it must;
:func:`decide` asks the model to pick among a decision's choices and calls
the one picked.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..messages.types import (
    Message,
    Request,
    Response,
    TextBlock,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSpec,
)
from ..output import structured
from ..output.decisions import Choice, InvalidPick, resolve_call
from ..output.streaming import OutputStream
from ..tools.tool import RunContext
from .attempts import model_request
from .effects import Invoke, Steps
from .plan import RunPlan
from .requests import build_request
from .result import RunResult

__all__ = [
    "OutputMode",
    "decide",
    "first_request",
    "output_mode",
    "structured_output",
    "turn_request",
]


def output_mode(plan: RunPlan) -> OutputMode | None:
    """How the run's structured output travels; None without a response format.

    Call it once per plan: ``output_mode="prompted"`` adds its instruction to
    the plan's system blocks.
    """
    return OutputMode(plan) if plan.response_format is not None else None


def turn_request(
    plan: RunPlan, messages: list[Message], mode: OutputMode | None, tool_choice: ToolChoice
) -> Request:
    """The request of one tool-loop turn: the toolbox, the output tool and forced choice."""
    return build_request(
        plan,
        messages,
        tools=True,
        tool_choice=tool_choice if mode is None else mode.tool_choice(tool_choice),
        response_format=None if mode is None else mode.response_format,
        specs=None if mode is None else mode.specs,
    )


def first_request(plan: RunPlan) -> Request:
    """The first request a run of ``plan`` sends, before hooks and window fitting.

    ``count_tokens`` counts this one, built as the run builds its first turn,
    so a count and an exec with the same arguments send the same request.
    """
    return turn_request(plan, list(plan.messages), output_mode(plan), plan.tool_choice)


def structured_output(
    plan: RunPlan,
    run: RunResult[Any],
    mode: OutputMode,
    messages: list[Message],
    response: Response,
    reply: str,
) -> Steps:
    """The reply parsed against the response format, after one repair round if it must."""
    value, errors = _structured(plan, reply)
    if errors:
        messages.append(Message("user", (TextBlock(structured.repair_prompt(errors)),)))
        request = build_request(
            plan,
            messages,
            tools=mode.output_tool is not None,
            tool_choice=mode.forced(),
            response_format=mode.response_format,
            specs=[mode.output_spec] if mode.output_spec is not None else None,
        )
        response = yield from model_request(plan, run, request, mode.stream(plan))
        messages.append(response.as_message())
        reply = response.text
        ended = mode.finish(response, messages)
        if ended is not None:
            response, reply = ended
        value, errors = _structured(plan, reply)
        if errors:
            raise structured.fail(errors, reply)
    run.text = reply
    run.stop_reason = response.stop_reason
    run.value = value
    return structured.strip_fences(reply)


class OutputMode:
    """How structured output travels (``output_mode``): native, an output tool, or the prompt.

    ``"tool"`` offers a terminal output tool beside the function tools: its
    call ends the run and its arguments are the reply. ``"prompted"`` sends
    no response format and puts the schema in the system prompt. ``None`` and
    ``"native"`` send the response format (plugins choose their fallback).
    """

    __slots__ = ("output_spec", "output_tool", "response_format", "specs")

    def __init__(self, plan: RunPlan) -> None:
        rf = plan.response_format
        self.response_format = rf
        self.output_tool: structured.OutputTool | None = None
        self.output_spec: ToolSpec | None = None
        self.specs: list[ToolSpec] | None = None
        if rf is None or plan.output_mode in (None, "native"):
            return
        self.response_format = None
        if plan.output_mode == "tool":
            taken = plan.toolbox.tools if plan.toolbox is not None else {}
            self.output_tool, self.output_spec = structured.make_output_tool(
                rf, taken, "Call this with the final answer; it ends the conversation."
            )
            self.specs = [*(plan.toolbox.specs if plan.toolbox else []), self.output_spec]
        else:  # prompted
            instruction = TextBlock(structured.prompt_instruction(rf))
            plan.state.system_blocks = (*plan.system_blocks, instruction)
            plan.state.system = "\n\n".join(b.text for b in plan.system_blocks)

    def stream(self, plan: RunPlan) -> OutputStream | None:
        """What reads the output as a streamed run receives it (None: the run is not streamed)."""
        return OutputStream(self.output_tool) if plan.stream else None

    def tool_choice(self, choice: ToolChoice) -> ToolChoice:
        if self.output_spec is None or choice != "auto":
            return choice
        return "required"  # answer through the output tool, never in plain text

    def forced(self) -> ToolChoice:
        return {"name": self.output_spec.name} if self.output_spec is not None else "auto"

    def final_call(self, response: Response) -> ToolCall | None:
        if self.output_tool is None:
            return None
        name = self.output_tool.name
        return next((c for c in response.tool_calls if c.name == name), None)

    def finish(self, response: Response, messages: list[Message]) -> tuple[Response, str] | None:
        """(answer, reply) when ``response`` calls the output tool, else None.

        The output tool's call is the run's output, not a call to run: the
        run ended with its answer, so its stop reason is ``"end_turn"`` as in
        the native mode and the plugins' own forced output tool.
        The call gets its result, so the conversation can be continued.
        """
        final = self.final_call(response)
        if final is None:
            return None
        assert self.output_tool is not None
        messages.append(self.acknowledge(response))
        reply = self.output_tool.reply_text(final.arguments)
        return replace(response, stop_reason="end_turn"), reply

    def acknowledge(self, response: Response) -> Message:
        """Results for the final turn's calls, so the conversation can be continued."""
        assert self.output_tool is not None
        name = self.output_tool.name
        results = tuple(
            ToolResult(
                c.id,
                c.name,
                "Final answer received." if c.name == name else "Not run: the answer was final.",
            )
            for c in response.tool_calls
        )
        return Message("tool", tool_results=results)


def _structured(plan: RunPlan, text: str) -> tuple[Any, list[str]]:
    """(value, errors) of a structured reply; building the output class may reject it too."""
    assert plan.response_format is not None
    value, errors = structured.parse_reply(plan.response_format, text)
    if errors:
        return value, errors
    try:
        return structured.to_output(value, plan.output_type), []
    except Exception as exc:  # e.g. a pydantic validator stricter than the schema
        return value, [f"<root>: {type(exc).__name__}: {exc}"]


# --- decisions ---------------------------------------------------------------------------


def decide(plan: RunPlan, run: RunResult[Any], messages: list[Message]) -> Steps:
    decision = plan.decision
    assert decision is not None
    via_tools = plan.caps.native_tools
    messages.append(Message("user", (TextBlock(decision.prompt(via_tools)),)))
    errors: list[str] = []
    for _ in range(2):  # one pick and one re-pick
        if via_tools:
            specs = decision.tool_specs()
            choice: ToolChoice = {"name": specs[0].name} if len(specs) == 1 else "required"
            request = Request(
                model=plan.model,
                messages=list(messages),
                system=plan.system,
                tools=specs,
                tool_choice=choice,
                parallel_tool_calls=False,
                options=dict(plan.options),
                stream=plan.stream,
                vendor=plan.vendor,
            )
        else:
            request = build_request(
                plan,
                messages,
                tools=False,
                tool_choice="auto",
                response_format=decision.response_format(),
            )
        response = yield from model_request(plan, run, request)
        messages.append(response.as_message())
        try:
            picked, args = decision.parse(response, via_tools)
        except InvalidPick as bad:
            errors = bad.errors
            why = "; ".join(errors)
            if response.tool_calls:
                results = tuple(
                    ToolResult(c.id, c.name, "invalid pick: " + why, True)
                    for c in response.tool_calls
                )
                messages.append(Message("tool", tool_results=results))
            retry = f"That was not a valid choice: {why}. {decision.prompt(via_tools)}"
            messages.append(Message("user", (TextBlock(retry),)))
            continue
        return (yield from _resolve_choice(plan, run, picked, args))
    raise decision.fail(errors)


def _resolve_choice(
    plan: RunPlan, run: RunResult[Any], picked: Choice, args: dict[str, Any]
) -> Steps:
    run.choice = picked.name
    ctx = RunContext(
        deps=plan.deps,
        model=plan.qualified,
        node_id=plan.record.node_id if plan.record is not None else None,
        iteration=run.iterations,
        tool_name=picked.name,
        function=plan.info.function,
        store=plan.store,
        previous_lookup=plan.frame.previous if plan.frame is not None else None,
    )
    fn, kwargs = resolve_call(picked, args, ctx)
    if fn is None:
        return picked.target
    return (yield Invoke(fn, kwargs))
