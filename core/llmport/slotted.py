"""Slotted dataclasses that are cheap to define: llmport's ``@dataclass``.

``dataclasses.dataclass`` compiles every method it writes (``__init__``,
``__repr__``, ``__eq__``, ``__hash__`` and, when frozen, ``__setattr__`` and
``__delattr__``) from generated source, each in its own ``exec``, and checks
every annotation against the module's names, each time the module is
imported: for llmport's ~60 dataclasses that was more than half of the time
``from llmport import Runtime`` takes.

This decorator defines the same class for a fraction of that. It reads the
class's fields from its annotations, makes the slotted class once, and gives
it shared functions parameterised by the field names for ``__repr__``,
``__eq__``, ``__hash__``, the frozen guards and pickling. What costs a
compile is made on first use: ``__init__`` (compiled from source like the
stdlib's, so its speed and its signature are the stdlib's) when the class is
first called or its ``__init__`` first read, and ``__dataclass_fields__`` /
``__dataclass_params__`` (made by ``dataclasses.dataclass`` itself, on a
throwaway twin of the class) when ``dataclasses.fields``, ``replace``,
``asdict`` or ``is_dataclass`` first looks. Behaviour is the standard
library's: the same repr, equality, hash values, ``FrozenInstanceError``
messages, signature and field objects (``tests/core/slotted`` checks every
llmport dataclass against its ``dataclasses.dataclass`` twin).

Only slotted classes take this path, and only plain ones: a class that uses
more (``order``, ``unsafe_hash``, ``kw_only`` or ``init=False`` fields,
a dataclass base, a metaclass, no docstring) is handed to
``dataclasses.dataclass`` unchanged. For type checkers this *is*
``dataclasses.dataclass``.

:func:`field` is ``dataclasses.field`` for llmport's classes (for type
checkers it *is* that): it keeps what it was given until the stdlib needs a
``dataclasses.Field``. This module imports ``dataclasses`` only then, because
``dataclasses`` imports ``inspect`` (with ``ast``, ``dis`` and ``tokenize``):
~14 ms of a script's start-up that no class definition needs.
"""

from __future__ import annotations

import reprlib
import sys
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple


class _Missing:
    """No default given (``dataclasses.MISSING`` until ``dataclasses`` is imported)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<MISSING>"


_MISSING: Any = _Missing()


class _Factory:
    """The default shown for a field with a ``default_factory``, as the stdlib shows it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


class _Field(NamedTuple):
    """What this module needs of one field, read from the class body."""

    name: str
    type: Any
    default: Any
    factory: Any
    repr: bool
    compare: bool
    hash: bool | None
    #: An ``InitVar``: an ``__init__`` parameter handed to ``__post_init__``, not stored.
    initvar: bool = False
    #: Made by its factory on first read, not by ``__init__`` (:func:`lazy_field`).
    lazy: bool = False


class _FieldSpec:
    """What :func:`field` was given (``dataclasses.Field``'s names), until the stdlib needs it.

    A plain slotted class, not a ``NamedTuple``: making one of those compiles code.
    Unhashable, so that ``dataclasses.dataclass`` given one directly refuses it as
    a mutable default instead of keeping it as the field's default.
    """

    __hash__ = None  # type: ignore[assignment]

    __slots__ = (
        "compare",
        "default",
        "default_factory",
        "hash",
        "init",
        "kw_only",
        "lazy",
        "metadata",
        "repr",
    )

    def __init__(
        self,
        default: Any,
        default_factory: Any,
        init: bool,
        repr: bool,
        hash: bool | None,
        compare: bool,
        metadata: Any,
        kw_only: Any,
        lazy: bool = False,
    ) -> None:
        self.lazy = lazy
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.hash = hash
        self.compare = compare
        self.metadata = metadata
        self.kw_only = kw_only

    def stdlib(self) -> Any:
        """The ``dataclasses.Field`` this stands for."""
        import dataclasses

        given = {name: getattr(self, name) for name in self.__slots__ if name != "lazy"}
        return dataclasses.field(**{k: v for k, v in given.items() if v is not _MISSING})


def _stdlib_values(namespace: dict[str, Any]) -> dict[str, Any]:
    """``namespace`` with each :func:`field` value as the ``dataclasses.Field`` it stands for."""
    return {
        key: value.stdlib() if isinstance(value, _FieldSpec) else value
        for key, value in namespace.items()
    }


