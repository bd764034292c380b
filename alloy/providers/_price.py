"""A token price, and what a call's usage costs at it.

A leaf: it imports nothing from alloy, so the provider descriptors, :mod:`alloy.pricing` and any
lower layer can hold a :class:`Price` without an import cycle. Usage is read by duck typing
(:class:`TokenCounts`) for the same reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["Price", "TokenCounts"]


class TokenCounts(Protocol):
    """The token counts a price applies to (``alloy.Usage`` has them)."""

    @property
    def input_tokens(self) -> int: ...

    @property
    def output_tokens(self) -> int: ...

    @property
    def cached_tokens(self) -> int: ...

    @property
    def cache_write_tokens(self) -> int: ...


@dataclass(frozen=True)
class Price:
    """USD per million tokens. Input read from the provider's prompt cache costs
    ``cached_input``, input written to it ``cache_write`` (each the input rate if None)."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    def cost(self, usage: TokenCounts) -> float:
        """USD for ``usage``: cached reads and cache writes at their rates, the rest of the input
        at ``input``. Both are parts of ``input_tokens``, so neither can exceed it."""
        if not (usage.cached_tokens or usage.cache_write_tokens):  # most calls: no prompt cache
            return (usage.input_tokens * self.input + usage.output_tokens * self.output) / 1_000_000
        cached = min(usage.cached_tokens, usage.input_tokens)
        written = min(usage.cache_write_tokens, usage.input_tokens - cached)
        cached_rate = self.cached_input if self.cached_input is not None else self.input
        write_rate = self.cache_write if self.cache_write is not None else self.input
        total = (
            (usage.input_tokens - cached - written) * self.input
            + cached * cached_rate
            + written * write_rate
            + usage.output_tokens * self.output
        )
        return total / 1_000_000
