"""With numpy and without, a report's figures are the same bit for bit (issue 31: a seed makes
every bound reproducible; numpy, where installed, only makes the report faster to build)."""

from __future__ import annotations

import math
import random

import pytest

from alloy.eval import _stats
from alloy.eval._build import build_report
from alloy.eval._stats import Resampler, resampled_sums

from .plan_data import synthetic_plan

pytest.importorskip("numpy")

MODELS = {"mini": 0.8, "haiku": 0.9, "sonnet": 0.95}


def _without_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_stats, "numpy_or_none", lambda: None)


def test_a_report_is_the_same_with_numpy_and_without(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = synthetic_plan(120, MODELS, repeats=2, seed=5)
    fast = build_report(plan, 0.0).to_dict()
    _without_numpy(monkeypatch)
    pure = build_report(plan, 0.0).to_dict()
    assert fast == pure
    first = fast["fields"]["total"]["mini"]["metrics"]["abs_err_mean"]
    assert first["low"] < first["value"] < first["high"]


@pytest.mark.parametrize(
    "values",
    [
        [0.1 * i for i in range(60)],
        [(-1) ** i * 10.0 ** (i % 9 - 4) / 3 for i in range(60)],
        [1e15 + i / 7 for i in range(60)],
        [0.0] * 30 + [2.5e-7] * 30,
        [1e-300, 1e300] * 30,  # too wide to split: summed in pure Python
        [float(i % 5) for i in range(60)],
    ],
)
def test_resampled_sums_are_exact_on_either_path(
    values: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    resampler = Resampler(len(values), seed=random.Random(len(values)).randrange(100))
    fast = resampled_sums(values, resampler)
    _without_numpy(monkeypatch)
    assert resampled_sums(values, resampler) == fast
    assert fast == [math.fsum(values[i] for i in idx) for idx in resampler.indices]


@pytest.mark.parametrize(("n", "seed"), [(1, 0), (7, 3), (250, 0), (1000, 42)])
def test_the_numpy_draws_are_the_resamples_drawn_in_python(n: int, seed: int) -> None:
    import numpy as np

    resampler = Resampler(n, seed, resamples=200)
    expected = np.zeros((200, n), dtype=np.int64)
    for row, idx in zip(expected, resampler.indices, strict=True):
        np.add.at(row, idx, 1)
    assert np.array_equal(resampler.counts(), expected)
