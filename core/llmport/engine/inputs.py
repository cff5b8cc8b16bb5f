"""Input checks: each option of a call checked and normalised, before anything is sent.

Pure functions of the values given (no routing, no I/O): the loop
parameters, ``system=``, ``history=``, the run options the planner reads
(:class:`RunOptions`), the response format against the model's
capabilities, fallbacks, deadlines and tool execution. Each raises a typed
input error.
"""

from __future__ import annotations

from typing import Any

from ..controls.budget import Budget, as_budget
from ..controls.options import (
    cache_setting,
    output_modalities_setting,
    reasoning_setting,
    trace_setting,
)
from ..controls.window import ContextPolicy, as_policy
from ..errors import (
    NotFoundError,
    OptionError,
    OverloadedError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
    ToolApprovalRequired,
    UnsupportedFeatureError,
)
from ..messages.content import normalize_content
from ..messages.types import (
    CacheSettings,
    Message,
    ModelCapabilities,
    Reasoning,
    ResponseFormat,
    TextBlock,
)
from ..observe.tracing import Trace  # tracing
from ..output import structured
from ..output.decisions import Decision
from ..slotted import dataclass
from ..tools.tool import ToolBox, ToolSettings

__all__ = [
    "DEFAULT_FALLBACK_ON",
    "NO_RUN_OPTIONS",
    "RUN_OPTION_NAMES",
    "RunOptions",
    "check_approver",
    "check_loop_params",
    "deadline_setting",
    "fallback_setting",
    "history_setting",
    "output_setting",
    "policy_setting",
    "system_setting",
    "tool_execution_setting",
]

_TOOL_CHOICES = ("auto", "required", "none")


#: Run options normalised by the planner (looked for together: a plain call has none).
RUN_OPTION_NAMES = frozenset(
    {
        "fallback_on",
        "history",
        "reasoning",
        "reasoning_effort",
        "cache",
        "output_mode",
        "output_modalities",
        "budget",
        "deadline",
        "trace",
        "tool_execution",
        "stream_retry",
    }
)


@dataclass(slots=True, frozen=True)
class RunOptions:
    """The run options the planner normalises (none of them is sent to providers)."""

    history: tuple[Message, ...] = ()
    reasoning: Reasoning | None = None
    cache: CacheSettings | None = None
    output_mode: str | None = None
    output_modalities: tuple[str, ...] = ()
    budget: Budget | None = None
    deadline_seconds: float | None = None
    trace: Trace | None = None  # tracing
    manual_tools: bool = False
    stream_restart: bool = False

    @classmethod
    def pop_from(cls, merged: dict[str, Any]) -> RunOptions:
        """Take (and check) the run options out of a call's merged options."""
        return cls(
            history=tuple(history_setting(merged.pop("history", None))),
            reasoning=reasoning_setting(
                merged.pop("reasoning", None), merged.pop("reasoning_effort", None)
            ),
            cache=cache_setting(merged.pop("cache", None)),
            output_mode=merged.pop("output_mode", None),
            output_modalities=output_modalities_setting(merged.pop("output_modalities", None)),
            budget=as_budget(merged.pop("budget", None)),
            deadline_seconds=deadline_setting(merged.pop("deadline", None)),
            trace=trace_setting(merged.pop("trace", None)),
            manual_tools=tool_execution_setting(merged.pop("tool_execution", None)),
            stream_restart=_stream_retry(merged.pop("stream_retry", None)),
        )


#: A plain call's run options: none given.
NO_RUN_OPTIONS = RunOptions()


def check_loop_params(params: dict[str, Any]) -> None:
    """``max_iterations``, ``tool_choice`` and ``choices`` against ``response_format``."""
    max_iterations = params["max_iterations"]
    if (
        isinstance(max_iterations, bool)
        or not isinstance(max_iterations, int)
        or max_iterations < 1
    ):
        raise OptionError(f"max_iterations must be an integer >= 1, got {max_iterations!r}")
    tool_choice = params["tool_choice"]
    if not (
        tool_choice in _TOOL_CHOICES
        or (isinstance(tool_choice, dict) and isinstance(tool_choice.get("name"), str))
    ):
        raise OptionError(
            "tool_choice must be 'auto', 'required', 'none' or {'name': ...}, "
            f"got {tool_choice!r}"
        )
    if params["choices"] is not None and params["response_format"] is not None:
        raise OptionError("choices and response_format cannot be combined")


def system_setting(value: Any, max_bytes: int) -> tuple[str | None, tuple[TextBlock, ...]]:
    """``system=`` as (its text, its blocks): a string, or text blocks.

    The text joins the blocks with a blank line (as added instructions are
    joined), so a vendor that takes one string never runs two blocks' words
    together; vendors that take blocks send the blocks.
    """
    if type(value) is str:
        return (value or None), ((TextBlock(value),) if value else ())
    if value is None:
        return None, ()
    blocks = _system(value, max_bytes)
    return ("\n\n".join(b.text for b in blocks) if blocks else None), blocks


