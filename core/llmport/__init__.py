"""llmport: a small, typed, plugin-based adapter SDK for LLM providers.

Namespaces by audience: ``llmport`` for users (this module),
:mod:`llmport.plugin` for plugin authors, :mod:`llmport.errors` for the
error tree (drawn in its docstring).

``import llmport`` is cheap: it imports no vendor SDK, and the heavier parts
(the runtime, the DAG store, the CLI, testing helpers) load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import (
    AttemptFailure,
    AuthenticationError,
    BadRequestError,
    BudgetExceeded,
    ConfigError,
    ContentError,
    ContextWindowExceeded,
    DecisionError,
    ExecFailed,
    GuardrailTripped,
    InputError,
    InputGuardrailTripped,
    LlmportError,
    MalformedResponseError,
    MaxIterationsExceeded,
    MessageError,
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
    StructuredOutputError,
    TokenLimitExceeded,
    ToolApprovalRequired,
    UnknownModelError,
    UnknownToolError,
    UnsupportedContentError,
    UnsupportedFeatureError,
)
from .retry import Backoff

__version__ = "0.1.0"

# Loaded on first attribute access: keeps `import llmport` fast (the runtime
# and tools pull in asyncio and concurrent.futures, the hook markers pluggy;
# the neutral types are ~30 slotted dataclasses, whose creation costs ~20 ms
# on CPython 3.11).
_LAZY = {
    "CacheControl": ".types",
    "Citation": ".types",
    "CitationEvent": ".types",
    "CustomEvent": ".types",
    "FinalEvent": ".types",
    "MediaBlock": ".types",
    "Message": ".types",
    "NativeTool": ".types",
    "Reasoning": ".types",
    "ServerToolCall": ".types",
    "ServerToolEvent": ".types",
    "ServerToolResult": ".types",
    "TextBlock": ".types",
    "TextDelta": ".types",
    "ThinkingBlock": ".types",
    "ThinkingDelta": ".types",
    "ToolCall": ".types",
    "ToolCallStarted": ".types",
    "ToolResult": ".types",
    "ToolResultEvent": ".types",
    "Usage": ".types",
    "UsageEvent": ".types",
    "RunResult": ".runtime",
    "Dropped": ".engine.result",
    "Budget": ".budget",
    "ContextPolicy": ".window",
    "TokenCount": ".tokens",
    "ModelInfo": ".tokens",
    "Runtime": ".runtime",
    "ToolCallRecord": ".runtime",
    "RunContext": ".tools",
    "Tool": ".tools",
    "Toolset": ".tools",
    "tool": ".tools",
    "handoff": ".tools",
    "Handoff": ".tools",
    "hookimpl": ".hookspecs",
    "hookspec": ".hookspecs",
    "agentic_function": ".agentic",
    "Session": ".session",
    "compute_reads": ".agentic",
    "render_dag_messages": ".agentic",
    # Plugin authors' names, still reachable here; their home is llmport.plugin.
    "ModelCapabilities": ".types",
    "Provider": ".provider",
    "ProviderInfo": ".provider",
    "Request": ".types",
    "Response": ".types",
    "ResponseFormat": ".types",
    "ToolSpec": ".types",
    "Limit": ".limits",
    "LimitWaitTimeout": ".limits",
    "InProcessLimiter": ".limits",
    "Trace": ".tracing",
    "BatchJob": ".batch",
    "BatchRequest": ".batch",
    "BatchStatus": ".batch",
    "BatchError": ".batch",
    "BatchTimeout": ".batch",
}

if TYPE_CHECKING:
    from .agentic import agentic_function, compute_reads, render_dag_messages
    from .batch import BatchError, BatchJob, BatchRequest, BatchStatus, BatchTimeout
    from .budget import Budget
    from .engine.result import Dropped
    from .hookspecs import hookimpl, hookspec
    from .limits import InProcessLimiter, Limit, LimitWaitTimeout
    from .provider import Provider as Provider
    from .provider import ProviderInfo as ProviderInfo
    from .runtime import RunResult, Runtime, ToolCallRecord
    from .session import Session
    from .tokens import ModelInfo, TokenCount
    from .tools import Handoff, RunContext, Tool, Toolset, handoff, tool
    from .tracing import Trace
    from .types import CacheControl as CacheControl
    from .types import Citation as Citation
    from .types import CitationEvent as CitationEvent
    from .types import CustomEvent as CustomEvent
    from .types import FinalEvent as FinalEvent
    from .types import MediaBlock as MediaBlock
    from .types import Message as Message
    from .types import ModelCapabilities as ModelCapabilities
    from .types import NativeTool as NativeTool
    from .types import Reasoning as Reasoning
    from .types import Request as Request
    from .types import Response as Response
    from .types import ResponseFormat as ResponseFormat
    from .types import ServerToolCall as ServerToolCall
    from .types import ServerToolEvent as ServerToolEvent
    from .types import ServerToolResult as ServerToolResult
    from .types import TextBlock as TextBlock
    from .types import TextDelta as TextDelta
    from .types import ThinkingBlock as ThinkingBlock
    from .types import ThinkingDelta as ThinkingDelta
    from .types import ToolCall as ToolCall
    from .types import ToolCallStarted as ToolCallStarted
    from .types import ToolResult as ToolResult
    from .types import ToolResultEvent as ToolResultEvent
    from .types import ToolSpec as ToolSpec
    from .types import Usage as Usage
    from .types import UsageEvent as UsageEvent
    from .window import ContextPolicy


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'llmport' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "AttemptFailure",
    "AuthenticationError",
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
    "Citation",
    "CitationEvent",
    "ConfigError",
    "ContentError",
    "ContextPolicy",
    "ContextWindowExceeded",
    "CustomEvent",
    "DecisionError",
    "Dropped",
    "ExecFailed",
    "FinalEvent",
    "GuardrailTripped",
    "Handoff",
    "InProcessLimiter",
    "InputError",
    "InputGuardrailTripped",
    "Limit",
    "LimitWaitTimeout",
    "LlmportError",
    "MalformedResponseError",
    "MaxIterationsExceeded",
    "MediaBlock",
    "Message",
    "MessageError",
    "ModelBehaviorError",
    "ModelInfo",
    "NativeTool",
    "NoModelError",
    "NotFoundError",
    "OptionError",
    "OutputGuardrailTripped",
    "OverloadedError",
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
    "ServerToolCall",
    "ServerToolEvent",
    "ServerToolResult",
    "Session",
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
    "UnknownToolError",
    "UnsupportedContentError",
    "UnsupportedFeatureError",
    "Usage",
    "UsageEvent",
    "agentic_function",
    "compute_reads",
    "handoff",
    "hookimpl",
    "hookspec",
    "render_dag_messages",
    "tool",
]