def _is_stdlib_field(value: Any) -> bool:
    """Whether ``value`` is a ``dataclasses.Field`` (none can exist before the import)."""
    stdlib = sys.modules.get("dataclasses")
    return stdlib is not None and isinstance(value, stdlib.Field)


def _stdlib_field_values(value: Any) -> _FieldSpec:
    """A ``dataclasses.Field``'s parameters, its ``MISSING`` read as this module's."""
    missing = sys.modules["dataclasses"].MISSING

    def given(x: Any) -> Any:
        return _MISSING if x is missing else x

    return _FieldSpec(
        given(value.default),
        given(value.default_factory),
        value.init,
        value.repr,
        value.hash,
        value.compare,
        value.metadata,
        given(value.kw_only),
    )


if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
    from dataclasses import field as field

    def lazy_field(factory: Callable[[], Any], *, repr: bool = True) -> Any:
        """``field(default_factory=factory, repr=repr)``, the value made on first read."""
else:

    def lazy_field(factory: Callable[[], Any], *, repr: bool = True) -> Any:
        """``field(default_factory=factory, repr=repr)``, the value made on first read.

        For a mutable class whose instances are often made and dropped with the
        field never read (a run's empty lists, held by every call in flight): an
        instance not given the field holds nothing for it until something reads
        it, then holds what ``factory()`` made, as if ``__init__`` had made it.
        Everything else (signature, repr, equality, ``dataclasses.fields``) is
        ``field(default_factory=factory, repr=repr)``'s; on a frozen class it is that.
        """
        return _FieldSpec(_MISSING, factory, True, repr, None, True, None, _MISSING, lazy=True)

    def field(
        *,
        default: Any = _MISSING,
        default_factory: Any = _MISSING,
        init: bool = True,
        repr: bool = True,
        hash: bool | None = None,
        compare: bool = True,
        metadata: Any = None,
        kw_only: Any = _MISSING,
    ) -> Any:
        """``dataclasses.field`` with the same parameters; see the module docstring."""
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("cannot specify both default and default_factory")
        return _FieldSpec(default, default_factory, init, repr, hash, compare, metadata, kw_only)

    def dataclass(
        cls: type | None = None,
        /,
        *,
        init: bool = True,
        repr: bool = True,
        eq: bool = True,
        order: bool = False,
        unsafe_hash: bool = False,
        frozen: bool = False,
        match_args: bool = True,
        kw_only: bool = False,
        slots: bool = False,
    ) -> Any:
        """``dataclasses.dataclass`` with the same parameters; see the module docstring."""
        fast = init and slots and match_args and not (order or unsafe_hash or kw_only)

        def wrap(cls: type) -> type:
            fields = _plain_fields(cls) if fast else None
            if fields is not None:
                return _build(cls, fields, repr=repr, eq=eq, frozen=frozen)
            import dataclasses

            for name, value in list(cls.__dict__.items()):
                if isinstance(value, _FieldSpec):
                    setattr(cls, name, value.stdlib())
            return dataclasses.dataclass(
                cls,
                init=init,
                repr=repr,
                eq=eq,
                order=order,
                unsafe_hash=unsafe_hash,
                frozen=frozen,
                match_args=match_args,
                kw_only=kw_only,
                slots=slots,
            )

        return wrap if cls is None else wrap(cls)


def _plain_fields(cls: type) -> list[_Field] | None:
    """The fields of ``cls`` in order, or ``None`` when it needs the stdlib's path.

    The stdlib's path also raises the stdlib's errors (a mutable default, a
    field without a default after one with a default).
    """
    own = cls.__dict__
    if type(cls) is not type or not own.get("__doc__") or "__slots__" in own:
        return None
    if "__setattr__" in own or "__delattr__" in own:
        return None  # the stdlib refuses these on a frozen class: its path
    if any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:]):
        return None
    inherited_slots = {
        name for base in cls.__mro__[1:-1] for name in base.__dict__.get("__slots__", ())
    }
    fields: list[_Field] = []
    for name, annotation in own.get("__annotations__", {}).items():
        text = annotation if isinstance(annotation, str) else repr(annotation)
        kind = text.split("[", 1)[0].strip()
        if kind in ("ClassVar", "typing.ClassVar"):
            continue
        initvar = kind in ("InitVar", "dataclasses.InitVar")
        if "KW_ONLY" in text or "ClassVar" in text or name in inherited_slots:
            return None
        if "InitVar" in text and not initvar:
            return None
        value = own.get(name, _MISSING)
        if _is_stdlib_field(value):
            value = _stdlib_field_values(value)
        if isinstance(value, _FieldSpec):
            if not value.init or value.kw_only is True or initvar:
                return None
            field = _Field(
                name,
                annotation,
                value.default,
                value.default_factory,
                value.repr,
                value.compare,
                value.hash,
                lazy=value.lazy,
            )
        else:
            field = _Field(name, annotation, value, _MISSING, True, True, None, initvar)
        if field.default is not _MISSING and type(field.default).__hash__ is None:
            return None  # a mutable default: the stdlib's ValueError
        if fields and _required(field) and not _required(fields[-1]):
            return None  # a required field after a defaulted one: the stdlib's TypeError
        fields.append(field)
    return fields


