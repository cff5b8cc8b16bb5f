"""Test helpers for llmport users: a scripted provider, and recordings.

``cassette(path, record=...)`` records an app's real LLM traffic once and
replays it offline (:mod:`llmport.testing.recording`; needs
``llmport[testing]``). :class:`Script` is a provider that answers from a
script (:mod:`llmport.testing.scripted`)::

    from llmport.testing import Script, reply, call_tools, fail

    script = Script([
        call_tools(("lookup", {"city": "Paris"})),
        reply("Sunny in Paris."),
    ])
    rt = script.runtime()                       # model "scripted:test"
    assert rt.exec("Weather?", tools=[lookup]) == "Sunny in Paris."

:func:`recording_backoff` records retry delays instead of sleeping.

Every name is imported on first use: the pytest plugin
(:mod:`llmport.testing.pytest_plugin`) loads in every pytest run of every
user, and loading it imports this package, which must then cost nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backoff import recording_backoff
    from .recording import cassette
    from .scripted import (
        ALL_INPUTS,
        SCRIPTED_DIMENSIONS,
        Script,
        ScriptedProvider,
        ScriptExhausted,
        Step,
        call_tools,
        fail,
        reply,
        respond,
        scripted_vector,
    )

#: Where each public name lives (the module is imported when the name is first used).
_HOMES = {
    "cassette": "recording",
    "recording_backoff": "backoff",
    **dict.fromkeys(
        (
            "ALL_INPUTS",
            "SCRIPTED_DIMENSIONS",
            "Script",
            "ScriptedProvider",
            "ScriptExhausted",
            "Step",
            "call_tools",
            "fail",
            "reply",
            "respond",
            "scripted_vector",
        ),
        "scripted",
    ),
}

__all__ = [
    "ALL_INPUTS",
    "SCRIPTED_DIMENSIONS",
    "Script",
    "ScriptExhausted",
    "ScriptedProvider",
    "Step",
    "call_tools",
    "cassette",
    "fail",
    "recording_backoff",
    "reply",
    "respond",
    "scripted_vector",
]


def __getattr__(name: str) -> Any:
    """Import the module that defines ``name`` the first time it is asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later lookups are ordinary attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
