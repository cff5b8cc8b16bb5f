"""What the model is told when asked to repair a function, and the shape of its answer."""

from __future__ import annotations

import json
import traceback
from collections.abc import Sequence
from typing import Any

from ..observe.redaction import redact
from ..sessions.dag import Node
from ..slotted import dataclass

__all__ = [
    "RECENT_CALLS",
    "SYSTEM",
    "Proposal",
    "describe_failure",
    "describe_nodes",
    "fix_prompt",
    "repair_prompt",
]

#: How many recent calls of the function the model sees, and how long a value may get.
RECENT_CALLS = 3
MAX_VALUE = 1500
#: The last lines of a traceback kept (the frames nearest the failure).
TRACEBACK_LINES = 30

SYSTEM = (
    "You repair Python functions decorated with @agentic_function (llmport). "
    "Answer with the complete new source of the one function, decorator and docstring "
    "included, and a short rationale. Keep its name and signature exactly, keep the "
    "@agentic_function decorator, add no import the caller did not allow, and write "
    "nothing at the top level besides the function."
)


@dataclass(slots=True)
class Proposal:
    """The model's answer: the function's complete new source and why it changed."""

    source: str
    rationale: str


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_VALUE else text[:MAX_VALUE] + "..."


def describe_failure(error: BaseException | None) -> str:
    """The exception (its message holds ``ExecFailed``'s attempt report) and its last frames."""
    if error is None:
        return "(no exception was given: see the recent calls below)"
    lines = traceback.format_exception(error)
    text = "".join(lines).splitlines()[-TRACEBACK_LINES:]
    return redact("\n".join(text))


def describe_nodes(calls: Sequence[Node]) -> str:
    """The function's recent calls from the session DAG, oldest first, with their execs."""
    if not calls:
        return "(no recorded calls in the session)"
    parts = []
    for call in calls:
        outcome = call.result or {}
        shown = outcome.get("error") if call.status == "error" else outcome.get("result")
        parts.append(
            f"- {call.id} {call.name}({_short(call.data.get('arguments', {}))}) "
            f"{call.status}: {_short(shown)}"
        )
        for child in call.children or ():
            if child.kind != "llm":
                continue
            answer = child.result or {}
            said = answer.get("error") if child.status == "error" else answer.get("reply")
            parts.append(f"    - exec {child.id} {child.name} {child.status}: {_short(said)}")
    return redact("\n".join(parts))


def fix_prompt(
    *,
    source: str,
    doc: str | None,
    failure: str,
    calls: str,
    instruction: str,
) -> str:
    """The user message asking for a repair."""
    return (
        f"Repair this function.\n\nSource:\n```python\n{source}```\n\n"
        f"Docstring:\n{doc or '(none)'}\n\n"
        f"Failure:\n{failure}\n\n"
        f"Recent calls (session DAG):\n{calls}\n\n"
        f"Instruction:\n{instruction}\n"
    )


def repair_prompt(reason: str) -> str:
    """The follow-up message after a proposal failed a check (the one repair round)."""
    return (
        f"Your proposal was rejected: {reason}. Answer again with the complete corrected "
        "source of the function and a rationale, following every rule."
    )
