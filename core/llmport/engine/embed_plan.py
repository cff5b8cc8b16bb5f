"""One embed call planned before its first request (``rt.embed`` / ``rt.aembed``).

:func:`plan_embed` routes the model, checks every input and option (typed
errors, no I/O), looks the inputs up in the cache, splits the rest into
parts by the model's limits (:func:`split_inputs`) and has the provider
prepare each part, so a bad input fails before any request. The
:class:`EmbedPlan` it returns is all the step machine
(:mod:`.request_steps`) and the joiner (:mod:`.embed_join`) read.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Protocol

from ..controls.limits import Gate  # limits
from ..controls.options import check_options
from ..controls.retry import Attempts, Backoff
from ..errors import OptionError, UnsupportedFeatureError
from ..messages.embeddings import EmbedInput, EmbedRequest, EmbedResponse, InputType, Truncate
from ..messages.types import ModelCapabilities, Usage
from ..provider.deadline import aembed_within, embed_within
from ..provider.embedding import (
    EMBEDDINGS,
    PreparedEmbed,
    check_embed_inputs,
    input_tokens,
    no_embeddings,
)
from ..slotted import dataclass
from .embed_cache import EmbedCache, input_hash
from .inputs import deadline_setting
from .settings import RunSettings

if TYPE_CHECKING:
    from ..controls.budget import Ledger
    from ..provider.contract import Provider

__all__ = [
    "PARTS_IN_FLIGHT",
    "EmbedPlan",
    "EmbedSettings",
    "Part",
    "plan_embed",
    "priced_usage",
    "request_timeout",
    "split_inputs",
]


class EmbedSettings(RunSettings, Protocol):
    """What an embed call reads of its runtime: the run settings and the cache."""

    @property
    def embed_cache(self) -> EmbedCache | None: ...


#: Parts of one call sent at once when no ``Limit`` bounds it (the OpenAI SDK's
#: own connection pool keeps as many open).
PARTS_IN_FLIGHT = 8

_INPUT_TYPES = ("query", "document")
_TRUNCATES = ("start", "end")


@dataclass(slots=True, frozen=True)
class Part:
    """The inputs at ``rows`` (their indexes in the call, in order), sent as one request.

    ``rows`` is a ``range`` unless the cache already held some inputs.
    """

    rows: Sequence[int]
    prepared: PreparedEmbed

    @property
    def tokens(self) -> int:
        """The part's estimated input tokens (rate limits and budgets)."""
        return sum(input_tokens(item) for item in self.prepared.request.inputs)

    def describe(self, total: int) -> str:
        """Which inputs, as a user counts them (0-based, like their list)."""
        first, last = self.rows[0], self.rows[-1]
        if len(self.rows) == 1:
            return f"input {first} of {total}"
        if last - first + 1 == len(self.rows):
            return f"inputs {first}-{last} of {total}"
        return f"{len(self.rows)} inputs from {first} to {last} of {total}"


@dataclass(slots=True)
class EmbedPlan:
    """Everything decided before the first request of one embed call."""

    provider: Provider
    model: str
    qualified: str
    caps: ModelCapabilities
    count: int
    parts: list[Part]
    max_attempts: int
    backoff: Backoff
    gate: Gate | None = None
    deadline: float | None = None
    deadline_seconds: float | None = None
    #: Seconds each request may wait for its answer (``Runtime(timeout=)``), or None.
    timeout: float | None = None
    normalize: bool = False
    attempts: list[Attempts] = field(default_factory=list)
    #: The input hashes (cache keys, DAG node), one per input.
    hashes: list[str] = field(default_factory=list)
    #: Vectors the cache held, by input index; and where the new ones are kept.
    cached: dict[int, bytes] = field(default_factory=dict)
    cache: EmbedCache | None = None
    namespace: tuple[str, ...] = ()
    ledger: Ledger | None = None
    started: float = 0.0

    # -- how the step machine (.request_steps) sends and checks one part ---------------

    def send(self, prepared: PreparedEmbed, cut_at: float | None) -> EmbedResponse:
        """One part's request, given up at ``cut_at``."""
        return embed_within(self.provider, prepared, cut_at)

    async def asend(self, prepared: PreparedEmbed, cut_at: float | None) -> EmbedResponse:
        """Async :meth:`send`."""
        return await aembed_within(self.provider, prepared, cut_at)

    def checked(self, answer: Any) -> EmbedResponse:
        """``answer`` if it is what the contract says a plugin returns (a plugin bug otherwise).

        Its size is held to the request where it is joined (:mod:`.embed_join`).
        """
        if not isinstance(answer, EmbedResponse):
            raise TypeError(
                f"{type(self.provider).__name__} returned {type(answer).__name__}, "
                "not EmbedResponse"
            )
        return answer

    def priced(self, answer: EmbedResponse) -> Usage:
        """One part's usage, priced as its model."""
        return priced_usage(self, answer)


# ---------------------------------------------------------------------------
# Planning: every check before the first request
# ---------------------------------------------------------------------------


