"""Token prices and call cost.

Prices come from the provider descriptors (:attr:`alloy.providers.Provider.prices`: USD per
million tokens, list prices at the time of writing, by model id prefix), so a registered
provider brings its own. Prices change, so :func:`set_price` overrides or adds entries. Model
ids match by longest prefix, so dated snapshots (``gpt-4o-2024-08-06``) use their family's
price; a :func:`set_price` entry wins over a descriptor's price of the same length. Input tokens
read from the provider's prompt cache are charged at the cached rate, and those written to it at
the cache-write rate, instead of the input rate.

Usage is read by duck typing (any object with ``input_tokens``, ``output_tokens``,
``cached_tokens`` and ``cache_write_tokens``), so this module does not depend on alloy's core
types.
"""

from __future__ import annotations

from .providers import Price, provider_of
from .providers._price import TokenCounts

__all__ = ["Price", "cost", "price_for", "set_price"]

#: Prices set at run time, by model-string prefix (``"openai:gpt-5-mini"``, ``"script"``).
_OVERRIDES: dict[str, Price] = {}


def set_price(model: str, price: Price) -> None:
    """Add or override the price of ``model`` (``provider:model``; a prefix covers a family)."""
    _OVERRIDES[model] = price


def price_for(model: str) -> Price | None:
    """The price with the longest prefix of ``model`` (``provider:model-id``), if any."""
    best: Price | None = None
    longest = -1
    for prefix, price in _OVERRIDES.items():
        if model.startswith(prefix) and len(prefix) > longest:
            best, longest = price, len(prefix)
    name, sep, model_id = model.partition(":")
    provider = provider_of(model)
    entry = provider.price_entry(model_id) if provider is not None else None
    # Measured as the part of ``model`` it matched ("openai:" + prefix), like the overrides.
    if entry is not None and len(name) + len(sep) + len(entry[0]) > longest:
        best = entry[1]
    return best


def cost(usage: TokenCounts, model: str) -> float | None:
    """USD for ``usage`` on ``model``, or None when the model has no price."""
    price = price_for(model)
    return price.cost(usage) if price is not None else None
