"""Print docs/capabilities.md from what the installed plugins register.

    uv run python docs/gen_capabilities.py > docs/capabilities.md

tests/test_docs_capabilities.py fails when the page and the plugins disagree.
"""

from __future__ import annotations

from llmport.messages.types import ModelCapabilities
from llmport.plugins.host import PluginHost

HEADER = """# Capability table

What each provider plugin declares, per model pattern (first match wins;
`(other)` is the default for models not listed). The runtime checks every
request against these **before** sending it: a block or feature a model
cannot take is converted by a documented rule (text-like files are inlined
as text) or rejected with `UnsupportedContentError` /
`UnsupportedFeatureError`.

Each provider has two tables: what a model takes (inputs, tools,
structured output, streaming), then its depth: context window and output
limit, `reasoning=`, prompt caching, citations, provider-native tools
(`NativeTool(...)`), text-like files sent as the vendor's own document
part (`"send": "native"`), and a token-counting endpoint
(`rt.count_tokens`). The mapping of each feature per vendor is on the
provider pages.

A model the tables do not know is sent anyway: it gets its
family's row (a rule such as `*anthropic.claude-*` on Bedrock) or the
`(other)` row, and `llmport.UnknownModelWarning` once per model per
`Runtime`. Fields given through `vendor={...}` and `Tool(vendor=...)` are a
raw passthrough: nothing below applies to them (the SDK's own validation
may). Every refusal llmport makes before the wire is listed under
[Refusals](#refusals), with the vendor document it rests on (the code that
enforces a rule cites the same document), and so are the documented
conversions it makes instead of refusing. Media a tool
returns are checked against the same row (the `images`, `audio` and
`native files` columns): they go inside the tool result where the API
holds media there, else in a user turn right after it
([Tools](tools.md#media-from-tools)).

This page is generated from the plugins' registrations by
`docs/gen_capabilities.py`; a test keeps it in step.
"""

