"""Token prices and call cost.

Prices come from the provider descriptors (:attr:`alloy.providers.Provider.prices`: USD per
million tokens, list prices at the time of writing, by model id prefix), so a registered
provider brings its own. Prices change, so :func:`set_price` overrides or adds entries. Model
ids match by longest prefix, so dated snapshots (``gpt-4o-2024-08-06``) use their family's
price; a :func:`set_price` entry wins over a descriptor's price of the same length. Input tokens
read from the provider's prompt cache are charged at the cached rate, and those written to it at
the cache-write rate, instead of the input rate.

:func:`cost` reads usage by duck typing (any object with ``input_tokens``, ``output_tokens``,
``cached_tokens`` and ``cache_write_tokens``), so this module does not depend on alloy's core
types. :func:`call_cost` prices a call's ``Result`` as it leaves the engine (the drivers call
it): the engine itself prices nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol

from .providers import Price, provider_of
from .providers._price import TokenCounts

__all__ = ["Price", "call_cost", "cost", "price_for", "set_price"]


class CallUsage(TokenCounts, Protocol):
    """A call's token counts, and how many of its replies came from alloy's response cache
    (``alloy.Usage`` has them)."""

    @property
    def cache_hits(self) -> int: ...

    @property
    def total_tokens(self) -> int: ...


class _PriceBook:
    """Prices set at run time, looked up with the providers' own on every call."""

    def __init__(self) -> None:
        #: By model-string prefix (``"openai:gpt-5-mini"``, ``"script"``).
        self.overrides: dict[str, Price] = {}
        self.lock = threading.Lock()

    def set(self, model: str, price: Price) -> None:
        with self.lock:
            self.overrides[model] = price

    def price_for(self, model: str) -> Price | None:
        return self.look_up(model)

    def look_up(self, model: str) -> Price | None:
        """The price with the longest prefix of ``model``, a set price winning a tie."""
        best: Price | None = None
        longest = -1
        for prefix, price in list(self.overrides.items()):
            if model.startswith(prefix) and len(prefix) > longest:
                best, longest = price, len(prefix)
        name, sep, model_id = model.partition(":")
        provider = provider_of(model)
        entry = provider.price_entry(model_id) if provider is not None else None
        # Measured as the part of ``model`` it matched ("openai:" + prefix), like the overrides.
        if entry is not None and len(name) + len(sep) + len(entry[0]) > longest:
            best = entry[1]
        return best


_BOOK = _PriceBook()


def set_price(model: str, price: Price) -> None:
    """Add or override the price of ``model`` (``provider:model``; a prefix covers a family)."""
    _BOOK.set(model, price)


def price_for(model: str) -> Price | None:
    """The price with the longest prefix of ``model`` (``provider:model-id``), if any."""
    return _BOOK.price_for(model)


def cost(usage: TokenCounts, model: str) -> float | None:
    """USD for ``usage`` on ``model``, or None when the model has no price."""
    price = _BOOK.price_for(model)
    return price.cost(usage) if price is not None else None


def call_cost(usage: CallUsage, shares: Sequence[tuple[str, CallUsage]]) -> float | None:
    """USD for a call that used ``usage`` in all, ``shares`` of it by model (a call's
    ``Result.usage`` and ``Result.usage_by_model``): each model's turns at its own price; None
    when a model that used tokens has no price. A call answered wholly from the response cache
    used no tokens: it costs nothing, whatever the price (none is looked up)."""
    if usage.cache_hits and not (usage.input_tokens or usage.output_tokens):
        return 0.0
    if len(shares) == 1:
        return cost(usage, shares[0][0])
    total = 0.0
    for model, used in shares:
        share = cost(used, model) if used.total_tokens else 0.0
        if share is None:
            return None
        total += share
    return total