def _required(field: _Field) -> bool:
    return field.default is _MISSING and field.factory is _MISSING


def _build(cls: type, fields: list[_Field], *, repr: bool, eq: bool, frozen: bool) -> type:
    """The slotted class: cheap methods now, ``__init__`` and the stdlib's records on first use."""
    own = cls.__dict__
    stored = [f for f in fields if not f.initvar]
    names = tuple(f.name for f in stored)
    # An InitVar's default stays a class attribute, as with the stdlib.
    namespace = {key: value for key, value in own.items() if key not in names}
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    namespace["__slots__"] = names
    namespace.setdefault("__match_args__", tuple(f.name for f in fields))
    if "__init__" not in own:  # a class's own methods win, as with the stdlib
        namespace["__init__"] = _OnFirstRead(lambda made: {"__init__": _init(made, fields, frozen)})
    annotations = own.get("__annotations__", {})
    body = {"__annotations__": annotations} | {
        name: own[name] for name in annotations if name in own
    }

    def records(made: type) -> dict[str, Any]:
        return _stdlib_records(made, body, repr=repr, eq=eq, frozen=frozen)

    namespace["__dataclass_fields__"] = _OnFirstRead(records)
    namespace["__dataclass_params__"] = _OnFirstRead(records)
    lazy = {f.name: f.factory for f in stored if f.lazy}
    if lazy and not frozen and "__getattr__" not in own:
        namespace["__getattr__"] = _made_on_first_read(cls, lazy)
    if repr and "__repr__" not in own:
        namespace["__repr__"] = _repr_of(cls, tuple(f.name for f in stored if f.repr))
    if eq and "__eq__" not in own:
        namespace["__eq__"] = _eq_of(cls, tuple(f.name for f in stored if f.compare))
    made: Any = type(cls.__name__, cls.__bases__, namespace)
    made.__qualname__ = cls.__qualname__
    if eq and not _explicit_hash(own):
        hashed = tuple(f.name for f in stored if (f.compare if f.hash is None else f.hash))
        made.__hash__ = _hash_of(made, hashed) if frozen else None
    if frozen:
        made.__setattr__, made.__delattr__ = _frozen_guards(made, names)
        made.__getstate__, made.__setstate__ = _frozen_state(made, names)
    return made  # type: ignore[no-any-return]


class _OnFirstRead:
    """Class attributes made on the first read of one of them, then stored on the class.

    ``make`` returns every attribute it made by name (``__dataclass_fields__``
    comes with ``__dataclass_params__``); the read one is returned, bound when
    read from an instance (``__init__``).
    """

    __slots__ = ("make", "name", "owner")

    def __init__(self, make: Callable[[type], dict[str, Any]]) -> None:
        self.make = make

    def __set_name__(self, owner: type, name: str) -> None:
        self.owner, self.name = (
            owner,
            name,
        )  # the dataclass itself, even when a subclass reads first

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        made = self.make(self.owner)
        for name, value in made.items():
            type.__setattr__(self.owner, name, value)
        value = made[self.name]
        bind = getattr(type(value), "__get__", None)  # a method; not the records
        return value if instance is None or bind is None else bind(value, instance, owner)


def _stdlib_records(
    made: type, body: dict[str, Any], *, repr: bool, eq: bool, frozen: bool
) -> dict[str, Any]:
    """``__dataclass_fields__`` and ``__dataclass_params__``, made by the stdlib on a twin.

    ``body`` is the class body's annotations and its values of those names
    (defaults, ``field()`` objects). The twin is a plain class with that body, in the same module
    (where the stdlib resolves string annotations); only its records are kept.
    """
    import dataclasses

    namespace: dict[str, Any] = {
        "__module__": made.__module__,
        "__qualname__": made.__qualname__,
        **_stdlib_values(body),
    }
    twin: Any = dataclasses.dataclass(
        type(made.__name__, (), namespace), init=False, repr=False, eq=False
    )
    params = twin.__dataclass_params__
    params.init, params.repr, params.eq, params.frozen = True, repr, eq, frozen
    if hasattr(params, "slots"):  # Python 3.12+ records it
        params.slots = True
    return {"__dataclass_fields__": twin.__dataclass_fields__, "__dataclass_params__": params}


