"""A finished eval's :class:`Plan` made without calling any model: invoices with 10 scored
fields of every kind, read by a few models each right with its own probability, with failed
runs, re-asks, costs and call durations. ``build_report(synthetic_plan(...))`` is the work an
eval does after its model calls (issue 31: 1,000 cases x 3 models x 10 fields in at most 1 s).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from pydantic import TypeAdapter

from alloy import command
from alloy.eval._dataset import Ready
from alloy.eval._fields import Fields
from alloy.eval._plan import Plan
from alloy.testing import FunctionModel


@dataclass
class Line:
    sku: str
    qty: int


@dataclass
class Customer:
    name: str


@dataclass
class Invoice:
    vendor: str
    status: Literal["paid", "open", "overdue", "void"]
    currency: Literal["EUR", "USD", "GBP"]
    paid: bool
    total: float
    tax: float
    lines: list[Line]
    due: date
    note: str | None
    customer: Customer


@command(output=Invoice, model=FunctionModel(lambda request: "{}", name="function:none"))
def read_invoice(text: str) -> str:
    return f"Read the invoice: {text}"


def _expected(rng: random.Random, i: int) -> dict[str, Any]:
    return {
        "vendor": rng.choice(["Acme GmbH", "Globex", "Initech", "Umbrella plc"]),
        "status": rng.choice(["paid", "open", "overdue", "void"]),
        "currency": rng.choice(["EUR", "USD", "GBP"]),
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


def _answer(rng: random.Random, expected: dict[str, Any], skill: float) -> dict[str, Any]:
    """Each field right with probability ``skill``; a wrong one is off in a way its kind sees."""
    got = dict(expected, lines=[dict(line) for line in expected["lines"]])
    wrong = {key for key in expected if rng.random() > skill}
    if "vendor" in wrong:
        got["vendor"] = expected["vendor"][:-1] + "x"
    if "status" in wrong:
        got["status"] = "void" if expected["status"] != "void" else "open"
    if "currency" in wrong:
        got["currency"] = "USD" if expected["currency"] != "USD" else "EUR"
    if "paid" in wrong:
        got["paid"] = not expected["paid"]
    for key in ("total", "tax"):
        if key in wrong:
            got[key] = round(expected[key] * rng.uniform(0.5, 1.5), 2)
    if "lines" in wrong:
        got["lines"] = [*got["lines"][:-1], {"sku": "SKU-made-up", "qty": 1}]
    if "due" in wrong:
        got["due"] = f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
    if "note" in wrong:
        got["note"] = None if expected["note"] else "leave it at the door"
    if "customer" in wrong:
        got["customer"] = {"name": "Nobody"}
    return got


def synthetic_plan(
    cases: int, models: dict[str, float], *, repeats: int = 1, seed: int = 0
) -> Plan:
    """A plan whose runs have finished: ``models`` maps a name to how often it is right."""
    rng = random.Random(seed)
    ready = []
    for i in range(cases):
        expected = _expected(rng, i)
        text = f"invoice {i}"
        ready.append(Ready(f"case-{i}", ("invoices",), {"text": text}, {"text": text}, expected))
    records: dict[str, list[list[dict[str, Any]]]] = {}
    durations: dict[str, list[float]] = {}
    for name, skill in models.items():
        records[name] = []
        durations[name] = []
        for repeat in range(repeats):
            rows = []
            for case in ready:
                failed = rng.random() < 0.02
                rows.append(
                    {
                        "repeat": repeat,
                        "output": None if failed else _answer(rng, case.expected, skill),
                        "error": {"kind": "parse", "type": "ParseError", "message": "not JSON"}
                        if failed
                        else None,
                        "reasked": rng.random() < 0.05,
                        "cost": round(rng.uniform(1e-4, 3e-3), 6),
                        "input_tokens": rng.randrange(300, 900),
                        "output_tokens": rng.randrange(40, 200),
                        "latency_s": rng.uniform(0.2, 2.0),
                    }
                )
                durations[name].append(rng.uniform(0.2, 2.0))
            records[name].append(rows)
    return Plan(
        command=read_invoice,
        ready=ready,
        skipped=[],
        models={name: None for name in models},
        model_ids={name: f"test:{name}" for name in models},
        repeats=repeats,
        mode="online",
        settings=None,
        cache=None,
        checkpoint=None,
        fields=Fields(Invoice),
        seed=seed,
        dump=TypeAdapter(Invoice),
        records=records,
        durations=durations,
    )
