"""An eval report as one self-contained HTML page: inline CSS, inline SVG charts, no script.

``render(report)`` takes ``Report.to_dict()`` and returns the page. Nothing is fetched: no
external ``src`` or ``href``, and a Content-Security-Policy that forbids it, so the file opens the
same from a CI artifact, an e-mail or a laptop offline. Everything from the report (model names,
paths, case data: untrusted) is escaped. The page stays under about 1 MB for 1,000 cases: every
case gets a one-line row, failing cases first, and the field-by-field diffs of failing cases
are written until a byte budget is spent (the JSON report keeps everything).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from html import escape
from typing import Any

from . import _svg, _views
from ._svg import MINUS, NONE, cut
from ._views import Estimate, Report

#: Bytes of per-case diffs written before the rest are left to the JSON report.
DETAIL_BUDGET = 400_000
#: Bytes of one-line case rows written before the rest are left to the JSON report.
ROW_BUDGET = 250_000
#: Diffs tried past one that did not fit in the budget, in case a smaller one does.
MAX_MISFITS = 10
#: Differing paths shown per case.
MAX_DIFF_ROWS = 60
#: Characters of one value shown in a cell.
VALUE_CHARS = 120

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:1200px;padding:0 16px;color:#222}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:14px;margin:14px 0 4px}
table{border-collapse:collapse;margin:4px 0 12px}td,th{border:1px solid #ddd;padding:2px 6px;
text-align:left;vertical-align:top}th{background:#f4f4f4}
.n{text-align:right;font-variant-numeric:tabular-nums}.ci{color:#777;font-size:12px}
.meta{color:#555}.ok{background:#e6f4ea}.bad{background:#fde8e8}.err{background:#fff4d6}
.d{background:#fde8e8;font-weight:600}code,.v{font:12px ui-monospace,monospace;white-space:pre-wrap;
word-break:break-all}.charts{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
.charts figure{margin:0}figcaption{font-size:12px;color:#555}details{margin:4px 0}
summary{cursor:pointer}.note{color:#666;font-size:13px}.cases td{padding:1px 6px}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def render(report: Report) -> str:
    """The whole page for one report dict (``Report.to_dict()``)."""
    models = _views.models(report)
    palette = _svg.colours(models)
    parts: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>alloy eval: {escape(str(report.get('command', '')))}</title>",
        f"<style>{CSS}</style></head><body>",
        *header(report, models),
        *summary(report, models),
        *charts(report, models, palette),
        *failures(report, models),
        *fields(report, models),
        *comparisons(report),
        *skipped(report),
        *cases(report, models),
        "</body></html>",
    ]
    return "\n".join(parts)


# --- formatting ---------------------------------------------------------------------------


def kind_of(metric: str) -> str:
    """How a figure reads: a share (%), money, seconds or a plain number."""
    if "cost" in metric:
        return "usd"
    if "latency" in metric:
        return "s"
    if "tokens" in metric or metric.startswith(("abs_err", "days_off", "count_err")):
        return "num"
    return "rate"


def fmt(value: float | None, metric: str) -> str:
    if value is None:
        return NONE
    kind = kind_of(metric)
    if kind == "rate":
        return f"{value * 100:.1f}%"
    if kind == "usd":
        return f"${value:.4g}"
    if kind == "s":
        return f"{value:.3g} s" if abs(value) >= 1 else f"{value * 1000:.3g} ms"
    return f"{value:.4g}"


def cell(fig: Estimate, metric: str) -> str:
    """A figure with its interval under it, for a table cell (escaped)."""
    shown = escape(fmt(fig.value, metric))
    if fig.low is None or fig.high is None:
        return shown
    return f'{shown} <span class="ci">[{escape(fmt(fig.low, metric))}, {escape(fmt(fig.high, metric))}]</span>'


def brief(value: Any, limit: int = VALUE_CHARS) -> str:
    """A JSON value as short text (unescaped)."""
    try:
        shown = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        shown = repr(value)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def text_of(report: Report, key: str) -> str:
    value = report.get(key)
    return "" if value is None else str(value)


# --- sections -----------------------------------------------------------------------------


def header(report: Report, models: Sequence[str]) -> Iterator[str]:
    yield f"<h1>alloy eval: <code>{escape(text_of(report, 'command'))}</code></h1>"
    case_list = report.get("cases")
    count = len(case_list) if isinstance(case_list, Sequence) else 0
    facts = [
        ("created", text_of(report, "created")),
        ("cases", str(count)),
        ("mode", text_of(report, "mode")),
        ("repeats", text_of(report, "repeats")),
        ("seed", text_of(report, "seed")),
    ]
    yield (
        '<p class="meta">'
        + " · ".join(f"{escape(name)} <b>{escape(value)}</b>" for name, value in facts if value)
        + "</p>"
    )
    ids = _views.section(report, "models")
    if models:
        yield "<table><tr><th>model</th><th>id</th></tr>"
        for model in models:
            yield f"<tr><td>{escape(model)}</td><td><code>{escape(str(ids.get(model, '')))}</code></td></tr>"
        yield "</table>"


def summary(report: Report, models: Sequence[str]) -> Iterator[str]:
    names: list[str] = []
    for model in models:
        names += [str(m) for m in _views.model_metrics(report, model) if str(m) not in names]
    if not names:
        return
    yield '<h2>Summary</h2><p class="note">Every figure with its 95% interval.</p>'
    yield "<table><tr><th>model</th>" + "".join(f"<th>{escape(n)}</th>" for n in names) + "</tr>"
    for model in models:
        values = _views.model_metrics(report, model)
        yield (
            f"<tr><td>{escape(model)}</td>"
            + "".join(
                f'<td class="n">{cell(_views.estimate(values.get(n)), n)}</td>' for n in names
            )
            + "</tr>"
        )
    yield "</table>"


def figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>"


def charts(report: Report, models: Sequence[str], palette: Mapping[str, str]) -> Iterator[str]:
    drawn = []
    bars = _views.metric_bars(report)
    if bars:
        drawn.append(figure(_svg.metric_bars(bars, palette), "Whole-record metrics, 95% whiskers"))
    points = _views.cost_points(report)
    if points:
        cost = _views.cost_metric(report) or "cost"
        drawn.append(
            figure(
                _svg.cost_front(points, palette, cost), "record_exact against cost; ★ Pareto front"
            )
        )
    heat = _views.field_heatmap(report)
    if heat.paths:
        drawn.append(figure(_svg.heatmap(heat), "Per field: its headline figure, by model"))
    if drawn:
        yield '<h2>Charts</h2><div class="charts">' + "".join(drawn) + "</div>"
    deltas = _views.deltas(report)
    if deltas:
        yield "<h2>Paired comparisons</h2>"
        yield (
            f'<p class="note">Each model against the first, case by case: the difference (b {MINUS} a) '
            "with its 95% interval; a filled dot is significant after Holm's correction.</p>"
        )
        yield figure(_svg.forest(deltas), "Paired deltas (forest plot)")
    matrices = _views.confusions(report)
    if matrices:
        yield '<h2>Confusion matrices</h2><div class="charts">'
        for matrix in matrices:
            yield figure(_svg.confusion(matrix), f"{matrix.path} · {matrix.model}")
        yield "</div>"


def failures(report: Report, models: Sequence[str]) -> Iterator[str]:
    table = _views.section(report, "failures")
    kinds: list[str] = []
    for model in models:
        counts = table.get(model)
        if isinstance(counts, Mapping):
            kinds += [str(k) for k in counts if str(k) not in kinds]
    if not kinds:
        return
    yield "<h2>Failures</h2><table><tr><th>model</th>"
    yield "".join(f"<th>{escape(k)}</th>" for k in kinds) + "</tr>"
    for model in models:
        counts = table.get(model)
        counts = counts if isinstance(counts, Mapping) else {}
        row = []
        for kind in kinds:
            n = _views.number(counts.get(kind))
            shown = NONE if n is None else f"{n:g}"
            row.append(f'<td class="n{" bad" if n else ""}">{escape(shown)}</td>')
        yield f"<tr><td>{escape(model)}</td>{''.join(row)}</tr>"
    yield "</table>"


def fields(report: Report, models: Sequence[str]) -> Iterator[str]:
    paths = list(_views.section(report, "fields"))
    if not paths:
        return
    yield "<h2>Fields</h2><table><tr><th>path</th><th>kind</th><th>model</th><th>figures</th></tr>"
    for path in paths:
        for model in models:
            entry = _views.field_entry(report, str(path), model)
            if not entry:
                continue
            metrics = entry.get("metrics")
            metrics = metrics if isinstance(metrics, Mapping) else {}
            figures = " · ".join(
                f"{escape(str(name))} {cell(_views.estimate(value), str(name))}"
                for name, value in metrics.items()
            )
            tolerance = _views.number(entry.get("tolerance"))
            if tolerance is not None:
                figures += f" · tolerance {tolerance:g}"
            yield (
                f"<tr><td><code>{escape(str(path))}</code></td>"
                f"<td>{escape(str(entry.get('kind', '')))}</td><td>{escape(model)}</td>"
                f"<td>{figures}{per_class(entry)}</td></tr>"
            )
    yield "</table>"


def per_class(entry: Mapping[str, Any]) -> str:
    """Precision, recall and F1 per class of an enum field, folded away."""
    classes = entry.get("per_class")
    if not isinstance(classes, Mapping) or not classes:
        return ""
    rows = ["<details><summary>per class</summary><table>"]
    rows.append("<tr><th>class</th><th>precision</th><th>recall</th><th>F1</th></tr>")
    for label, figures in classes.items():
        values = figures if isinstance(figures, Mapping) else {}
        rows.append(
            f"<tr><td>{escape(str(label))}</td>"
            + "".join(
                f'<td class="n">{cell(_views.estimate(values.get(m)), m)}</td>'
                for m in ("precision", "recall", "f1")
            )
            + "</tr>"
        )
    rows.append("</table></details>")
    return "".join(rows)


def comparisons(report: Report) -> Iterator[str]:
    deltas = _views.deltas(report)
    if not deltas:
        return
    yield "<details><summary>All paired comparisons as a table</summary><table>"
    yield f"<tr><th>b {MINUS} a</th><th>target</th><th>delta [95%]</th><th>p</th><th>Holm p</th><th>test</th></tr>"
    for d in deltas:
        low = NONE if d.estimate.low is None else f"{d.estimate.low:+.4g}"
        high = NONE if d.estimate.high is None else f"{d.estimate.high:+.4g}"
        p = NONE if d.p is None else f"{d.p:.3g}"
        holm = NONE if d.p_holm is None else f"{d.p_holm:.3g}"
        yield (
            f"<tr><td>{escape(d.b)} {MINUS} {escape(d.a)}</td><td><code>{escape(d.target)}</code></td>"
            f'<td class="n">{d.estimate.value or 0:+.4g} [{low}, {high}]</td><td class="n">{p}</td>'
            f'<td class="n{" ok" if d.significant else ""}">{holm}</td><td>{escape(d.test)}</td></tr>'
        )
    yield "</table></details>"


def skipped(report: Report) -> Iterator[str]:
    lines = report.get("skipped")
    if not isinstance(lines, Sequence) or not lines:
        return
    yield f"<h2>Skipped dataset lines ({len(lines)})</h2>"
    yield "<table><tr><th>line</th><th>id</th><th>reason</th></tr>"
    for line in lines:
        line = line if isinstance(line, Mapping) else {}
        yield (
            f'<tr><td class="n">{escape(str(line.get("line", "")))}</td>'
            f"<td>{escape(str(line.get('id', '')))}</td><td>{escape(str(line.get('reason', '')))}</td></tr>"
        )
    yield "</table>"


# --- cases --------------------------------------------------------------------------------


def runs_of(case: Mapping[str, Any], model: str) -> list[Mapping[str, Any]]:
    # Case data is JSON (dicts and lists): plain type checks keep 1,000 cases fast.
    runs = case.get("runs")
    found = runs.get(model) if isinstance(runs, dict) else None
    if not isinstance(found, list):
        return []
    return [run for run in found if isinstance(run, dict)]


def failed(run: Mapping[str, Any]) -> bool:
    return bool(run.get("error")) or run.get("record_exact") is not True


def leaves(value: Any) -> dict[str, Any]:
    """Every scalar in a JSON value by its path (``lines[0].sku``); empty containers too."""
    found: dict[str, Any] = {}

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict) and value:
            for key, item in value.items():
                walk(item, f"{path}.{key}" if path else str(key))
        elif isinstance(value, list) and value:
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]")
        else:
            found[path or "(value)"] = value

    walk(value, "")
    return found


def same(a: Any, b: Any) -> bool:
    """JSON equality that keeps true apart from 1."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def cases(report: Report, models: Sequence[str]) -> Iterator[str]:
    listed = report.get("cases")
    if not isinstance(listed, Sequence) or not listed:
        return
    all_cases = [case for case in listed if isinstance(case, dict)]

    misses = [sum(failed(run) for m in models for run in runs_of(case, m)) for case in all_cases]
    order = sorted(range(len(all_cases)), key=lambda i: (-misses[i], i))
    failing = [i for i in order if misses[i]]
    yield f"<h2>Cases ({len(all_cases)}, {len(failing)} with a miss)</h2>"
    yield (
        '<p class="note">Failing cases first. ✓ the record matched exactly, ✗ it did not, '
        "! the call failed; the figure is the run's field_mean. Click a failing case for its "
        "field-by-field diff.</p>"
    )
    details: list[str] = []
    spent = 0
    detailed: set[int] = set()
    misfits = 0
    for i in failing:
        block = diff_block(i, all_cases[i], models)
        if spent + len(block) > DETAIL_BUDGET:
            misfits += 1
            if misfits == MAX_MISFITS:  # the budget is as good as spent
                break
            continue
        spent += len(block)
        details.append(block)
        detailed.add(i)
    yield '<table class="cases"><tr><th>case</th><th>tags</th>'
    yield "".join(f"<th>{escape(model)}</th>" for model in models) + "</tr>"
    written = 0
    for shown, i in enumerate(order):
        row = case_row(i, all_cases[i], models, i in detailed)
        written += len(row)
        if written > ROW_BUDGET:
            yield "</table>"
            yield f'<p class="note">{len(order) - shown} more cases are in the JSON report.</p>'
            break
        yield row
    else:
        yield "</table>"
    if details:
        yield "<h3>Failing cases, field by field</h3>"
        yield "".join(details)
    if len(failing) > len(detailed):
        yield (
            f'<p class="note">{len(failing) - len(detailed)} more failing cases are listed above '
            "without their diff, to keep this page small; the JSON report has them all.</p>"
        )


