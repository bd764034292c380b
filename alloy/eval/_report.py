"""The report of an eval: every run's answer and scores, figures with 95% intervals per model
and per field, failures by kind, paired comparisons between models, and the regression gate.

:meth:`Report.to_dict` is the machine record (JSON, version 1; the shape is in
``docs/evaluating.md``): what ``save("x.json")`` writes, ``Report.load`` reads back, and the
HTML report and ``check(baseline=...)`` are made from. Everything :meth:`compare` and
:meth:`check` need is in it, so a loaded report compares as well as a fresh one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import AlloyError, ConfigurationError
from ._stats import Metric, Paired, Resampler, holm, paired

VERSION = 1
#: The figures per model, from the runs' records.
RECORD_METRICS = ("record_exact", "field_mean")


class RegressionError(AlloyError):
    """``Report.check`` found a regression: the interval's upper bound on (new - baseline)
    is below -margin. ``result`` is the :class:`Check`."""

    def __init__(self, message: str, result: Check) -> None:
        super().__init__(message)
        self.result = result


@dataclass(frozen=True)
class Delta:
    """A paired comparison of one figure between models ``a`` and ``b``: ``delta`` is b - a,
    over the cases both answered, with its 95% interval, p-value (``test``: ``mcnemar`` for a
    yes/no figure, else ``bootstrap``), and the p-value Holm-adjusted over the pair's targets."""

    a: str
    b: str
    target: str
    delta: float
    low: float | None
    high: float | None
    p: float
    p_holm: float
    test: str

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class Check:
    """The gate's verdict on ``metric``: ``status`` is ``pass``, ``regression`` or
    ``inconclusive``, from the paired interval on (new - baseline) against ``-margin``."""

    status: Literal["pass", "regression", "inconclusive"]
    metric: str
    margin: float
    model: str
    baseline_model: str
    cases: int
    delta: float
    low: float | None
    high: float | None

    @property
    def exit_code(self) -> int:
        return {"pass": 0, "regression": 1, "inconclusive": 3}[self.status]

    def describe(self) -> str:
        return (
            f"{self.status}: {self.metric} of {self.model} minus baseline {self.baseline_model} "
            f"is {self.delta:+.4f} [{_num(self.low)}, {_num(self.high)}] over {self.cases} paired "
            f"cases (margin {self.margin})"
        )


@dataclass(frozen=True)
class FieldResult:
    """One field's figures for one model: its ``kind`` and ``metrics`` (each a
    :class:`Metric`), and ``detail`` (labels, confusion, per_class, tolerance...)."""

    kind: str
    metrics: dict[str, Metric]
    detail: dict[str, Any]

    def __getitem__(self, name: str) -> Metric:
        return self.metrics[name]


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:+.4f}"


