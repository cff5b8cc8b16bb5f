"""Counting tokens before a call, and what is known about a model.

:meth:`llmport.Runtime.count_tokens` builds the request an ``exec`` with the
same arguments would send and asks the vendor's counting endpoint
(Anthropic ``count_tokens``, Gemini ``countTokens``, Bedrock ``CountTokens``,
OpenAI Responses ``input_tokens``) when the model's capabilities say it has
one: ``TokenCount(n, exact=True, source="vendor")``. Elsewhere, or when a
compatible server lacks the endpoint, it estimates locally:
``exact=False, source="estimate"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..controls.options import split_call
from ..errors import NotFoundError, UnsupportedFeatureError
from ..messages.check import check_file_refs
from ..messages.estimate import estimate_tokens
from ..messages.types import ModelCapabilities, Request
from ..observe.prices import ModelPrice, model_price
from ..provider.contract import TOKEN_COUNTING
from ..slotted import dataclass
from ..tools.tool import toolsets_closed_by
from .calls import Owner
from .output_modes import first_request
from .plan import RunPlan, plan_run
from .settings import RunSettings

__all__ = ["ModelInfo", "TokenCount", "acount_tokens", "count_tokens", "model_info"]


@dataclass(slots=True, frozen=True)
class TokenCount:
    """Input tokens of a request; ``exact`` when the vendor counted them."""

    input_tokens: int
    exact: bool
    source: Literal["vendor", "estimate"]


@dataclass(slots=True, frozen=True)
class ModelInfo:
    """What llmport knows about a model: limits, inputs, features and price."""

    provider: str
    model: str
    qualified: str
    context_window: int | None
    max_output_tokens: int | None
    input_modalities: frozenset[str]
    features: frozenset[str]
    native_tools: frozenset[str]
    #: USD per million tokens from genai-prices (``llmport[prices]``), or ``None``.
    price: ModelPrice | None
    capabilities: ModelCapabilities


def _counting(owner: Owner, content: Any, kwargs: Mapping[str, Any]) -> tuple[RunPlan, Request]:
    """The plan of an ``exec`` with these arguments and the first request it would send."""
    params, options = split_call(kwargs)
    params["content"] = content
    with toolsets_closed_by(owner.adopt):  # an MCP server connected to list its tools
        plan = plan_run(owner.snapshot(), params, options, None, stream=False)
    request = first_request(plan)
    # As exec's check: an estimate must not count what the vendor could not read.
    check_file_refs(request.messages, plan.provider.files_vendor, request.model)
    return plan, request


def _estimate(request: Request) -> TokenCount:
    return TokenCount(estimate_tokens(request), False, "estimate")


def _estimate_without_endpoint(request: Request, exc: Exception) -> TokenCount:
    """An estimate when the vendor cannot count here (e.g. a compatible server without
    the endpoint); a request ``exec`` would reject too (an unsupported feature) raises."""
    counting = isinstance(exc, UnsupportedFeatureError) and exc.feature == TOKEN_COUNTING
    if isinstance(exc, NotFoundError) or counting:
        return _estimate(request)
    raise exc


def count_tokens(owner: Owner, content: Any, kwargs: Mapping[str, Any]) -> TokenCount:
    """Input tokens ``exec`` would send: vendor-counted where the model can, else estimated."""
    plan, request = _counting(owner, content, kwargs)
    if plan.plain_callable or not plan.caps.count_tokens:
        return _estimate(request)
    try:
        return TokenCount(plan.provider.count_tokens(request), True, "vendor")
    except (NotFoundError, UnsupportedFeatureError) as exc:
        return _estimate_without_endpoint(request, exc)


async def acount_tokens(owner: Owner, content: Any, kwargs: Mapping[str, Any]) -> TokenCount:
    """Async :func:`count_tokens`."""
    plan, request = _counting(owner, content, kwargs)
    if plan.plain_callable or not plan.caps.count_tokens:
        return _estimate(request)
    try:
        return TokenCount(await plan.provider.acount_tokens(request), True, "vendor")
    except (NotFoundError, UnsupportedFeatureError) as exc:
        return _estimate_without_endpoint(request, exc)


def model_info(settings: RunSettings, model: str | None = None) -> ModelInfo:
    """What is known about ``model`` (None: the default)."""
    provider, name, qualified, _, _ = settings.route(model)
    caps = provider.capabilities(name)
    price = model_price(provider.name, name)
    features = {
        feature
        for feature, present in (
            ("tools", caps.native_tools),
            ("structured_output", caps.native_structured_output),
            ("streaming", caps.streaming),
            ("parallel_tool_calls", caps.parallel_tool_calls),
            ("reasoning", caps.reasoning),
            ("caching", caps.caching),
            ("citations", caps.citations),
            ("count_tokens", caps.count_tokens),
        )
        if present
    }
    window = caps.context_window or (price.context_window if price is not None else None)
    return ModelInfo(
        provider=provider.name,
        model=name,
        qualified=qualified,
        context_window=window,
        max_output_tokens=caps.max_output_tokens,
        input_modalities=caps.input_modalities,
        features=frozenset(features),
        native_tools=caps.native_tool_kinds,
        price=price,
        capabilities=caps,
    )
