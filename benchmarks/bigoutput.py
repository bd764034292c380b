"""Suite 5: a ~1 MB structured reply through alloy's output machinery vs pydantic directly.

``alloy._output.JsonOutput(T).parse(text)`` against ``TypeAdapter(T).validate_json(text,
strict=True)`` on the same bytes, interleaved. Two shapes: an object root (the bytes are
identical), and a list root, which alloy receives wrapped as ``{"value": [...]}`` (the form
providers are asked for) while pydantic gets the bare list.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from datetime import date
from functools import partial

from pydantic import TypeAdapter

from ._measure import SuiteResult, compare, interleave
from ._scale import Scale


@dataclass
class Address:
    street: str
    city: str
    postcode: str


@dataclass
class Line:
    sku: str
    description: str
    quantity: int
    unit_price: float
    shipped: date
    tags: list[str]
    address: Address
    note: str | None


@dataclass
class Ledger:
    account: str
    lines: list[Line]


def _line(rng: random.Random, i: int) -> dict[str, object]:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    return {
        "sku": f"SKU-{i:07d}",
        "description": " ".join(rng.choice(words) for _ in range(8)),
        "quantity": rng.randrange(1, 500),
        "unit_price": round(rng.random() * 1000, 2),
        "shipped": f"2025-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
        "tags": [rng.choice(words) for _ in range(3)],
        "address": {"street": f"{i} Main St", "city": rng.choice(words), "postcode": f"{i:05d}"},
        "note": None if i % 3 else "fragile",
    }


def payloads(size: int) -> tuple[str, str, str]:
    """(object-root text, bare list text, wrapped list text), each about ``size`` bytes."""
    rng = random.Random(1)
    lines: list[dict[str, object]] = []
    while len(json.dumps(lines)) < size:
        lines.extend(_line(rng, len(lines) + j) for j in range(max(1, size // 20_000)))
    bare = json.dumps(lines)
    return json.dumps({"account": "ACME", "lines": lines}), bare, '{"value": ' + bare + "}"


def run(scale: Scale) -> SuiteResult:
    from alloy._output import JsonOutput

    started = time.perf_counter()
    result = SuiteResult("big", "Big outputs")
    obj, bare, wrapped = payloads(scale.big_bytes)
    cases = (
        ("object root (Ledger)", Ledger, obj, obj),
        ("list root (list[Line])", list[Line], wrapped, bare),
    )
    for name, tp, alloy_text, pydantic_text in cases:
        output, adapter = JsonOutput(tp), TypeAdapter(tp)
        if output.parse(alloy_text) != adapter.validate_json(pydantic_text, strict=True):
            raise AssertionError(f"{name}: alloy and pydantic disagree")
        a, b = interleave(
            partial(output.parse, alloy_text),
            partial(adapter.validate_json, pydantic_text, strict=True),
            n=scale.big_calls,
            warmup=2,
        )
        result.figures.append(
            compare(
                "big",
                f"{len(alloy_text) / 1e6:.2f} MB, {name}",
                a,
                b,
                baseline_label="TypeAdapter.validate_json",
                unit="ms",
                scale=1e3,
            )
        )
    result.notes.append(
        f"{scale.big_calls} parses per side per row, interleaved; strict validation on both "
        "sides; the values are checked equal first. Rows hold dates, nested dataclasses, lists "
        "and optional fields."
    )
    result.seconds = time.perf_counter() - started
    return result
