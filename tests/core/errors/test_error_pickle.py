"""Every llmport error survives pickling whole: class, message and attributes.

A durable run records a failed step by pickling its error, a worker pool
sends errors between processes; ``Exception``'s own pickling calls the class
with ``args`` alone, which errors with their own ``__init__`` do not take.
"""

from __future__ import annotations

import inspect
import pickle
from typing import Any

import llmport.errors as errors
import pytest
from llmport.errors import (
    BudgetExceeded,
    ContentError,
    LlmportError,
    RunTimeout,
    StreamInterrupted,
    UnsupportedFeatureError,
)

#: Errors a durable run's steps raise, built as the core builds them.
RAISED = [
    RunTimeout(1.5, late="send"),
    ContentError(2, "no such file"),
    BudgetExceeded("tokens", 1200, 1000),
    UnsupportedFeatureError("openai", "gpt-4o", "tool_search", "no tool search on Chat"),
    StreamInterrupted(ConnectionResetError("reset"), None, provider="anthropic"),
]
#: Values tried, in order, for a constructor's required parameters.
GUESSES: tuple[Any, ...] = ("x", 1, 0.5)


def built(cls: type[LlmportError]) -> LlmportError | None:
    """An instance of ``cls`` from guessed arguments (None: no guess fits)."""
    try:
        signature = inspect.signature(cls)
    except ValueError:  # Exception's own __init__: takes the message
        return cls("x")
    params = [
        p
        for p in signature.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    for guess in GUESSES:
        try:
            return cls(*[guess] * len(params))
        except Exception:
            continue
    return None


def every_error_class() -> list[type[LlmportError]]:
    return [
        obj
        for obj in vars(errors).values()
        if isinstance(obj, type) and issubclass(obj, LlmportError)
    ]


def same(a: LlmportError, b: LlmportError) -> bool:
    return type(a) is type(b) and str(a) == str(b) and a.args == b.args and (
        {k: repr(v) for k, v in vars(a).items()} == {k: repr(v) for k, v in vars(b).items()}
    )


@pytest.mark.parametrize("error", RAISED, ids=lambda e: type(e).__name__)
def test_a_raised_error_comes_back_whole(error: LlmportError) -> None:
    back = pickle.loads(pickle.dumps(error))
    assert same(error, back)
    assert isinstance(back, LlmportError)


def test_every_error_class_round_trips() -> None:
    classes = every_error_class()
    instances = {cls: built(cls) for cls in classes}
    made = {cls: e for cls, e in instances.items() if e is not None}
    assert len(made) >= 0.9 * len(classes), sorted(c.__name__ for c in classes if c not in made)
    broken = [cls.__name__ for cls, e in made.items() if not same(e, pickle.loads(pickle.dumps(e)))]
    assert broken == []


def test_exceptions_own_pickling_would_have_failed() -> None:
    # Why __reduce__ exists: Exception.__reduce__ calls the class with args alone.
    error = ContentError(2, "no such file")
    cls, args = Exception.__reduce__(error)[:2]
    with pytest.raises(TypeError):
        cls(*args)
