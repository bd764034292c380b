"""The statistics of an eval: seeded bootstrap intervals, the paired tests of
:meth:`Report.compare`, and Holm's correction.

Every interval comes from one :class:`Resampler`: a seeded list of bootstrap resamples of the
cases, shared by every figure of a report, so a seed gives the same bounds bit for bit, and
figures of one report move together (common random numbers). Cases are resampled whole: the
repeats of a case stay together, as they are not independent draws.

Where numpy is installed (it is imported only when a report is built), the resamples' sums,
tallies and quantiles are computed from a matrix of how often each resample draws each case;
otherwise in pure Python from the same resamples. Both give the same figures bit for bit: sums
are exact (correctly rounded, as :func:`math.fsum`), tallies are counts, and a quantile is
interpolated by the same float operations.
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
        self.seed = seed
        self.resamples = resamples

    @functools.cached_property
    def indices(self) -> list[list[int]]:
        return _draw(self.n, self.seed, self.resamples)

    def counts(self) -> Any:
        """How often each resample draws each case (a resamples x n numpy array of int64), or
        None where numpy is not installed."""
        np = numpy_or_none()
        return None if np is None else _counts(self.n, self.seed, self.resamples)


def numpy_or_none() -> Any:
    """numpy, imported now (``import alloy.eval`` imports none), or None where it is missing."""
    try:
        import numpy
    except ImportError:
        return None
    return numpy


@functools.lru_cache(maxsize=2)  # resamples x n x 8 bytes each: 8 MB for 1,000 cases
def _counts(n: int, seed: int, resamples: int) -> Any:
    """The count matrix of :func:`_draw`'s resamples, drawn by numpy's generator set to the
    state of the one :func:`_draw` uses: both are MT19937 making doubles the same way, so the
    draws are the same numbers, made without a Python loop."""
    import numpy as np

    _, state, _ = _generator(n, seed).getstate()
    generator = np.random.RandomState()
    generator.set_state(("MT19937", np.array(state[:-1], dtype=np.uint32), int(state[-1]), 0, 0.0))
    drawn = (generator.random_sample((resamples, n)) * n).astype(np.int64)
    flat = drawn + (np.arange(resamples, dtype=np.int64) * n)[:, None]
    tally = np.bincount(flat.ravel(), minlength=resamples * n).reshape(resamples, n)
    return tally.astype(np.int64)  # integer products: exact, and no BLAS threads to contend


@functools.lru_cache(maxsize=8)
def _draw(n: int, seed: int, resamples: int) -> list[list[int]]:
    """The resamples, drawn once per (n, seed, resamples) in a process and shared by every
    figure and report (nothing changes them)."""
    draw = _generator(n, seed).random
    return [[int(draw() * n) for _ in range(n)] for _ in range(resamples)]


def _generator(n: int, seed: int) -> random.Random:
    return random.Random(f"alloy.eval:{seed}:{n}")


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


#: A float split into limbs of this many bits: a resample's sum of limbs stays exact in int64.
_LIMB = 32
#: More limbs than this (values spanning a huge range of magnitudes): sum in pure Python.
_MOST_LIMBS = 6


def resampled_sums(values: Sequence[float], resampler: Resampler) -> list[float]:
    """Each resample's sum of ``values`` (one per case), exact and then rounded once."""
    counts = resampler.counts()
    if counts is not None:
        found = _exact_sums(counts, values)
        if found is not None:
            return found
    add: Callable[[Any], float] = sum if _integral(values) else math.fsum
    get = values.__getitem__
    return [add(map(get, idx)) for idx in resampler.indices]


def _integral(values: Sequence[float]) -> bool:
    """Whole numbers small enough that any sum of n of them is exact in a float."""
    limit = 2.0**53 / max(len(values), 1)
    return all(float(v).is_integer() and abs(v) < limit for v in values)