#: Every rule that refuses a request before the wire: (rule, vendors, source document).
#: Each rule carries the same source in a ``# Source:`` comment where it is enforced, cited
#: the same way: ``DOCUMENT, "SECTION"`` (several separated by "; ", notes in parentheses);
#: tests/docs/test_refusal_sources.py checks both ways. The last rows are the documented
#: conversions llmport makes instead of refusing, and llmport's own rules.
REFUSALS: list[tuple[str, str, str]] = [
    # -- the capability table (core: llmport.provider.contract.Provider.check) --
    ("an image, audio or file the model's row does not take (type, size, URL)", "all",
     'Anthropic, "Vision"; Anthropic, "PDF support"; OpenAI, "Images and vision"; '
     'OpenAI, "File inputs"; OpenAI, "Audio"; Gemini API, "Image understanding"; '
     'Gemini API, "Document understanding"; Gemini API, "Audio understanding"; '
     'Bedrock Converse API reference, "ImageBlock"; Bedrock Converse API reference, '
     '"DocumentBlock"'),
    ("`reasoning=` on a model without reasoning", "all",
     "each vendor's list of thinking / reasoning models (the `reasoning` column)"),
    ("a `NativeTool` kind the model's row lacks, or one llmport does not map", "all",
     "each vendor's server-tool pages (the `native tools` column); "
     'Anthropic, "Web search tool"; Anthropic, "Web fetch tool"; '
     'Anthropic, "Code execution tool"; OpenAI, "Using tools"; '
     'OpenAI, "Web search" (Chat Completions: the search models only); '
     'OpenAI, "Image generation" (Responses: the models with the tool); '
     'Bedrock Converse API reference, "SystemTool"'),
    ("`output_modalities=` naming what the model cannot answer with (images: Gemini image "
     "models only)", "all", 'Gemini API, "Image generation" (the models that answer with '
     "images; every other model answers with text)"),
    ("tools on a model without tool use", "all",
     "each vendor's list of models with tool use; "
     'Bedrock, "Supported models and model features" (tool use column)'),
    ("cache marks on a model without prompt caching", "all",
     "each vendor's prompt caching page (supported models; the `caching` column); "
     'Bedrock, "Prompt caching"'),
    ("`output_mode=\"native\"` without a JSON-schema response format; "
     "`response_format` with neither that nor tools (use `\"prompted\"`)", "all",
     "each vendor's structured-output page (supported models)"),
    ("`dimensions=` on an embedding model of fixed size, or a size it does not offer", "all",
     "each vendor's embedding page; "
     'OpenAI API reference, "Create embeddings" (dimensions: text-embedding-3 and later)'),
    ("`rt.generate_image` options the model does not take: `n` over its most per request, a "
     "`size` it does not make, `quality`, `output_format` or `seed` it has not, a prompt over "
     "its length", "openai, xai, gemini-vertex, bedrock",
     'OpenAI API reference, "Create image"; xAI, "Image generation"; '
     'Vertex AI, "Imagen API"; '
     'Amazon Nova User Guide, "Image generation access and usage"; '
     'Amazon Bedrock User Guide, "Amazon Titan Image Generator G1 models"'),
    ("`rt.generate_image` on a model without an image endpoint (every chat and embedding "
     "model, Anthropic, the Gemini Developer API (google-genai serves Imagen on Vertex AI "
     "only), the OpenAI-compatible profiles but xAI)", "all",
     "not a vendor rule: llmport sends image requests to the endpoints it maps (OpenAI "
     "Images, Imagen, Nova Canvas, Titan Image Generator)"),
    # -- Anthropic --
    ("`seed`", "anthropic", 'Anthropic API reference, "Create a Message" (no such field)'),
    ("temperature / top_p outside 0-1, top_k < 1, max_tokens < 1", "anthropic",
     'Anthropic API reference, "Create a Message"'),
    ("temperature, top_p or top_k on Opus 4.7 and later", "anthropic",
     'Anthropic, "Migrating to Claude Opus 4.7"'),
    ("temperature together with top_p on Claude 4.5 / 4.6", "anthropic",
     'Anthropic, "Migrating to Claude 4.5"'),
    ("sampling options other than temperature 1 / top_p >= 0.95 with thinking",
     "anthropic, bedrock", 'Anthropic, "Building with extended thinking", "Feature compatibility"'),
    ("forced `tool_choice` (\"required\" or a named tool), or a forced output tool, "
     "with extended thinking (a budget; adaptive thinking takes them, as a recorded exchange "
     "shows)", "anthropic, bedrock",
     'Anthropic, "Building with extended thinking", "Extended thinking with tool use"'),
    ("`budget_tokens` on Opus 4.7 and later (adaptive only)", "anthropic",
     'Anthropic, "Migrating to Claude Opus 4.7"'),
    ("`budget_tokens` below 1,024, or not below max_tokens", "anthropic, bedrock",
     'Anthropic, "Building with extended thinking"'),
    ("dynamic thinking (`budget_tokens=-1`) on a budget-only model", "anthropic",
     'Anthropic, "Adaptive thinking" (supported models)'),
    ("an effort level the model does not take", "anthropic", 'Anthropic, "Effort"'),
    ("`reasoning=` on Claude 3.5 / 3", "anthropic",
     'Anthropic, "Building with extended thinking", "Supported models"'),
    ("strict tool schemas on models without structured outputs", "anthropic",
     'Anthropic, "Structured outputs" (supported models)'),
    ("media over 32 MB base64 in one request; an image over 5 MB", "anthropic",
     'Anthropic API overview, "Request size limits"; Anthropic, "Vision"'),
    ("audio input", "anthropic, bedrock",
     'Anthropic API reference, "Create a Message" (content blocks); '
     'Bedrock Converse API reference, "ContentBlock"'),
    ("cache ttl other than 5m / 1h; cache key or retention", "anthropic, bedrock",
     'Anthropic, "Prompt caching"; Bedrock Converse API reference, "CachePointBlock"'),
    ("more than 4 explicit cache marks", "anthropic, bedrock",
     'Anthropic, "Prompt caching" (up to 4 breakpoints); Bedrock, "Prompt caching"'),
    ("a non-streamed request with a very large max_tokens and no timeout", "anthropic",
     'the anthropic SDK README, "Long requests" (the SDK refuses it)'),
    ("`response_format` with `tool_choice=\"none\"` on a forced-tool model", "anthropic, bedrock",
     'Anthropic, "Implement tool use" (tool_choice none); '
     'Bedrock Converse API reference, "ToolChoice" (no none)'),
    ("files (upload, delete, list) on Claude on Vertex AI", "anthropic-vertex",
     'Anthropic, "Files API" (not on Amazon Bedrock or Google Vertex AI)'),
    # -- Bedrock --
    ("`seed`; temperature above 1", "bedrock",
     'Bedrock Converse API reference, "InferenceConfiguration"'),
    ("`top_k` on models other than Claude (use `vendor=`)", "bedrock",
     'Bedrock, "Inference request parameters" (per model)'),
    ("a system prompt on Titan, Mistral 7B / Mixtral, Cohere Command", "bedrock",
     'Bedrock, "Supported models and model features" (Converse)'),
    ("`tool_choice` \"required\" / named on models that take auto only", "bedrock",
     'Bedrock Converse API reference, "ToolChoice"'),
    ("`tool_choice=\"none\"` after tool calls in the conversation", "bedrock",
     'Bedrock Converse API reference, "ToolConfiguration" (toolConfig required with toolUse)'),
    ("cache ttl before Claude 4.5", "bedrock",
     'Bedrock, "Prompt caching"; Bedrock Converse API reference, "CachePointBlock"'),
    ("`reasoning=` on a model with no documented reasoning field", "bedrock",
     'Bedrock, "Inference request parameters" (per model)'),
    ("a token budget or a summary on Nova 2 reasoning", "bedrock",
     'Bedrock, "Amazon Nova 2 extended thinking" (reasoningConfig)'),
    ("image formats other than png/jpeg/gif/webp; documents over 4.5 MB; URLs other than "
     "s3:// (Nova only)", "bedrock",
     'Bedrock Converse API reference, "ImageBlock"; Bedrock Converse API reference, '
     '"DocumentBlock"; Bedrock Converse API reference, "S3Location"'),
    # -- Gemini --
    ("`labels` on the Developer API", "gemini",
     'Gemini API reference, "GenerateContentRequest" (labels are Vertex AI\'s)'),
    ("more than 5 stop sequences", "gemini", 'Gemini API reference, "GenerationConfig"'),
    ("`reasoning=` on Gemini 2.0 / 1.5 / Gemma; thinking off on 2.5 Pro and Gemini 3; "
     "levels or budgets outside the model's range", "gemini", 'Gemini API, "Gemini thinking"'),
    ("function tools with native tools, or `response_format` with tools, before Gemini 3",
     "gemini", 'Gemini API, "Structured output"; Gemini API, "Tool combination"'),
    ("inline media over 20 MB; URLs other than Files API / YouTube (Vertex AI: gs://, https); "
     "a URL without its media type", "gemini",
     'Gemini API, "File input methods"; Gemini API reference, "FileData"'),
    ("a forced `tool_choice` with native tools only (no function to force)", "gemini",
     'Gemini API reference, "FunctionCallingConfig"'),
    ("cache key, retention or ttl (implicit caching only)", "gemini",
     'Gemini API, "Context caching"'),
    ("batches on Vertex AI", "gemini",
     'Vertex AI, "Batch prediction for Gemini" (Cloud Storage / BigQuery input, not inline)'),
    # -- OpenAI --
    ("`budget_tokens` (efforts only); an effort the model family does not take", "openai",
     'OpenAI, "Reasoning models"; OpenAI API reference, "Create a model response" '
     '(reasoning.effort); OpenAI API reference, "Create chat completion" (reasoning_effort)'),
    ("reasoning summaries on Chat Completions", "openai",
     'OpenAI API reference, "Create chat completion" (no reasoning summary)'),
    ("`stop` / `seed` on the Responses API", "openai-responses",
     'OpenAI API reference, "Create a model response"'),
    ("audio other than wav/mp3 or on non-audio models (Chat); audio on Responses; "
     "audio or files by URL", "openai",
     'OpenAI API reference, "Create chat completion" (input_audio, file); '
     'OpenAI API reference, "Create a model response" (input content types)'),
    ("anything but text and tool calls in a Chat Completions assistant turn", "openai",
     'OpenAI API reference, "Create chat completion" (assistant message)'),
    ("document citations", "openai", 'OpenAI, "Web search"; OpenAI, "File search" (annotations)'),
    ("a cache ttl other than the explicit breakpoint lifetime", "openai",
     'OpenAI, "Prompt caching"'),
    ("`NativeTool(\"image_generation\")` options the Responses API does not document",
     "openai-responses", 'OpenAI API reference, "Image generation tool"'),
    ("a schema strict mode cannot express, with `strict=True`", "openai",
     'OpenAI, "Structured Outputs", "Supported schemas"'),
    # -- documented conversions llmport makes instead of refusing --
    ("(not refused) media a tool returns, where the API holds none in a tool result: "
     "sent in a user turn right after it", "openai (Chat), bedrock, gemini",
     'OpenAI API reference, "Create chat completion" (tool message: text only); '
     'Bedrock, "Supported models and model features" (Claude 3 / 4 and Nova hold media); '
     'Gemini API, "Function calling", "Multimodal function responses" (Gemini 3)'),
    ("(not refused) media in an assistant turn, where the API holds none (an earlier "
     "answer's image continued on another vendor): named there, sent in the next user turn",
     "openai, anthropic, bedrock",
     'OpenAI API reference, "Create chat completion" (assistant message: text); '
     'OpenAI API reference, "Create a model response" (assistant message: output text); '
     'Anthropic API reference, "Messages" (images are user content); '
     'Bedrock Converse API reference, "Message" (images and documents in user turns only)'),
    # -- llmport's own (not capability refusals) --
    ("`vendor={\"anthropic\": {\"stream\": ...}}`", "anthropic",
     "not a vendor rule: llmport must know whether it reads a stream (use stream())"),
    ("an option name the provider does not model; `NativeTool` options llmport does not map",
     "all", "not a vendor rule: unknown names are an OptionError (send them with vendor=)"),
    ('`output_mode="tool"` or `choices=` in a batch; batch on a provider without a batch API',
     "all", "not a vendor rule: a batch sends one request per item, with no tool loop"),
    ("streaming, or `tool_choice=\"none\"`, on a model whose row sets it off", "all",
     "not a vendor rule: a plugin's own table may set either off (no shipped table does)"),
]


