"""The parameters of a call, declared once, and the checks of their values.

:class:`CallParams` is the one declaration of what ``exec``, ``async_exec``,
``run``, ``arun``, ``stream`` and ``astream`` take besides ``content``
(``**params: Unpack[CallParams]``), so readers, mypy and IDEs see every
parameter. Options (``temperature=0.2``) travel in the same keyword
arguments; :func:`split_call` separates them and :func:`check_options`
checks their values once, in the core, before any plugin sees them.

Unknown option names are errors on every provider: a provider declares the
options it models (``Provider.options``); ``vendor={"openai": {...}}`` is the
one way to send a field llmport does not model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypedDict

from ..errors import OptionError
from ..messages.types import EFFORTS, CacheSettings, Reasoning
from ..observe.tracing import Trace

__all__ = [
    "CALL_PARAMS",
    "LOOP_OPTIONS",
    "REQUEST_OPTIONS",
    "SERVER_STATE_OPTIONS",
    "STANDARD_OPTIONS",
    "CallOptions",
    "CallParams",
    "SubmitParams",
    "cache_setting",
    "check_options",
    "check_vendor_fields",
    "output_modalities_setting",
    "reasoning_setting",
    "split_call",
    "trace_setting",
    "unknown_option_error",
]


class CallOptions(TypedDict, total=False):
    """Every named parameter of a call except ``response_format`` (see :class:`CallParams`)."""

    context: str | None
    model: str | Sequence[str] | None
    tools: Iterable[Any] | None
    toolset: Any
    tools_source: str | None
    tools_allow: str | Sequence[str] | None
    tools_deny: str | Sequence[str] | None
    tool_choice: Literal["auto", "required", "none"] | dict[str, str]
    parallel_tool_calls: bool
    max_iterations: int
    choices: Any
    vendor: Mapping[str, Mapping[str, Any]] | None
    # Options, checked once by the core, sent to the provider.
    temperature: float | None
    top_p: float | None
    max_tokens: int | None
    timeout: float | None
    stop: str | Sequence[str] | None
    seed: int | None
    reasoning_effort: str | int | None
    reasoning: Any
    cache: Any
    output_mode: Literal["native", "tool", "prompted"] | None
    output_modalities: Sequence[Literal["text", "image", "audio"]] | None
    # Server-side conversation state (OpenAI Responses; refused typed elsewhere).
    previous_response_id: str | None
    conversation: str | None
    # Options the runtime consumes itself (never sent).
    deps: Any
    system: Any
    history: Sequence[Any] | None
    budget: Any
    context_policy: Any
    deadline: float | None
    fallback_on: Any
    approver: Callable[..., Any] | None
    tool_timeout: float | None
    max_tool_errors: int
    max_repeated_calls: int | None
    tool_execution: Literal["auto", "manual"]
    stream_retry: Literal["restart"] | None  # opt in: a stream already shown may restart
    trace: Mapping[str, Any] | None  # tracing: {"workflow", "group_id", "metadata"}


class CallParams(CallOptions, total=False):
    """The named parameters of every call: ``exec(content, **params)``.

    Declared once for ``exec``, ``async_exec``, ``run``, ``arun``, ``stream``
    and ``astream``. Provider-specific options a plugin models (``top_k``)
    are accepted at run time too; fields no plugin models go through
    ``vendor=``.
    """

    response_format: Any


class SubmitParams(CallParams, total=False):
    """``rt.submit``'s parameters: a call's, and ``stream=True`` to stream the run from now."""

    stream: bool


#: Defaults of :class:`CallParams` (what a call gets for a parameter it does not give).
CALL_DEFAULTS: dict[str, Any] = {
    "context": None,
    "response_format": None,
    "model": None,
    "tools": None,
    "toolset": None,
    "tools_source": None,
    "tools_allow": None,
    "tools_deny": None,
    "tool_choice": "auto",
    "parallel_tool_calls": True,
    "max_iterations": 20,
    "choices": None,
    "vendor": None,
}
CALL_PARAMS = frozenset(CALL_DEFAULTS)

#: Options every plugin must honour or reject explicitly.
STANDARD_OPTIONS = frozenset({"temperature", "max_tokens", "timeout", "stop", "seed", "top_p"})
#: Options the core normalises into :class:`~llmport.messages.types.Request` fields
#: (``reasoning``, ``cache``) or acts on itself (``output_mode``).
REQUEST_OPTIONS = frozenset({"reasoning", "reasoning_effort", "cache", "output_mode"})
#: Options the runtime consumes itself; never sent to a provider.
LOOP_OPTIONS = frozenset(
    {
        "deps",
        "system",
        "history",
        "budget",
        "context_policy",
        "deadline",
        "fallback_on",
        "approver",
        "tool_timeout",
        "max_tool_errors",
        "max_repeated_calls",
        "tool_execution",
        "stream_retry",
    }
    | {"trace"}  # tracing (llmport.observe.tracing.Trace)
)
#: Options naming conversation state kept on the vendor's server: only a
#: provider with ``server_state`` takes them; every other one refuses them typed.
SERVER_STATE_OPTIONS = frozenset({"previous_response_id", "conversation"})
REASONING_EFFORTS = EFFORTS
OUTPUT_MODES = ("native", "tool", "prompted")


def split_call(kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(params, options)``: the named call parameters (defaults filled) and the rest."""
    params = dict(CALL_DEFAULTS)
    options: dict[str, Any] = {}
    for key, value in kwargs.items():
        if key in CALL_DEFAULTS:
            params[key] = value
        else:
            options[key] = value
    return params, options


