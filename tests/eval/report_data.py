"""Synthetic report dicts in the shape of ``Report.to_dict()`` (notes: the eval contract, v1).

``synthetic_report`` builds a realistic report without running anything: invoices read by a
few models, each right with its own probability, with every field kind the contract names (str,
enum, bool, number, list, date, optional), errors of each kind, repeats, comparisons, skipped
lines and untrusted text in the case data. The figures are computed from the cases so the page
shows consistent numbers; their intervals are plausible, not bootstrapped.
"""

from __future__ import annotations

import random
from typing import Any

STATUSES = ["paid", "open", "overdue", "void"]
CURRENCIES = ["EUR", "USD", "GBP"]
ERROR_KINDS = [
    "parse",
    "refusal",
    "truncated",
    "schema_rejected",
    "tool_limit",
    "rate_limit",
    "other",
]
#: JSON path -> kind, 10 fields as in the size target (1,000 cases, 3 models, 10 fields).
FIELDS = {
    "vendor": "str",
    "status": "enum",
    "currency": "enum",
    "paid": "enum",
    "total": "number",
    "tax": "number",
    "lines[*].sku": "list",
    "due": "date",
    "note": "optional",
    "customer.name": "str",
}
HOSTILE = '<script>alert("x")</script> & </td></table><img src=x onerror=alert(1)>'


def metric(value: float | None, spread: float = 0.03) -> dict[str, float | None]:
    if value is None:
        return {"value": None, "low": None, "high": None}
    return {"value": value, "low": max(0.0, value - spread), "high": min(1.0, value + spread)}


def expected_invoice(rng: random.Random, i: int) -> dict[str, Any]:
    return {
        "vendor": rng.choice(["Acme GmbH", "Globex", "Initech", "Umbrella plc"]),
        "status": rng.choice(STATUSES),
        "currency": rng.choice(CURRENCIES),
        "paid": rng.random() < 0.5,
        "total": round(rng.uniform(10, 5000), 2),
        "tax": round(rng.uniform(1, 500), 2),
        "lines": [
            {"sku": f"SKU-{i:04d}-{k}", "qty": rng.randrange(1, 9)}
            for k in range(rng.randrange(1, 4))
        ],
        "due": f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
        "note": None if i % 3 else "deliver to the back door",
        "customer": {"name": rng.choice(["Ada", "Grace", "Linus", "Barbara"])},
    }


def answer(
    rng: random.Random, expected: dict[str, Any], skill: float
) -> tuple[dict[str, Any], dict[str, float]]:
    """A model's output: each field right with probability ``skill``; and its per-path scores."""
    got = {
        k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v)
        for k, v in expected.items()
    }
    scores: dict[str, float] = {}
    for path in FIELDS:
        right = rng.random() < skill
        scores[path] = 1.0 if right else 0.0
        if right:
            continue
        if path == "vendor":
            got["vendor"] = expected["vendor"] + " Ltd"
            scores[path] = 0.0
        elif path == "status":
            got["status"] = rng.choice([s for s in STATUSES if s != expected["status"]])
        elif path == "currency":
            got["currency"] = rng.choice([c for c in CURRENCIES if c != expected["currency"]])
        elif path == "paid":
            got["paid"] = not expected["paid"]
        elif path in ("total", "tax"):
            got[path] = round(expected[path] * 1.1, 2)
        elif path == "lines[*].sku":
            got["lines"] = [dict(line) for line in expected["lines"]]
            got["lines"][0]["sku"] = "SKU-WRONG"
            scores[path] = 0.5
        elif path == "due":
            got["due"] = "2027-01-01"
        elif path == "note":
            got["note"] = None if expected["note"] else "invented note"
        elif path == "customer.name":
            got["customer"] = {"name": expected["customer"]["name"].upper()}
    return got, scores