def _short(media_types: frozenset[str]) -> str:
    return ", ".join(sorted(m.split("/")[-1] for m in media_types)) or "-"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def row(pattern: str, caps: ModelCapabilities) -> str:
    limit = f"{caps.max_image_bytes // (1024 * 1024)} MiB" if caps.max_image_bytes else "-"
    return (
        f"| `{pattern}` | {', '.join(sorted(caps.input_modalities))} | {_short(caps.image_types)} "
        f"| {_short(caps.audio_types)} | {_short(caps.file_types)} | {_yes(caps.native_tools)} "
        f"| {_yes(caps.native_structured_output)} | {_yes(caps.streaming)} "
        f"| {_yes(caps.tool_choice_none)} | {limit} |"
    )


def _tokens(n: int | None) -> str:
    if not n:
        return "-"
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{round(n / 1000)}k"


def depth_row(pattern: str, caps: ModelCapabilities) -> str:
    native = ", ".join(sorted(caps.native_tool_kinds)) or "-"
    return (
        f"| `{pattern}` | {_tokens(caps.context_window)} | {_tokens(caps.max_output_tokens)} "
        f"| {_yes(caps.reasoning)} | {_yes(caps.caching)} | {_yes(caps.citations)} "
        f"| {native} | {_short(caps.native_text_files)} | {_yes(caps.count_tokens)} |"
    )


