"""Prices from the ``genai-prices`` data package (``pip install "llmport[prices]"``).

:func:`price` turns one request's token counts into USD. The package is
imported on first use (loading its data takes most of a second) and each
``provider:model`` is looked up once per process; :attr:`llmport.Usage.cost`
calls it only when a cost is read, so calls that never read a cost pay
nothing. Without the package every cost is ``None``.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from decimal import Decimal

__all__ = [
    "BATCH_DISCOUNT",
    "PROVIDER_IDS",
    "ModelPrice",
    "model_price",
    "price",
    "prices_available",
]

#: llmport provider prefix -> genai-prices provider id.
PROVIDER_IDS: dict[str, str] = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "google",
    "bedrock": "aws",
    "xai": "x-ai",  # the other OpenAI-compatible profiles share genai-prices' ids
}

_lock = threading.Lock()
_found: dict[tuple[str, str], Any] = {}  # (provider, model) -> genai-prices ModelPrice | None
_MISSING = object()


def prices_available() -> bool:
    """Whether the ``genai-prices`` package is installed."""
    from importlib.util import find_spec

    return find_spec("genai_prices") is not None


def _lookup(provider: str, model: str) -> Any:
    key = (provider, model)
    found = _found.get(key, _MISSING)
    if found is not _MISSING:
        return found
    with _lock:
        found = _found.get(key, _MISSING)
        if found is not _MISSING:
            return found
        found = None
        try:
            from genai_prices import Usage, calc_price
        except ImportError:
            pass
        else:
            try:
                found = calc_price(
                    Usage(input_tokens=0, output_tokens=0),
                    model_ref=model,
                    provider_id=PROVIDER_IDS.get(provider, provider),
                )
            except LookupError:
                found = None
            except Exception:
                found = None
        _found[key] = found
        return found


class ModelPrice:
    """USD per million tokens for one model (``None`` where the data has no price)."""

    __slots__ = ("cache_read", "cache_write", "context_window", "input", "output")

    def __init__(self, calculation: Any) -> None:
        mp = calculation.model_price
        self.input = _flat(mp.input_mtok)
        self.output = _flat(mp.output_mtok)
        self.cache_read = _flat(mp.cache_read_mtok)
        self.cache_write = _flat(mp.cache_write_mtok)
        self.context_window: int | None = getattr(calculation.model, "context_window", None)

    def __repr__(self) -> str:
        return f"ModelPrice(input={self.input}, output={self.output} USD/MTok)"


def _flat(value: Any) -> Decimal | None:
    if value is None:
        return None
    from decimal import Decimal  # loaded with the first price, not with the runtime

    if isinstance(value, Decimal):
        return value
    base = getattr(value, "base", None)  # tiered prices: the first tier
    return base if isinstance(base, Decimal) else None


def model_price(provider: str, model: str) -> ModelPrice | None:
    """The price of ``provider:model`` per million tokens, or ``None``."""
    found = _lookup(provider, model)
    return ModelPrice(found) if found is not None else None


def price(
    provider: str,
    model: str,
    input_tokens: int,
    output_tokens: int,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
    batch: bool = False,
) -> Decimal | None:
    """USD for one request's tokens (cached prices applied), or ``None`` when unknown.

    ``batch=True``: a request sent through the vendor's batch API. genai-prices'
    batch price (its ``processing: batch`` variant) where the data has one;
    else :data:`BATCH_DISCOUNT` of the standard price, the discount all four
    vendors document for their batch APIs (Bedrock: "50% of on-demand" for
    the models it batches).
    """
    found = _lookup(provider, model)
    if found is None:
        return None
    from genai_prices import Usage

    usage = Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read_tokens,
        cache_write_tokens=cache_write_tokens,
    )
    prices = found.model_price
    if batch:
        variant = _batch_prices(found)
        if variant is not None:
            prices = variant
    calc = prices.calc_price(usage)
    from decimal import Decimal  # loaded with the first price, not with the runtime

    total = Decimal(calc["total_price"] if isinstance(calc, dict) else calc.total_price)
    if batch and prices is found.model_price:
        total *= Decimal(_BATCH_DISCOUNT)
    return total


# `BATCH_DISCOUNT` is made on first read (module __getattr__ below): `decimal`
# loads with the first price, not with the runtime.
_BATCH_DISCOUNT = "0.5"
if TYPE_CHECKING:
    #: What a batch request costs relative to the standard price without a batch price.
    BATCH_DISCOUNT: Decimal


def __getattr__(name: str) -> Any:
    if name == "BATCH_DISCOUNT":
        from decimal import Decimal

        return Decimal(_BATCH_DISCOUNT)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
_batch_found: dict[int, Any] = {}


def _batch_prices(found: Any) -> Any:
    """The model's ``processing: batch`` prices from genai-prices, or None when it has none."""
    key = id(found)
    if key in _batch_found:
        return _batch_found[key]
    variant = None
    try:
        from datetime import UTC, datetime

        model = found.model
        variants = getattr(model, "price_variants", None) or ()
        if any(v.when.get("processing") == "batch" for v in variants):
            variant = model.get_prices(datetime.now(tz=UTC), {"processing": "batch"})
    except Exception:
        variant = None
    with _lock:
        _batch_found[key] = variant
    return variant
