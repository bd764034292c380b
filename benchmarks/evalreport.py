"""Suite: writing an eval report's HTML page against writing the same report as JSON.

Issue 31's target for the page: 1,000 cases x 3 models x 10 fields written in at most 1 s and at
most 1 MB. The report is the synthetic one the tests use (tests/eval/report_data.py: every field
kind, failing cases, comparisons); no model is called. ``render`` and ``json.dumps`` of the same
dict are timed interleaved; the page's absolute median and size are noted beside the ratio.
"""

from __future__ import annotations

import json
import time
from functools import partial

from ._measure import SuiteResult, compare, interleave, median
from ._scale import Scale

MODELS = {"mini": 0.9, "haiku": 0.96, "sonnet": 0.98}


def run(scale: Scale) -> SuiteResult:
    from alloy.eval._html import render
    from tests.eval.report_data import synthetic_report

    started = time.perf_counter()
    result = SuiteResult("eval", "Eval report page")
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
    result.seconds = time.perf_counter() - started
    return result