def _system(value: Any, max_bytes: int) -> tuple[TextBlock, ...]:
    """``system=`` as text blocks: a string, or blocks (dicts or TextBlocks, ``"cache"`` kept)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (TextBlock(value),) if value else ()
    if isinstance(value, (TextBlock, dict)):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise OptionError(
            f"system must be a string or a list of text blocks, got {type(value).__name__}"
        )
    blocks = normalize_content(list(value), max_bytes=max_bytes)
    for block in blocks:
        if not isinstance(block, TextBlock):
            raise OptionError(f"system blocks must be text, got a {block.type} block")
    return tuple(blocks)  # type: ignore[arg-type]


def policy_setting(value: Any) -> ContextPolicy | None:
    """``context_policy=`` (a call's, else the runtime's) as a checked ContextPolicy."""
    if value is not None and type(value) is not ContextPolicy:
        return as_policy(value)
    return value


def history_setting(value: Any) -> list[Message]:
    """``history=``: Messages (or their ``to_dict()`` form) that come before the new content."""
    if value is None:
        return []
    if isinstance(value, (Message, dict)) or not isinstance(value, (list, tuple)):
        raise OptionError(f"history must be a list of Message, got {type(value).__name__}")
    out: list[Message] = []
    for i, item in enumerate(value):
        if isinstance(item, dict):
            item = Message.from_dict(item)
        if not isinstance(item, Message):
            raise OptionError(
                f"history[{i}] must be a Message or its to_dict() form, got {type(item).__name__}"
            )
        out.append(item)
    return out


def output_setting(
    params: dict[str, Any],
    caps: ModelCapabilities,
    name: str,
    model: str,
    output_mode: str | None,
) -> tuple[ResponseFormat | None, Decision | None]:
    """(the response format, the decision of ``choices=``), checked against the model."""
    rf = structured.prepare(params["response_format"])
    decision = Decision(params["choices"]) if params["choices"] is not None else None
    no_native = not caps.native_structured_output and not caps.native_tools
    # Source: each vendor's structured-output page (the capability table's native_structured_output
    #   and native_tools): with neither, llmport has no way to ask for the schema but a prompt
    #   (output_mode="prompted").
    if rf is not None and no_native and output_mode != "prompted":
        raise UnsupportedFeatureError(name, model, "response_format")
    if output_mode is not None:
        if rf is None:
            raise OptionError("output_mode applies to response_format; this call gives none")
        # Source: each vendor's structured-output page: the models with a JSON-schema response
        #   format (the capability table's native_structured_output).
        if output_mode == "native" and not caps.native_structured_output:
            raise UnsupportedFeatureError(name, model, 'output_mode="native"')
        if output_mode == "tool" and not caps.native_tools:
            raise UnsupportedFeatureError(name, model, 'output_mode="tool"')
    return rf, decision


def check_approver(toolbox: ToolBox | None, tool_settings: ToolSettings) -> None:
    """A tool policy marked "approve" needs an approver before anything is sent."""
    if toolbox is not None and toolbox.needs_approval and tool_settings.approver is None:
        raise ToolApprovalRequired(
            f"policy requires approval for {', '.join(sorted(toolbox.needs_approval))} but no "
            "approver was given (exec(..., approver=fn) or Runtime(..., approver=fn))"
        )


#: What makes a run try its next model when retries did not help.
DEFAULT_FALLBACK_ON: tuple[type[BaseException], ...] = (
    OverloadedError,
    RateLimitError,
    ProviderTimeoutError,
    ProviderConnectionError,
    NotFoundError,
)


def fallback_setting(value: Any) -> tuple[type[BaseException], ...]:
    if value is None:
        return DEFAULT_FALLBACK_ON
    items = (value,) if isinstance(value, type) else tuple(value)
    if not all(isinstance(c, type) and issubclass(c, BaseException) for c in items):
        raise OptionError(f"fallback_on must be exception classes, got {value!r}")
    return items


def tool_execution_setting(value: Any) -> bool:
    """``tool_execution=``: True for ``"manual"`` (the caller runs the tools)."""
    if value is None or value == "auto":
        return False
    if value == "manual":
        return True
    raise OptionError(f"tool_execution must be 'auto' or 'manual', got {value!r}")


def _stream_retry(value: Any) -> bool:
    """``stream_retry=``: None (a failed stream the caller saw ends the run) or "restart"."""
    if value is None or value == "restart":
        return value is not None
    raise OptionError(f'stream_retry must be "restart" or None, got {value!r}')


def deadline_setting(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise OptionError(f"deadline must be a number of seconds > 0, got {value!r}")
    return float(value)
