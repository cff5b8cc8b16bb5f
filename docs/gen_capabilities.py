"""Print docs/capabilities.md from what the installed plugins register.

    uv run python docs/gen_capabilities.py > docs/capabilities.md

tests/test_docs_capabilities.py fails when the page and the plugins disagree.
"""

from __future__ import annotations

from llmport.plugins.host import PluginHost
from llmport.types import ModelCapabilities

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

This page is generated from the plugins' registrations by
`docs/gen_capabilities.py`; a test keeps it in step.
"""


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
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
