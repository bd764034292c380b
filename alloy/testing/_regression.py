"""``assert_no_regression``: the eval's CI gate inside a test (see ``Report.check``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..eval import Check, Report


def assert_no_regression(
    report: Report,
    *,
    baseline: str | os.PathLike[str] | Report,
    metric: str = "record_exact",
    margin: float = 0.0,
    model: str | None = None,
    allow_inconclusive: bool = False,
) -> Check:
    """Fail the test (AssertionError) when ``report`` regressed against ``baseline`` on
    ``metric``: paired case by case, the interval's upper bound on (new - baseline) below
    ``-margin``. An inconclusive result (the interval straddles ``-margin``) fails too, unless
    ``allow_inconclusive``. Returns the :class:`alloy.eval.Check` otherwise."""
    from ..eval import RegressionError

    try:
        result: Any = report.check(baseline, metric, margin, model=model)
    except RegressionError as error:
        raise AssertionError(str(error)) from None
    if result.status == "inconclusive" and not allow_inconclusive:
        raise AssertionError(
            f"{result.describe()}: more cases would tell (or pass allow_inconclusive=True)"
        )
    checked: Check = result
    return checked
