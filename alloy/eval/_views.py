"""What the report's charts show, read from a report dict (``Report.to_dict()``).

The HTML page (inline SVG, :mod:`alloy.eval._svg`) and :func:`alloy.eval._plot.plot`
(matplotlib) both draw from these views, so the two renderings show the same figures. Every
reader here copes with a missing section, a missing metric, a null value and any number of
models: a report is data from a file, and one model may have failed every case.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Report = Mapping[str, Any]

#: Whole-record figures in 0..1, drawn as bars with their intervals (in this order).
RATE_METRICS = ("record_exact", "field_mean", "reask_rate")
#: The figure a field is shown by in the heatmap: the first of these it has.
HEADLINE_METRICS = ("accuracy", "f1", "within", "exact", "similarity")
#: Figures the cost chart reads, first found wins.
COST_METRICS = ("cost_per_case_usd", "cost_usd")
ACCURACY_METRIC = "record_exact"
#: Larger confusion matrices keep their most frequent labels and pool the rest.
MAX_LABELS = 20
OTHER_LABEL = "(other)"


@dataclass(frozen=True)
class Estimate:
    """A value with its 95% interval; any part may be unknown."""

    value: float | None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Bar:
    model: str
    estimate: Estimate


@dataclass(frozen=True)
class Heatmap:
    """One row per JSON path, one column per model; ``metrics[i]`` names row i's figure."""

    paths: list[str]
    models: list[str]
    metrics: list[str]
    cells: list[list[Estimate]]


@dataclass(frozen=True)
class Confusion:
    path: str
    model: str
    labels: list[str]
    counts: list[list[int]]  # rows expected, columns got


@dataclass(frozen=True)
class Delta:
    a: str
    b: str
    target: str
    estimate: Estimate
    p: float | None
    p_holm: float | None
    test: str

    @property
    def significant(self) -> bool:
        return self.p_holm is not None and self.p_holm < 0.05


@dataclass(frozen=True)
class CostPoint:
    model: str
    cost: float
    accuracy: Estimate
    on_front: bool