def _explicit_hash(own: Any) -> bool:
    """Whether the class body sets ``__hash__`` (the stdlib's rule, with ``__eq__``'s None)."""
    value = own.get("__hash__", _MISSING)
    return not (value is _MISSING or (value is None and "__eq__" in own))


def _named(cls: type, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    fn.__name__ = name
    fn.__qualname__ = f"{cls.__qualname__}.{name}"
    fn.__module__ = cls.__module__
    return fn


def _init(cls: type, fields: list[_Field], frozen: bool) -> Any:
    """``__init__`` compiled from source, as the stdlib writes it: its signature is the API."""
    env: dict[str, Any] = {"__factory__": _FACTORY, "__object_setattr__": object.__setattr__}
    params, body = ["self"], []
    for f in fields:
        value = f.name
        if f.lazy and not frozen:  # not given: made on first read (:func:`lazy_field`)
            env[f"__default_{f.name}__"] = f.factory
            params.append(f"{f.name}=__factory__")
            body.append(f"if {f.name} is not __factory__: self.{f.name} = {f.name}")
            continue
        if f.default is not _MISSING:
            env[f"__default_{f.name}__"] = f.default
            params.append(f"{f.name}=__default_{f.name}__")
        elif f.factory is not _MISSING:
            env[f"__default_{f.name}__"] = f.factory
            params.append(f"{f.name}=__factory__")
            value = f"__default_{f.name}__() if {f.name} is __factory__ else {f.name}"
        else:
            params.append(f.name)
        if f.initvar:
            continue
        if frozen:
            body.append(f"__object_setattr__(self, {f.name!r}, {value})")
        else:
            body.append(f"self.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append(f"self.__post_init__({', '.join(f.name for f in fields if f.initvar)})")
    source = f"def __init__({', '.join(params)}):\n    " + ("\n    ".join(body) or "pass")
    exec(source, env)
    init = _named(cls, "__init__", env["__init__"])
    init.__annotations__ = {f.name: f.type for f in fields} | {"return": None}
    return init


def _made_on_first_read(cls: type, factories: dict[str, Callable[[], Any]]) -> Any:
    """``__getattr__`` (read only for an unset slot): a lazy field's value, made and stored."""

    def __getattr__(self: Any, name: str) -> Any:
        make = factories.get(name)
        if make is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = make()
        object.__setattr__(self, name, value)
        return value

    return _named(cls, "__getattr__", __getattr__)


def _repr_of(cls: type, names: tuple[str, ...]) -> Any:
    def __repr__(self: Any) -> str:
        parts = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({parts})"

    return _named(cls, "__repr__", reprlib.recursive_repr()(__repr__))


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A reader of the named attributes as one tuple (``attrgetter`` unwraps a single one)."""
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    if not names:
        return lambda obj: ()
    return attrgetter(*names)


def _eq_of(cls: type, names: tuple[str, ...]) -> Any:
    values = _values(names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return _named(cls, "__eq__", __eq__)


def _hash_of(cls: type, names: tuple[str, ...]) -> Any:
    values = _values(names)

    def __hash__(self: Any) -> int:
        return hash(values(self))

    return _named(cls, "__hash__", __hash__)


def _frozen_guards(cls: type, names: tuple[str, ...]) -> tuple[Any, Any]:
    """The frozen class's ``__setattr__``/``__delattr__``: the stdlib's checks and messages."""
    fields = frozenset(names)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in fields:
            import dataclasses  # on the error path only

            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]  # narrowed by the is-check

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in fields:
            import dataclasses  # on the error path only

            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]  # narrowed by the is-check

    return _named(cls, "__setattr__", __setattr__), _named(cls, "__delattr__", __delattr__)


def _frozen_state(cls: type, names: tuple[str, ...]) -> tuple[Any, Any]:
    """Pickling and copying for a frozen slotted class (its guards refuse ``setattr``)."""
    values = _values(names)

    def __getstate__(self: Any) -> list[Any]:
        return list(values(self))

    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=False):
            object.__setattr__(self, name, value)

    return _named(cls, "__getstate__", __getstate__), _named(cls, "__setstate__", __setstate__)
