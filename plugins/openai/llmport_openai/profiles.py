"""Built-in profiles of OpenAI-compatible services.

A :class:`Profile` says what one service is: its prefix, base URL, key
variable, wire (Chat Completions or Responses), capability table and the
documented ways it differs from OpenAI (the reasoning field it answers in,
the body field ``max_tokens`` becomes, fields it rejects). Each profile
registers as a provider of its own (``groq:MODEL``), usable with nothing but
the service's key variable; :func:`llmport_openai.plugin.profile_info` turns a
profile into that registration, which is also how a plugin outside this
package ships its own (docs/providers/openai-compatible.md shows one).

Imports nothing but llmport's types: the registration stays free of the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from typing import Any, Literal

from llmport.messages.types import ImageGeneration, ModelCapabilities

__all__ = ["PROFILES", "Profile"]

#: How an answer carries its reasoning, and how it goes back on the next request.
#: ``"reasoning"`` / ``"reasoning_content"``: a string field of the message;
#: ``"think_tags"``: inline in ``content`` as ``<think>…</think>``;
#: ``"mistral"``: ``content`` is a list of chunks, ``thinking`` chunks among them.
ReasoningStyle = Literal["reasoning", "reasoning_content", "think_tags", "mistral"]


@dataclass(slots=True, frozen=True)
class Profile:
    """One OpenAI-compatible service. Every field but the first three has a default."""

    prefix: str
    base_url: str
    #: The variable the key is read from; ``key_required=False``: the service may need none.
    key_env: str
    description: str = ""
    key_required: bool = True
    #: Hosts that need the key even when ``key_required`` is False (a hosted edition).
    key_hosts: tuple[str, ...] = ()
    #: A variable that, when set, replaces ``base_url`` (``OLLAMA_BASE_URL``).
    base_url_env: str | None = None
    wire: Literal["chat", "responses"] = "chat"
    default: ModelCapabilities = field(default_factory=ModelCapabilities)
    models: Mapping[str, ModelCapabilities] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)
    #: The body field of ``max_tokens=`` (``"max_tokens"`` where the service documents only it).
    max_tokens_field: str = "max_tokens"
    #: Where reasoning comes back (None: the service returns none we know of).
    reasoning: ReasoningStyle | None = None
    #: Whether the reasoning is sent back on the assistant turn (as the service documents).
    echo_reasoning: bool = False
    #: How the reasoning goes back where that differs from how it comes, per model glob
    #: (first match; the rest go back as they came).
    echo_styles: Mapping[str, ReasoningStyle] = field(default_factory=dict)
    #: Whether a 400 ``tool_use_failed`` carrying the model's invalid call in
    #: ``failed_generation`` (Groq) is read as that call, so the tool loop answers it with
    #: the validation error and the model tries again, as llmport repairs invalid arguments.
    failed_tool_calls: bool = False
    #: Whether an assistant turn holding only tool calls sends ``content: []`` (the service's
    #: own SDK does) rather than ``null``.
    tool_turn_empty_list: bool = False
    #: Whether an assistant "OK" goes between a tool turn and the user turn carrying the
    #: tool's media (the service refuses a user turn right after a tool turn).
    acknowledge_tool_media: bool = False
    #: Fields every assistant turn carries, as the service's own SDK sends them.
    assistant_fields: Mapping[str, object] = field(default_factory=dict)
    #: Whether an answer may also carry its reasoning inline as ``<think>…</think>`` (a
    #: request option of the service's asks for it): split out like ``think_tags``.
    inline_think: bool = False
    #: The body shape of ``reasoning=``: ``"effort"`` (``reasoning_effort``), ``"openrouter"``
    #: (``reasoning: {effort, enabled}``), or None when the service takes no effort.
    effort: Literal["effort", "openrouter"] | None = None
    #: Body fields the service answers 400 to, per model glob: ``{glob: {field: why}}``.
    rejects: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: Whether a streamed request may carry ``stream_options`` (usage in the last chunk).
    stream_options: bool = True
    #: Whether the service runs OpenAI's batch format (``/batches`` + a JSONL file).
    batch: bool = False
    #: Whether the service takes ``strict`` on schemas (tools, ``json_schema``); if not it is
    #: left out (the schema itself is sent as usual).
    strict_schemas: bool = True
    #: Whether the service takes ``parallel_tool_calls`` (if not, it is left out).
    parallel_tool_calls: bool = True
    #: Error statuses of the service's own that mean "try again later" (an OverloadedError).
    transient_statuses: tuple[int, ...] = ()
    #: ``response_format`` (Responses: ``text.format``) takes only ``json_object``: a schema is
    #: sent as JSON mode plus the schema in a system message or ``instructions`` (the
    #: service's documented way).
    json_mode_only: bool = False
    #: One line for the docs table: what differs from OpenAI.
    differs: str = ""
    #: The service's own document the quirks come from.
    docs: str = ""
    # -- embeddings (POST {base_url}/embeddings, OpenAI's wire) -----------------------------
    #: Its embedding models (``rt.embed``), merged before ``models``; empty: none listed.
    embed_models: Mapping[str, ModelCapabilities] = field(default_factory=dict)
    #: A local server embeds with whatever model it runs: every model may embed there (the
    #: server answers an error for one that cannot).
    embed_any_model: bool = False
    #: Whether ``encoding_format: "base64"`` is documented (else floats are asked for).
    embed_base64: bool = False
    #: The body field of ``dimensions=`` (Mistral: ``output_dimension``).
    embed_dimensions_field: str = "dimensions"
    #: The service's document of its embeddings endpoint (or of why it has none).
    embed_docs: str = ""
    #: Why ``rt.embed`` is refused here, and where to go (no embeddings endpoint).
    embed_refusal: str = ""
    # -- images (POST {base_url}/images/generations, OpenAI's wire) --------------------------
    #: Its image models (``rt.generate_image``), merged before ``models``; empty: none.
    image_models: Mapping[str, ModelCapabilities] = field(default_factory=dict)
    #: Body fields every image request carries (xAI: ``response_format: "b64_json"``).
    image_fields: Mapping[str, Any] = field(default_factory=dict)
    #: The service's document of its images endpoint.
    image_docs: str = ""

    def echo_style(self, model: str) -> ReasoningStyle | None:
        """How ``model``'s reasoning goes back on the next request."""
        for pattern, style in self.echo_styles.items():
            if fnmatchcase(model, pattern):
                return style
        return self.reasoning