def mark(run: Mapping[str, Any]) -> tuple[str, str]:
    """The symbol and the CSS class of one run."""
    error = run.get("error")
    if error:
        kind = error.get("kind", "error") if isinstance(error, Mapping) else "error"
        return f"!{kind}", "err"
    if run.get("record_exact") is True:
        return "✓", "ok"
    return "✗", "bad"


def case_row(index: int, case: Mapping[str, Any], models: Sequence[str], linked: bool) -> str:
    name = escape(cut(str(case.get("id", index)), VALUE_CHARS))
    head = f'<a href="#case-{index}">{name}</a>' if linked else name
    tags = case.get("tags")
    tag_text = (
        ", ".join(str(t) for t in tags)
        if isinstance(tags, Sequence) and not isinstance(tags, str)
        else ""
    )
    cells = []
    for model in models:
        runs = runs_of(case, model)
        marks = [mark(run) for run in runs]
        worst = (
            "err"
            if any(c == "err" for _, c in marks)
            else "bad"
            if any(c == "bad" for _, c in marks)
            else "ok"
        )
        means = [_views.number(run.get("field_mean")) for run in runs]
        shown = " ".join(
            symbol + ("" if mean is None else f" {mean:.2f}")
            for (symbol, _), mean in zip(marks, means, strict=True)
        )
        cells.append(f'<td class="{worst if runs else ""}">{escape(shown) or NONE}</td>')
    return f"<tr><td>{head}</td><td>{escape(cut(tag_text, VALUE_CHARS))}</td>{''.join(cells)}</tr>"


