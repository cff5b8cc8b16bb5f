"""The pluggy manager each plugin host uses: pluggy's, with a cheap first look at attributes.

pluggy decides whether an attribute of a plugin is a hook implementation
with :func:`inspect.getattr_static` on every name ``dir(plugin)`` lists: for
the installed plugin modules (hundreds of names, mostly imported classes,
functions and constants) that was most of what a new runtime's plugin host
cost. :class:`Manager` first reads the raw value from the module's, the
instance's or its classes' ``__dict__`` (no user code runs) and answers
"no hook" itself only where pluggy's lookup certainly finds none: a plain
function without the marker, or a value that is no function, method or
descriptor pluggy accepts. Everything else goes to pluggy unchanged.
"""

from __future__ import annotations

from types import FunctionType, MemberDescriptorType, MethodType, ModuleType
from typing import Any

import pluggy

__all__ = ["Manager"]

#: Values pluggy may take a hook from (itself deciding how): left to it.
_MAYBE_HOOK = (staticmethod, classmethod, MethodType, MemberDescriptorType)
_ABSENT = object()


class Manager(pluggy.PluginManager):
    """A :class:`pluggy.PluginManager` that skips plain non-hook attributes quickly."""

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        if surely_no_hook(plugin, name, self.project_name + "_impl"):
            return None
        return super().parse_hookimpl_opts(plugin, name)

    def parse_hookspec_opts(self, module_or_class: Any, name: str) -> Any:
        if surely_no_hook(module_or_class, name, self.project_name + "_spec"):
            return None
        return super().parse_hookspec_opts(module_or_class, name)


def surely_no_hook(plugin: Any, name: str, marker: str) -> bool:
    """True when ``plugin.<name>`` cannot be a hook marked with ``marker`` (pluggy would agree).

    False means "ask pluggy": a class as plugin, a name found nowhere looked,
    an instance's own attribute, a marked function or a method-like value.
    """
    value = _raw_attribute(plugin, name)
    if value is _ABSENT:
        return False
    if isinstance(value, FunctionType):
        return marker not in value.__dict__
    return not isinstance(value, _MAYBE_HOOK)


def _raw_attribute(plugin: Any, name: str) -> Any:
    """The value stored for ``name`` on a module, or on an instance's class, else ``_ABSENT``.

    An instance's own ``__dict__`` entry (which pluggy reads before its class,
    unless the class has a data descriptor of that name) is left to pluggy.
    """
    if isinstance(plugin, ModuleType):
        return plugin.__dict__.get(name, _ABSENT)
    if isinstance(plugin, type):
        return _ABSENT
    try:
        own = object.__getattribute__(plugin, "__dict__")
    except AttributeError:
        own = {}
    if not isinstance(own, dict) or name in own:
        return _ABSENT
    for klass in type(plugin).__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return _ABSENT
