"""The two deferred tools of the recorded tool-search conversations (OpenAI Responses and
Anthropic ``tool-search.json``): their schemas and functions, shared by both vendors' tests."""

from __future__ import annotations

RATE_DESCRIPTION = "Look up the current exchange rate between two currencies."
STOCK_DESCRIPTION = "Look up stock price by ticker symbol."
RATE_SCHEMA = {
    "additionalProperties": False,
    "properties": {"from_currency": {"type": "string"}, "to_currency": {"type": "string"}},
    "required": ["from_currency", "to_currency"],
    "type": "object",
}
STOCK_SCHEMA = {
    "additionalProperties": False,
    "properties": {"symbol": {"type": "string"}},
    "required": ["symbol"],
    "type": "object",
}


def get_exchange_rate(from_currency: str, to_currency: str) -> str:
    return "1 USD = 0.92 EUR"


def stock_lookup(symbol: str) -> str:
    return "unknown"