class Report:
    """An eval's results (see the module docstring). Made by ``Command.eval``, or read with
    :meth:`load`."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        if data.get("alloy_eval") != VERSION:
            raise ConfigurationError(
                f"not an alloy eval report of version {VERSION} (alloy_eval={data.get('alloy_eval')!r})"
            )
        self._data = dict(data)

    # -- the figures --
    @property
    def models(self) -> dict[str, str]:
        return dict(self._data["models"])

    @property
    def metrics(self) -> dict[str, dict[str, Metric]]:
        """Per model: ``record_exact``, ``field_mean``, cost, tokens, latency and re-ask rate."""
        return {
            model: {name: Metric.from_dict(m) for name, m in figures.items()}
            for model, figures in self._data["metrics"].items()
        }

    @property
    def fields(self) -> dict[str, dict[str, FieldResult]]:
        """Per JSON path (``vendor``, ``lines[*].sku``), per model."""
        out: dict[str, dict[str, FieldResult]] = {}
        for path, per_model in self._data["fields"].items():
            out[path] = {}
            for model, entry in per_model.items():
                metrics = {n: Metric.from_dict(m) for n, m in entry["metrics"].items()}
                detail = {k: v for k, v in entry.items() if k not in ("kind", "metrics")}
                out[path][model] = FieldResult(entry["kind"], metrics, detail)
        return out

    @property
    def failures(self) -> dict[str, dict[str, int]]:
        """Per model: failed runs by kind, and ``reasked``: answers that needed a re-ask."""
        return {model: dict(kinds) for model, kinds in self._data["failures"].items()}

    @property
    def skipped(self) -> list[dict[str, Any]]:
        """Dataset lines left out, with their line numbers and why."""
        return list(self._data["skipped"])

    @property
    def comparisons(self) -> list[Delta]:
        return [Delta(**c) for c in self._data["comparisons"]]

    def to_dict(self) -> dict[str, Any]:
        copy: dict[str, Any] = json.loads(json.dumps(self._data))
        return copy

    # -- reading and writing --
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the report: ``.json`` (the machine record) or ``.html`` (one self-contained
        page with its charts)."""
        target = Path(path)
        suffix = target.suffix.lower()
        if suffix == ".json":
            text = json.dumps(self._data, indent=1, ensure_ascii=False, allow_nan=False)
        elif suffix in (".html", ".htm"):
            from . import _html

            text = _html.render(self._data)  # read only: no copy needed
        else:
            raise ConfigurationError(f"Report.save: {target.name} must end in .json or .html")
        target.write_text(text, encoding="utf-8")
        return target

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Report:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigurationError(
                f"Report.load: cannot read {os.fspath(path)!r}: {exc}"
            ) from None
        if not isinstance(data, dict):
            raise ConfigurationError(f"Report.load: {os.fspath(path)!r} is not an eval report")
        return cls(data)

    def plot(self) -> Any:
        """The report's charts drawn with matplotlib (imported only now)."""
        from . import _plot

        return _plot.plot(self.to_dict())

    # -- text --
    def summary(self) -> str:
        """Plain text: one row per model, the headline figures with their 95% intervals."""
        head = ["model", "record_exact", "field_mean", "cost/case $", "latency p50 s", "failed"]
        rows = [head]
        for model, figures in self.metrics.items():
            failed = sum(v for k, v in self.failures.get(model, {}).items() if k != "reasked")
            rows.append(
                [
                    model,
                    format(figures["record_exact"], ".3f"),
                    format(figures["field_mean"], ".3f"),
                    format(figures["cost_per_case_usd"], ".5f"),
                    format(figures["latency_p50_s"], ".2f"),
                    str(failed),
                ]
            )
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        lines = [
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)).rstrip()
            for row in rows
        ]
        cases = len(self._data["cases"])
        lines.append(
            f"{cases} cases x {self._data['repeats']} repeats; "
            f"{len(self._data['skipped'])} dataset lines skipped; 95% intervals"
        )
        for delta in self.comparisons:
            if delta.target == "record_exact":
                lines.append(
                    f"{delta.b} - {delta.a}: record_exact {delta.delta:+.3f} "
                    f"[{_num(delta.low)}, {_num(delta.high)}], p={delta.p:.3g} ({delta.test})"
                )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Report of {self._data['command']}: {len(self._data['cases'])} cases, models {list(self.models)}>"

    # -- comparing --
    def compare(self, a: str, b: str) -> list[Delta]:
        """Paired deltas (b - a) of ``record_exact``, ``field_mean`` and every field's score,
        over the cases both models ran, with intervals and p-values, Holm-adjusted together."""
        return compare(self._data, a, b)

    def check(
        self,
        baseline: str | os.PathLike[str] | Report,
        metric: str = "record_exact",
        margin: float = 0.0,
        *,
        model: str | None = None,
    ) -> Check:
        """The CI gate: compare ``metric`` with ``baseline``'s, paired case by case (by id).
        A regression (raises :class:`RegressionError`) when the interval's upper bound on
        (new - baseline) is below ``-margin``; ``inconclusive`` when the interval straddles
        ``-margin``; ``pass`` otherwise. ``model`` picks the model checked (the first by
        default), matched to the baseline's model of the same name (else its first)."""
        base = baseline if isinstance(baseline, Report) else Report.load(baseline)
        result = gate(self._data, base._data, metric, margin, model)
        if result.status == "regression":
            raise RegressionError(f"regression: {result.describe()}", result)
        return result


