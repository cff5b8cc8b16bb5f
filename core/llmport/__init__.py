"""llmport: a small, typed, plugin-based adapter SDK for LLM providers.

``import llmport`` is cheap: it imports no vendor SDK, and the heavier parts
(the DAG store, the CLI, testing helpers) load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import (
    AttemptFailure,
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ContentError,
    DecisionError,
    ExecFailed,
    GuardrailTripped,
    LlmportError,
    MalformedResponseError,
    MaxIterationsExceeded,
    ModelBehaviorError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    SchemaError,
    StructuredOutputError,
    TokenLimitExceeded,
    UnknownModelError,
    UnknownToolError,
    UnsupportedContentError,
    UnsupportedFeatureError,
)
from .hookspecs import hookimpl, hookspec
from .provider import Provider, ProviderInfo
from .retry import Backoff
from .runtime import RunResult, Runtime, ToolCallRecord
from .tools import RunContext, Tool, Toolset, tool
from .types import (
    FinalEvent,
    MediaBlock,
    Message,
    ModelCapabilities,
    Request,
    Response,
    ResponseFormat,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    ToolResult,
    ToolResultEvent,
    ToolSpec,
    Usage,
    UsageEvent,
)

__version__ = "0.1.0"

# Loaded on first attribute access: keeps `import llmport` fast.
_LAZY = {
    "agentic_function": ".agentic",
    "Session": ".session",
    "compute_reads": ".agentic",
    "render_dag_messages": ".agentic",
}

if TYPE_CHECKING:
    from .agentic import agentic_function, compute_reads, render_dag_messages
    from .session import Session


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
    "ConfigError",
    "ContentError",
    "DecisionError",
    "ExecFailed",
    "FinalEvent",
    "GuardrailTripped",
    "LlmportError",
    "MalformedResponseError",
    "MaxIterationsExceeded",
    "MediaBlock",
    "Message",
    "ModelBehaviorError",
    "ModelCapabilities",
    "NotFoundError",
    "OverloadedError",
    "PermissionDeniedError",
    "Provider",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderInfo",
    "ProviderTimeoutError",
    "RateLimitError",
    "Request",
    "Response",
    "ResponseFormat",
    "RunContext",
    "RunResult",
    "Runtime",
    "SchemaError",
    "Session",
    "StructuredOutputError",
    "TextBlock",
    "TextDelta",
    "TokenLimitExceeded",
    "Tool",
    "ToolCall",
    "ToolCallRecord",
    "ToolCallStarted",
    "ToolResult",
    "ToolResultEvent",
    "ToolSpec",
    "Toolset",
    "UnknownModelError",
    "UnknownToolError",
    "UnsupportedContentError",
    "UnsupportedFeatureError",
    "Usage",
    "UsageEvent",
    "agentic_function",
    "compute_reads",
    "hookimpl",
    "hookspec",
    "render_dag_messages",
    "tool",
]
