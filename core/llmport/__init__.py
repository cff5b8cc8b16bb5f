"""llmport: a small, typed, plugin-based adapter SDK for LLM providers.

Namespaces by audience: ``llmport`` for users (this module),
:mod:`llmport.plugin_api` for plugin authors, :mod:`llmport.errors` for the
error tree (drawn in its docstring).

``import llmport`` is cheap: it imports no vendor SDK, and the heavier parts
(the runtime, the DAG store, the CLI, testing helpers) load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import (
    AttachmentError,
    AttemptFailure,
    AuthenticationError,
    BackgroundError,
    BackgroundTimeout,
    BadRequestError,
    BatchError,
    BatchTimeout,
    BudgetExceeded,
    CassetteError,
    CassetteMismatch,
    CassetteSecretError,
    ConfigError,
    ContentError,
    ContextWindowExceeded,
    DecisionError,
    ExecFailed,
    FixNotApproved,
    FixRejected,
    GuardrailTripped,
    InputError,
    InputGuardrailTripped,
    LimiterUnavailable,
    LimitWaitTimeout,
    LlmportError,
    MalformedResponseError,
    MaxIterationsExceeded,
    MessageError,
    MissingSessionStoreError,
    ModelBehaviorError,
    NoModelError,
    NotFoundError,
    OptionError,
    OutputGuardrailTripped,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    RunTimeout,
    SchemaError,
    SchemaSubsetError,
    SessionError,
    SessionFileNotFoundError,
    SessionStoreUnavailable,
    StreamInterrupted,
    StructuredOutputError,
    TokenLimitExceeded,
    ToolApprovalRequired,
    UnknownModelError,
    UnknownModelWarning,
    UnknownSessionError,
    UnknownToolError,
    UnsupportedContentError,
    UnsupportedFeatureError,
)

__version__ = "0.1.0"

# Loaded on first attribute access: keeps `import llmport` fast (the runtime
# and tools pull in asyncio and concurrent.futures, the hook markers pluggy;
# the neutral types are ~30 slotted dataclasses, whose creation costs ~20 ms
# on CPython 3.11).
_LAZY = {
    "Backoff": ".controls.retry",
    "CacheControl": ".messages.types",
    "Citation": ".messages.types",
    "CitationEvent": ".messages.types",
    "CustomEvent": ".messages.types",
    "FinalEvent": ".messages.types",
    "FileRef": ".messages.types",  # files
    "MediaBlock": ".messages.types",
    "MediaDelta": ".messages.types",
    "Message": ".messages.types",
    "NativeTool": ".messages.types",
    "OutputDelta": ".messages.types",
    "PartialOutput": ".messages.types",
    "Reasoning": ".messages.types",
    "ServerToolCall": ".messages.types",
    "ServerToolEvent": ".messages.types",
    "ServerToolResult": ".messages.types",
    "TextBlock": ".messages.types",
    "TextDelta": ".messages.types",
    "ThinkingBlock": ".messages.types",
    "ThinkingDelta": ".messages.types",
    "ToolCall": ".messages.types",
    "ToolCallStarted": ".messages.types",
    "ToolResult": ".messages.types",
    "ToolResultEvent": ".messages.types",
    "Usage": ".messages.types",
    "Embeddings": ".messages.embeddings",
    "Images": ".messages.images",
    "UsageEvent": ".messages.types",
    "StreamRestarted": ".messages.types",
    "RunResult": ".runtime",
    "Dropped": ".engine.result",
    "Budget": ".controls.budget",
    "ContextPolicy": ".controls.window",
    "TokenCount": ".engine.tokens",
    "ModelInfo": ".engine.tokens",
    "Runtime": ".runtime",
    "ToolCallRecord": ".runtime",
    "RunContext": ".tools.tool",
    "Tool": ".tools.tool",
    "Toolset": ".tools.tool",
    "tool": ".tools.tool",
    "handoff": ".tools.tool",
    "Handoff": ".tools.tool",
    "hookimpl": ".plugins.hookspecs",
    "hookspec": ".plugins.hookspecs",
    "agentic_function": ".sessions.agentic",
    "Session": ".sessions.session",
    "compute_reads": ".sessions.agentic",
    "render_dag_messages": ".sessions.agentic",
    # Plugin authors' names, still reachable here; their home is llmport.plugin_api.
    "ModelCapabilities": ".messages.types",
    "Provider": ".provider.contract",
    "ProviderInfo": ".provider.contract",
    "Request": ".messages.types",
    "Response": ".messages.types",
    "ResponseFormat": ".messages.types",
    "ToolSpec": ".messages.types",
    "Limit": ".controls.limits",
    "InProcessLimiter": ".controls.limits",
    "Trace": ".observe.tracing",
    "BackgroundJob": ".engine.jobs.background",
    "JobStatus": ".engine.jobs.job",
    "BatchJob": ".engine.jobs.batch",
    "BatchRequest": ".engine.jobs.batch",
    "BatchStatus": ".engine.jobs.batch",
    "fix": ".repair.fix",
    "async_fix": ".repair.fix",
}

if TYPE_CHECKING:
    from .controls.budget import Budget
    from .controls.limits import InProcessLimiter, Limit
    from .controls.retry import Backoff
    from .controls.window import ContextPolicy
    from .engine.jobs.background import BackgroundJob
    from .engine.jobs.batch import BatchJob, BatchRequest, BatchStatus
    from .engine.jobs.job import JobStatus
    from .engine.result import Dropped
    from .engine.tokens import ModelInfo, TokenCount
    from .messages.embeddings import Embeddings as Embeddings
    from .messages.images import Images as Images
    from .messages.types import CacheControl as CacheControl
    from .messages.types import Citation as Citation
    from .messages.types import CitationEvent as CitationEvent
    from .messages.types import CustomEvent as CustomEvent
    from .messages.types import FileRef as FileRef
    from .messages.types import FinalEvent as FinalEvent
    from .messages.types import MediaBlock as MediaBlock
    from .messages.types import MediaDelta as MediaDelta
    from .messages.types import Message as Message
    from .messages.types import ModelCapabilities as ModelCapabilities
    from .messages.types import NativeTool as NativeTool
    from .messages.types import OutputDelta as OutputDelta
    from .messages.types import PartialOutput as PartialOutput
    from .messages.types import Reasoning as Reasoning
    from .messages.types import Request as Request
    from .messages.types import Response as Response
    from .messages.types import ResponseFormat as ResponseFormat
    from .messages.types import ServerToolCall as ServerToolCall
    from .messages.types import ServerToolEvent as ServerToolEvent
    from .messages.types import ServerToolResult as ServerToolResult
    from .messages.types import StreamRestarted as StreamRestarted
    from .messages.types import TextBlock as TextBlock
    from .messages.types import TextDelta as TextDelta
    from .messages.types import ThinkingBlock as ThinkingBlock
    from .messages.types import ThinkingDelta as ThinkingDelta
    from .messages.types import ToolCall as ToolCall
    from .messages.types import ToolCallStarted as ToolCallStarted
    from .messages.types import ToolResult as ToolResult
    from .messages.types import ToolResultEvent as ToolResultEvent
    from .messages.types import ToolSpec as ToolSpec
    from .messages.types import Usage as Usage
    from .messages.types import UsageEvent as UsageEvent
    from .observe.tracing import Trace
    from .plugins.hookspecs import hookimpl, hookspec
    from .provider.contract import Provider as Provider
    from .provider.contract import ProviderInfo as ProviderInfo
    from .repair.fix import async_fix, fix
    from .runtime import RunResult, Runtime, ToolCallRecord
    from .sessions.agentic import agentic_function, compute_reads, render_dag_messages
    from .sessions.session import Session
    from .tools.tool import Handoff, RunContext, Tool, Toolset, handoff, tool


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'llmport' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "AttachmentError",
    "AttemptFailure",
    "AuthenticationError",
    "BackgroundError",
    "BackgroundJob",
    "BackgroundTimeout",
    "Backoff",
    "BadRequestError",
    "BatchError",
    "BatchJob",
    "BatchRequest",
    "BatchStatus",
    "BatchTimeout",
    "Budget",
    "BudgetExceeded",
    "CacheControl",
    "CassetteError",
    "CassetteMismatch",
    "CassetteSecretError",
    "Citation",
    "CitationEvent",
    "ConfigError",
    "ContentError",
    "ContextPolicy",
    "ContextWindowExceeded",
    "CustomEvent",
    "DecisionError",
    "Dropped",
    "Embeddings",
    "ExecFailed",
    "FileRef",
    "FinalEvent",
    "FixNotApproved",
    "FixRejected",
    "GuardrailTripped",
    "Handoff",
    "Images",
    "InProcessLimiter",
    "InputError",
    "InputGuardrailTripped",
    "JobStatus",
    "Limit",
    "LimitWaitTimeout",
    "LimiterUnavailable",
    "LlmportError",
    "MalformedResponseError",
    "MaxIterationsExceeded",
    "MediaBlock",
    "MediaDelta",
    "Message",
    "MessageError",
    "MissingSessionStoreError",
    "ModelBehaviorError",
    "ModelInfo",
    "NativeTool",
    "NoModelError",
    "NotFoundError",
    "OptionError",
    "OutputDelta",
    "OutputGuardrailTripped",
    "OverloadedError",
    "PartialOutput",
    "PermissionDeniedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
    "Reasoning",
    "RunContext",
    "RunResult",
    "RunTimeout",
    "Runtime",
    "SchemaError",
    "SchemaSubsetError",
    "ServerToolCall",
    "ServerToolEvent",
    "ServerToolResult",
    "Session",
    "SessionError",
    "SessionFileNotFoundError",
    "SessionStoreUnavailable",
    "StreamInterrupted",
    "StreamRestarted",
    "StructuredOutputError",
    "TextBlock",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingDelta",
    "TokenCount",
    "TokenLimitExceeded",
    "Tool",
    "ToolApprovalRequired",
    "ToolCall",
    "ToolCallRecord",
    "ToolCallStarted",
    "ToolResult",
    "ToolResultEvent",
    "Toolset",
    "Trace",
    "UnknownModelError",
    "UnknownModelWarning",
    "UnknownSessionError",
    "UnknownToolError",
    "UnsupportedContentError",
    "UnsupportedFeatureError",
    "Usage",
    "UsageEvent",
    "agentic_function",
    "async_fix",
    "compute_reads",
    "fix",
    "handoff",
    "hookimpl",
    "hookspec",
    "render_dag_messages",
    "tool",
]