def refusals() -> list[str]:
    """The "Refusals" section: :data:`REFUSALS` as a table."""
    lines = ["\n## Refusals\n", "| rule | vendors | source |", "|---|---|---|"]
    lines += [f"| {rule} | {vendors} | {source} |" for rule, vendors, source in REFUSALS]
    return lines


def render() -> str:
    lines = [HEADER]
    for prefix, info in sorted(PluginHost(load_entry_points=True).providers().items()):
        lines.append(f"\n## `{prefix}:` — {info.description}\n")
        if info.aliases:
            aliases = ", ".join(f"`{a}` → `{t}`" for a, t in sorted(info.aliases.items()))
            lines.append(f"Aliases: {aliases}\n")
        lines.append(
            "| model | inputs | images | audio | native files | tools | structured output "
            "| streaming | tool_choice none | max image |"
        )
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        for pattern, caps in info.models.items():
            lines.append(row(pattern, caps))
        lines.append(row("(other)", info.default))
        lines.append("")
        lines.append(
            "| model | window | max output | reasoning | caching | citations | native tools "
            "| native text files | count tokens |"
        )
        lines.append("|---|---|---|---|---|---|---|---|---|")
        for pattern, caps in info.models.items():
            lines.append(depth_row(pattern, caps))
        lines.append(depth_row("(other)", info.default))
    lines += refusals()
    return "\n".join(lines) + "\n"


def _media_in(caps: ModelCapabilities) -> str:
    kinds = sorted(caps.input_modalities - {"text"})
    return ", ".join(kinds) or "text only"


def _media_out(caps: ModelCapabilities) -> str:
    out = sorted(caps.output_modalities - {"text"})
    made = ["images (`output_modalities=`)"] if out else []
    if "image_generation" in caps.native_tool_kinds:
        made.append('images (`NativeTool("image_generation")`)')
    if caps.images is not None:
        return "images only (`rt.generate_image`)"
    return ", ".join(made) or "text"


def media_table() -> str:
    """docs/media.md's table: per provider and model pattern, the media in and out.

    Rows are the chat models of each capability table (embedding models aside);
    patterns with the same media in and out are one row (the default's row is
    "every other model").
    """
    lines = ["| provider | models | media in | answers with |", "|---|---|---|---|"]
    for prefix, info in sorted(PluginHost(load_entry_points=True).providers().items()):
        rows: dict[tuple[str, str], list[str]] = {}
        for pattern, caps in [*info.models.items(), ("(other)", info.default)]:
            if caps.embeddings:
                continue
            rows.setdefault((_media_in(caps), _media_out(caps)), []).append(f"`{pattern}`")
        for (media_in, media_out), patterns in rows.items():
            if "`(other)`" in patterns:  # the default's row: named by what it is not
                models = "every other model" if len(rows) > 1 else "every model"
            else:
                models = ", ".join(patterns)
            lines.append(f"| `{prefix}:` | {models} | {media_in} | {media_out} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
