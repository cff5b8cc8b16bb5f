"""Decisions: make the model pick exactly one of ``choices``.

After the model finishes its turn (tools included), the runtime sends one
more request in which each choice is a tool and a tool call is forced
(``tool_choice="required"``, parallel calls off). Providers without native
tools get the same choice as a structured-output schema instead. Never by
prompt text alone.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any

from ..errors import DecisionError
from ..messages.types import Response, ResponseFormat, ToolSpec
from ..provider.wire import loads as strict_json
from ..schema.build import coerce, function_schema
from ..slotted import dataclass
from ..tools.tool import Tool
from .structured import strip_fences, validation_errors

PROMPT = (
    "Now decide. Pick exactly one of the available options by calling its tool "
    "once, with its arguments."
)


@dataclass(slots=True, frozen=True)
class Choice:
    name: str
    target: Any
    description: str
    parameters: dict[str, Any]
    context_param: str | None = None
    annotations: dict[str, Any] = field(default_factory=dict)

    @property
    def is_callable(self) -> bool:
        return callable(self.target)


class InvalidPick(Exception):
    """The model's pick was not valid; ``errors`` say why."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__("; ".join(errors))


def _name_for(value: Any, index: int) -> str:

    if isinstance(value, Tool):
        raw = value.name
    elif callable(value) and hasattr(value, "__name__"):
        raw = value.__name__
    elif isinstance(value, (str, int, float, bool)):
        raw = str(value)
    else:
        raw = f"choice_{index}"
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", raw).strip("_")[:64]
    return cleaned or f"choice_{index}"


def _choice(name: str, target: Any) -> Choice:

    if isinstance(target, Tool):  # a @tool works as a choice: same schema, same binding
        return Choice(
            name,
            target.fn,
            target.description or f"Choose {name}.",
            target.parameters,
            target.context_param,
            target.annotations,
        )
    if callable(target):
        found = function_schema(target)
        return Choice(
            name,
            target,
            found.description or f"Choose {name}.",
            found.parameters,
            found.context_param,
            found.annotations,
        )
    return Choice(
        name,
        target,
        f"Choose {name}: {target!r}"[:500],
        {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
    )


class Decision:
    """The prepared choices of one exec."""

    def __init__(self, choices: Mapping[str, Any] | Sequence[Any]) -> None:
        if isinstance(choices, Mapping):
            items = [(str(k), v) for k, v in choices.items()]
        elif isinstance(choices, (list, tuple)):
            items = [(_name_for(v, i), v) for i, v in enumerate(choices)]
        else:
            raise TypeError("choices must be a dict or a list")
        if not items:
            raise ValueError("choices is empty")
        names = [n for n, _ in items]
        if len(set(names)) != len(names):
            raise ValueError(f"choice names must be unique: {names}")
        self.choices: dict[str, Choice] = {n: _choice(n, v) for n, v in items}

    def prompt(self, via_tools: bool) -> str:
        """The instruction sent with the forced pick."""
        if via_tools:
            return PROMPT
        listing = "\n".join(f"- {c.name}: {c.description}" for c in self.choices.values())
        return (
            'Now decide. Reply with only a JSON object {"choice": <name>, "arguments": {...}} '
            "picking exactly one of these options:\n" + listing
        )

    def tool_specs(self) -> list[ToolSpec]:
        return [ToolSpec(c.name, c.description, c.parameters) for c in self.choices.values()]

    def response_format(self) -> ResponseFormat:
        options = [
            {
                "type": "object",
                "properties": {"choice": {"const": c.name}, "arguments": c.parameters},
                "required": ["choice", "arguments"],
                "additionalProperties": False,
            }
            for c in self.choices.values()
        ]
        return ResponseFormat({"anyOf": options}, name="decision", strict=False)

    def parse(self, response: Response, via_tools: bool) -> tuple[Choice, dict[str, Any]]:
        """The chosen choice and its arguments, or InvalidPick."""
        if via_tools:
            calls = response.tool_calls
            if len(calls) != 1:
                raise InvalidPick([f"expected exactly one choice tool call, got {len(calls)}"])
            name, args, raw = calls[0].name, calls[0].arguments, calls[0].raw_arguments
            if raw.strip() and not args and raw.strip() != "{}":
                raise InvalidPick([f"arguments are not a JSON object: {raw[:200]}"])
        else:
            try:
                data = strict_json(strip_fences(response.text))
            except json.JSONDecodeError as exc:
                raise InvalidPick([f"reply is not JSON: {exc.msg}"]) from exc
            if not isinstance(data, dict):
                raise InvalidPick(["reply is not a JSON object"])
            name, args = str(data.get("choice")), data.get("arguments") or {}
        choice = self.choices.get(name)
        if choice is None:
            raise InvalidPick([f"unknown choice {name!r}; choose one of {', '.join(self.choices)}"])
        if not isinstance(args, dict):
            raise InvalidPick([f"{name}: arguments must be a JSON object"])
        errors = validation_errors(choice.parameters, args)
        if errors:
            raise InvalidPick([f"{name}: {e}" for e in errors])

        try:  # into the declared types (dataclasses, enums...); a rejection is a bad pick too
            bound = {
                k: coerce(v, choice.annotations[k]) if k in choice.annotations else v
                for k, v in args.items()
            }
        except Exception as exc:
            raise InvalidPick([f"{name}: {type(exc).__name__}: {exc}"]) from exc
        return choice, bound

    @staticmethod
    def fail(errors: list[str]) -> DecisionError:
        return DecisionError("the model did not make a valid choice after a re-pick", errors)


def resolve_call(
    choice: Choice, args: dict[str, Any], ctx: Any
) -> tuple[Callable[..., Any] | None, dict[str, Any]]:
    """(function to call, kwargs) for a callable choice, (None, {}) for a value."""
    if not choice.is_callable:
        return None, {}
    kwargs = dict(args)  # already coerced by Decision.parse
    if choice.context_param:
        kwargs[choice.context_param] = ctx
    return choice.target, kwargs


def is_async_callable(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn)
