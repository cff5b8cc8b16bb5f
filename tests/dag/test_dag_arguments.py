"""How an agentic call's arguments are recorded: by name, as ``Signature.bind`` binds them."""

from __future__ import annotations

import contextlib
import inspect
from typing import Any

import pytest
from llmport import Session, agentic_function


def plain(a: Any, b: Any, c: Any = 3, d: Any = 4) -> None:
    """Parameters that are all positional-or-keyword (bound without ``bind``)."""


def mixed(a: Any, /, b: Any, *rest: Any, c: Any = 3, **more: Any) -> None:
    """Every kind of parameter (bound by ``bind``)."""


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((1, 2), {}),
    ((1, 2, 5), {}),
    ((1, 2, 5, 6), {}),
    ((1,), {"b": 2}),
    ((), {"b": 2, "a": 1}),
    ((1, 2), {"d": 6}),
    ((), {"d": 6, "b": 2, "a": 1, "c": 5}),
    ((1,), {"b": 2, "x": 9}),  # unknown keyword: the call fails, what was passed is kept
    ((1, 2), {"a": 1}),  # repeated: fails
    ((1, 2, 3, 4, 5), {}),  # too many: fails
    ((1,), {"c": 5}),  # b missing: fails
    ((), {}),  # all required missing: fails
]


def _expected(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except TypeError:
        passed = {f"arg{i}": v for i, v in enumerate(args)}
        passed.update(kwargs)
        return passed
    out: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        if name == "more":
            out.update(value)
        else:
            out[name] = list(value) if isinstance(value, tuple) else value
    return out


@pytest.mark.parametrize("func", [plain, mixed], ids=["plain", "mixed"])
@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_arguments_are_recorded_as_bind_binds_them(
    func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    recorded = agentic_function(func)
    # A wrong call raises; it is recorded as a failed node all the same.
    with Session() as session, contextlib.suppress(TypeError):
        recorded(*args, **kwargs)
    (node,) = session.nodes()
    assert node.data["arguments"] == _expected(func, args, kwargs)
    assert list(node.data["arguments"]) == list(_expected(func, args, kwargs))


def test_a_method_is_recorded_without_self() -> None:
    class Agent:
        @agentic_function
        def act(self, goal: str, tries: int = 1) -> str:
            return goal

    with Session() as session:
        Agent().act("ship", tries=2)
    assert session.nodes()[0].data["arguments"] == {"goal": "ship", "tries": 2}


def test_plain_parameters_are_bound_once_per_function_not_by_bind_per_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorded = agentic_function(plain)  # the signature is read here, once
    binds: list[object] = []
    real = inspect.Signature.bind

    def spy(self: inspect.Signature, *args: Any, **kwargs: Any) -> inspect.BoundArguments:
        binds.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(inspect.Signature, "bind", spy)
    with Session() as session:
        for i in range(3):
            recorded(i, b=2)
    assert [n.data["arguments"] for n in session.nodes()] == [{"a": i, "b": 2} for i in range(3)]
    assert binds == []