def number(value: Any) -> float | None:
    """A finite float, or None for null, NaN, infinities, booleans and non-numbers."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    result = float(value)
    return result if math.isfinite(result) else None


def estimate(value: Any) -> Estimate:
    """A Metric dict (``{"value", "low", "high"}``) as a Estimate; anything else is unknown."""
    if not isinstance(value, Mapping):
        return Estimate(number(value))
    return Estimate(number(value.get("value")), number(value.get("low")), number(value.get("high")))


def section(report: Report, key: str) -> Mapping[str, Any]:
    value = report.get(key)
    return value if isinstance(value, Mapping) else {}


def models(report: Report) -> list[str]:
    """The models' display names, in the report's order (the first is the comparisons' base)."""
    names = [str(name) for name in section(report, "models")]
    for key in ("metrics", "failures"):
        names += [str(name) for name in section(report, key) if str(name) not in names]
    return names


def model_metrics(report: Report, model: str) -> Mapping[str, Any]:
    value = section(report, "metrics").get(model)
    return value if isinstance(value, Mapping) else {}


def field_entry(report: Report, path: str, model: str) -> Mapping[str, Any]:
    per_model = section(report, "fields").get(path)
    entry = per_model.get(model) if isinstance(per_model, Mapping) else None
    return entry if isinstance(entry, Mapping) else {}


def metric_bars(report: Report) -> list[tuple[str, list[Bar]]]:
    """For each whole-record rate some model has, one bar per model."""
    names = models(report)
    groups = []
    for metric in RATE_METRICS:
        bars = [Bar(model, estimate(model_metrics(report, model).get(metric))) for model in names]
        if any(bar.estimate.value is not None for bar in bars):
            groups.append((metric, bars))
    return groups


def headline(entry: Mapping[str, Any]) -> str | None:
    """The name of the figure a field is best summed up by, if it has one."""
    metrics = entry.get("metrics")
    if not isinstance(metrics, Mapping):
        return None
    for name in HEADLINE_METRICS:
        if estimate(metrics.get(name)).value is not None:
            return name
    return None


def field_heatmap(report: Report) -> Heatmap:
    names = models(report)
    paths, metrics, cells = [], [], []
    for path in section(report, "fields"):
        chosen = next(
            (m for m in (headline(field_entry(report, path, model)) for model in names) if m),
            None,
        )
        if chosen is None:
            continue
        row = []
        for model in names:
            values = field_entry(report, path, model).get("metrics")
            row.append(
                estimate(values.get(chosen)) if isinstance(values, Mapping) else Estimate(None)
            )
        paths.append(str(path))
        metrics.append(chosen)
        cells.append(row)
    return Heatmap(paths, names, metrics, cells)


def _counts(matrix: Any, size: int) -> list[list[int]] | None:
    if not isinstance(matrix, Sequence) or len(matrix) != size:
        return None
    rows = []
    for row in matrix:
        if not isinstance(row, Sequence) or len(row) != size:
            return None
        values = [number(cell) for cell in row]
        rows.append([int(v) if v is not None and v > 0 else 0 for v in values])
    return rows


def pooled(labels: list[str], counts: list[list[int]], limit: int) -> Confusion | None:
    """Keep the ``limit - 1`` most frequent labels and pool the rest into one (for big enums)."""
    if len(labels) <= limit:
        return None
    size = len(labels)
    weight = [sum(counts[i]) + sum(row[i] for row in counts) for i in range(size)]
    kept = sorted(sorted(range(size), key=lambda i: -weight[i])[: limit - 1])
    where = {old: new for new, old in enumerate(kept)}
    other = len(kept)
    merged = [[0] * (other + 1) for _ in range(other + 1)]
    for i in range(size):
        for j in range(size):
            merged[where.get(i, other)][where.get(j, other)] += counts[i][j]
    return Confusion("", "", [labels[i] for i in kept] + [OTHER_LABEL], merged)


def confusions(report: Report, limit: int = MAX_LABELS) -> list[Confusion]:
    """Every field's confusion matrix, per model (enum, Literal and bool fields have them)."""
    found = []
    for path in section(report, "fields"):
        for model in models(report):
            entry = field_entry(report, path, model)
            labels = entry.get("labels")
            if not isinstance(labels, Sequence) or isinstance(labels, str) or not labels:
                continue
            names = [str(label) for label in labels]
            counts = _counts(entry.get("confusion"), len(names))
            if counts is None:
                continue
            big = pooled(names, counts, limit)
            if big is not None:
                names, counts = big.labels, big.counts
            found.append(Confusion(str(path), model, names, counts))
    return found


def deltas(report: Report) -> list[Delta]:
    """The paired comparisons that have a delta, in the report's order."""
    rows = report.get("comparisons")
    found = []
    for row in rows if isinstance(rows, Sequence) else ():
        if not isinstance(row, Mapping):
            continue
        delta = number(row.get("delta"))
        if delta is None:
            continue
        found.append(
            Delta(
                a=str(row.get("a", "")),
                b=str(row.get("b", "")),
                target=str(row.get("target", "")),
                estimate=Estimate(delta, number(row.get("low")), number(row.get("high"))),
                p=number(row.get("p")),
                p_holm=number(row.get("p_holm")),
                test=str(row.get("test", "")),
            )
        )
    return found


def cost_metric(report: Report) -> str | None:
    for name in COST_METRICS:
        if any(
            estimate(model_metrics(report, model).get(name)).value is not None
            for model in models(report)
        ):
            return name
    return None


def cost_points(report: Report) -> list[CostPoint]:
    """Each model's accuracy against its cost, marking the Pareto front (cheaper or better)."""
    metric = cost_metric(report)
    if metric is None:
        return []
    known = []
    for model in models(report):
        values = model_metrics(report, model)
        cost = estimate(values.get(metric)).value
        accuracy = estimate(values.get(ACCURACY_METRIC))
        if cost is not None and accuracy.value is not None:
            known.append((model, cost, accuracy))

    def dominated(cost: float, accuracy: float) -> bool:
        return any(
            c <= cost
            and a.value is not None
            and a.value >= accuracy
            and (c, a.value) != (cost, accuracy)
            for _, c, a in known
        )

    return [
        CostPoint(model, cost, accuracy, not dominated(cost, accuracy.value or 0.0))
        for model, cost, accuracy in known
    ]
