"""llmport's ``@dataclass`` (``llmport.slotted``) behaves as ``dataclasses.dataclass``.

Each case defines one class body twice, once with each decorator, and compares
what a caller can observe: signature, repr, equality, hash, the frozen guards,
pickling and copying, ``dataclasses.fields``/``replace``/``asdict``. The last
tests check every dataclass llmport defines against a twin the stdlib builds
from the same fields, and that importing llmport leaves their costly parts
(``__init__``, the stdlib's field records) unmade until first use.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import json
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import llmport
import pytest
from llmport import slotted

Decorator = Callable[..., Any]
BOTH = pytest.mark.parametrize(
    "make", [dataclasses.dataclass, slotted.dataclass], ids=["stdlib", "llmport"]
)


def _pair(build: Callable[[Decorator], type]) -> tuple[type, type]:
    return build(dataclasses.dataclass), build(slotted.dataclass)


def _point(make: Decorator) -> type:
    @make(slots=True, frozen=True)
    class Point:
        """A frozen point with every kind of default."""

        x: int
        y: int = 0
        tags: list[str] = dataclasses.field(default_factory=list)
        note: str = dataclasses.field(default="", repr=False, compare=False)
        scale: ClassVar[int] = 10

    return Point


def _bag(make: Decorator) -> type:
    @make(slots=True)
    class Bag:
        """A mutable bag with a __post_init__."""

        items: dict[str, int] = dataclasses.field(default_factory=dict)
        size: int = -1

        def __post_init__(self) -> None:
            self.size = len(self.items)

    return Bag


def _checked(make: Decorator) -> type:
    @make(slots=True, frozen=True)
    class Checked:
        """An InitVar handed to __post_init__."""

        name: str
        upper: dataclasses.InitVar[bool] = False

        def __post_init__(self, upper: bool) -> None:
            if upper:
                object.__setattr__(self, "name", self.name.upper())

    return Checked


def _plain(make: Decorator, **params: bool) -> type:
    @make(slots=True, **params)
    class Plain:
        """Two fields, the decorator's parameters varied."""

        a: int
        b: str = "b"

    return Plain