def plan_embed(
    settings: EmbedSettings,
    inputs: Any,
    *,
    model: str | None = None,
    input_type: InputType | None = None,
    dimensions: int | None = None,
    truncate: Truncate | None = None,
    vendor: Mapping[str, Mapping[str, Any]] | None = None,
    normalize: bool = False,
    deadline: float | None = None,
) -> EmbedPlan:
    """Route, check, look up the cache and split one embed call; prepare every part (no I/O)."""
    started = time.monotonic()
    texts = check_embed_inputs(inputs)
    runtime = settings.options
    if deadline is None:
        deadline = runtime.get("deadline")  # Runtime(deadline=): every call's default
    seconds = _check_options(input_type, dimensions, truncate, normalize, deadline)
    timeout = request_timeout(runtime.get("timeout"))
    provider, name, qualified, _, plain = settings.route(model)
    if plain:
        raise UnsupportedFeatureError(
            "call", name, EMBEDDINGS, "a call= function only chats; name an embedding model"
        )
    base = EmbedRequest(
        name, (), input_type, dimensions, truncate, dict((vendor or {}).get(provider.name, {}))
    )
    caps = provider.capabilities(name)
    if not caps.embeddings and not provider.implements_embed:
        raise no_embeddings(provider, name)
    plan = EmbedPlan(
        provider=provider,
        model=name,
        qualified=qualified,
        caps=caps,
        count=len(texts),
        parts=[],
        max_attempts=settings.max_retries,
        backoff=settings.backoff,
        gate=settings.gate(qualified),
        deadline=None if seconds is None else started + seconds,
        deadline_seconds=seconds,
        timeout=timeout,
        normalize=normalize,
        hashes=[input_hash(text) for text in texts],
        cache=settings.embed_cache,
        ledger=settings.ledger,
        started=started,
    )
    if plan.cache is not None:
        plan.namespace = plan.cache.namespace(provider.price_name, name, dimensions, input_type)
        plan.cached = plan.cache.lookup(plan.namespace, plan.hashes)
    rows = [i for i in range(len(texts)) if i not in plan.cached]
    wanted = [texts[i] for i in rows] if plan.cached else texts
    for start, stop in split_inputs(wanted, caps):
        part_rows = rows[start:stop] if plan.cached else range(start, stop)
        request = _with_inputs(base, tuple(wanted[start:stop]))
        plan.parts.append(Part(part_rows, provider.prepare_embed(request)))
    return plan


def _with_inputs(base: EmbedRequest, inputs: tuple[EmbedInput, ...]) -> EmbedRequest:
    return EmbedRequest(
        base.model, inputs, base.input_type, base.dimensions, base.truncate, base.options
    )


def _check_options(
    input_type: Any, dimensions: Any, truncate: Any, normalize: Any, deadline: Any
) -> float | None:
    """Typed errors for bad option values; the deadline in seconds (or None)."""
    if input_type is not None and input_type not in _INPUT_TYPES:
        raise OptionError(f"input_type must be 'query' or 'document', got {input_type!r}")
    if truncate is not None and truncate not in _TRUNCATES:
        raise OptionError(f"truncate must be 'start', 'end' or None, got {truncate!r}")
    if dimensions is not None and (type(dimensions) is not int or dimensions < 1):
        raise OptionError(f"dimensions must be a whole number >= 1, got {dimensions!r}")
    if not isinstance(normalize, bool):
        raise OptionError(f"normalize must be True or False, got {normalize!r}")
    return deadline_setting(deadline)


def request_timeout(value: Any) -> float | None:
    """``Runtime(timeout=)`` in seconds (None: none); an OptionError for a bad value."""
    if value is None:
        return None
    check_options({"timeout": value})
    return float(value)


def split_inputs(inputs: Sequence[EmbedInput], caps: ModelCapabilities) -> list[tuple[int, int]]:
    """``(start, stop)`` ranges in order, each within the model's inputs, tokens and media
    per request.

    Tokens are estimated (:func:`~llmport.provider.embedding.input_tokens`);
    an input alone over the request's token limit gets a part of its own
    (the per-input check, not the split, refuses it).
    """
    if not inputs:
        return []
    most = caps.max_embed_inputs or len(inputs)
    budget, media_most = caps.max_embed_request_tokens, caps.max_embed_media
    if budget is None and media_most is None:
        return [(start, min(start + most, len(inputs))) for start in range(0, len(inputs), most)]
    ranges: list[tuple[int, int]] = []
    start, tokens, media = 0, 0, 0
    for index, item in enumerate(inputs):
        cost = input_tokens(item) if budget is not None else 0
        count = 0 if isinstance(item, str) else len(item.media)
        if index > start and (
            index - start >= most
            or (budget is not None and tokens + cost > budget)
            or (media_most is not None and media + count > media_most)
        ):
            ranges.append((start, index))
            start, tokens, media = index, 0, 0
        tokens += cost
        media += count
    ranges.append((start, len(inputs)))
    return ranges


def priced_usage(plan: EmbedPlan, answer: EmbedResponse) -> Usage:
    """One part's usage, priced as its model (cost read from the price table on demand)."""
    usage = answer.usage.copy()
    usage.requests = usage.requests or 1
    return usage.priced_as(plan.provider.price_name, answer.model or plan.model)
