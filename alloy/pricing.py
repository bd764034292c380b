"""Token prices and call cost.

A small built-in table (USD per million tokens, list prices at the time of writing) covers common
models; prices change, so :func:`set_price` overrides or adds entries. Model ids match by longest
prefix, so dated snapshots (``gpt-4o-2024-08-06``) use their family's price. Cached input tokens
are charged at the cached rate instead of the input rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._types import Usage

__all__ = ["Price", "cost", "price_for", "set_price"]


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cached_input: float | None = None


_PRICES: dict[str, Price] = {
    "openai:gpt-5": Price(1.25, 10.0, 0.125),
    "openai:gpt-5-mini": Price(0.25, 2.0, 0.025),
    "openai:gpt-5-nano": Price(0.05, 0.40, 0.005),
    "openai:gpt-4.1": Price(2.0, 8.0, 0.5),
    "openai:gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "openai:gpt-4o": Price(2.50, 10.0, 1.25),
    "openai:gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "openai:o3": Price(2.0, 8.0, 0.5),
    "openai:o4-mini": Price(1.10, 4.40, 0.275),
    "anthropic:claude-opus-4": Price(15.0, 75.0, 1.5),
    "anthropic:claude-opus-4-5": Price(5.0, 25.0, 0.5),
    "anthropic:claude-sonnet-4": Price(3.0, 15.0, 0.3),
    "anthropic:claude-haiku-4-5": Price(1.0, 5.0, 0.1),
    "gemini:gemini-2.5-pro": Price(1.25, 10.0, 0.31),
    "gemini:gemini-2.5-flash": Price(0.30, 2.50, 0.075),
    "gemini:gemini-2.5-flash-lite": Price(0.10, 0.40, 0.025),
    "ollama:": Price(0.0, 0.0, 0.0),
    "offline": Price(0.0, 0.0, 0.0),
}


def set_price(model: str, price: Price) -> None:
    """Add or override the price of ``model`` (``provider:model``; a prefix covers a family)."""
    _PRICES[model] = price


def price_for(model: str) -> Price | None:
    """The price entry with the longest prefix of ``model``, if any."""
    best = ""
    for key in _PRICES:
        if model.startswith(key) and len(key) > len(best):
            best = key
    return _PRICES.get(best) if best else None


def cost(usage: Usage, model: str) -> float | None:
    """USD for ``usage`` on ``model``, or None when the model has no price."""
    price = price_for(model)
    if price is None:
        return None
    cached = min(usage.cached_tokens, usage.input_tokens)
    cached_rate = price.cached_input if price.cached_input is not None else price.input
    total = (
        (usage.input_tokens - cached) * price.input
        + cached * cached_rate
        + usage.output_tokens * price.output
    )
    return total / 1_000_000
