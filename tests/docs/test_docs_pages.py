"""The Python blocks of the guide pages and the READMEs (PyPI pages) run as written, offline.

These pages show real model names (``openai:gpt-4o-mini``, ``sonnet``), as a
user would write them. The test runs each page's blocks in order, in one
namespace (a later block continues an earlier one, as a reader would), with
the vendor prefixes answered by scripted stand-ins (``llmport.testing``) and
the vendor plugins not loaded: what is checked is that every name, argument
and behaviour the snippet relies on exists in llmport, not a vendor's answer.
Files a snippet opens (``photo.jpg``) are made in the test's empty folder.

Blocks that cannot run anywhere but in the reader's own setup (a signature
listing, a hook implementation outside a plugin) begin with a marker comment
listed in ``SKIP_MARKS``.
"""

from __future__ import annotations

import json
import linecache
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llmport.cli.demo import tiny_png
from llmport.messages.types import Request, Response, Usage
from llmport.plugins import host as plugins_module
from llmport.plugins.hookspecs import hookimpl
from llmport.plugins.host import add_global_plugin, remove_global_plugin
from llmport.provider.contract import ProviderInfo
from llmport.testing import ScriptedProvider, Step, respond

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [
    "quickstart.md",
    "cli.md",
    "configuration.md",
    "concepts/content.md",
    "concepts/runtime.md",
    "dag.md",
    "embeddings.md",
    "media.md",
    "fix.md",
    "security.md",
    "testing.md",
    "hooks.md",
    "scaling.md",
    "durable.md",
    "production.md",
    "outages.md",
    "providers/openai.md",
    "providers/openai-compatible.md",
    "providers/anthropic.md",
    "providers/gemini.md",
    "providers/bedrock.md",
    "providers/vertex.md",
    "providers/cohere.md",
    "providers/voyage.md",
]
#: READMEs whose example needs a service the test suite cannot provide offline.
NOT_RUN = {
    "plugins/postgres/README.md": "a PostgreSQL server at db.internal",
    "plugins/dbos/README.md": "a PostgreSQL server at db.internal",
    "plugins/mcp/README.md": "npx downloading @modelcontextprotocol/server-filesystem",
}
PLUGIN_READMES = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("plugins/*/README.md"))
ALL_READMES = ["README.md", *PLUGIN_READMES]
READMES = [r for r in ALL_READMES if r not in NOT_RUN]
#: First lines of blocks that are sketches, not programs (the tools docs' convention).
SKIP_MARKS = ("# my_tools/__init__.py", "# signature", "# sketch:")
VENDORS = (
    "openai",
    "openai-responses",
    "anthropic",
    "anthropic-vertex",
    "gemini",
    "gemini-vertex",
    "bedrock",
    "groq",
    "ollama",
)


def blocks(path: Path) -> list[str]:
    text = path.read_text()
    found = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    return [b for b in found if not b.startswith(SKIP_MARKS)]


def example_value(schema: dict[str, Any]) -> Any:
    """The smallest value of a JSON schema (what a stand-in model answers)."""
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema:
        return example_value(schema["anyOf"][0])
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties", {})
        return {k: example_value(props[k]) for k in schema.get("required", props)}
    return {"string": "x", "integer": 0, "number": 0.0, "boolean": False}.get(kind, [])


def answer(request: Request) -> Response:
    if request.response_format is not None:
        text = json.dumps(example_value(request.response_format.schema))
    else:
        text = f"({request.model} answers)"
    return Response(text=text, usage=Usage(input_tokens=10, output_tokens=3, requests=1))


class StandIns:
    """Every vendor prefix, with the vendors' aliases, answered by a scripted model."""

    class _Endless:
        def next_step(self, request: Request) -> Step:
            return respond(answer)

    def __init__(self) -> None:
        self.aliases: dict[str, dict[str, str]] = {}
        for vendor in ("openai", "anthropic", "gemini", "bedrock"):
            module = __import__(f"llmport_{vendor}.models", fromlist=["ALIASES"])
            self.aliases[vendor] = dict(module.ALIASES)
        from llmport_anthropic.models import VERTEX_ALIASES

        self.aliases["anthropic-vertex"] = dict(VERTEX_ALIASES)

    @hookimpl
    def llmport_providers(self, register: Any) -> None:
        from llmport.testing import ALL_INPUTS

        for prefix in VENDORS:
            register(
                ProviderInfo(
                    prefix=prefix,
                    factory=lambda settings, info: ScriptedProvider(
                        self._Endless(), settings, info  # type: ignore[arg-type]
                    ),
                    aliases=self.aliases.get(prefix, {}),
                    default=ALL_INPUTS,
                    plugin="tests.docs",
                )
            )


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    plugin = StandIns()
    # The pages' relative paths (their attachments, runs.sqlite) land here, not in the checkout.
    monkeypatch.chdir(tmp_path)
    # the vendor plugins stay unloaded; the other entry points (toolsets, stores) load
    monkeypatch.setenv("LLMPORT_PLUGINS", "example_tools,mcp,postgres")
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(key, "sk-docs-test")
    jpeg = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
    pdf = b"%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
    files = {"photo.jpg": jpeg, "invoice.pdf": pdf, "screenshot.png": tiny_png()}
    files["kiwi.png"] = tiny_png()
    for name, data in files.items():
        Path(name).write_bytes(data)
    before = plugins_module._global_plugins[0]
    add_global_plugin(plugin)
    yield
    remove_global_plugin(plugin)
    # a snippet may install process-wide hooks (the otel README's instrument()): undo them
    plugins_module._global_plugins[0] = before


def run_page(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType(f"llmport_doc_page_{path.stem}")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # dataclasses look their module up
    for index, code in enumerate(blocks(path)):
        name = f"{path.relative_to(ROOT)}[{index}]"
        # inspect reads a block's source as from a file (fix() needs the function's source)
        monkeypatch.setitem(linecache.cache, name, (len(code), None, code.splitlines(True), name))
        exec(compile(code, name, "exec"), module.__dict__)


@pytest.mark.usefixtures("stand_ins")
@pytest.mark.parametrize("page", [*PAGES, *READMES])
def test_page_runs(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    run_page((DOCS if page in PAGES else ROOT) / page, monkeypatch)


def test_every_page_with_python_is_run_by_a_docs_test() -> None:
    from tools.test_tools_docs import PAGES as TOOLS_PAGES  # type: ignore[import-not-found]

    # batch.md runs against its cassettes in tests/batch/test_batch_docs.py, the
    # server-state and background pages in tests/openai/test_openai_state_docs.py
    state_pages = {"features/server-state.md", "features/background.md"}
    covered = {*PAGES, *TOOLS_PAGES, "batch.md", *state_pages}
    with_code = {
        str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if "```python" in p.read_text()
    }
    assert with_code - covered == set()
    assert set(NOT_RUN) <= set(ALL_READMES) and len(READMES) >= 8