def diff_block(index: int, case: Mapping[str, Any], models: Sequence[str]) -> str:
    """One failing case: its input, then each path where some run differs from the expected."""
    expected = leaves(case.get("expected"))
    columns: list[tuple[str, Mapping[str, Any], dict[str, Any]]] = []
    for model in models:
        runs = runs_of(case, model)
        for run in runs:
            label = model if len(runs) == 1 else f"{model} #{run.get('repeat', '?')}"
            output = run.get("output")
            got = leaves(output) if output is not None or not run.get("error") else {}
            columns.append((label, run, got))
    paths = list(expected)
    for _, _, got in columns:
        paths += [p for p in got if p not in expected and p not in paths]
    differing = [
        p
        for p in paths
        if any(
            got and (p not in got or p not in expected or not same(got[p], expected[p]))
            for _, _, got in columns
        )
    ]
    name = escape(cut(str(case.get("id", index)), VALUE_CHARS))
    calls = sum(1 for _, run, _ in columns if run.get("error"))
    failed_calls = f" · {calls} failed call{'s' if calls > 1 else ''}" if calls else ""
    parts = [
        f'<details id="case-{index}"><summary><b>{name}</b> · {len(differing)} differing of '
        f"{len(paths)} fields{failed_calls}</summary>",
        f'<p>input <span class="v">{escape(brief(case.get("input"), 300))}</span></p>',
        "<table><tr><th>path</th><th>expected</th>",
        "".join(f"<th>{escape(label)}</th>" for label, _, _ in columns),
        "</tr>",
    ]
    errors = [(label, run.get("error")) for label, run, _ in columns]
    if any(error for _, error in errors):
        parts.append("<tr><td>error</td><td></td>")
        for _, error in errors:
            if isinstance(error, Mapping):
                detail = (
                    f"{error.get('kind', '')} {error.get('type', '')}: {error.get('message', '')}"
                )
                parts.append(
                    f'<td class="err v">{escape(brief(detail.strip(), 200).strip(chr(34)))}</td>'
                )
            else:
                parts.append("<td></td>")
        parts.append("</tr>")
    for path in differing[:MAX_DIFF_ROWS]:
        want = expected.get(path)
        shown_want = escape(brief(want)) if path in expected else "<i>absent</i>"
        parts.append(f'<tr><td><code>{escape(path)}</code></td><td class="v">{shown_want}</td>')
        for _, _, got in columns:
            if not got:
                parts.append("<td></td>")
            elif path not in got:
                parts.append('<td class="d"><i>absent</i></td>')
            else:
                off = path not in expected or not same(got[path], want)
                parts.append(f'<td class="v{" d" if off else ""}">{escape(brief(got[path]))}</td>')
        parts.append("</tr>")
    if len(differing) > MAX_DIFF_ROWS:
        parts.append(
            f'<tr><td colspan="{2 + len(columns)}" class="note">'
            f"{len(differing) - MAX_DIFF_ROWS} more differing paths</td></tr>"
        )
    parts.append(scores_row(columns))
    parts.append("</table></details>")
    return "".join(parts)


def scores_row(columns: Sequence[tuple[str, Mapping[str, Any], dict[str, Any]]]) -> str:
    """Per run, the fields scored below 1 (the scorer's view, which may forgive a diff)."""
    cells = []
    for _, run, _ in columns:
        scores = run.get("scores")
        low = []
        if isinstance(scores, Mapping):
            for path, score in scores.items():
                value = _views.number(score)
                if value is not None and value < 1:
                    low.append(f"{path} {value:.2f}")
        cells.append(f'<td class="v">{escape(", ".join(low)) or "all 1"}</td>')
    return f"<tr><td>scores &lt; 1</td><td></td>{''.join(cells)}</tr>"
