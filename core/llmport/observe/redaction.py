"""Secrets never leave: one place that knows what a secret looks like.

Two rules, applied together by :func:`redact`:

* **shapes**: anything that looks like a credential (``sk-...``, ``AIza...``,
  ``AKIA...``, ``Bearer ...``, ``x-api-key: ...``, ``?key=...``) is masked;
* **values**: the configured key values themselves are masked literally,
  whatever their format (a gateway's ``LEAKcustomproxykey-...`` has no known
  shape). Values come from the vendors' usual environment variables (read
  when a Runtime is created), from the settings providers are created with,
  and from whatever a plugin resolves itself (a credential chain), all
  through :func:`register_secret`.

:func:`install_log_redaction` makes every log record of llmport's and the
vendor SDKs' loggers pass through :func:`redact` (messages, arguments and
formatted tracebacks), including their child loggers such as
``botocore.auth``.

Why module state here: log records are process-wide by design (the logging
module is global), so the values to mask must be visible to every record of
the process. The set only grows, holds nothing but the secrets the process
was configured with, and is guarded by a lock.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

__all__ = [
    "LOGGERS",
    "SECRET_ENV_VARS",
    "install_log_redaction",
    "redact",
    "redact_settings",
    "register_secret",
]

#: Credential shapes vendors use, and the places they appear in echoed requests.
_SECRET_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Vendors echo keys half-masked ("sk-proj-****ab12"): the stars are part of the match.
    (re.compile(r"\b(sk-(?:ant-|proj-)?|sess-)[A-Za-z0-9_\-*]{8,}"), r"\1***"),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"), "AIza***"),
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), r"\1***"),
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/\-]+=*"), r"\1 ***"),
    (re.compile(r"(?i)([?&](?:key|api_key|access_token|token)=)[^&\s\"']+"), r"\1***"),
    (
        re.compile(
            r"(?i)\b((?:x-api-key|x-goog-api-key|api-key|api_key|authorization|"
            r"aws_secret_access_key|aws_session_token|x-amz-security-token)"
            r"[\"']?\s*[:=]\s*[\"']?)(?!\*\*\*)[^\s\"',}]+"
        ),
        r"\1***",
    ),
    # SigV4: "Credential=AKIA.../20250101/us-east-1/bedrock/aws4_request, Signature=..."
    (re.compile(r"(?i)\b(Credential=)[^\s,/]+"), r"\1***"),
    (re.compile(r"(?i)\b(Signature=)[0-9a-f]{16,}"), r"\1***"),
)
_SECRET_SETTING = re.compile(
    r"(?i)(api_?key|secret|token|password|credential|authorization|access_key)"
)

#: The environment variables whose values are always masked literally.
SECRET_ENV_VARS = (
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
)
#: Shorter values are not masked literally: they would mangle ordinary text.
MIN_SECRET_LENGTH = 8

_lock = threading.Lock()
_registered: set[str] = set()
_longest_first: list[tuple[str, ...]] = [()]  # the registered values, longest first (cached)


def register_secret(value: object) -> None:
    """Mask ``value`` literally in every :func:`redact` from now on (no-op if short)."""
    if isinstance(value, str) and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            if value not in _registered:
                _registered.add(value)
                _longest_first[0] = tuple(sorted(_registered, key=len, reverse=True))


def register_settings(settings: Mapping[str, object]) -> None:
    """Register every secret-named value of ``settings`` (``api_key``, ...)."""
    for value in secret_values(settings):
        register_secret(value)


def register_environment() -> None:
    """Register the values of :data:`SECRET_ENV_VARS` set now (each Runtime does this)."""
    for name in SECRET_ENV_VARS:
        register_secret(os.environ.get(name))


def secret_values(settings: Mapping[str, object]) -> tuple[str, ...]:
    """The secret-named string values of ``settings`` (``api_key``, ``aws_secret_access_key``)."""
    return tuple(
        v
        for k, v in settings.items()
        if isinstance(v, str) and len(v) >= MIN_SECRET_LENGTH and _SECRET_SETTING.search(k)
    )


def known_secrets() -> tuple[str, ...]:
    """The values masked literally, longest first (so no secret is half-masked)."""
    return _longest_first[0]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with configured key values and credential shapes replaced by ``***``."""
    for secret in (*secrets, *_longest_first[0]):
        if secret and len(secret) >= MIN_SECRET_LENGTH and secret in text:
            text = text.replace(secret, "***")
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact_settings(settings: Mapping[str, object]) -> dict[str, object]:
    """A copy of ``settings`` whose secret-named values (``api_key``, ...) are ``***``."""
    return {k: "***" if _SECRET_SETTING.search(k) and v else v for k, v in settings.items()}


# --- logging ---------------------------------------------------------------------

#: Loggers (and their children) whose records are redacted.
LOGGERS = (
    "llmport",
    "openai",
    "anthropic",
    "google_genai",
    "google.genai",
    "botocore",
    "boto3",
    "urllib3",
    "httpx",
    "httpx2",
    "httpcore",
    "aiohttp",
    "mcp",
)


def _covered(name: str) -> bool:
    return any(name == root or name.startswith(root + ".") for root in LOGGERS)


def redact_record(record: logging.LogRecord) -> logging.LogRecord:
    """Redact a record in place: message and arguments folded, traceback pre-formatted."""
    import logging

    try:
        message = record.getMessage()
    except Exception:  # a record whose arguments do not fit its format: keep it as text
        message = f"{record.msg!r} % {record.args!r}"
    record.msg = redact(message)
    record.args = None
    if record.exc_info and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redact(record.exc_text)
        record.exc_info = None  # handlers use exc_text; the live exception may hold secrets
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
    return record


_installed: list[bool] = []


def install_log_redaction() -> None:
    """Redact every record of the covered loggers, whatever handler receives it.

    A filter on a logger does not see its children's records, and handlers
    belong to the application, so the redaction sits in the log record
    factory (wrapping, never replacing, any factory already installed).
    Idempotent. Also registers the key values of the environment.
    """
    import logging  # here, not at import: ``import llmport`` stays cheap

    register_environment()
    with _lock:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: object, **kwargs: object) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            if _covered(record.name):
                redact_record(record)
            return record

        logging.setLogRecordFactory(factory)
        _installed.append(True)
