"""A report made from an eval's runs: each run scored field by field, then every figure with
its interval, the failures by kind, and each other model compared with the first."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ._failures import count
from ._plan import Plan
from ._report import VERSION, Report, compare
from ._stats import Metric, Resampler, quantile_figures, ratio

#: Per path, per model, per case: the observation of each repeat (None where the run failed).
Observations = dict[str, dict[str, list[list[Any]]]]


def build_report(plan: Plan, started: float) -> Report:
    """The report of ``plan``'s finished runs (``started``: when the eval began)."""
    resampler = Resampler(len(plan.ready), plan.seed)
    fields = plan.fields
    cases, observations = _scored(plan)
    data: dict[str, Any] = {
        "alloy_eval": VERSION,
        "command": _command_name(plan.command),
        "created": datetime.fromtimestamp(started, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seed": plan.seed,
        "repeats": plan.repeats,
        "mode": plan.mode,
        "models": dict(plan.model_ids),
        "skipped": [s.to_dict() for s in plan.skipped],
        "cases": cases,
        "metrics": {
            m: _model_metrics(cases, m, plan.durations.get(m, []), resampler, plan.seed)
            for m in plan.models
        },
        "fields": {
            path: {m: f.scorer.summarize(observations[path][m], resampler) for m in plan.models}
            for path, f in fields.fields.items()
        },
        "failures": {
            m: count(
                [r["error"] for c in cases for r in c["runs"][m] if r["error"] is not None],
                sum(1 for c in cases for r in c["runs"][m] if r["reasked"]),
            )
            for m in plan.models
        },
        "comparisons": [],
    }
    names = list(plan.models)
    for other in names[1:]:
        data["comparisons"] += [d.to_dict() for d in compare(data, names[0], other)]
    return Report(data)


def _scored(plan: Plan) -> tuple[list[dict[str, Any]], Observations]:
    """Every case with its runs, each run scored per path (``scores``, ``record_exact``,
    ``field_mean``), and the observations the field figures are made of."""
    fields = plan.fields
    headline = fields.headline
    observations: Observations = {
        path: {model: [[] for _ in plan.ready] for model in plan.models} for path in fields.fields
    }
    cases: list[dict[str, Any]] = []
    for index, case in enumerate(plan.ready):
        runs: dict[str, list[dict[str, Any]]] = {}
        for model, per_repeat in plan.records.items():
            runs[model] = []
            for records in per_repeat:
                record = dict(records[index])
                if record["error"] is None:
                    observed: dict[str, Any] = fields.observe(case.expected, record["output"])
                    scores = {path: float(o["score"]) for path, o in observed.items()}
                else:  # a failed run: no observation, and 0 on every path
                    observed = dict.fromkeys(fields.fields)
                    scores = dict.fromkeys(fields.fields, 0.0)
                for path, seen in observed.items():
                    observations[path][model][index].append(seen)
                top = [scores[path] for path in headline]
                record["scores"] = scores
                record["record_exact"] = record["error"] is None and all(s == 1 for s in top)
                record["field_mean"] = sum(top) / len(top) if top else 0.0
                runs[model].append(record)
        cases.append(
            {
                "id": case.id,
                "tags": list(case.tags),
                "input": case.input,
                "expected": case.expected,
                "runs": runs,
            }
        )
    return cases, observations


def _command_name(command: Any) -> str:
    fn = command.spec.fn
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', command.name)}"


def _model_metrics(
    cases: list[dict[str, Any]], model: str, durations: list[float], resampler: Resampler, seed: int
) -> dict[str, dict[str, float | None]]:
    def pooled(pick: Any) -> Metric:
        sums, counts = [], []
        for case in cases:
            values = [pick(r) for r in case["runs"][model]]
            values = [v for v in values if v is not None]
            sums.append(float(sum(values)))
            counts.append(float(len(values)))
        return ratio(sums, counts, resampler)

    runs = sum(len(c["runs"][model]) for c in cases)

    def total(per_run: Metric) -> Metric:
        """A mean per run, times the runs: the total."""
        if per_run.value is None:
            return per_run
        return Metric(
            *(None if v is None else v * runs for v in (per_run.value, per_run.low, per_run.high))
        )

    cost = pooled(lambda r: r["cost"])  # the per-case figure and the total share it
    figures = {
        "record_exact": pooled(lambda r: float(r["record_exact"])),
        "field_mean": pooled(lambda r: r["field_mean"]),
        "cost_usd": total(cost),
        "cost_per_case_usd": cost,
        "input_tokens": total(pooled(lambda r: r["input_tokens"])),
        "output_tokens": total(pooled(lambda r: r["output_tokens"])),
        "reask_rate": pooled(lambda r: float(r["reasked"])),
    }
    if durations:
        timing = Resampler(len(durations), seed)
        p50, p90 = quantile_figures([[d] for d in durations], (0.5, 0.9), timing)
    else:
        p50 = p90 = Metric(None)
    figures["latency_p50_s"], figures["latency_p90_s"] = p50, p90
    return {name: m.to_dict() for name, m in figures.items()}
