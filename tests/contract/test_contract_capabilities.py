"""What a target's capability table says it lacks is refused before any request, on every target.

Reasoning, prompt caching, each provider-native tool kind, images out
(``output_modalities=``) and document citations: when the model's
capabilities (the plugin's table, as ``rt.model_info`` reports it) do not list a feature, ``exec``,
``async_exec`` and ``stream`` raise the typed error and the loopback server
sees nothing; when they do, the request is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from llmport import NativeTool, Runtime
from llmport.errors import UnsupportedContentError, UnsupportedFeatureError
from llmport.messages.types import NATIVE_TOOL_KINDS
from llmport.testing.loopback import LoopbackServer
from support.api_modes import MODES, run_via
from wire import TARGETS, Wire

Make = Callable[..., Runtime]

#: feature -> (is it in the capabilities?, the call asking for it)
FEATURES: dict[str, tuple[Callable[[Any], bool], dict[str, Any]]] = {
    "reasoning": (lambda caps: caps.reasoning, {"reasoning": "high"}),
    "caching": (
        lambda caps: caps.caching,
        {"content": [{"type": "text", "text": "hi", "cache": True}]},
    ),
    **{
        f"native-{kind}": (
            lambda caps, kind=kind: kind in caps.native_tool_kinds,
            {"tools": [NativeTool(kind)]},
        )
        for kind in sorted(NATIVE_TOOL_KINDS)
    },
    "output-image": (
        lambda caps: "image" in caps.output_modalities,
        {"output_modalities": ["text", "image"]},
    ),
}


def capabilities(wire: Wire) -> Any:
    """The model's row of its plugin's capability table (what the runtime checks against)."""
    from llmport.plugins.host import PluginHost

    prefix, _, model = wire.model.partition(":")
    return PluginHost(wire.plugins).providers()[prefix].capabilities_for(model)


#: (target, feature) for every feature the target's model lacks: the cases to refuse.
LACKING = [
    pytest.param(wire, feature, id=f"{wire}-{feature}")
    for wire in TARGETS
    for feature, (has, _) in sorted(FEATURES.items())
    if not has(capabilities(wire))
]


def test_the_cases_come_from_the_tables() -> None:
    lacking = {(p.values[0].id, p.values[1]) for p in LACKING}
    # gemini-2.5-flash has every feature here but tool search, OpenAI's image generation
    # tool and images out (an image model's); document citations: below
    assert {w for w, _ in lacking} == {w.id for w in TARGETS}
    assert {f for w, f in lacking if w == "gemini"} == {
        "native-tool_search",
        "native-image_generation",
        "output-image",
    }
    assert ("openai-responses", "native-image_generation") not in lacking
    assert ("openai-chat", "reasoning") in lacking  # gpt-4o-mini does not reason
    assert ("anthropic", "native-file_search") in lacking
    assert ("gemini", "native-web_search") not in lacking  # googleSearch


@pytest.mark.parametrize("stream", [False, True], ids=["run", "stream"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("wire", "feature"), LACKING)
async def test_a_feature_the_model_lacks_is_refused_before_any_request(
    wire: Wire, feature: str, mode: str, stream: bool, runtime: Make
) -> None:
    _, call = FEATURES[feature]
    kwargs = dict(call)
    content = kwargs.pop("content", "hi")
    with LoopbackServer([]) as server:
        with pytest.raises(UnsupportedFeatureError):
            await run_via(mode, runtime(wire, server), content, stream=stream, **kwargs)
        assert server.requests == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "wire", [w for w in TARGETS if not capabilities(w).citations or w.id == "gemini"], ids=str
)
async def test_document_citations_are_refused_where_the_vendor_has_none(
    wire: Wire, mode: str, runtime: Make
) -> None:
    # Gemini cites its grounding sources, never a document the caller sends.
    doc = {
        "type": "file",
        "data": b"Paris is the capital of France.",
        "media_type": "text/plain",
        "citations": True,
    }
    with LoopbackServer([]) as server:
        with pytest.raises(UnsupportedContentError):
            await run_via(mode, runtime(wire, server), ["Capital?", doc])
        assert server.requests == []