def synthetic_report(
    cases: int = 20,
    models: dict[str, float] | None = None,
    repeats: int = 1,
    seed: int = 0,
    hostile: bool = True,
) -> dict[str, Any]:
    """A report dict; ``models`` maps display name -> the chance each field is right."""
    rng = random.Random(seed)
    skills = models or {"mini": 0.9, "haiku": 0.96}
    names = list(skills)
    case_list = []
    failures: dict[str, dict[str, int]] = {m: dict.fromkeys(ERROR_KINDS, 0) for m in names}
    exact: dict[str, list[float]] = {m: [] for m in names}
    means: dict[str, list[float]] = {m: [] for m in names}
    per_field: dict[str, dict[str, list[float]]] = {m: {p: [] for p in FIELDS} for m in names}
    confusion = {m: {p: {} for p in ("status", "currency", "paid")} for m in names}
    for i in range(cases):
        expected = expected_invoice(rng, i)
        if hostile and i == 1:
            expected["vendor"] = HOSTILE
            expected["note"] = "see https://example.com/x and javascript:alert(1)"
        runs: dict[str, list[dict[str, Any]]] = {}
        for model in names:
            runs[model] = []
            for repeat in range(repeats):
                run: dict[str, Any] = {
                    "repeat": repeat,
                    "reasked": rng.random() < 0.05,
                    "cost": round(rng.uniform(0.0001, 0.0003) * (1 + names.index(model)), 6),
                    "input_tokens": rng.randrange(100, 300),
                    "output_tokens": rng.randrange(20, 80),
                    "latency_s": round(rng.uniform(0.2, 1.5), 3),
                }
                if rng.random() < 0.03:
                    kind = rng.choice(ERROR_KINDS)
                    failures[model][kind] += 1
                    run.update(
                        output=None,
                        error={
                            "kind": kind,
                            "type": "ParseError",
                            "message": f"bad reply <b>{i}</b>",
                        },
                        scores=dict.fromkeys(FIELDS, 0.0),
                        record_exact=False,
                        field_mean=0.0,
                    )
                else:
                    got, scores = answer(rng, expected, skills[model])
                    if hostile and i == 1 and repeat == 0:
                        got["customer"] = {"name": "</script><script>alert(2)</script>"}
                        scores["customer.name"] = 0.0
                    mean = sum(scores.values()) / len(scores)
                    run.update(
                        output=got,
                        error=None,
                        scores=scores,
                        record_exact=mean == 1.0,
                        field_mean=mean,
                    )
                    for path, label in (
                        ("status", "status"),
                        ("currency", "currency"),
                        ("paid", "paid"),
                    ):
                        key = (str(expected[label]).lower(), str(got[label]).lower())
                        confusion[model][path][key] = confusion[model][path].get(key, 0) + 1
                exact[model].append(1.0 if run["record_exact"] else 0.0)
                means[model].append(run["field_mean"])
                for path in FIELDS:
                    per_field[model][path].append(run["scores"][path])
                runs[model].append(run)
        case_list.append(
            {
                "id": f"c{i}",
                "tags": ["easy" if i % 2 else "hard"] + ([HOSTILE] if hostile and i == 1 else []),
                "input": {"text": HOSTILE if hostile and i == 1 else f"Invoice #{i} ..."},
                "expected": expected,
                "runs": runs,
            }
        )

    def mean(xs: list[float]) -> float | None:
        return sum(xs) / len(xs) if xs else None

    metrics: dict[str, dict[str, Any]] = {}
    for model in names:
        costs = [r["cost"] for c in case_list for r in c["runs"][model]]
        metrics[model] = {
            "record_exact": metric(mean(exact[model])),
            "field_mean": metric(mean(means[model]), 0.01),
            "cost_usd": {"value": sum(costs), "low": sum(costs) * 0.95, "high": sum(costs) * 1.05},
            "cost_per_case_usd": {
                "value": mean(costs),
                "low": (mean(costs) or 0) * 0.95,
                "high": (mean(costs) or 0) * 1.05,
            },
            "latency_p50_s": {"value": 0.7, "low": 0.6, "high": 0.8},
            "latency_p90_s": {"value": 1.3, "low": 1.1, "high": 1.4},
            "input_tokens": {"value": 200.0, "low": 190.0, "high": 210.0},
            "output_tokens": {"value": 50.0, "low": 45.0, "high": 55.0},
            "reask_rate": metric(0.05, 0.02),
        }
    fields: dict[str, dict[str, Any]] = {}
    for path, kind in FIELDS.items():
        fields[path] = {}
        for model in names:
            rate = mean(per_field[model][path])
            entry: dict[str, Any] = {"kind": kind}
            if kind == "str":
                entry["metrics"] = {
                    "exact": metric(rate),
                    "similarity": metric(min(1.0, (rate or 0) + 0.05)),
                }
            elif kind == "enum":
                labels = {"status": STATUSES, "currency": CURRENCIES, "paid": ["true", "false"]}[
                    path
                ]
                if path == "currency":
                    labels = [c.lower() for c in labels]
                counts = [[confusion[model][path].get((e, g), 0) for g in labels] for e in labels]
                entry.update(
                    metrics={"accuracy": metric(rate), "macro_f1": metric((rate or 0) * 0.97)},
                    labels=labels,
                    confusion=counts,
                    per_class={
                        lab: {"precision": metric(rate), "recall": metric(rate), "f1": metric(rate)}
                        for lab in labels
                    },
                )
            elif kind == "number":
                entry.update(
                    metrics={
                        "exact": metric(rate),
                        "within": metric(rate),
                        "abs_err_mean": {"value": 12.5, "low": 8.0, "high": 17.0},
                        "abs_err_p50": {"value": 0.0, "low": 0.0, "high": 0.0},
                        "abs_err_p90": {"value": 40.0, "low": None, "high": None},
                        "rel_err_mean": metric(0.01, 0.005),
                    },
                    tolerance=0.01,
                )
            elif kind == "list":
                entry["metrics"] = {
                    "precision": metric(rate),
                    "recall": metric(rate),
                    "f1": metric(rate),
                    "count_err": {"value": 0.1, "low": 0.0, "high": 0.2},
                }
            elif kind == "date":
                entry["metrics"] = {
                    "exact": metric(rate),
                    "days_off_mean": {"value": 3.2, "low": 1.0, "high": 5.5},
                }
            else:
                entry["metrics"] = {
                    "missed": metric(0.02, 0.01),
                    "invented": metric(0.01, 0.01),
                    "exact": metric(rate),
                }
            fields[path][model] = entry
    comparisons = []
    base = names[0]
    for other in names[1:]:
        targets = (
            ["record_exact", "field_mean"]
            + [f"{p}/exact" for p in ("vendor", "total", "due")]
            + ["status/accuracy"]
        )
        for k, target in enumerate(targets):
            delta = rng.uniform(-0.08, 0.1)
            comparisons.append(
                {
                    "a": base,
                    "b": other,
                    "target": target,
                    "delta": delta,
                    "low": delta - 0.04,
                    "high": delta + 0.04,
                    "p": 0.004 * (k + 1),
                    "p_holm": min(1.0, 0.004 * (k + 1) * (len(targets) - k)),
                    "test": "mcnemar" if target.endswith(("exact", "accuracy")) else "bootstrap",
                }
            )
    return {
        "alloy_eval": 1,
        "command": "invoices:read_invoice",
        "created": "2026-11-27T19:30:00Z",
        "seed": seed,
        "repeats": repeats,
        "mode": "online",
        "models": {m: f"openai:model-{m}" for m in names},
        "skipped": [
            {"line": 7, "id": "c7", "reason": "input: missing required parameter 'text' <b>"}
        ],
        "cases": case_list,
        "metrics": metrics,
        "fields": fields,
        "failures": failures,
        "comparisons": comparisons,
    }