def _exact_sums(counts: Any, values: Sequence[float]) -> list[float] | None:
    """The resamples' sums by matrix products that are exact: whole numbers directly, other
    floats as whole multiples of their smallest power of two, split into 32-bit limbs (each
    limb's resampled sum stays below 2**63) and joined as Python integers. None where the
    values are not finite or span too many magnitudes to split."""
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    if n >= 2 ** (62 - _LIMB) or not np.isfinite(v).all():
        return None
    if np.array_equal(v, np.round(v)) and float(np.abs(v).max(initial=0.0)) * n < 2.0**53:
        sums: list[float] = (counts @ v.astype(np.int64)).astype(np.float64).tolist()
        return sums
    nonzero = v[v != 0]
    exponents = np.frexp(nonzero)[1]
    low = int(exponents.min()) - 53  # every value is a whole multiple of 2**low
    limbs = -(-(int(exponents.max()) - low) // _LIMB)
    if limbs > _MOST_LIMBS or low < -1000:
        return None
    scaled = np.ldexp(v, -low)
    sign, size = np.sign(scaled), np.abs(scaled)
    parts = np.stack(
        [sign * np.fmod(np.floor(size / 2.0 ** (_LIMB * j)), 2.0**_LIMB) for j in range(limbs)],
        axis=1,
    ).astype(np.int64)
    limb_sums = (counts @ parts).astype(object)  # Python integers from here: no overflow
    joined = limb_sums[:, 0]
    for j in range(1, limbs):
        joined = joined + (limb_sums[:, j] << (_LIMB * j))
    # an integer to a float rounds once, to nearest; times 2**low is exact
    sums = np.ldexp(joined.astype(np.float64), low).tolist()
    return sums


def ratio(sums: Sequence[float], counts: Sequence[float], resampler: Resampler) -> Metric:
    """The mean of values pooled over cases, ``sum(sums) / sum(counts)`` (a case contributes
    the sum of its values and how many it has: its repeats, or none where the figure does not
    apply), with a bootstrap interval over cases."""
    total = sum(counts)
    if total == 0:
        return Metric(None)
    value = sum(sums) / total
    resampled = resampled_sums(sums, resampler)
    if min(counts) == max(counts):  # every case counts alike (the usual case): one sum
        count = counts[0] * len(counts)
        estimates = [s / count for s in resampled]
    else:
        weights = resampled_sums(counts, resampler)
        estimates = [s / w for s, w in zip(resampled, weights, strict=True) if w]
    low, high = _bounds(estimates)
    return Metric(value, low, high)


def statistics(
    cases: Sequence[T],
    fn: Callable[[Sequence[T]], Sequence[float | None]],
    resampler: Resampler,
) -> list[Metric]:
    """Several figures ``fn`` makes of the cases at once (quantiles, without numpy), each with
    its bootstrap interval: ``fn`` runs once per resample for all of them."""
    pick = cases.__getitem__
    resampled = [fn(list(map(pick, idx))) for idx in resampler.indices]
    return _metrics(list(fn(cases)), resampled)


def tallied(
    codes: Sequence[Sequence[int]],
    size: int,
    fn: Callable[[list[int]], Sequence[float | None]],
    resampler: Resampler,
) -> list[Metric]:
    """Figures ``fn`` makes of a tally (a confusion matrix, say), each with its bootstrap
    interval: each case holds codes 0..``size``-1, and ``fn`` gets how many times each code
    occurs among the cases, first of them all, then of each resample."""
    per_case = [[0] * size for _ in codes]
    for tally, case in zip(per_case, codes, strict=True):
        for code in case:
            tally[code] += 1
    values = list(fn([sum(column) for column in zip(*per_case, strict=True)] or [0] * size))
    counts = resampler.counts()
    if counts is not None:
        import numpy as np

        # each resample's tally of a code: how often it draws the cases holding it, summed
        pairs = sorted((code, i) for i, case in enumerate(codes) for code in case)
        tallies = np.zeros((len(counts), size), dtype=np.int64)
        if pairs:
            held = np.array([code for code, _ in pairs], dtype=np.int64)
            present, starts = np.unique(held, return_index=True)
            drawn = _narrow(len(codes), resampler.seed, resampler.resamples)
            gathered = drawn[:, np.array([i for _, i in pairs], dtype=np.int64)]
            tallies[:, present] = np.add.reduceat(gathered, starts, axis=1, dtype=np.int64)
        resampled = tallies.tolist()
    else:
        resampled = []
        for idx in resampler.indices:
            total = [0] * size
            for i in idx:
                for code in codes[i]:
                    total[code] += 1
            resampled.append(total)
    return _metrics(values, [fn(t) for t in resampled])


@functools.lru_cache(maxsize=2)
def _narrow(n: int, seed: int, resamples: int) -> Any:
    """:func:`_counts` in 8 bits where every count fits (a case drawn 256 times or more in one
    resample is next to impossible, but then the counts stay wide)."""
    import numpy as np

    counts = _counts(n, seed, resamples)
    return counts.astype(np.uint8) if counts.max(initial=0) < 256 else counts


def quantile_figures(
    per_case: Sequence[Sequence[float]], qs: Sequence[float], resampler: Resampler
) -> list[Metric]:
    """The ``qs`` quantiles (0..1) of the values of all cases, with bootstrap intervals."""

    def figures(cases: Sequence[Sequence[float]]) -> list[float | None]:
        values = sorted(v for case in cases for v in case)
        return [percentile(values, q) if values else None for q in qs]

    counts = resampler.counts()
    if counts is None:
        return statistics(per_case, figures, resampler)
    import numpy as np

    flat = [(v, i) for i, case in enumerate(per_case) for v in case]
    flat.sort()
    ordered = np.array([v for v, _ in flat], dtype=np.float64)
    owner = np.array([i for _, i in flat], dtype=np.int64)
    # running[b, k]: how many of resample b's values are the k + 1 smallest or fewer (counted
    # in the narrowest integers that hold them: the work is in moving these arrays)
    most = len(per_case) * max(map(len, per_case), default=0)
    small = _narrow(len(per_case), resampler.seed, resampler.resamples)
    kind = np.int32 if most < 2**31 else np.int64
    running = np.cumsum(small[:, owner], axis=1, dtype=kind) if flat else np.zeros((len(counts), 0))
    drawn = running[:, -1] if flat else np.zeros(len(counts))
    kept = drawn > 0
    running, drawn = running[kept], drawn[kept]

    # each row's running counts, lifted above the rows before: one sorted array to search
    lift = (np.arange(len(running), dtype=np.int64) * (int(drawn.max(initial=0)) + 1))[:, None]
    lifted = (running + lift).ravel()
    starts = np.arange(len(running), dtype=np.int64) * running.shape[1]

    def at(position: Any) -> Any:
        """Each resample's value at ``position`` in its own sorted values (0 first)."""
        wanted = lift[:, 0] + position.astype(np.int64)  # whole numbers: no float copy
        found = np.searchsorted(lifted, wanted, side="right") - starts
        return ordered[found]

    columns = []
    for q in qs:  # as percentile() does, element by element
        rank = q * (drawn - 1)
        below = np.floor(rank)
        above = np.minimum(below + 1, drawn - 1)
        low_value = at(below)
        columns.append((low_value + (at(above) - low_value) * (rank - below)).tolist())
    return _metrics(figures(per_case), list(zip(*columns, strict=True)))


def _metrics(
    values: Sequence[float | None], resampled: Sequence[Sequence[float | None]]
) -> list[Metric]:
    """Each figure with the bounds of its resampled estimates (None ones left out)."""
    metrics = []
    for column, value in enumerate(values):
        if value is None:
            metrics.append(Metric(None))
            continue
        estimates = [e for e in (row[column] for row in resampled) if e is not None]
        low, high = _bounds(estimates)
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
    estimates = [s / n for s in resampled_sums(diffs, resampler)]
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
