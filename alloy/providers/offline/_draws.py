"""The seeded choices of the stand-in model: SplitMix64, a few integer operations a draw.

A stand-in makes a handful of draws per answer, and the offline model answers in microseconds,
so the generator is a measurable part of its cost: ``random.Random`` is slow to seed, and its
``choice`` draws bit by bit with rejection sampling; these take a fraction of that (figures in
the benchmark report). Streams are reproducible in any process and Python version (plain
64-bit arithmetic).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


class Draws:
    """Seeded draws with the part of ``random.Random``'s interface the stand-in uses."""

    __slots__ = ("_state",)

    def __init__(self, seed: int = 0) -> None:
        self._state = seed & _MASK

    def next64(self) -> int:
        """The next 64 random bits (SplitMix64, Steele, Lea and Flood 2014)."""
        self._state = state = (self._state + _GOLDEN) & _MASK
        mixed = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        mixed = ((mixed ^ (mixed >> 27)) * 0x94D049BB133111EB) & _MASK
        return mixed ^ (mixed >> 31)

    def below(self, n: int) -> int:
        """An int in ``[0, n)`` (multiply-shift: a bias under n/2**64, nothing a stand-in minds)."""
        return (self.next64() * n) >> 64

    def random(self) -> float:
        """A float in ``[0, 1)`` with 53 random bits."""
        return (self.next64() >> 11) * 2.0**-53

    def randrange(self, stop: int) -> int:
        return self.below(stop)

    def randint(self, low: int, high: int) -> int:
        """An int in ``[low, high]``, both ends included."""
        return low + self.below(high - low + 1)

    def uniform(self, low: float, high: float) -> float:
        return low + (high - low) * self.random()

    def choice(self, options: Sequence[T]) -> T:
        return options[self.below(len(options))]

    def getrandbits(self, k: int) -> int:
        bits = 0
        for _ in range((k + 63) // 64):
            bits = (bits << 64) | self.next64()
        return bits >> (-k % 64)
