"""Adaptive concurrency: as many calls in flight as the provider takes, learned from its 429s.

A provider that states no rate limits (Gemini, Ollama, many OpenAI-compatible servers) only
ever says "too many": a 429. A run then keeps its calls in flight within a limit the way TCP
keeps its congestion window: the limit starts at the ``concurrency`` asked for, halves on a 429
(multiplicative decrease) and grows by one once a limit's worth of calls succeeded in a row
(additive increase), never above what was asked for. A 429 answering a call sent before the
last cut was already answered for by that cut, so it cuts nothing more: a burst of 429s from one
moment halves the limit once.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable


class AdaptiveConcurrency:
    """How many calls may be in flight now: AIMD between 1 and ``ceiling``.

    Not locked: its owner (a :class:`~alloy.rows.Pacer`) calls it under its own lock, with
    the same ``clock`` that stamped the calls' send times.
    """

    def __init__(self, ceiling: int, clock: Callable[[], float] = time.monotonic) -> None:
        if ceiling < 1:
            raise ValueError(f"AdaptiveConcurrency needs a ceiling of at least 1, got {ceiling}")
        self.ceiling = ceiling
        self.limit = ceiling
        self.clock = clock
        self.cuts = 0
        self._cut_at = -math.inf
        self._successes = 0

    def __repr__(self) -> str:
        return f"<AdaptiveConcurrency {self.limit} of {self.ceiling}>"

    def allows(self, in_flight: int) -> bool:
        """Whether one more call may go out while ``in_flight`` are under way."""
        return in_flight < self.limit

    def succeeded(self) -> None:
        """A call got its answer: after a limit's worth of them, one more may go at once."""
        self._successes += 1
        if self._successes >= self.limit:
            self._successes = 0
            self.limit = min(self.ceiling, self.limit + 1)

    def rate_limited(self, sent: float) -> bool:
        """A call sent at ``sent`` (by :attr:`clock`) met a 429: halve the limit, unless the
        call left before the last cut (that cut answered for it). Whether it cut."""
        if sent <= self._cut_at:
            return False
        self._cut_at = self.clock()
        self._successes = 0
        self.limit = max(1, self.limit // 2)
        self.cuts += 1
        return True