#: A chat model of an OpenAI-compatible service, as far as its documents say.
CHAT = ModelCapabilities(tool_choice_none=True, context_window=None)
VISION_CHAT = replace(CHAT, input_modalities=frozenset({"text", "image"}))
REASONING_CHAT = replace(CHAT, reasoning=True)
#: DeepSeek's response_format takes only ``json_object`` (https://api-docs.deepseek.com/guides/json_mode):
#: a schema goes as JSON mode plus the schema in the prompt (:func:`.compat.json_mode`).
NO_SCHEMA = replace(CHAT, native_structured_output=False)

#: An embedding model of an OpenAI-compatible service: text in, one vector out, no chat.
EMBED = ModelCapabilities(
    image_types=frozenset(),
    native_tools=False,
    native_structured_output=False,
    streaming=False,
    embeddings=True,
)

# Source: xAI, "Image generation": (https://docs.x.ai/docs/guides/image-generation, POST
#   /v1/images/generations) n 1-10; "quality, size or style are not supported"; JPEG out.
#   The answer is asked as base64 (the default is a URL); aspect_ratio goes in vendor=.
XAI_IMAGE_MODELS: Mapping[str, ModelCapabilities] = {
    pattern: ModelCapabilities(
        image_types=frozenset(),
        native_tools=False,
        native_structured_output=False,
        streaming=False,
        images=ImageGeneration(max_images=10, sizes=frozenset(), formats=frozenset()),
    )
    for pattern in ("grok-2-image*", "grok-imagine-image*")
}

