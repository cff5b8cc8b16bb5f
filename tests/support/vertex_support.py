"""Claude and Gemini on Vertex AI: fake Google credentials and the cassette scenarios.

Shared by ``tests/anthropic/test_anthropic_vertex.py``,
``tests/gemini/test_gemini_vertex.py`` and ``tests/make_vertex_cassettes.py``
(which records ``cassettes/vertex/``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llmport import RunResult, Runtime
from support.api_modes import run_via

PROJECT = "llmport-test"


class FakeCredentials:
    """What the Vertex AI clients ask of google-auth credentials: a token, refreshed
    when missing (``{prefix}-{n}`` after the n-th refresh); ``token=`` holds one from
    the start (never refreshed, so a test knows the one secret it must not see leak)."""

    def __init__(self, prefix: str = "vertex-token", token: str | None = None) -> None:
        self.prefix = prefix
        self.token: str | None = token
        self.expired = False
        self.quota_project_id = None
        self.refreshes = 0

    @property
    def valid(self) -> bool:
        return self.token is not None

    def refresh(self, request: Any) -> None:
        self.refreshes += 1
        self.token = f"{self.prefix}-{self.refreshes}"


@dataclass(frozen=True)
class Scenario:
    """One cassette: which provider, which sample's answers, which call."""

    cassette: str
    provider: str
    region: str
    sample: str
    model: str
    stream: bool
    prompt: str
    system: str

    def host(self) -> str:
        return f"https://{self.region}-aiplatform.googleapis.com"

    def settings(self) -> dict[str, Any]:
        """The provider settings of the recording and of the replay (no base_url there)."""
        if self.provider == "anthropic-vertex":
            return {"region": self.region, "project_id": PROJECT, "access_token": "recording"}
        return {"project": PROJECT, "location": self.region, "credentials": FakeCredentials()}


SCENARIOS = {
    s.cassette: s
    for s in [
        Scenario(
            "vertex/claude_text.yaml",
            "anthropic-vertex",
            "us-east5",
            "anthropic/text.json",
            "claude-sonnet-4-5@20250929",
            False,
            "What is the capital of France?",
            "You are a helpful assistant.",
        ),
        Scenario(
            "vertex/claude_stream.yaml",
            "anthropic-vertex",
            "us-east5",
            "anthropic/stream-text.json",
            "claude-haiku-4-5@20251001",
            True,
            "Say just hello",
            "Be brief.",
        ),
        Scenario(
            "vertex/gemini_text.yaml",
            "gemini-vertex",
            "us-central1",
            "gemini/text.json",
            "gemini-2.5-flash",
            False,
            "Hello!",
            "You are a chatbot.",
        ),
        Scenario(
            "vertex/gemini_stream.yaml",
            "gemini-vertex",
            "us-central1",
            "gemini/stream-text.json",
            "gemini-2.5-flash",
            True,
            "What is the capital of France?",
            "You are a helpful chatbot.",
        ),
    ]
}


async def replay(mode: str, name: str, cassette: Any) -> tuple[Any, RunResult]:
    """Run the scenario of cassette ``name`` against it (``cassette`` fixture), sync or async."""
    scenario = SCENARIOS[name]
    with cassette(name) as cass:
        rt = Runtime(
            model=f"{scenario.provider}:{scenario.model}",
            providers={scenario.provider: scenario.settings()},
        )
        result = await run_via(
            mode, rt, scenario.prompt, system=scenario.system, stream=scenario.stream
        )
        rt.close()
    return cass, result
