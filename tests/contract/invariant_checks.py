"""The checks the contract's invariant tests share (vendor boundary, input, secrets), written once.

* what a vendor answers when it echoes the key (:func:`key_echo_reply`);
* what a partial echo of a key is, and the check that finds one
  (:func:`echo`, :class:`PartialLeakCheck`);
* the exceptions reachable from an error that are not llmport's
  (:func:`foreign_exceptions`, walking ``__cause__`` / ``__context__``
  recursively through :func:`leaks.chain`);
* DEBUG logging of every logger a secret could reach (:func:`debug_logging`);
* the loopback stand-ins for a vendor's batch API (:func:`batch_settings`,
  :func:`ended_job`, :data:`JOB_IDS`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

import pytest
from leaks import LeakCheck, chain
from llmport import hookimpl, tool
from llmport.errors import ExecFailed, LlmportError
from llmport.plugins.host import PluginHost
from llmport.testing.loopback import LoopbackServer, RecordedRequest, Reply
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from wire import Wire

__all__ = [
    "AUTH_HEADERS",
    "BEDROCK_BATCH_OPTIONS",
    "JOB_IDS",
    "NO_BATCH",
    "NO_COUNT",
    "LeakyToolset",
    "PartialLeakCheck",
    "attempt_errors",
    "batch_settings",
    "debug_logging",
    "deep",
    "echo",
    "echo_slice",
    "ended_job",
    "foreign_exceptions",
    "fragments",
    "key_echo_reply",
    "plain_word",
    "serve_calls",
]

#: Request headers that carry a key (what an echoing vendor quotes back).
AUTH_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "api-key", "x-amz-security-token")

#: Loggers whose DEBUG records are captured (the root logger is set to DEBUG as well).
LOGGERS = (
    "llmport",
    "openai",
    "anthropic",
    "google_genai",
    "httpx",
    "httpx2",
    "httpcore",
    "botocore",
    "botocore.auth",
    "botocore.endpoint",
    "boto3",
    "urllib3",
)

#: The public prefixes of vendor keys: the same for every key, so not a leak on their own.
PUBLIC_PREFIXES = ("sk-ant-api03-", "sk-proj-", "sk-", "AIza", "AKIA")


def debug_logging(caplog: pytest.LogCaptureFixture) -> None:
    """Capture DEBUG records of llmport, the vendor SDKs and their HTTP clients."""
    caplog.set_level(logging.DEBUG)
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)


# --- the vendor echoing the key ---------------------------------------------------------------


def key_echo_reply(
    wire: Wire,
    status: int,
    quoted: list[str],
    headers: dict[str, str] | None = None,
    *,
    as_200: bool = False,
) -> Reply:
    """The vendor's error for ``status`` quoting ``quoted`` and every auth header it received.

    ``as_200``: the same error object sent with status 200 (a vendor's error
    in a success's clothes), without the header that marks Bedrock's errors.
    """

    def answer(request: RecordedRequest) -> Reply:
        sent = "; ".join(
            f"{name}: {value}"
            for name, value in request.headers.items()
            if name.lower() in AUTH_HEADERS
        )
        message = f"Incorrect API key provided: {' / '.join(quoted)}. You sent: {sent}"
        reply = wire.error_reply(status, message, headers)
        if as_200:
            reply.status = 200
            reply.headers = {
                k: v for k, v in reply.headers.items() if k.lower() != "x-amzn-errortype"
            }
        return reply

    return Reply(handler=answer)


# --- malformed input (I2) ---------------------------------------------------------------------

DEPTH = 20_000  # far past the interpreter's recursion limit


def deep(depth: int = DEPTH) -> dict[str, Any]:
    """``{"x": {"x": ...}}`` nested ``depth`` levels, built without recursion."""
    top: dict[str, Any] = {}
    node = top
    for _ in range(depth):
        node["x"] = {}
        node = node["x"]
    return top


# --- partial echoes (I6: any 8 characters of a key) --------------------------------------------


def body_start(secret: str) -> int:
    return next((len(p) for p in PUBLIC_PREFIXES if secret.startswith(p)), 0)


def echo_slice(secret: str, kind: str) -> tuple[int, int | None]:
    """(start, end) of the part of ``secret`` an echo of ``kind`` shows."""
    if kind == "whole":
        return 0, None
    if kind == "middle":
        start = body_start(secret) + 2
        return start, start + 12
    return -12, None


def echo(secret: str, kind: str) -> str:
    """The part of ``secret`` a ``"whole"``, ``"middle"`` or ``"tail"`` echo shows."""
    start, end = echo_slice(secret, kind)
    return secret[start:end]


def plain_word(text: str) -> bool:
    """Letters of one case: kept by the redactor (it reads as a word, not as a key)."""
    return text.isalpha() and (text.islower() or text.isupper())


def fragments(text: str) -> set[str]:
    """Every 8 consecutive characters of ``text`` past a public prefix, but plain words."""
    body = text[body_start(text) :]
    return {w for w in (body[i : i + 8] for i in range(len(body) - 7)) if not plain_word(w)}


class PartialLeakCheck(LeakCheck):
    """:class:`LeakCheck` for ``secrets`` (whole, or as echoed) and the fragments of ``random``.

    Any 8-character fragment of a random secret is a leak. The test keys of
    the targets read like words ("...-openai-contract-suite"), so for them
    the needles are the echoes themselves: a vendor's response id such as
    "chatcmpl-contract-stream" shares 8 characters with a key without
    echoing anything.
    """

    def __init__(self, secrets: list[str], random: list[str] = []) -> None:  # noqa: B006
        super().__init__([*secrets, *random])
        needles = set(self.needles)
        for text in random:
            needles |= fragments(text)
        self.needles = sorted(needles, key=len, reverse=True)

    @classmethod
    def echoed(cls, secrets: list[str], kinds: tuple[str, ...]) -> PartialLeakCheck:
        """The check for ``secrets`` and their echoes of ``kinds`` (but plain words)."""
        echoes = [echo(s, kind) for s in secrets for kind in kinds]
        return cls([*secrets, *(e for e in echoes if not plain_word(e))])

    def spans(self, where: str, exporter: InMemorySpanExporter) -> None:
        """Every finished span's attributes, status and events."""
        for span in exporter.get_finished_spans():
            label = f"{where} / OTel span {span.name!r}"
            self.text(f"{label} attributes", repr(dict(span.attributes or {})))
            self.text(f"{label} status", repr(span.status.description))
            for event in span.events:
                self.text(f"{label} event {event.name}", repr(dict(event.attributes or {})))

    def bodies(self, where: str, requests: list[RecordedRequest]) -> None:
        """Every request body posted to the vendor."""
        for i, request in enumerate(requests):
            self.text(f"{where} / request body {i} posted to the vendor", request.body.decode())


# --- I1: the chain behind an error -------------------------------------------------------------


def attempt_errors(err: BaseException) -> list[BaseException]:
    """``err``, and the error of each attempt when it is an ExecFailed."""
    if isinstance(err, ExecFailed):
        return [err, *(attempt.error for attempt in err.attempts)]
    return [err]


def foreign_exceptions(err: BaseException) -> list[str]:
    """Every exception reachable from ``err`` (causes, contexts, groups, attempts) not llmport's."""
    return [
        f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
        for one in attempt_errors(err)
        for exc in chain(one)
        if not isinstance(exc, LlmportError)
    ]


# --- batch jobs on the loopback ----------------------------------------------------------------

BEDROCK_BATCH_OPTIONS = {
    "input_uri": "s3://llmport-boundary/in/",
    "output_uri": "s3://llmport-boundary/out/",
    "role_arn": "arn:aws:iam::000000000000:role/llmport-boundary",
}
BEDROCK_JOB = "arn:aws:bedrock:us-east-1:000000000000:model-invocation-job/abc"

#: target id -> why it has no batch API.
NO_BATCH = {
    "callonly": "a plugin written against _call alone has no batch API",
    "callonly-stream": "a plugin written against _call alone has no batch API",
    **dict.fromkeys(
        ("deepseek", "ollama", "mistral", "openrouter"),
        "the service documents no OpenAI-format batch API (rt.batch refuses typed)",
    ),
    "anthropic-vertex": "Vertex AI has no Message Batches API (rt.batch refuses typed)",
    "gemini-vertex": "Vertex AI batches read Cloud Storage / BigQuery, not inline requests "
    "(rt.batch refuses typed)",
}
#: target id -> why ``count_tokens`` never asks it (it estimates locally).
NO_COUNT = {
    "openai-chat": "Chat Completions has no counting endpoint: count_tokens estimates locally",
    "callonly": "a _call-only plugin has no counting endpoint: count_tokens estimates locally",
    "callonly-stream": "a _call-only plugin has no counting endpoint: count_tokens estimates",
    **dict.fromkeys(
        ("groq", "deepseek", "ollama", "mistral", "openrouter"),
        "the service documents no counting endpoint: count_tokens estimates locally",
    ),
}

#: target id -> the vendor id of an existing batch job (targets with a batch API).
JOB_IDS = {
    "openai-chat": "batch_abc",
    "openai-responses": "batch_abc",
    "anthropic": "msgbatch_abc",
    "gemini": "batches/abc",
    "bedrock": BEDROCK_JOB,
    "groq": "batch_abc",  # Groq runs OpenAI's batch format
}


def batch_options(wire: Wire) -> dict[str, Any] | None:
    """The ``batch_options=`` a submission to ``wire`` needs (Bedrock's S3 and role)."""
    return BEDROCK_BATCH_OPTIONS if wire.id == "bedrock" else None


def batch_settings(wire: Wire, server: LoopbackServer) -> dict[str, Any]:
    """Provider settings that point the batch API (Bedrock: control plane, S3) at ``server``."""
    if wire.id == "bedrock":
        return {"control_endpoint_url": server.url, "s3_endpoint_url": server.url}
    return {}


def ended_job(wire: Wire) -> Reply:
    """The vendor's answer for a batch job that has ended (so results are fetched next)."""
    if wire.id.startswith("openai") or wire.id == "groq":
        return Reply(
            json={
                "id": "batch_abc",
                "object": "batch",
                "status": "completed",
                "output_file_id": "file-out",
                "error_file_id": None,
                "request_counts": {"total": 1, "completed": 1, "failed": 0},
            }
        )
    if wire.id == "anthropic":
        counts = {"processing": 0, "succeeded": 1, "errored": 0, "canceled": 0, "expired": 0}
        return Reply(
            json={
                "id": "msgbatch_abc",
                "type": "message_batch",
                "processing_status": "ended",
                "request_counts": counts,
                "cancel_initiated_at": None,
                "results_url": "http://127.0.0.1:1/v1/messages/batches/msgbatch_abc/results",
            }
        )
    if wire.id == "gemini":
        metadata = {"model": "models/gemini-2.5-flash", "state": "BATCH_STATE_SUCCEEDED"}
        return Reply(json={"name": "batches/abc", "metadata": metadata, "done": True})
    return Reply(json={"jobArn": BEDROCK_JOB, "status": "Completed", "modelId": "m"})


# --- llmport mcp serve ---------------------------------------------------------------------------


class LeakyToolset:
    """A plugin registering the toolset ``leaky``: its tools quote the OPENAI_API_KEY.

    ``reveal`` returns ``key[start:end]``; ``explode`` raises a PermissionError quoting it.
    """

    def __init__(self, start: int, end: int | None) -> None:
        self.start, self.end = start, end

    @hookimpl
    def llmport_toolsets(self, register: Callable[..., None]) -> None:
        start, end = self.start, self.end

        @tool
        def reveal() -> str:
            """Say which key this process uses."""
            return f"using {os.environ['OPENAI_API_KEY'][start:end]}"

        @tool
        def explode() -> str:
            """Fail, quoting the key."""
            raise PermissionError(f"key {os.environ['OPENAI_API_KEY'][start:end]} was refused")

        register("leaky", [reveal, explode])


async def serve_calls(plugin: Any, names: list[str]) -> tuple[list[str], list[bool]]:
    """Serve ``plugin``'s toolset ``leaky`` as ``llmport mcp serve`` does; call each tool.

    Returns the text of every content item and, per call, whether it was an error.
    """
    from llmport_mcp.serve import build_server
    from mcp import Client

    host = PluginHost([plugin], load_entry_points=False)
    async with Client(build_server("leaky", host), cache=None) as client:
        answers = [await client.call_tool(name, {}) for name in names]
    texts = [c.text for answer in answers for c in answer.content]
    return texts, [answer.is_error for answer in answers]