# -- paired comparisons --


def _per_case(data: Mapping[str, Any], model: str, target: str) -> dict[str, float]:
    """Each case's value of ``target`` for ``model`` (its mean over the repeats), by case id."""
    return _per_case_of(data, model, [target])[target]


def _per_case_of(
    data: Mapping[str, Any], model: str, wanted: list[str]
) -> dict[str, dict[str, float]]:
    """:func:`_per_case` of each target in ``wanted``, in one pass over the cases."""
    out: dict[str, dict[str, float]] = {target: {} for target in wanted}
    paths = [(target, target.partition("/")[0]) for target in wanted]
    for case in data["cases"]:
        runs = case["runs"].get(model)
        if not runs:
            continue
        for target, path in paths:
            if target in RECORD_METRICS:
                values = [float(r[target]) for r in runs]
            else:
                values = [r["scores"].get(path, 0.0) for r in runs]
            out[target][case["id"]] = sum(values) / len(values)
    return out


def targets(data: Mapping[str, Any]) -> list[str]:
    return [*RECORD_METRICS, *(f"{path}/score" for path in data["fields"])]


def compare(data: Mapping[str, Any], a: str, b: str) -> list[Delta]:
    for name in (a, b):
        if name not in data["models"]:
            raise ConfigurationError(
                f"compare: no model {name!r} in the report (it has {', '.join(data['models'])})"
            )
    found: list[tuple[str, Paired]] = []
    wanted = targets(data)
    of_a, of_b = _per_case_of(data, a, wanted), _per_case_of(data, b, wanted)
    for target in wanted:
        pa, pb = of_a[target], of_b[target]
        common = [cid for cid in pa if cid in pb]
        if not common:
            continue
        resampler = Resampler(len(common), data["seed"])
        found.append(
            (
                target,
                paired([pa[c] for c in common], [pb[c] for c in common], resampler, yes_no=True),
            )
        )
    adjusted = holm([p.p for _, p in found])
    return [
        Delta(a, b, target, p.delta, p.low, p.high, p.p, adj, p.test)
        for (target, p), adj in zip(found, adjusted, strict=False)
    ]


def gate(
    new: Mapping[str, Any],
    baseline: Mapping[str, Any],
    metric: str,
    margin: float,
    model: str | None,
) -> Check:
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or margin < 0:
        raise ConfigurationError(f"check(margin=...) must be a number of 0 or more, got {margin!r}")
    if metric not in targets(new):
        known = ", ".join(targets(new))
        raise ConfigurationError(
            f"check(metric={metric!r}): the report has no such figure; it has {known}"
        )
    chosen = model or next(iter(new["models"]))
    if chosen not in new["models"]:
        raise ConfigurationError(f"check(model={chosen!r}): no such model in the report")
    base_model = chosen if chosen in baseline["models"] else next(iter(baseline["models"]))
    pn, pb = _per_case(new, chosen, metric), _per_case(baseline, base_model, metric)
    common = [cid for cid in pn if cid in pb]
    if not common:
        raise ConfigurationError("check: the report and its baseline share no case (by id)")
    result = paired(
        [pb[c] for c in common], [pn[c] for c in common], Resampler(len(common), new["seed"])
    )
    high = result.high if result.high is not None else result.delta
    low = result.low if result.low is not None else result.delta
    status: Literal["pass", "regression", "inconclusive"]
    if high < -margin:
        status = "regression"
    elif low < -margin:
        status = "inconclusive"
    else:
        status = "pass"
    return Check(
        status,
        metric,
        float(margin),
        chosen,
        base_model,
        len(common),
        result.delta,
        result.low,
        result.high,
    )