def _observed(cls: type, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """What a caller sees of ``cls`` and one instance of it, with its class name blanked out."""
    obj = cls(*args, **kwargs)
    twin = cls(*args, **kwargs)
    seen: dict[str, Any] = {
        "signature": str(inspect.signature(cls)),
        "init annotations": cls.__init__.__annotations__,
        "repr": repr(obj),
        "equal": obj == twin,
        "not equal": obj != twin,
        "hashable": cls.__hash__ is not None,
        "hash": "identity" if cls.__hash__ is object.__hash__ else _attempt(hash, obj),
        "fields": [
            (f.name, f.type, f.default, f.init, f.repr, f.compare, f.hash)
            for f in dataclasses.fields(cls)
        ],
        "params": repr(cls.__dataclass_params__),  # type: ignore[attr-defined]
        "slots": cls.__slots__,  # type: ignore[attr-defined]
        "match args": cls.__match_args__,  # type: ignore[attr-defined]
        "asdict": dataclasses.asdict(obj),
        "copied": repr(copy.copy(obj)),
        "deep-copied": repr(copy.deepcopy(obj)),
        "replaced": repr(dataclasses.replace(obj)),
        "has a dict": hasattr(obj, "__dict__"),
        "doc": cls.__doc__,
    }
    if cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        for attempt in (
            lambda: setattr(obj, cls.__slots__[0], 1),
            lambda: delattr(obj, cls.__slots__[0]),
        ):  # type: ignore[attr-defined]
            with pytest.raises(dataclasses.FrozenInstanceError) as raised:
                attempt()
            seen.setdefault("frozen errors", []).append(str(raised.value))
    if isinstance(seen["hash"], int) and seen["equal"]:
        seen["hash equals twin's"] = hash(obj) == hash(twin)
    return seen


def _attempt(fn: Callable[[Any], Any], value: Any) -> Any:
    try:
        return fn(value)
    except Exception as error:
        return f"{type(error).__name__}: {error}"


# Module-level twins for pickling (it finds a class by its module and name).
StdPoint, OurPoint = _pair(_point)
StdBag, OurBag = _pair(_bag)
for _made, _name in (
    (StdPoint, "StdPoint"),
    (OurPoint, "OurPoint"),
    (StdBag, "StdBag"),
    (OurBag, "OurBag"),
):
    _made.__qualname__ = _name


@pytest.mark.parametrize(
    ("stdlib", "ours"), [(StdPoint, OurPoint), (StdBag, OurBag)], ids=["frozen", "mutable"]
)
def test_pickling_round_trips_as_with_the_stdlib(stdlib: type, ours: type) -> None:
    for cls in (stdlib, ours):
        obj = cls(3) if cls.__dataclass_params__.frozen else cls({"a": 1})  # type: ignore[attr-defined]
        back = pickle.loads(pickle.dumps(obj))
        assert back == obj and back is not obj
        assert dataclasses.asdict(back) == dataclasses.asdict(obj)


@pytest.mark.parametrize(
    ("build", "args", "kwargs"),
    [
        (_point, (1,), {"tags": ["a"], "note": "n"}),
        (_bag, (), {"items": {"a": 1}}),
        (_checked, ("ada",), {"upper": True}),
        (lambda make: _plain(make), (1,), {}),
        (lambda make: _plain(make, frozen=True), (1, "x"), {}),
        (lambda make: _plain(make, frozen=True, eq=False), (1,), {}),
        (lambda make: _plain(make, repr=False), (1,), {}),
        (lambda make: _plain(make, eq=False), (1,), {}),
    ],
    ids=[
        "frozen-defaults",
        "post-init",
        "initvar",
        "mutable",
        "frozen",
        "frozen-no-eq",
        "no-repr",
        "no-eq",
    ],
)
def test_a_class_behaves_as_the_stdlib_makes_it(
    build: Callable[[Decorator], type], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    stdlib, ours = _pair(build)
    seen_stdlib, seen_ours = _observed(stdlib, *args, **kwargs), _observed(ours, *args, **kwargs)
    if not ours.__dataclass_params__.repr:  # type: ignore[attr-defined]
        # object.__repr__ shows an address: compare its shape only.
        for key in ("repr", "copied", "deep-copied", "replaced"):
            seen_stdlib[key] = seen_stdlib[key].split(" object at ")[0]
            seen_ours[key] = seen_ours[key].split(" object at ")[0]
    assert seen_ours == seen_stdlib


def test_the_plain_classes_take_the_cheap_path() -> None:
    # The comparisons above would hold for the stdlib's own classes too: check
    # that ours are built here, their __init__ compiled on first use.
    ours = _point(slotted.dataclass)
    assert isinstance(vars(ours)["__init__"], slotted._OnFirstRead)
    assert type(vars(ours)["__dataclass_fields__"]).__name__ == "_OnFirstRead"
    ours(1)
    assert inspect.isfunction(vars(ours)["__init__"])


def _tagged(make: Decorator, field: Callable[..., Any], **params: bool) -> type:
    @make(slots=True, **params)
    class Tagged:
        """Every field() parameter llmport's classes use, and metadata."""

        x: int
        tags: list[str] = field(default_factory=list)
        note: str = field(default="", repr=False, compare=False)
        seconds: float = field(default=0.0, hash=False, metadata={"unit": "s"})

    return Tagged


@pytest.mark.parametrize("params", [{"frozen": True}, {}, {"order": True}])
def test_llmport_field_stands_for_dataclasses_field(params: dict[str, bool]) -> None:
    # order=True takes the stdlib's path: the field() values become dataclasses.Field.
    stdlib = _tagged(dataclasses.dataclass, dataclasses.field, **params)
    ours = _tagged(slotted.dataclass, slotted.field, **params)
    assert _observed(ours, 1, tags=["a"]) == _observed(stdlib, 1, tags=["a"])
    metadata = [dict(f.metadata) for f in dataclasses.fields(ours)]
    assert metadata == [dict(f.metadata) for f in dataclasses.fields(stdlib)]


def _lazy_twin(make: Decorator, lazy: bool, **params: bool) -> type:
    @make(slots=True, **params)
    class Run:
        """A run whose lists are made on first read (lazy_field), or by __init__."""

        name: str = ""
        calls: list[str] = (
            slotted.lazy_field(list) if lazy else dataclasses.field(default_factory=list)
        )
        settled: list[str] = (
            slotted.lazy_field(list, repr=False)
            if lazy
            else dataclasses.field(default_factory=list, repr=False)
        )

    return Run


@pytest.mark.parametrize("params", [{}, {"frozen": True}, {"order": True}])
def test_lazy_field_behaves_as_a_default_factory(params: dict[str, bool]) -> None:
    # frozen: __init__ makes the value; order=True: the stdlib's path, where it is eager too.
    stdlib = _lazy_twin(dataclasses.dataclass, False, **params)
    ours = _lazy_twin(slotted.dataclass, True, **params)
    for args, kwargs in (((), {}), (("a",), {"calls": ["c"], "settled": ["s"]})):
        assert _observed(ours, *args, **kwargs) == _observed(stdlib, *args, **kwargs)


OurLazy = _lazy_twin(slotted.dataclass, True)
OurLazy.__qualname__ = "OurLazy"


def test_lazy_field_pickles_read_or_not() -> None:
    unread, read = OurLazy("a"), OurLazy("b")
    read.calls.append("c")
    for run in (unread, read):
        back = pickle.loads(pickle.dumps(run))
        assert back == run and back.calls == run.calls


def test_lazy_field_holds_nothing_until_read() -> None:
    run = _lazy_twin(slotted.dataclass, True)("a")
    given = ["c"]
    assert run.__class__(calls=given).calls is given
    with pytest.raises(AttributeError):  # the slot itself is unset: nothing made yet
        object.__getattribute__(run, "calls")
    first = run.calls
    assert first == [] and run.calls is first  # made once, then kept
    first.append("x")
    assert run.calls == ["x"]
    assert run != run.__class__("a")
    with pytest.raises(AttributeError, match="'Run' object has no attribute 'nothing'"):
        run.nothing  # noqa: B018


def test_llmport_field_is_refused_by_the_stdlib_decorator() -> None:
    # Only llmport's decorator reads it: elsewhere it must fail, not become a default.
    with pytest.raises(ValueError, match="mutable default"):

        @dataclasses.dataclass
        class Wrong:
            """slotted.field under dataclasses.dataclass."""

            tags: list[str] = slotted.field(default_factory=list)  # noqa: RUF009


@pytest.mark.parametrize("field", [dataclasses.field, slotted.field], ids=["stdlib", "llmport"])
def test_llmport_field_refuses_what_dataclasses_field_refuses(field: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match="cannot specify both default and default_factory"):
        field(default=1, default_factory=list)


@BOTH
def test_the_stdlib_errors_are_raised(make: Decorator) -> None:
    with pytest.raises(ValueError, match="mutable default"):

        @make(slots=True)
        class Mutable:
            """A list as a default."""

            items: list[int] = []

    with pytest.raises(TypeError, match="non-default argument"):

        @make(slots=True)
        class Order:
            """A required field after a defaulted one."""

            a: int = 0
            b: int  # type: ignore[misc]


@BOTH
def test_a_self_referencing_repr_ends(make: Decorator) -> None:
    @make(slots=True)
    class Node:
        """A node that can hold itself."""

        child: Any = None

    node = Node()
    node.child = node
    assert repr(node) == "test_a_self_referencing_repr_ends.<locals>.Node(child=...)"


@BOTH
def test_a_subclass_of_a_frozen_class_is_frozen_too(make: Decorator) -> None:
    @make(slots=True, frozen=True)
    class Base:
        """A frozen base."""

        a: int

    class Child(Base):
        """A plain subclass."""

    child = Child(1)
    assert child == Child(1) and child != Base(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        child.a = 2  # type: ignore[misc]


def _llmport_dataclasses() -> list[type]:
    """Every class made with ``llmport.slotted.dataclass`` in llmport's own modules."""
    root = Path(llmport.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        if "slotted import dataclass" not in path.read_text(encoding="utf-8"):
            continue
        name = ".".join(("llmport", *path.relative_to(root).with_suffix("").parts))
        module = importlib.import_module(name)
        found += [
            cls
            for cls in vars(module).values()
            if isinstance(cls, type) and cls.__module__ == name and dataclasses.is_dataclass(cls)
        ]
    return found


def _stdlib_twin(cls: type) -> type:
    """The class ``dataclasses.dataclass`` makes from ``cls``'s fields, methods and parameters."""
    made_here = {
        "__init__",
        "__repr__",
        "__eq__",
        "__hash__",
        "__setattr__",
        "__delattr__",
        "__getstate__",
    }
    made_here |= {
        "__setstate__",
        "__slots__",
        "__match_args__",
        "__dataclass_fields__",
        "__dataclass_params__",
    }
    made_here |= {"__dict__", "__weakref__"}
    body = {key: value for key, value in vars(cls).items() if key not in made_here}
    if "__init__" in vars(cls) and cls.__init__.__code__.co_filename != "<string>":
        body["__init__"] = cls.__init__  # the class's own
    for f in dataclasses.fields(cls):
        body.pop(f.name, None)  # a slot
        body[f.name] = dataclasses.field(
            default=f.default,
            default_factory=f.default_factory,
            repr=f.repr,
            hash=f.hash,
            compare=f.compare,
            metadata=dict(f.metadata) or None,
        )
    for name, pseudo in cls.__dataclass_fields__.items():  # type: ignore[attr-defined]
        if name not in body and pseudo.default is not dataclasses.MISSING:
            body[name] = pseudo.default  # an InitVar's or ClassVar's value
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    twin = type(cls.__name__, cls.__bases__, body)
    twin.__qualname__ = cls.__qualname__
    return dataclasses.dataclass(
        twin, slots=True, frozen=params.frozen, eq=params.eq, repr=params.repr
    )  # type: ignore[no-any-return]


LLMPORT_DATACLASSES = _llmport_dataclasses()


def test_llmport_defines_its_dataclasses_here() -> None:
    assert len(LLMPORT_DATACLASSES) > 50


@pytest.mark.parametrize(
    "cls", LLMPORT_DATACLASSES, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}"
)
def test_each_llmport_dataclass_matches_its_stdlib_twin(cls: type) -> None:
    twin = _stdlib_twin(cls)
    assert str(inspect.signature(cls)) == str(inspect.signature(twin))
    assert cls.__init__.__annotations__ == twin.__init__.__annotations__
    assert [repr(f) for f in dataclasses.fields(cls)] == [repr(f) for f in dataclasses.fields(twin)]
    assert cls.__dataclass_fields__.keys() == twin.__dataclass_fields__.keys()  # type: ignore[attr-defined]
    assert repr(cls.__dataclass_params__) == repr(twin.__dataclass_params__)  # type: ignore[attr-defined]
    assert (cls.__slots__, cls.__match_args__) == (twin.__slots__, twin.__match_args__)  # type: ignore[attr-defined]
    assert (cls.__hash__ is None, cls.__hash__ is object.__hash__) == (
        twin.__hash__ is None,
        twin.__hash__ is object.__hash__,
    )


_PROBE = """
import json
from llmport import Runtime, tool, agentic_function
import sys
made = [
    f"{cls.__module__}.{cls.__qualname__}"
    for module in list(sys.modules.values())
    if getattr(module, "__name__", "").startswith("llmport")
    for cls in vars(module).values()
    if isinstance(cls, type) and cls.__module__ == module.__name__
    and "__dataclass_fields__" in vars(cls)
    and not type(vars(cls)["__dataclass_fields__"]).__name__ == "_OnFirstRead"
]
print(json.dumps(made))
"""


def test_a_script_import_makes_no_dataclass_records_or_init() -> None:
    # The stdlib's processing compiled six methods per class at import; what is
    # left of it (the records and __init__) waits for the class's first use.
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], check=True, capture_output=True, text=True
    ).stdout
    assert json.loads(out) == []