_DEEPSEEK_REASONER = {
    # https://api-docs.deepseek.com/guides/reasoning_model: "Setting logprobs,
    # top_logprobs will trigger an error" (temperature & co are accepted and ignored).
    "deepseek-reasoner*": {
        "logprobs": "deepseek-reasoner rejects logprobs",
        "top_logprobs": "deepseek-reasoner rejects top_logprobs",
    }
}
_XAI_REASONING = {
    # https://docs.x.ai/docs/guides/reasoning: "presencePenalty, frequencyPenalty and
    # stop parameters are not supported by reasoning models ... would result in an error".
    pattern: {
        "stop": "xAI reasoning models reject stop",
        "presence_penalty": "xAI reasoning models reject presence_penalty",
        "frequency_penalty": "xAI reasoning models reject frequency_penalty",
    }
    for pattern in ("grok-3-mini*", "grok-4*", "grok-code*")
}
_GROQ = {
    # https://console.groq.com/docs/openai#unsupported-features
    "*": {
        "logprobs": "Groq does not support logprobs",
        "logit_bias": "Groq does not support logit_bias",
        "top_logprobs": "Groq does not support top_logprobs",
    }
}
_CEREBRAS = {
    # https://inference-docs.cerebras.ai/resources/openai: these fields "will result in
    # a 400 error if they are supplied".
    "*": {
        "frequency_penalty": "Cerebras rejects frequency_penalty",
        "presence_penalty": "Cerebras rejects presence_penalty",
        "logit_bias": "Cerebras rejects logit_bias",
    }
}


