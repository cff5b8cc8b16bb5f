"""The profile targets are their profiles: what the contract suite runs is what ships.

Each OpenAI-compatible target of :mod:`wire` states its service's quirks
itself (key variable, base URL path, the body field of ``max_tokens=``, the
message field reasoning comes back in); here they are held against
``llmport_openai.profiles.PROFILES`` and against the request and answer on
the wire, so neither the suite nor a profile can drift alone.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

import pytest
from llmport.messages.types import ThinkingBlock
from llmport.testing.loopback import LoopbackServer, Reply
from llmport_openai.profiles import PROFILES
from wire import PROFILE_TARGETS, TARGETS, CompatWire, DeepSeekResponsesWire, make_runtime

ProfileWire = CompatWire | DeepSeekResponsesWire
#: Every target that is a built-in profile: the compatible services of TARGETS, and the rest.
PROFILED: list[ProfileWire] = [
    w for w in TARGETS + PROFILE_TARGETS if isinstance(w, CompatWire | DeepSeekResponsesWire)
]


def test_every_profile_is_a_target() -> None:
    assert sorted(w.provider for w in PROFILED) == sorted(PROFILES)


@pytest.mark.parametrize("wire", PROFILED, ids=str)
def test_the_target_has_its_profiles_key_variable_and_url_path(wire: ProfileWire) -> None:
    profile = PROFILES[wire.provider]
    assert wire.key_env == (profile.key_env,)
    base_path = urlparse(profile.base_url).path.rstrip("/")
    endpoint = "/responses" if profile.wire == "responses" else "/chat/completions"
    assert wire.path() == base_path + endpoint
    assert wire.endpoint_settings("http://h")["base_url"] == "http://h" + base_path


@pytest.mark.parametrize("wire", PROFILED, ids=str)
def test_max_tokens_goes_in_the_services_field(wire: ProfileWire) -> None:
    field = wire.max_tokens_field
    with LoopbackServer([wire.text_reply("ok")]) as server:
        rt = make_runtime(wire, server)
        try:
            rt.run("hi", max_tokens=7)
        finally:
            rt.close()
    body = server.requests[0].json()
    assert body.get(field) == 7, f"{wire}: max_tokens=7 not in {field!r}: {body}"
    others = {"max_tokens", "max_completion_tokens", "max_output_tokens"} - {field}
    assert not others & set(body), f"{wire}: a second max-tokens field in {body}"


#: Profiles that answer reasoning in a string field of the message (the others' styles,
#: inline tags, Mistral's chunks and Responses items, have cassette tests of their own).
FIELD_REASONING = [
    w for w in PROFILED if PROFILES[w.provider].reasoning in ("reasoning", "reasoning_content")
]


@pytest.mark.parametrize("wire", FIELD_REASONING, ids=str)
def test_reasoning_field_becomes_thinking(wire: ProfileWire) -> None:
    assert isinstance(wire, CompatWire)
    field = wire.reasoning_field
    assert field == PROFILES[wire.provider].reasoning
    reply = wire.text_reply("42")
    assert isinstance(reply.json, dict)
    answer: Any = reply.json
    answer["choices"][0]["message"][field] = "Six times seven."
    with LoopbackServer([Reply(json=answer)]) as server:
        rt = make_runtime(wire, server)
        try:
            result = rt.run("The answer?")
        finally:
            rt.close()
    assert result.output == "42"
    thinking = [b for m in result.messages for b in m.blocks if isinstance(b, ThinkingBlock)]
    assert [b.text for b in thinking] == ["Six times seven."], result.messages
