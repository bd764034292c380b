"""Timing and statistics shared by the suites, and the result types the report is built from.

Two callables are always timed *interleaved* (A B B A ...), one call at a time, so load from
other processes on the machine lands on both sides alike; a ratio of medians with a paired
bootstrap interval is what gets compared, never an absolute time against a fixed number.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Direction = Literal["max", "min"]


@dataclass(frozen=True)
class Target:
    """A ratio bound: ``max`` means alloy/baseline must be at most ``value``, ``min`` at least."""

    direction: Direction
    value: float
    strict: bool = False

    def met(self, ratio: float) -> bool:
        if self.direction == "max":
            return ratio < self.value if self.strict else ratio <= self.value
        return ratio > self.value if self.strict else ratio >= self.value

    def __str__(self) -> str:
        sign = {("max", False): "≤", ("max", True): "<", ("min", False): "≥", ("min", True): ">"}
        return f"{sign[self.direction, self.strict]} {self.value:g}"


@dataclass(frozen=True)
class Figure:
    """One side-by-side measurement: alloy's median, the baseline's, and their ratio."""

    suite: str
    name: str
    alloy: float
    baseline: float
    baseline_label: str
    unit: str
    samples: str
    target: Target | None = None
    ci: tuple[float, float] | None = None
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.alloy / self.baseline if self.baseline else float("nan")

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.target.met(self.ratio)


@dataclass
class SuiteResult:
    """What one suite measured, with the notes that say exactly what was compared."""

    key: str
    title: str
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def paired_ratio_ci(
    a: Sequence[float], b: Sequence[float], *, rounds: int = 300, seed: int = 7
) -> tuple[float, float]:
    """95% bootstrap interval of median(a)/median(b), resampling the interleaved pairs together."""
    n = min(len(a), len(b))
    if n < 5:
        ratio = median(a) / median(b)
        return ratio, ratio
    rng = random.Random(seed)
    ratios = []
    for _ in range(rounds):
        picks = [rng.randrange(n) for _ in range(n)]
        ratios.append(median([a[i] for i in picks]) / median([b[i] for i in picks]))
    ratios.sort()
    return ratios[int(0.025 * rounds)], ratios[int(0.975 * rounds) - 1]


def interleave(
    a: Callable[[], Any], b: Callable[[], Any], *, n: int, warmup: int
) -> tuple[list[float], list[float]]:
    """Seconds per call of ``a`` and ``b``, called alternately (ABBA) ``n`` times each."""
    for _ in range(warmup):
        a()
        b()
    clock = time.perf_counter
    times_a: list[float] = []
    times_b: list[float] = []
    for i in range(n):
        first, second = ((a, times_a), (b, times_b)) if i % 2 == 0 else ((b, times_b), (a, times_a))
        for fn, sink in (first, second):
            start = clock()
            fn()
            sink.append(clock() - start)
    return times_a, times_b


async def ainterleave(
    a: Callable[[], Awaitable[Any]],
    b: Callable[[], Awaitable[Any]],
    *,
    n: int,
    warmup: int,
) -> tuple[list[float], list[float]]:
    """Async twin of :func:`interleave`: one call in flight at a time, on the running loop."""
    for _ in range(warmup):
        await a()
        await b()
    clock = time.perf_counter
    times_a: list[float] = []
    times_b: list[float] = []
    for i in range(n):
        first, second = ((a, times_a), (b, times_b)) if i % 2 == 0 else ((b, times_b), (a, times_a))
        for fn, sink in (first, second):
            start = clock()
            await fn()
            sink.append(clock() - start)
    return times_a, times_b


def compare(
    suite: str,
    name: str,
    a: Sequence[float],
    b: Sequence[float],
    *,
    baseline_label: str,
    unit: str = "µs",
    scale: float = 1e6,
    target: Target | None = None,
    note: str = "",
) -> Figure:
    """A Figure from two interleaved samples (seconds), shown in ``unit`` (``scale`` per second)."""
    return Figure(
        suite=suite,
        name=name,
        alloy=median(a) * scale,
        baseline=median(b) * scale,
        baseline_label=baseline_label,
        unit=unit,
        samples=f"{len(a)} + {len(b)} calls, interleaved",
        target=target,
        ci=paired_ratio_ci(a, b),
        note=note,
    )
