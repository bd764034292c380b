"""Suite: writing an eval report's HTML page against writing the same report as JSON, and the
whole of an eval after its model calls (building the report from the runs' records, then saving
its HTML and JSON).

Issue 31's target for the page: 1,000 cases x 3 models x 10 fields written in at most 1 s and at
most 1 MB. The report is the synthetic one the tests use (tests/eval/report_data.py: every field
kind, failing cases, comparisons); no model is called. ``render`` and ``json.dumps`` of the same
dict are timed interleaved; the page's absolute median and size are noted beside the ratio.
The build is timed on a finished plan (tests/eval/plan_data.py: the same invoices with 10
scored fields, 2% failed runs), against ``json.dumps`` of the report it makes.
"""

from __future__ import annotations

import json
import tempfile
import time
from functools import partial
from pathlib import Path

from ._measure import SuiteResult, compare, interleave, median
from ._scale import Scale

MODELS = {"mini": 0.9, "haiku": 0.96, "sonnet": 0.98}


def run(scale: Scale) -> SuiteResult:
    from alloy.eval._html import render
    from tests.eval.report_data import synthetic_report

    started = time.perf_counter()
    result = SuiteResult("eval", "Eval report: the page, and build + save")
    report = synthetic_report(cases=scale.eval_cases, models=MODELS, hostile=False)
    size = len(render(report).encode())
    a, b = interleave(
        partial(render, report), partial(json.dumps, report), n=scale.eval_calls, warmup=1
    )
    name = f"{scale.eval_cases} cases x {len(MODELS)} models x 10 fields, HTML page"
    result.figures.append(
        compare("eval", name, a, b, baseline_label="json.dumps of the report", unit="ms", scale=1e3)
    )
    result.notes.append(
        f"The page: median {median(a) * 1e3:.0f} ms to write (target at most 1 s) and "
        f"{size / 1e6:.2f} MB (target at most 1 MB). {scale.eval_calls} writes per side, "
        "interleaved; the JSON side is the same dict as `Report.save('x.json')` writes it."
    )
    _build_and_save(scale, result)
    result.seconds = time.perf_counter() - started
    return result


def _build_and_save(scale: Scale, result: SuiteResult) -> None:
    from alloy.eval._build import build_report
    from alloy.eval._stats import numpy_or_none
    from tests.eval.plan_data import synthetic_plan

    plan = synthetic_plan(scale.eval_cases, MODELS)
    data = build_report(plan, 0.0).to_dict()
    with tempfile.TemporaryDirectory() as folder:

        def build_and_save() -> None:
            report = build_report(plan, 0.0)
            report.save(Path(folder) / "report.html")
            report.save(Path(folder) / "report.json")

        runs = max(2, scale.eval_calls // 4)
        a, b = interleave(build_and_save, partial(json.dumps, data), n=runs, warmup=1)
    name = f"{scale.eval_cases} cases x {len(MODELS)} models x 10 fields, build + save"
    result.figures.append(
        compare("eval", name, a, b, baseline_label="json.dumps of the report", unit="ms", scale=1e3)
    )
    result.notes.append(
        f"After the model calls: median {median(a) * 1e3:.0f} ms to build the report from the "
        "runs' records (scores, every bootstrap interval, the comparisons) and save it as HTML "
        f"and JSON (target at most 1 s); numpy {'used' if numpy_or_none() else 'missing: pure Python'}. "
        f"{runs} runs per side, interleaved."
    )
