"""No cassette may hold anything that looks like a credential."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
CASSETTES = ROOT / "cassettes"
#: Cassettes shipped inside packages (the demo's, in the core wheel).
PACKAGED = ROOT / "core" / "llmport" / "cli" / "_demo"

SECRET_PATTERNS = {
    "OpenAI key": re.compile(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    "Anthropic key": re.compile(r"sk-ant-[A-Za-z0-9_-]{20,}"),
    "AWS access key id": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    "bearer token": re.compile(r"Bearer\s+[A-Za-z0-9._~+/=-]{12,}"),
    "OAuth token": re.compile(r"\bya29\.[A-Za-z0-9._-]{20,}"),
    "AWS ARN with account id": re.compile(r"arn:aws[a-z-]*:[a-z0-9-]+:[a-z0-9-]*:\d{12}:"),
    "AWS signature": re.compile(r"Signature=[0-9a-f]{64}"),
}
SECRET_HEADERS = {"authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie", "set-cookie",
                  "x-amz-security-token"}


def cassette_files() -> list[Path]:
    found = [*CASSETTES.rglob("*"), *PACKAGED.rglob("*")]
    return sorted(p for p in found if p.suffix in (".yaml", ".yml", ".json"))


def test_the_shipped_demo_cassette_is_scanned() -> None:
    assert PACKAGED / "trip.yaml" in cassette_files()


def find_secrets(text: str) -> list[str]:
    """Names of the secret patterns found in ``text``."""
    return [name for name, pattern in SECRET_PATTERNS.items() if pattern.search(text)]


def secret_headers(data: object) -> list[str]:
    """Credential headers kept in a vcrpy cassette (filtered ones are absent)."""
    found = []
    for interaction in (data or {}).get("interactions", []) if isinstance(data, dict) else []:
        for side in ("request", "response"):
            headers = (interaction.get(side) or {}).get("headers") or {}
            found += [k for k in headers if k.lower() in SECRET_HEADERS]
    return found


def test_scanner_catches_secrets() -> None:
    # The scan must be able to fail: each pattern matches a realistic fake.
    samples = {
        "OpenAI key": "sk-proj-" + "a1B2" * 10,
        "Anthropic key": "sk-ant-api03-" + "x9Y8" * 10,
        "AWS access key id": "AKIA" + "ABCDEFGHIJKLMNOP",
        "Google API key": "AIza" + "b" * 35,
        "bearer token": "Authorization: Bearer abcdefghijklmnop",
        "AWS ARN with account id": "arn:aws:bedrock:us-east-1:123456789012:foo",
    }
    for name, text in samples.items():
        assert name in find_secrets(text), name
    assert secret_headers({"interactions": [{"request": {"headers": {"Authorization": ["x"]}}}]})


@pytest.mark.parametrize("path", cassette_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_cassette_has_no_secrets(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    assert not find_secrets(text), f"{path}: looks like it holds a secret"
    if path.suffix in (".yaml", ".yml"):
        assert not secret_headers(yaml.safe_load(text)), f"{path}: credential header not filtered"


def test_every_cassette_is_described_in_readme() -> None:
    readme = (CASSETTES / "README.md").read_text()
    missing = [str(p.relative_to(ROOT)) for p in cassette_files() if p.name not in readme]
    assert not missing, f"cassettes/README.md does not say how these were made: {missing}"