def unknown_option_error(
    unknown: Iterable[str], known: Iterable[str], where: str = "option"
) -> OptionError:
    """An :class:`OptionError` naming each unknown key, with a close match when there is one."""
    import difflib  # at the first use, not at import (start-up)

    names = sorted(unknown)
    choices = sorted(set(known))
    hints = []
    for name in names:
        close = difflib.get_close_matches(name, choices, n=1, cutoff=0.75)
        hints.append(f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name))
    plural = "s" if len(names) > 1 else ""
    return OptionError(
        f"unknown {where}{plural} {', '.join(hints)}; "
        "send fields llmport does not model with vendor={'<provider>': {...}}"
    )


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise OptionError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionError(f"{name} must be an integer, got {value!r}")
    return value


def reasoning_setting(reasoning: Any, effort: Any = None) -> Reasoning | None:
    """Normalise ``reasoning=`` (and its alias ``reasoning_effort=``) into a :class:`Reasoning`.

    ``"high"`` is an effort, an integer a thinking-token budget, a dict or a
    :class:`Reasoning` both; ``False`` / ``"none"`` turns reasoning off.
    """
    if reasoning is not None and effort is not None:
        raise OptionError("give reasoning= or its alias reasoning_effort=, not both")
    value = reasoning if reasoning is not None else effort
    name = "reasoning" if reasoning is not None else "reasoning_effort"
    if value is None:
        return None
    if value is False:
        return Reasoning(effort="none")
    if isinstance(value, Mapping):
        unknown = set(value) - {"effort", "budget_tokens", "summary"}
        if unknown:
            raise unknown_option_error(
                unknown, ("effort", "budget_tokens", "summary"), f"{name} field"
            )
        value = Reasoning(**value)
    if isinstance(value, str):
        value = Reasoning(effort=value)
    elif isinstance(value, int) and not isinstance(value, bool):
        value = Reasoning(budget_tokens=value)
    if not isinstance(value, Reasoning):
        raise OptionError(
            f"{name} must be an effort ({', '.join(EFFORTS)}), a token budget, a dict or "
            f"Reasoning(...), got {value!r}"
        )
    if value.effort is not None and value.effort not in EFFORTS:
        raise OptionError(
            f"{name} must be one of {', '.join(EFFORTS)} or a token budget, got {value.effort!r}"
        )
    budget = value.budget_tokens
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, int) or budget < -1
    ):
        raise OptionError(f"{name} budget_tokens must be an integer >= -1, got {budget!r}")
    summary = value.summary
    if summary is True:
        value = Reasoning(value.effort, value.budget_tokens, "auto")
    elif summary not in (None, False, "auto", "concise", "detailed"):
        raise OptionError(
            f"{name} summary must be 'auto', 'concise', 'detailed' or a bool, got {summary!r}"
        )
    return value


#: What ``output_modalities=`` may name.
OUTPUT_MODALITIES = ("text", "image", "audio")


def output_modalities_setting(value: Any) -> tuple[str, ...]:
    """``output_modalities=["text", "image"]`` checked: known names, once each, in order."""
    if value is None:
        return ()
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not names:
        raise OptionError(
            f"output_modalities must be a non-empty list of {', '.join(OUTPUT_MODALITIES)}, "
            f"got {value!r}"
        )
    out: list[str] = []
    for name in names:
        if name not in OUTPUT_MODALITIES:
            raise OptionError(
                f"output_modalities: unknown modality {name!r} "
                f"(known: {', '.join(OUTPUT_MODALITIES)})"
            )
        if name not in out:
            out.append(name)
    return tuple(out)


_CACHE_FIELDS = ("ttl", "key", "retention")


