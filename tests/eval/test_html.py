"""The eval report page: one self-contained HTML file, escaped, with every chart, under 1 MB.

Built from synthetic report dicts in the contract's shape (``report_data``), so the page is
tested without running an eval; tests/eval/test_html_chromium.py opens it in a real browser.
"""

from __future__ import annotations

import copy
import json
from html.parser import HTMLParser
from typing import Any

import pytest

from alloy.eval import _views
from alloy.eval._html import DETAIL_BUDGET, render

from .report_data import HOSTILE, synthetic_report

MB = 1_000_000


class Page(HTMLParser):
    """Every start tag with its attributes, and the text, of a parsed page."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


def titles(html: str) -> list[str]:
    """The <title> of each chart (the first child of every <svg>)."""
    return [part.split("<title>", 1)[1].split("</title>", 1)[0] for part in html.split("<svg ")[1:]]


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return synthetic_report(cases=24, models={"mini": 0.85, "haiku": 0.95, "sonnet": 0.97})


def test_the_page_links_and_loads_nothing_from_outside(report: dict[str, Any]) -> None:
    html = render(report)
    page = Page(html)
    linked = [
        value
        for _, attrs in page.tags
        for name, value in attrs.items()
        if name in ("src", "href", "xlink:href", "action", "srcset") and value is not None
    ]
    assert linked and all(value.startswith("#case-") for value in linked), linked
    assert not any(v.lower().startswith(("http://", "https://", "//")) for v in linked)
    # A URL in the case data is shown as text, never made a link.
    assert "https://example.com/x" in "".join(page.text)
    assert page.all("script") == [] and page.all("link") == [] and page.all("img") == []
    (policy,) = [a for a in page.all("meta") if a.get("http-equiv") == "Content-Security-Policy"]
    assert "default-src 'none'" in (policy["content"] or "")


def test_untrusted_case_data_and_names_are_escaped() -> None:
    report = synthetic_report(cases=4, models={"<b>mini</b>": 0.5, 'h"aiku': 0.9})
    report["command"] = "m:<i>cmd</i>"
    report["skipped"][0]["id"] = "<svg onload=alert(1)>"
    report["fields"]["status"]["<b>mini</b>"]["labels"][0] = "<script>x</script>"
    html = render(report)
    page = Page(html)
    assert "<script" not in html.lower()
    assert "<b>mini</b>" not in html and "&lt;b&gt;mini&lt;/b&gt;" in html
    assert "<i>cmd</i>" not in html and "<svg onload" not in html
    assert not any(name.startswith("on") for _, attrs in page.tags for name in attrs)
    shown = "".join(page.text)
    assert HOSTILE in shown  # a tag, shown as the text it is
    assert json.dumps({"text": HOSTILE}) in shown  # the input, as JSON
    assert "</script><script>alert(2)</script>" in shown
    assert {tag for tag, _ in page.tags} <= {
        "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "b", "i",
        "code", "span", "table", "tr", "th", "td", "a", "details", "summary", "div",
        "figure", "figcaption", "svg", "rect", "line", "path", "circle", "text",
    }  # fmt: skip


def test_every_chart_is_drawn(report: dict[str, Any]) -> None:
    html = render(report)
    charts = titles(html)
    assert charts[:3] == [
        "Whole-record metrics with 95% intervals",
        "Accuracy against cost; ★ marks the Pareto front",
        "Per-field score by model",
    ]
    assert "Paired differences against the first model (95% intervals)" in charts
    confusions = [t for t in charts if t.startswith("Confusion matrix of ")]
    assert len(confusions) == 3 * 3  # status, currency, paid for each of three models
    assert "Confusion matrix of status for haiku" in confusions
    # Bars carry whiskers; the forest has one row per comparison.
    assert html.count("<title>sonnet record_exact: ") == 1
    assert html.count("Holm p = ") == len(report["comparisons"])


def test_the_pareto_front_is_what_nothing_cheaper_beats() -> None:
    def model(cost: float | None, accuracy: float | None) -> dict[str, Any]:
        return {
            "cost_per_case_usd": {"value": cost, "low": None, "high": None},
            "record_exact": {"value": accuracy, "low": None, "high": None},
        }

    report = {
        "models": {"cheap": "", "dear": "", "worse": "", "twin": "", "unpriced": ""},
        "metrics": {
            "cheap": model(0.001, 0.6),
            "dear": model(0.01, 0.9),
            "worse": model(0.02, 0.8),  # dearer and worse than "dear"
            "twin": model(0.01, 0.9),  # the same as "dear": neither beats the other
            "unpriced": model(None, 0.99),
        },
    }
    points = {p.model: p.on_front for p in _views.cost_points(report)}
    assert points == {"cheap": True, "dear": True, "worse": False, "twin": True}
    html = render(report)
    assert "at $0.02, dominated" in html
    assert html.count("on the Pareto front</title>") == 3


def test_a_failing_case_shows_each_differing_path() -> None:
    report = synthetic_report(cases=2, models={"mini": 1.0}, hostile=False)
    case = report["cases"][0]
    run = case["runs"]["mini"][0]
    run.update(error=None, record_exact=False, field_mean=0.9)
    run["output"] = copy.deepcopy(case["expected"])
    run["output"]["status"] = "void" if case["expected"]["status"] != "void" else "paid"
    run["output"]["lines"][0]["sku"] = "SKU-X"
    run["scores"]["status"] = 0.0
    html = render(report)
    block = html.split('<details id="case-0">', 1)[1].split("</details>", 1)[0]
    assert "2 differing of " in block
    assert "<td><code>status</code></td>" in block and "<td><code>lines[0].sku</code></td>" in block
    assert '<td class="v d">&quot;SKU-X&quot;</td>' in block
    assert "<code>vendor</code>" not in block  # a matching path is not repeated
    assert "status 0.00" in block  # the scorer's view
    # Failing cases come first, each linked to its diff.
    rows = html.split('<table class="cases">', 1)[1]
    assert rows.index('href="#case-0"') < rows.index(">c1<")


def test_an_error_run_shows_its_kind_and_message() -> None:
    report = synthetic_report(cases=1, models={"mini": 1.0, "haiku": 1.0}, hostile=False)
    run = report["cases"][0]["runs"]["haiku"][0]
    run.update(
        output=None,
        error={"kind": "refusal", "type": "RefusalError", "message": "I can't <help>"},
        record_exact=False,
        field_mean=0.0,
    )
    html = render(report)
    assert "!refusal 0.00" in html
    assert "· 0 differing of 13 fields · 1 failed call</summary>" in html
    assert "refusal RefusalError: I can&#x27;t &lt;help&gt;" in html


def test_repeats_get_a_column_each() -> None:
    report = synthetic_report(cases=6, models={"mini": 0.5}, repeats=3, hostile=False)
    html = render(report)
    assert "<th>mini #0</th><th>mini #1</th><th>mini #2</th>" in html


PARTIAL: dict[str, dict[str, Any]] = {
    "empty": {},
    "only_header": {"alloy_eval": 1, "command": "m:f", "models": {"a": "openai:x"}},
    "nulls": {
        "alloy_eval": 1,
        "command": None,
        "models": {"a": "x", "b": "y"},
        "cases": [
            {"id": "c0", "expected": None, "runs": {"a": [{"output": None, "error": None}]}},
            {"id": None, "expected": {"k": [1, {"x": None}]}, "runs": None},
            "not a case",
        ],
        "metrics": {"a": {"record_exact": None, "cost_usd": {"value": None}}, "b": None},
        "fields": {
            "k": {"a": {"kind": "enum", "metrics": None, "labels": ["x"], "confusion": None}}
        },
        "failures": {"a": None, "b": {"parse": None}},
        "comparisons": [],
        "skipped": [None],
    },
    "unknown_kinds": {
        "models": {"solo": "m"},
        "metrics": {"solo": {"record_exact": {"value": 1.0, "low": 1.0, "high": 1.0}}},
        "fields": {
            "x": {"solo": {"kind": "future-kind", "metrics": {"novel": {"value": 0.5}}}},
            "y": {"solo": {"kind": "enum", "labels": ["a", "b"], "confusion": [[1, 2]]}},
        },
        "comparisons": [{"a": "solo", "b": "solo", "target": "t", "delta": None}],
    },
    "nan_and_inf": {
        "models": {"a": "m"},
        "metrics": {"a": {"record_exact": {"value": float("nan"), "low": float("-inf")}}},
        "comparisons": [{"a": "a", "b": "b", "target": "t", "delta": 0.0, "low": None}],
    },
}


@pytest.mark.parametrize("name", PARTIAL)
def test_any_subset_of_a_report_renders(name: str) -> None:
    html = render(PARTIAL[name])
    assert html.startswith("<!DOCTYPE html>") and html.endswith("</html>")
    Page(html)


def test_nan_and_infinity_are_shown_as_unknown() -> None:
    html = render(PARTIAL["nan_and_inf"]).lower()
    assert "nan" not in html and "inf" not in html
    assert '<td class="n">\u2013</td>' in html


def test_a_single_model_with_no_comparisons_and_no_cost() -> None:
    report = synthetic_report(cases=5, models={"only": 0.9}, hostile=False)
    report["comparisons"] = []
    for figures in report["metrics"].values():
        del figures["cost_usd"], figures["cost_per_case_usd"]
    charts = titles(render(report))
    assert "Paired differences against the first model (95% intervals)" not in charts
    assert not any(t.startswith("Accuracy against cost") for t in charts)
    assert charts[0] == "Whole-record metrics with 95% intervals"


def test_a_big_enum_keeps_its_most_frequent_labels() -> None:
    labels = [f"l{i}" for i in range(30)]
    counts = [[0] * 30 for _ in range(30)]
    for i in range(30):
        counts[i][i] = 100 - i  # l0 is the most frequent
    counts[29][0] = 5
    report = {
        "models": {"m": ""},
        "fields": {"k": {"m": {"kind": "enum", "labels": labels, "confusion": counts}}},
    }
    (matrix,) = _views.confusions(report)
    assert len(matrix.labels) == _views.MAX_LABELS
    assert matrix.labels[0] == "l0" and matrix.labels[-1] == _views.OTHER_LABEL
    assert sum(map(sum, matrix.counts)) == sum(map(sum, counts))
    assert matrix.counts[-1][0] == 5  # l29, pooled, was read as l0


def test_a_thousand_cases_by_three_models_by_ten_fields_stays_under_one_megabyte() -> None:
    report = synthetic_report(
        cases=1000, models={"mini": 0.9, "haiku": 0.96, "sonnet": 0.98}, hostile=False
    )
    assert len(report["fields"]) == 10
    html = render(report)
    size = len(html.encode())
    assert size <= MB, size
    # Every case has its row; the diffs stop at the budget and say so.
    assert html.count("<tr><td>") >= 1000
    details = html.count('<details id="case-')
    assert (
        0
        < details
        < sum(
            any(not r["record_exact"] for runs in c["runs"].values() for r in runs)
            for c in report["cases"]
        )
    )
    assert "without their diff, to keep this page small" in html
    assert size < DETAIL_BUDGET + 400_000


def test_a_report_where_everything_fails_with_long_values_stays_under_one_megabyte() -> None:
    """Every case fails for every model with long values, across six models and 2 repeats:
    the rows and the diffs stop at their budgets, and the page says what it left out."""
    models = {f"model-{i}": 0.0 for i in range(6)}
    report = synthetic_report(cases=800, models=models, repeats=2, hostile=False)
    long = "x" * 5000
    for case in report["cases"]:
        case["id"] = case["id"] + "-" + "i" * 500
        case["tags"] = ["t" * 500]
        case["input"] = {"text": long}
        for runs in case["runs"].values():
            for run in runs:
                if run["output"] is not None:
                    run["output"]["vendor"] = long
    html = render(report)
    assert len(html.encode()) <= MB
    assert "more cases are in the JSON report." in html
    assert "without their diff, to keep this page small" in html
    Page(html)


def test_figures_read_in_their_own_units() -> None:
    report = {
        "models": {"m": ""},
        "metrics": {
            "m": {
                "latency_p50_s": {"value": 0.0421, "low": 0.04, "high": 0.05},
                "latency_p90_s": {"value": 2.5, "low": None, "high": None},
                "cost_per_case_usd": {"value": 0.000123, "low": None, "high": None},
                "record_exact": {"value": 0.875, "low": 0.8, "high": 0.95},
                "output_tokens": {"value": 61.5, "low": None, "high": None},
            }
        },
    }
    html = render(report)
    assert '42.1 ms <span class="ci">[40 ms, 50 ms]</span>' in html
    assert ">2.5 s<" in html and ">$0.000123<" in html and ">61.5<" in html
    assert '87.5% <span class="ci">[80.0%, 95.0%]</span>' in html
