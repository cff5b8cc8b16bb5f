"""Gemini's own edges of the vendor boundary: what is refused before any request."""

from __future__ import annotations

import pytest
from gemini_helpers import isolated  # noqa: F401  (autouse: no host keys or config)
from llmport.errors import MessageError
from llmport.messages.types import Request
from llmport_gemini.provider import GeminiProvider


@pytest.mark.parametrize("mode", ["send", "asend", "send_stream", "asend_stream"])
async def test_a_request_without_contents_is_a_typed_error_before_any_request(mode: str) -> None:
    provider = GeminiProvider({"api_key": "fake-test-key-no-request-is-made"})
    prepared = provider.prepare(Request(model="gemini-2.5-flash", messages=[]))
    with pytest.raises(MessageError, match="contents"):
        if mode == "send":
            provider.send(prepared)
        elif mode == "asend":
            await provider.asend(prepared)
        elif mode == "send_stream":
            list(provider.send_stream(prepared))
        else:
            [event async for event in provider.asend_stream(prepared)]
    provider.close()
