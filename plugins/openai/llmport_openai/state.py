"""Server-side conversation state on OpenAI Responses.

``exec(previous_response_id="resp_...")`` and ``exec(conversation="conv_...")``:
OpenAI keeps the conversation, so a request carries only the input that is
new since the last answer (a user message, or the ``function_call_output``
items of a tool turn) and names where the rest is:

* ``previous_response_id`` + ``store: true`` (the answer must be stored to be
  chained); the core moves the id along the tool loop, one answer to the next;
* ``conversation``: the same id on every request (OpenAI appends both the
  input and the answer to it).

The neutral request keeps the whole conversation (``RunResult.messages``,
the DAG, ``count_tokens`` of the same call): only the body is cut. Shapes:
OpenAI's API reference "Create a model response" (``previous_response_id``,
``conversation``, ``store``) and "Conversation state", and the recorded calls
``previous-response-id-tool-loop`` and ``conversation``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from llmport.messages.types import Message, Request
from llmport.provider.translate import answer_field, vendor_boundary

__all__ = ["Conversations", "new_input", "split_state"]


def new_input(messages: list[Message]) -> list[Message]:
    """The messages after the last assistant turn: what the server has not seen yet."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            return messages[index + 1 :]
    return messages


def split_state(request: Request) -> tuple[Request, dict[str, Any]]:
    """``(request to convert, body fields)``: only the new input, and where the rest is kept."""
    previous = request.options.get("previous_response_id")
    conversation = request.options.get("conversation")
    if not previous and not conversation:
        return request, {}
    options = {
        k: v
        for k, v in request.options.items()
        if k not in ("previous_response_id", "conversation")
    }
    trimmed = replace(request, messages=new_input(request.messages), options=options)
    if previous:
        return trimmed, {"previous_response_id": previous, "store": True}
    return trimmed, {"conversation": conversation}


class Conversations:
    """OpenAI's Conversations API: ``POST /v1/conversations`` (an empty body: a new, empty
    conversation) and ``DELETE /v1/conversations/{id}``, through the provider's clients."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider

    @vendor_boundary
    def create(self) -> str:
        created = self.provider.clients.sync().conversations.create()
        return str(answer_field(created, "id", str, self.provider.name))

    @vendor_boundary
    async def acreate(self) -> str:
        created = await (await self.provider.clients.aclient()).conversations.create()
        return str(answer_field(created, "id", str, self.provider.name))

    @vendor_boundary
    def delete(self, conversation: str) -> None:
        deleted = self.provider.clients.sync().conversations.delete(conversation)
        answer_field(deleted, "id", str, self.provider.name)  # a deletion, not an error object

    @vendor_boundary
    async def adelete(self, conversation: str) -> None:
        client = await self.provider.clients.aclient()
        deleted = await client.conversations.delete(conversation)
        answer_field(deleted, "id", str, self.provider.name)