def cache_setting(value: Any) -> CacheSettings | None:
    """Normalise ``cache=``: ``"auto"``/``True``, or a dict of ``ttl``, ``key``, ``retention``."""
    if value is None or value is False:
        return None
    if value is True or value == "auto":
        return CacheSettings(auto=True)
    if isinstance(value, Mapping):
        unknown = set(value) - {*_CACHE_FIELDS, "auto"}
        if unknown:
            raise unknown_option_error(unknown, (*_CACHE_FIELDS, "auto"), "cache field")
        for key in _CACHE_FIELDS:
            if value.get(key) is not None and not isinstance(value[key], str):
                raise OptionError(f"cache {key} must be a string, got {value[key]!r}")
        return CacheSettings(
            auto=bool(value.get("auto", "ttl" in value)),
            ttl=value.get("ttl"),
            key=value.get("key"),
            retention=value.get("retention"),
        )
    raise OptionError(f"cache must be 'auto', True or a dict (ttl, key, retention), got {value!r}")


def trace_setting(value: Any) -> Trace | None:
    """``trace=``: a Trace from itself, a dict with its keys, or None."""
    if value is None or isinstance(value, Trace):
        return value
    if not isinstance(value, Mapping):
        raise OptionError(
            "trace must be a dict like {'workflow': ..., 'group_id': ..., 'metadata': {...}}"
        )
    unknown = set(value) - {"workflow", "group_id", "metadata"}
    if unknown:
        raise OptionError(
            f"trace: unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
            "known: workflow, group_id, metadata"
        )
    metadata = value.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise OptionError("trace['metadata'] must be a dict")
    for key in ("workflow", "group_id"):
        if value.get(key) is not None and not isinstance(value[key], str):
            raise OptionError(f"trace[{key!r}] must be a string")
    return Trace(value.get("workflow"), value.get("group_id"), dict(metadata))


def check_options(options: Mapping[str, Any]) -> None:
    """Check the values of the standard options; raise :class:`OptionError`.

    Ranges are the union of what the vendors take (temperature 0-2); a
    plugin narrows them where its vendor does.
    """
    for name, value in options.items():
        if value is None:
            continue
        if name == "temperature":
            if not 0.0 <= _number(name, value) <= 2.0:
                raise OptionError(f"temperature must be between 0 and 2, got {value!r}")
        elif name == "top_p":
            if not 0.0 <= _number(name, value) <= 1.0:
                raise OptionError(f"top_p must be between 0 and 1, got {value!r}")
        elif name == "max_tokens":
            if _integer(name, value) < 1:
                raise OptionError(f"max_tokens must be >= 1, got {value!r}")
        elif name == "timeout":
            if not _number(name, value) > 0:
                raise OptionError(f"timeout must be > 0 seconds, got {value!r}")
        elif name == "seed":
            _integer(name, value)
        elif name == "stop":
            stops = [value] if isinstance(value, str) else value
            if (
                not isinstance(stops, (list, tuple))
                or not stops
                or not all(isinstance(s, str) and s for s in stops)
            ):
                raise OptionError(
                    f"stop must be a non-empty string or a list of them, got {value!r}"
                )
        elif name == "output_mode" and value not in OUTPUT_MODES:
            raise OptionError(
                f"output_mode must be one of {', '.join(OUTPUT_MODES)}, got {value!r}"
            )
        elif name in SERVER_STATE_OPTIONS and not (isinstance(value, str) and value.strip()):
            raise OptionError(f"{name} must be a non-empty string id, got {value!r}")
    # OpenAI: "previous_response_id ... cannot be used in conjunction with conversation"
    # (API reference, Create a model response).
    if all(options.get(name) is not None for name in SERVER_STATE_OPTIONS):
        raise OptionError("give previous_response_id= or conversation=, not both")


def check_vendor_fields(vendor: Any, where: str = "vendor") -> dict[str, dict[str, Any]]:
    """Check ``vendor={"openai": {...}}``: a dict of provider names to JSON objects."""
    if vendor is None:
        return {}
    if not isinstance(vendor, Mapping):
        raise OptionError(f"{where} must be a dict of provider name to a dict of fields")
    out: dict[str, dict[str, Any]] = {}
    for name, fields in vendor.items():
        if not isinstance(name, str) or not isinstance(fields, Mapping):
            raise OptionError(
                f"{where}[{name!r}] must be a dict of JSON fields, got {type(fields).__name__}"
            )
        import json  # here, not at import: json costs ~2 ms of a script's start-up

        try:
            json.dumps(fields)
        except (TypeError, ValueError) as exc:
            raise OptionError(f"{where}[{name!r}] is not JSON-serialisable: {exc}") from None
        out[name] = dict(fields)
    return out
