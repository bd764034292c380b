"""End to end: a real eval of a typed command with two scripted models, saved as HTML and as
JSON, and drawn with matplotlib. The page is the one ``render`` makes of ``Report.to_dict()``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

from alloy import command
from alloy.eval import Case, Dataset, Report
from alloy.eval._html import render
from alloy.testing import FunctionModel

from .test_html import Page, titles


class Status(Enum):
    PAID = "paid"
    OPEN = "open"


@dataclass
class Line:
    sku: str
    qty: int


@dataclass
class Invoice:
    vendor: str
    status: Status
    total: float
    due: date
    lines: list[Line]
    note: str | None = None


@command(output=Invoice, retries=0)
def read_invoice(text: str) -> str:
    return f"Read this invoice: {text}"


def expected(i: int) -> dict[str, Any]:
    return {
        "vendor": f"Vendor <{i}>",
        "status": "paid" if i % 2 else "open",
        "total": 100.0 + i,
        "due": f"2026-0{1 + i % 9}-1{i % 10}",
        "lines": [{"sku": f"S{i}", "qty": 1}, {"sku": f"T{i}", "qty": 2}],
        "note": None if i % 3 else "<script>alert(1)</script>",
    }


CASES = Dataset(
    [Case(id=f"c{i}", input={"text": f"invoice {i}"}, expected=expected(i)) for i in range(12)]
)


def answering(wrong_every: int) -> FunctionModel:
    """Right except on every ``wrong_every``-th case, where the status, total and note are off."""

    def reply(request: Any) -> str:
        found = re.search(r"invoice (\d+)", repr(request.messages))
        assert found is not None
        i = int(found[1])
        answer = expected(i)
        if i % wrong_every == 0:
            answer["status"] = "open" if answer["status"] == "paid" else "paid"
            answer["total"] += 5
            answer["note"] = "<script>alert(2)</script>"
        return json.dumps(answer)

    return FunctionModel(reply)


@pytest.fixture(scope="module")
def report() -> Report:
    return read_invoice.eval(CASES, models={"good": answering(6), "poor": answering(2)})


def test_a_real_report_renders_every_chart_and_its_cases(report: Report, tmp_path: Path) -> None:
    page = report.save(tmp_path / "report.html").read_text(encoding="utf-8")
    assert page == render(report.to_dict())
    charts = titles(page)
    assert "Whole-record metrics with 95% intervals" in charts
    assert "Per-field score by model" in charts
    assert "Confusion matrix of status for good" in charts
    assert "Paired differences against the first model (95% intervals)" in charts
    assert "<script" not in page and "&lt;script&gt;alert(2)&lt;/script&gt;" in page
    assert '<details id="case-' in page
    Page(page)
    # The JSON report renders to the same page once loaded back.
    loaded = Report.load(report.save(tmp_path / "report.json"))
    assert render(loaded.to_dict()) == page


def test_a_real_report_plots(report: Report) -> None:
    pytest.importorskip("matplotlib")
    figures = report.plot()
    assert {"metrics", "fields", "comparisons", "confusion:status"} <= set(figures)
