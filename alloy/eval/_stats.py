"""The statistics of an eval, in pure Python: seeded bootstrap intervals, the paired tests of
:meth:`Report.compare`, and Holm's correction.

Every interval comes from one :class:`Resampler`: a seeded list of bootstrap resamples of the
cases, shared by every figure of a report, so a seed gives the same bounds bit for bit, and
figures of one report move together (common random numbers). Cases are resampled whole: the
repeats of a case stay together, as they are not independent draws.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

#: Resamples per interval: enough for stable 2.5% and 97.5% bounds.
RESAMPLES = 1000
LEVEL = 0.95


@dataclass(frozen=True)
class Metric:
    """One figure with its 95% interval (``low``, ``high``). ``value`` is None when the figure
    does not apply (no case had the field, say); its bounds are then None too."""

    value: float | None
    low: float | None = None
    high: float | None = None

    def to_dict(self) -> dict[str, float | None]:
        return {"value": self.value, "low": self.low, "high": self.high}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Metric:
        return cls(data.get("value"), data.get("low"), data.get("high"))

    def __format__(self, spec: str) -> str:
        if self.value is None:
            return "-"
        spec = spec or ".3f"
        if self.low is None or self.high is None:
            return format(self.value, spec)
        return f"{self.value:{spec}} [{self.low:{spec}}, {self.high:{spec}}]"


class Resampler:
    """``resamples`` bootstrap resamples of ``n`` cases (lists of case indices), drawn from
    ``random.Random(seed)``: the same seed and ``n`` give the same resamples."""

    def __init__(self, n: int, seed: int, resamples: int = RESAMPLES) -> None:
        self.n = n
        self.indices = _draw(n, seed, resamples)


@functools.lru_cache(maxsize=8)
def _draw(n: int, seed: int, resamples: int) -> list[list[int]]:
    """The resamples, drawn once per (n, seed, resamples) in a process and shared by every
    figure and report (nothing changes them)."""
    draw = random.Random(f"alloy.eval:{seed}:{n}").random
    return [[int(draw() * n) for _ in range(n)] for _ in range(resamples)]


def percentile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of sorted values, interpolated linearly between ranks."""
    if not ordered:
        raise ValueError("percentile of nothing")
    rank = q * (len(ordered) - 1)
    below = math.floor(rank)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (rank - below)


def _bounds(estimates: list[float]) -> tuple[float | None, float | None]:
    if not estimates:
        return None, None
    estimates.sort()
    tail = (1 - LEVEL) / 2
    return percentile(estimates, tail), percentile(estimates, 1 - tail)


def ratio(sums: Sequence[float], counts: Sequence[float], resampler: Resampler) -> Metric:
    """The mean of values pooled over cases, ``sum(sums) / sum(counts)`` (a case contributes
    the sum of its values and how many it has: its repeats, or none where the figure does not
    apply), with a bootstrap interval over cases."""
    total = sum(counts)
    if total == 0:
        return Metric(None)
    value = sum(sums) / total
    estimates = []
    get_sum, get_count = sums.__getitem__, counts.__getitem__
    if min(counts) == max(counts):  # every case counts alike (the usual case): one sum
        count = counts[0] * len(counts)
        estimates = [sum(map(get_sum, idx)) / count for idx in resampler.indices]
    else:
        for idx in resampler.indices:
            weight = sum(map(get_count, idx))
            if weight:
                estimates.append(sum(map(get_sum, idx)) / weight)
    low, high = _bounds(estimates)
    return Metric(value, low, high)


def statistic(
    cases: Sequence[T], fn: Callable[[Sequence[T]], float | None], resampler: Resampler
) -> Metric:
    """Any figure ``fn`` makes of the cases (a quantile, a macro-F1), with a bootstrap
    interval: ``fn`` is recomputed on every resample (where it gives None it is left out)."""
    value = fn(cases)
    if value is None:
        return Metric(None)
    estimates = []
    pick = cases.__getitem__
    for idx in resampler.indices:
        estimate = fn(list(map(pick, idx)))
        if estimate is not None:
            estimates.append(estimate)
    low, high = _bounds(estimates)
    return Metric(value, low, high)


def statistics(
    cases: Sequence[T],
    fn: Callable[[Sequence[T]], Sequence[float | None]],
    resampler: Resampler,
) -> list[Metric]:
    """Several figures ``fn`` makes of the cases at once (per-class precision, recall and F1
    from one confusion matrix), each with its bootstrap interval: ``fn`` runs once per
    resample for all of them."""
    values = list(fn(cases))
    estimates: list[list[float]] = [[] for _ in values]
    pick = cases.__getitem__
    for idx in resampler.indices:
        for column, estimate in zip(estimates, fn(list(map(pick, idx))), strict=True):
            if estimate is not None:
                column.append(estimate)
    metrics = []
    for value, column in zip(values, estimates, strict=True):
        if value is None:
            metrics.append(Metric(None))
        else:
            low, high = _bounds(column)
            metrics.append(Metric(value, low, high))
    return metrics


@dataclass(frozen=True)
class Paired:
    """A paired comparison of one figure: ``delta`` is b - a over the cases both have, with its
    interval, and the two-sided p-value of the test named ``test``."""

    delta: float
    low: float | None
    high: float | None
    p: float
    test: str


def paired(
    a: Sequence[float], b: Sequence[float], resampler: Resampler, *, yes_no: bool = False
) -> Paired:
    """Paired bootstrap on the mean of ``b[i] - a[i]``, one value per case (a case's mean
    over its repeats). Where every value is 0 or 1 and ``yes_no``, the p-value is McNemar's
    (:func:`mcnemar`) on the discordant cases; otherwise it is read off the bootstrap
    distribution (twice the smaller share of resampled deltas on either side of 0)."""
    n = len(a)
    diffs = [y - x for x, y in zip(a, b, strict=False)]
    delta = sum(diffs) / n
    get = diffs.__getitem__
    estimates = [sum(map(get, idx)) / n for idx in resampler.indices]
    if yes_no and all(v in (0, 1) for v in (*a, *b)):
        b_only = sum(1 for x, y in zip(a, b, strict=False) if y > x)
        a_only = sum(1 for x, y in zip(a, b, strict=False) if x > y)
        p, test = mcnemar(a_only, b_only), "mcnemar"
    else:
        p, test = bootstrap_p(estimates), "bootstrap"
    low, high = _bounds(estimates)
    return Paired(delta, low, high, p, test)


def bootstrap_p(estimates: Sequence[float]) -> float:
    """Two-sided p-value of "the delta is 0" from resampled deltas (ties count half)."""
    if not estimates:
        return 1.0
    below = sum(1 for e in estimates if e < 0) + 0.5 * sum(1 for e in estimates if e == 0)
    share = min(below, len(estimates) - below) / len(estimates)
    return min(1.0, max(2 * share, 1 / len(estimates)))


def mcnemar(a_only: int, b_only: int) -> float:
    """McNemar's exact test, mid-p form: two-sided p-value that two yes/no raters are right
    equally often, from the cases only one got right. The binomial tail is summed exactly;
    the mid-p form counts the observed outcome half, which keeps the false-positive rate near
    the nominal 5% where the plain exact test, being discrete, holds it near 3% and loses power
    (Fagerland, Lydersen and Laake, 2013)."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    k = min(a_only, b_only)
    twice_tail = 2 * sum(math.comb(n, i) for i in range(k)) + math.comb(n, k)
    p: float = twice_tail / 2**n  # exact integers: no overflow for any n
    return min(1.0, p)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values (in their given order)."""
    m = len(p_values)
    order = sorted(range(m), key=p_values.__getitem__)
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