def _profiles() -> dict[str, Profile]:
    """The built-in profiles (one table, shown in docs/providers/openai-compatible.md)."""
    found = [
        Profile(
            "ollama",
            "http://localhost:11434/v1",
            "OLLAMA_API_KEY",
            "Ollama (local, or Ollama Cloud with OLLAMA_API_KEY and OLLAMA_BASE_URL)",
            key_required=False,
            key_hosts=("ollama.com",),  # Ollama Cloud: https://docs.ollama.com/cloud
            base_url_env="OLLAMA_BASE_URL",
            reasoning="reasoning",
            echo_reasoning=True,
            strict_schemas=False,  # json_schema is honoured, strict mode is not
            effort="effort",
            default=REASONING_CHAT,
            differs="no key locally; `message.reasoning` becomes thinking and goes back; "
            "no `strict` on schemas; `max_tokens`",
            docs="https://docs.ollama.com/api/openai-compatibility",
            # /v1/embeddings takes model, input, encoding_format (float or base64), dimensions.
            embed_any_model=True,
            embed_base64=True,
            embed_docs="https://docs.ollama.com/api/openai-compatibility",
        ),
        Profile(
            "vllm",
            "http://localhost:8000/v1",
            "VLLM_API_KEY",
            "vLLM's OpenAI-compatible server",
            key_required=False,
            base_url_env="VLLM_BASE_URL",
            reasoning="reasoning_content",
            differs="no key unless the server sets one; `reasoning_content` becomes thinking",
            docs="https://docs.vllm.ai/en/latest/features/reasoning_outputs.html",
            # The OpenAI-compatible Embeddings API of pooling models, encoding_format float/base64.
            embed_any_model=True,
            embed_base64=True,
            embed_docs="https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html",
        ),
        Profile(
            "lmstudio",
            "http://localhost:1234/v1",
            "LMSTUDIO_API_KEY",
            "LM Studio's local server",
            key_required=False,
            base_url_env="LMSTUDIO_BASE_URL",
            reasoning="reasoning_content",
            differs="no key; `reasoning_content` becomes thinking",
            docs="https://lmstudio.ai/docs/app/api/endpoints/openai",
            # POST /v1/embeddings is listed; base64 is not documented: floats are asked for.
            embed_any_model=True,
            embed_docs="https://lmstudio.ai/docs/api/openai-api",
        ),
        Profile(
            "openrouter",
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
            "OpenRouter (many vendors' models behind one key)",
            reasoning="reasoning",
            echo_reasoning=True,
            effort="openrouter",
            default=replace(REASONING_CHAT, input_modalities=frozenset({"text", "image"})),
            differs="`reasoning: {effort}`; `reasoning`/`reasoning_details` become thinking "
            "and go back unchanged; `usage.cost`",
            docs="https://openrouter.ai/docs/use-cases/reasoning-tokens",
            # POST /api/v1/embeddings routes to the listed embedding models (vendor/model ids).
            embed_models={
                "openai/text-embedding-3-*": replace(EMBED, flexible_dimensions=True),
                "*embed*": EMBED,
            },
            embed_docs="https://openrouter.ai/docs/api_reference/embeddings",
        ),
        Profile(
            "groq",
            "https://api.groq.com/openai/v1",
            "GROQ_API_KEY",
            "GroqCloud",
            max_tokens_field="max_completion_tokens",
            reasoning="reasoning",
            # https://console.groq.com/docs/reasoning: reasoning_format "parsed" answers in
            # message.reasoning, "raw" inline in <think> tags, "hidden" not at all.
            inline_think=True,
            # https://console.groq.com/docs/tool-use: a call the model got wrong is a 400
            # tool_use_failed with the generation in failed_generation.
            failed_tool_calls=True,
            effort="effort",
            rejects=_GROQ,
            batch=True,  # https://console.groq.com/docs/batch
            # https://console.groq.com/docs/errors: 498 "Flex Tier Capacity Exceeded" (retry later)
            transient_statuses=(498,),
            # https://console.groq.com/docs/vision: Llama 4 takes images (as recorded:
            # wire-samples openai-compat-groq/tool-result-image.json).
            models={
                "openai/gpt-oss*": REASONING_CHAT,
                "qwen/qwen3*": REASONING_CHAT,
                "meta-llama/llama-4-*": VISION_CHAT,
            },
            default=CHAT,
            differs="rejects logprobs, logit_bias, top_logprobs; `message.reasoning` (or "
            "inline `<think>` with `reasoning_format: raw`) becomes thinking; timings in `usage`",
            docs="https://console.groq.com/docs/openai",
            embed_refusal="GroqCloud serves no embedding models (its models page lists none)",
            embed_docs="https://console.groq.com/docs/models",
        ),
        Profile(
            "deepseek",
            "https://api.deepseek.com",
            "DEEPSEEK_API_KEY",
            "DeepSeek (Chat Completions)",
            reasoning="reasoning_content",
            # Thinking mode with tools: reasoning_content goes back within a tool loop
            # (https://api-docs.deepseek.com/guides/thinking_mode#tool-calls).
            echo_reasoning=True,
            rejects=_DEEPSEEK_REASONER,
            default=NO_SCHEMA,
            json_mode_only=True,
            differs="`reasoning_content` becomes thinking and goes back; no json_schema: "
            "a schema goes as `json_object` plus the schema in a system message; cache hits "
            "in `prompt_cache_hit_tokens`",
            docs="https://api-docs.deepseek.com/guides/reasoning_model",
            embed_refusal="DeepSeek's API has no embeddings endpoint",
            embed_docs="https://api-docs.deepseek.com/",
        ),
        Profile(
            "deepseek-responses",
            "https://api.deepseek.com",
            "DEEPSEEK_API_KEY",
            "DeepSeek (Responses-compatible endpoint)",
            wire="responses",
            default=NO_SCHEMA,
            json_mode_only=True,  # as on DeepSeek's Chat Completions (NO_SCHEMA's document)
            differs="Responses wire; reasoning items carry `reasoning_text` content and go back; "
            "no json_schema: a schema goes as `json_object` plus the schema in `instructions`",
            docs="https://api-docs.deepseek.com/",
            embed_refusal="DeepSeek's API has no embeddings endpoint",
            embed_docs="https://api-docs.deepseek.com/",
        ),
        Profile(
            "mistral",
            "https://api.mistral.ai/v1",
            "MISTRAL_API_KEY",
            "Mistral AI",
            reasoning="mistral",
            echo_reasoning=True,
            # As the mistralai SDK sends a tool-calling turn (wire-samples
            # mistral/tool-roundtrip.json: "content": [] beside tool_calls).
            tool_turn_empty_list=True,
            # wire-samples mistral/tool-result-multiple-images.json: "OK" after the tool turn.
            acknowledge_tool_media=True,
            # Every assistant turn in the mistral/ recordings carries "prefix": false (the
            # mistralai SDK's default; true would make the turn a prefix to continue).
            assistant_fields={"prefix": False},
            effort="effort",
            stream_options=False,
            # https://docs.mistral.ai/capabilities/vision/: Mistral Medium and Pixtral take
            # images (wire-samples mistral/tool-result-multiple-images.json).
            models={
                "magistral*": REASONING_CHAT,
                "mistral-small*": REASONING_CHAT,
                "mistral-medium*": VISION_CHAT,
                "pixtral*": VISION_CHAT,
            },
            default=CHAT,
            differs="`content` may be a list with `thinking` chunks (kept and sent back); "
            "no `stream_options`; cache hits in `usage.num_cached_tokens`",
            docs="https://docs.mistral.ai/capabilities/reasoning/",
            # POST /v1/embeddings: input, encoding_format (float/base64), output_dimension.
            embed_models={
                "mistral-embed*": replace(EMBED, embedding_dimensions=1024),
                "codestral-embed*": replace(
                    EMBED, embedding_dimensions=1536, flexible_dimensions=True
                ),
            },
            embed_base64=True,
            embed_dimensions_field="output_dimension",
            embed_docs="https://docs.mistral.ai/api/endpoint/embeddings",
        ),
        Profile(
            "xai",
            "https://api.x.ai/v1",
            "XAI_API_KEY",
            "xAI Grok",
            max_tokens_field="max_completion_tokens",
            reasoning="reasoning_content",
            rejects=_XAI_REASONING,
            default=VISION_CHAT,
            differs="reasoning models reject stop, presence/frequency penalties; "
            "`reasoning_content` becomes thinking",
            docs="https://docs.x.ai/docs/guides/reasoning",
            embed_refusal="xAI's models page lists no embedding model",
            embed_docs="https://docs.x.ai/docs/models",
            image_models=XAI_IMAGE_MODELS,
            image_fields={"response_format": "b64_json"},
            image_docs="https://docs.x.ai/docs/guides/image-generation",
        ),
        Profile(
            "together",
            "https://api.together.xyz/v1",
            "TOGETHER_API_KEY",
            "Together AI",
            reasoning="reasoning",
            differs="`message.reasoning` becomes thinking",
            docs="https://docs.together.ai/docs/openai-api-compatibility",
            # POST /v1/embeddings with the serverless embedding models; floats only documented.
            embed_models={
                "*embed*": EMBED,
                "BAAI/bge-*": EMBED,
                "intfloat/*e5*": EMBED,
                "togethercomputer/m2-bert-*": EMBED,
            },
            embed_docs="https://docs.together.ai/docs/openai-api-compatibility",
        ),
        Profile(
            "fireworks",
            "https://api.fireworks.ai/inference/v1",
            "FIREWORKS_API_KEY",
            "Fireworks AI",
            reasoning="reasoning_content",
            differs="`reasoning_content` becomes thinking",
            docs="https://docs.fireworks.ai/tools-sdks/openai-compatibility",
            # POST /inference/v1/embeddings (OpenAI's wire); floats only documented.
            embed_models={
                "*embed*": EMBED,
                "WhereIsAI/UAE-Large-V1": EMBED,
                "thenlper/gte-*": EMBED,
            },
            embed_docs="https://docs.fireworks.ai/tools-sdks/openai-compatibility",
        ),
        Profile(
            "cerebras",
            "https://api.cerebras.ai/v1",
            "CEREBRAS_API_KEY",
            "Cerebras Inference",
            max_tokens_field="max_completion_tokens",
            reasoning="reasoning",
            echo_reasoning=True,
            # gpt-oss: the `reasoning` field goes back (recorded: wire-samples
            # openai-compat-cerebras/reasoning-multi-turn.json); the other reasoning models
            # (GLM, Qwen) take the earlier turn's reasoning inline as <think>…</think> before
            # the answer, as a recorded multi-turn exchange sent it and the service accepted.
            echo_styles={"gpt-oss*": "reasoning", "*": "think_tags"},
            effort="effort",
            rejects=_CEREBRAS,
            parallel_tool_calls=False,  # unsupported, per the same page
            models={"gpt-oss*": REASONING_CHAT},
            default=CHAT,
            differs="rejects frequency/presence penalties and logit_bias; no "
            "`parallel_tool_calls`; `reasoning` becomes thinking and goes back (gpt-oss: as "
            "`reasoning`; other models: inline `<think>…</think>`); `time_info`",
            docs="https://inference-docs.cerebras.ai/resources/openai",
            embed_refusal="Cerebras Inference serves no embedding models",
            embed_docs="https://inference-docs.cerebras.ai/models/overview",
        ),
        Profile(
            "huggingface",
            "https://router.huggingface.co/v1",
            "HF_TOKEN",
            "Hugging Face Inference Providers (router)",
            reasoning="think_tags",
            echo_reasoning=True,
            differs="reasoning inline as `<think>…</think>` (split out, sent back inline)",
            docs="https://huggingface.co/docs/inference-providers/index",
            embed_refusal="the router's OpenAI-compatible /v1 serves chat completions only; "
            "embeddings are the feature-extraction task, another wire",
            embed_docs="https://huggingface.co/docs/inference-providers/tasks/feature-extraction",
        ),
    ]
    return {p.prefix: p for p in found}


PROFILES: dict[str, Profile] = _profiles()
