"""The statistics hold (issue 31 item 3): seeded intervals reproducible bit for bit, the paired
test's false-positive rate under the null and its power, Holm's correction.

The simulations run the very function ``Report.compare`` uses for a yes/no figure
(``alloy.eval._stats.paired``; McNemar's exact mid-p test on the discordant cases), 1,000 evals
of n = 200 each, in the suite (well under a second)."""

from __future__ import annotations

import math
import random

import pytest

from alloy.eval._stats import Resampler, holm, mcnemar, paired, ratio

SIMULATIONS = 1000
N = 200


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def _shift_for(points: float, sd: float, rng: random.Random) -> float:
    """The logit shift that raises mean accuracy by ``points`` over items of spread ``sd``."""
    difficulty = [rng.gauss(0, sd) for _ in range(20000)]
    low, high = 0.0, 3.0
    for _ in range(40):
        mid = (low + high) / 2
        gain = sum(_sigmoid(d + mid) - _sigmoid(d) for d in difficulty) / len(difficulty)
        low, high = (mid, high) if gain < points else (low, mid)
    return (low + high) / 2


def _detections(shift: float, seed: int) -> float:
    """Share of simulated evals in which the paired test finds model B different (p < 0.05)."""
    rng = random.Random(seed)
    found = 0
    few = Resampler(N, 0, resamples=1)  # the p-value of a yes/no figure needs no resamples
    for _ in range(SIMULATIONS):
        a, b = [], []
        for _ in range(N):
            d = rng.gauss(0, 3)  # item difficulty, logit sd 3
            a.append(float(rng.random() < _sigmoid(d)))
            b.append(float(rng.random() < _sigmoid(d + shift)))
        result = paired(a, b, few, yes_no=True)
        assert result.test == "mcnemar"
        found += result.p < 0.05
    return found / SIMULATIONS


def test_the_false_positive_rate_under_the_null_is_between_3_and_7_percent() -> None:
    assert 0.03 <= _detections(0.0, seed=11) <= 0.07


def test_a_true_difference_of_5_8_points_is_found_at_least_35_percent_of_the_time() -> None:
    shift = _shift_for(0.058, 3, random.Random(5))
    assert _detections(shift, seed=12) >= 0.35


def test_mcnemar_is_exact_and_symmetric() -> None:
    assert mcnemar(0, 0) == 1.0
    assert mcnemar(3, 3) == 1.0
    # 10 discordant, 1 v 9: two-sided mid-p = (2 * (C(10,0)) + C(10,1)) / 2^10
    assert mcnemar(1, 9) == pytest.approx((2 * 1 + 10) / 1024)
    assert mcnemar(9, 1) == mcnemar(1, 9)
    assert 0 < mcnemar(400, 700) < 1e-15  # big counts do not overflow


def test_holm_adjusts_step_down_and_keeps_the_order() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5]) == [0.5]


def test_a_seed_gives_the_same_bounds_bit_for_bit() -> None:
    values = [float(i % 3 == 0) for i in range(150)]
    counts = [1.0] * 150
    first = ratio(values, counts, Resampler(150, seed=7))
    again = ratio(values, counts, Resampler(150, seed=7))
    other = ratio(values, counts, Resampler(150, seed=8))
    assert first == again
    assert first != other
    assert first.low < first.value < first.high


def test_a_paired_interval_is_narrower_than_the_two_intervals_overlapping() -> None:
    rng = random.Random(3)
    a = [float(rng.random() < 0.7) for _ in range(N)]
    b = [x if rng.random() < 0.9 else 1.0 for x in a]  # B: A's answers, some fixed
    result = paired(a, b, Resampler(N, 0), yes_no=True)
    assert result.delta > 0 and result.low > 0 and result.p < 0.05


def _bootstrap_false_positives(simulations: int, seed: int) -> float:
    """Share of null evals (two equal models, a figure that is a mean of 4 yes/no fields) in
    which the paired bootstrap's p-value is below 0.05."""
    rng = random.Random(seed)
    resampler = Resampler(N, seed, resamples=300)
    found = 0
    for _ in range(simulations):
        a, b = [], []
        for _ in range(N):
            p = _sigmoid(rng.gauss(0, 1.5))
            a.append(sum(rng.random() < p for _ in range(4)) / 4)
            b.append(sum(rng.random() < p for _ in range(4)) / 4)
        result = paired(a, b, resampler)
        assert result.test == "bootstrap"
        found += result.p < 0.05
    return found / simulations


@pytest.mark.fuzz
def test_the_paired_bootstrap_holds_its_false_positive_rate_on_a_graded_figure(
    fuzz_scale: int,
) -> None:
    # 300 simulated evals in the suite (about a second): a binomial sd of 1.3 points at 5%, so
    # the band is 2-9%; `make fuzz` (--fuzz-scale 50) runs 15,000 and holds it to 3-7%.
    simulations = 300 * fuzz_scale
    low, high = (0.02, 0.09) if simulations < 1000 else (0.03, 0.07)
    assert low <= _bootstrap_false_positives(simulations, seed=21) <= high
