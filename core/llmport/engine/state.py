"""Server-side conversation state: ``previous_response_id=`` and ``conversation=``.

A provider whose vendor keeps conversations on its server sets
``Provider.server_state`` (OpenAI Responses). There every answer's id becomes
``RunResult.response_id`` and is recorded on the run's DAG node
(``response_ids``), and a run given ``previous_response_id=`` chains through
its own tool loop: each turn after the first names the previous turn's
answer. The plugin sends only the input that is new since the last answer;
``RunResult.messages`` stays the complete neutral conversation. Every other
provider refuses these options typed, before any request
(:meth:`llmport.provider.contract.Provider.check`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ..controls.options import SERVER_STATE_OPTIONS
from ..errors import OptionError, UnsupportedFeatureError
from ..messages.types import Response
from ..provider.contract import Provider

if TYPE_CHECKING:
    from .result import RunResult
    from .settings import RunSettings


class Chained(Protocol):
    """What :func:`note_answer` reads of a run's plan (a :class:`~.plan.RunPlan`)."""

    @property
    def provider(self) -> Provider: ...

    @property
    def options(self) -> dict[str, Any]: ...

    def note_response_id(self, response_id: str) -> None: ...


__all__ = [
    "Chained",
    "acreate_conversation",
    "adelete_conversation",
    "create_conversation",
    "delete_conversation",
    "drop_unset",
    "note_answer",
]


def drop_unset(options: dict[str, Any]) -> None:
    """Forget ``previous_response_id=None`` / ``conversation=None``: not given, on any vendor."""
    for name in SERVER_STATE_OPTIONS:
        if name in options and options[name] is None:
            del options[name]


def note_answer(plan: Chained, run: RunResult[Any], response: Response) -> None:
    """Keep the id of a server-stored answer; the next turn of a chained run names it."""
    if not response.id or not plan.provider.server_state:
        return
    run.response_id = response.id
    plan.note_response_id(response.id)
    if "previous_response_id" in plan.options:
        plan.options["previous_response_id"] = response.id


# --- conversation objects (OpenAI's Conversations API) -------------------------------------


def _conversations(settings: RunSettings, provider: str) -> Any:
    """The provider's conversations API; refused typed where the vendor has none."""
    if not isinstance(provider, str) or not provider or ":" in provider:
        raise OptionError(
            f"provider= is a provider name such as 'openai-responses', got {provider!r}"
        )
    found = settings.resolve(f"{provider}:conversation")[0]
    make = getattr(found, "conversations", None)
    if make is None or not found.server_state:
        raise UnsupportedFeatureError(
            found.name,
            "",
            "conversation objects",
            "only OpenAI Responses (openai-responses:) keeps conversations on its server",
        )
    return make()


def _conversation_id(conversation: Any) -> str:
    if not isinstance(conversation, str) or not conversation.strip():
        raise OptionError(f"a conversation id is a non-empty string, got {conversation!r}")
    return conversation


def create_conversation(settings: RunSettings, provider: str) -> str:
    """A new, empty conversation on ``provider``'s server: its id, for ``conversation=``."""
    return str(_conversations(settings, provider).create())


async def acreate_conversation(settings: RunSettings, provider: str) -> str:
    """Async :func:`create_conversation`."""
    return str(await _conversations(settings, provider).acreate())


def delete_conversation(settings: RunSettings, conversation: str, provider: str) -> None:
    """Delete the conversation ``conversation`` from ``provider``'s server."""
    conversation = _conversation_id(conversation)
    _conversations(settings, provider).delete(conversation)


async def adelete_conversation(settings: RunSettings, conversation: str, provider: str) -> None:
    """Async :func:`delete_conversation`."""
    conversation = _conversation_id(conversation)
    await _conversations(settings, provider).adelete(conversation)
