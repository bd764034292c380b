"""The report's charts as inline SVG, drawn by hand so the HTML page needs nothing outside it.

Each function takes a view from :mod:`alloy.eval._views` and returns one ``<svg>`` element
(no ``xmlns``: it is embedded in HTML). Every piece of text is escaped here, since model names,
JSON paths and labels come from the report. Sizes grow with the data; long labels are cut and
keep their full text in a ``<title>`` tooltip.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from ._views import Bar, Confusion, CostPoint, Delta, Estimate, Heatmap

#: Okabe-Ito colours: told apart with the common forms of colour blindness.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
FONT = 11
CHAR_WIDTH = 6.4  # a generous average glyph width at FONT px, for laying out labels
LABEL_CHARS = 36
GRID = "#ccc"
INK = "#222"
NONE = "\u2013"  # an en dash: no value
MINUS = "\u2212"  # a minus sign, as in "b - a"


def colours(models: Sequence[str]) -> dict[str, str]:
    return {model: PALETTE[i % len(PALETTE)] for i, model in enumerate(models)}


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def cut(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def text(x: float, y: float, content: str, *, anchor: str = "start", extra: str = "") -> str:
    """A label; cut to LABEL_CHARS with the full text as its tooltip."""
    shown = cut(content)
    tip = f"<title>{escape(content)}</title>" if shown != content else ""
    return (
        f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}"{extra}>{tip}{escape(shown)}</text>'
    )


def svg(width: float, height: float, title: str, body: Sequence[str]) -> str:
    return (
        f'<svg width="{_f(width)}" height="{_f(height)}" viewBox="0 0 {_f(width)} {_f(height)}" '
        f'role="img" font-size="{FONT}" font-family="sans-serif" fill="{INK}">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def label_width(labels: Sequence[str]) -> float:
    return min(max((len(cut(label)) for label in labels), default=0), LABEL_CHARS) * CHAR_WIDTH + 8


def percent(value: float | None) -> str:
    return NONE if value is None else f"{value * 100:.1f}%"


def interval(fig: Estimate, show: str) -> str:
    if fig.low is None or fig.high is None:
        return show
    return f"{show} [{percent(fig.low)}, {percent(fig.high)}]"


def metric_bars(groups: Sequence[tuple[str, Sequence[Bar]]], palette: Mapping[str, str]) -> str:
    """Horizontal bars in 0..1, one per model within each metric, with 95% whiskers."""
    names = [bar.model for _, bars in groups[:1] for bar in bars]
    left = label_width([metric for metric, _ in groups] + names) + 10
    plot_width, bar_height, gap = 420.0, 14.0, 12.0
    rows = sum(len(bars) for _, bars in groups)
    height = 30 + rows * bar_height + len(groups) * (gap + FONT + 4) + 20
    width = left + plot_width + 12 + CHAR_WIDTH * 26
    body = []
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = left + tick * plot_width
        body.append(
            f'<line x1="{_f(x)}" y1="20" x2="{_f(x)}" y2="{_f(height - 20)}" stroke="{GRID}"/>'
        )
        body.append(text(x, height - 6, f"{tick:.0%}", anchor="middle"))
    y = 24.0
    for metric, bars in groups:
        y += FONT + 2
        body.append(text(4, y, metric, extra=' font-weight="bold"'))
        y += 4
        for bar in bars:
            value = bar.estimate.value
            body.append(text(left - 6, y + bar_height - 3, bar.model, anchor="end"))
            if value is not None:
                shown = max(0.0, min(1.0, value))
                colour = palette.get(bar.model, PALETTE[0])
                body.append(
                    f'<rect x="{_f(left)}" y="{_f(y + 1)}" width="{_f(shown * plot_width)}" '
                    f'height="{_f(bar_height - 2)}" fill="{colour}" fill-opacity="0.8">'
                    f"<title>{escape(bar.model)} {escape(metric)}: "
                    f"{escape(interval(bar.estimate, percent(value)))}</title></rect>"
                )
                body.append(_whisker(left, plot_width, y + bar_height / 2, bar.estimate))
            body.append(
                text(
                    left + plot_width + 8,
                    y + bar_height - 3,
                    interval(bar.estimate, percent(value)),
                )
            )
            y += bar_height
        y += gap
    return svg(width, height, "Whole-record metrics with 95% intervals", body)


def _whisker(left: float, scale: float, y: float, fig: Estimate, lo: float = 0.0) -> str:
    if fig.low is None or fig.high is None:
        return ""
    x1 = left + (max(0.0, min(1.0, fig.low)) - lo) * scale
    x2 = left + (max(0.0, min(1.0, fig.high)) - lo) * scale
    return (
        f'<path d="M{_f(x1)} {_f(y)}H{_f(x2)}M{_f(x1)} {_f(y - 4)}V{_f(y + 4)}'
        f'M{_f(x2)} {_f(y - 4)}V{_f(y + 4)}" stroke="{INK}" fill="none"/>'
    )


def shade(value: float) -> str:
    """Red (0) through yellow (0.5) to green (1), as a hex colour."""
    value = max(0.0, min(1.0, value))
    stops = ((0.0, (215, 48, 39)), (0.5, (254, 224, 139)), (1.0, (26, 152, 80)))
    (a, ca), (b, cb) = (stops[0], stops[1]) if value <= 0.5 else (stops[1], stops[2])
    t = (value - a) / (b - a)
    red, green, blue = (round(x + (y - x) * t) for x, y in zip(ca, cb, strict=True))
    return f"#{red:02x}{green:02x}{blue:02x}"


def heatmap(view: Heatmap) -> str:
    """JSON path by model, each cell the path's headline figure, coloured 0 red to 1 green."""
    rows = [f"{path} · {metric}" for path, metric in zip(view.paths, view.metrics, strict=True)]
    left = label_width(rows) + 6
    cell_width = max(64.0, label_width(view.models))
    cell_height = 22.0
    top = 28.0
    width = left + cell_width * len(view.models) + 8
    height = top + cell_height * len(rows) + 8
    body = [
        text(left + (i + 0.5) * cell_width, top - 8, model, anchor="middle")
        for i, model in enumerate(view.models)
    ]
    for r, (row, cells) in enumerate(zip(rows, view.cells, strict=True)):
        y = top + r * cell_height
        body.append(text(left - 6, y + cell_height / 2 + 4, row, anchor="end"))
        for c, fig in enumerate(cells):
            x = left + c * cell_width
            fill = "#eee" if fig.value is None else shade(fig.value)
            tip = f"{row}, {view.models[c]}: {interval(fig, percent(fig.value))}"
            body.append(
                f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(cell_width - 2)}" '
                f'height="{_f(cell_height - 2)}" fill="{fill}"><title>{escape(tip)}</title></rect>'
            )
            body.append(
                text(
                    x + cell_width / 2 - 1,
                    y + cell_height / 2 + 3,
                    percent(fig.value),
                    anchor="middle",
                )
            )
    return svg(width, height, "Per-field score by model", body)


def confusion(view: Confusion) -> str:
    """Counts, rows expected and columns got; the shade is the share of the expected row."""
    size = len(view.labels)
    left = label_width(view.labels) + 22
    cell = 34.0
    top = 18.0 + label_width(view.labels) * 0.75
    width = left + cell * size + 10
    height = top + cell * size + 10
    body = [
        text(4, 12, "expected ↓  got →"),
    ]
    for j, label in enumerate(view.labels):
        x = left + (j + 0.5) * cell
        body.append(
            text(x, top - 6, label, extra=f' transform="rotate(-45 {_f(x)} {_f(top - 6)})"')
        )
    for i, (label, row) in enumerate(zip(view.labels, view.counts, strict=True)):
        y = top + i * cell
        body.append(text(left - 6, y + cell / 2 + 4, label, anchor="end"))
        total = sum(row) or 1
        for j, count in enumerate(row):
            share = count / total
            fill = ("#1a9850" if i == j else "#d73027") if count else "#f7f7f7"
            opacity = 0.15 + 0.85 * share if count else 1.0
            body.append(
                f'<rect x="{_f(left + j * cell)}" y="{_f(y)}" width="{_f(cell - 2)}" '
                f'height="{_f(cell - 2)}" fill="{fill}" fill-opacity="{opacity:.2f}">'
                f"<title>expected {escape(label)}, got {escape(view.labels[j])}: {count}</title></rect>"
            )
            body.append(
                text(left + j * cell + cell / 2 - 1, y + cell / 2 + 3, str(count), anchor="middle")
            )
    return svg(width, height, f"Confusion matrix of {view.path} for {view.model}", body)


def forest(rows: Sequence[Delta]) -> str:
    """Each paired delta (b - a) with its 95% interval; filled when significant after Holm."""
    labels = [f"{row.b} {MINUS} {row.a}: {row.target}" for row in rows]
    left = label_width(labels) + 6
    plot_width, row_height, top = 360.0, 18.0, 20.0
    ends = [
        abs(v)
        for row in rows
        for v in (row.estimate.value, row.estimate.low, row.estimate.high)
        if v is not None
    ]
    span = max([*ends, 0.01]) * 1.1
    width = left + plot_width + 8 + CHAR_WIDTH * 34
    height = top + row_height * len(rows) + 24

    def x_of(value: float) -> float:
        return left + (value + span) / (2 * span) * plot_width

    zero = x_of(0.0)
    body = [
        f'<line x1="{_f(zero)}" y1="{_f(top - 6)}" x2="{_f(zero)}" y2="{_f(height - 20)}" stroke="#888" stroke-dasharray="3 3"/>',
        text(left, height - 6, f"{-span:+.3g}"),
        text(zero, height - 6, "0", anchor="middle"),
        text(left + plot_width, height - 6, f"{span:+.3g}", anchor="end"),
    ]
    for i, (label, row) in enumerate(zip(labels, rows, strict=True)):
        y = top + i * row_height + row_height / 2
        body.append(text(left - 6, y + 4, label, anchor="end"))
        fig = row.estimate
        if fig.low is not None and fig.high is not None:
            body.append(
                f'<line x1="{_f(x_of(fig.low))}" y1="{_f(y)}" x2="{_f(x_of(fig.high))}" '
                f'y2="{_f(y)}" stroke="{INK}"/>'
            )
        value = fig.value if fig.value is not None else 0.0
        fill = INK if row.significant else "#fff"
        p = NONE if row.p_holm is None else f"{row.p_holm:.3g}"
        body.append(
            f'<circle cx="{_f(x_of(value))}" cy="{_f(y)}" r="4" fill="{fill}" stroke="{INK}">'
            f"<title>{escape(label)}: {value:+.4g}, Holm p = {escape(p)} ({escape(row.test)})</title></circle>"
        )
        low = NONE if fig.low is None else f"{fig.low:+.3g}"
        high = NONE if fig.high is None else f"{fig.high:+.3g}"
        body.append(text(left + plot_width + 8, y + 4, f"{value:+.3g} [{low}, {high}] p={p}"))
    return svg(width, height, "Paired differences against the first model (95% intervals)", body)


def cost_front(points: Sequence[CostPoint], palette: Mapping[str, str], cost_label: str) -> str:
    """record_exact against cost, the Pareto front (nothing cheaper is better) joined by a line."""
    left, top, plot_width, plot_height = 56.0, 16.0, 380.0, 220.0
    legend = label_width([p.model for p in points]) + 24
    width = left + plot_width + legend + 10
    height = top + plot_height + 40
    most = max(p.cost for p in points) * 1.1 or 1.0

    def xy(cost: float, accuracy: float) -> tuple[float, float]:
        return left + cost / most * plot_width, top + (
            1 - max(0.0, min(1.0, accuracy))
        ) * plot_height

    body = [
        f'<rect x="{_f(left)}" y="{_f(top)}" width="{_f(plot_width)}" height="{_f(plot_height)}" fill="none" stroke="{GRID}"/>',
        text(left + plot_width / 2, height - 6, cost_label, anchor="middle"),
        text(
            12,
            top + plot_height / 2,
            "record_exact",
            anchor="middle",
            extra=f' transform="rotate(-90 12 {_f(top + plot_height / 2)})"',
        ),
    ]
    for tick in (0.0, 0.5, 1.0):
        _, y = xy(0, tick)
        body.append(text(left - 4, y + 4, f"{tick:.0%}", anchor="end"))
        x = left + tick * plot_width
        body.append(text(x, top + plot_height + 14, f"${most * tick:.3g}", anchor="middle"))
    front = sorted(
        (p for p in points if p.on_front), key=lambda p: (p.cost, -(p.accuracy.value or 0))
    )
    if len(front) > 1:
        path = "".join(
            f"{'M' if i == 0 else 'L'}{_f(x)} {_f(y)}"
            for i, (x, y) in enumerate(xy(p.cost, p.accuracy.value or 0) for p in front)
        )
        body.append(
            f'<path d="{path}" stroke="#888" stroke-width="2" fill="none" stroke-dasharray="5 3"/>'
        )
    for i, point in enumerate(points):
        acc = point.accuracy
        x, y = xy(point.cost, acc.value or 0)
        colour = palette.get(point.model, PALETTE[0])
        if acc.low is not None and acc.high is not None:
            _, y1 = xy(point.cost, acc.low)
            _, y2 = xy(point.cost, acc.high)
            body.append(
                f'<line x1="{_f(x)}" y1="{_f(y1)}" x2="{_f(x)}" y2="{_f(y2)}" stroke="{colour}"/>'
            )
        mark = "on the Pareto front" if point.on_front else "dominated"
        ring = f' stroke="{INK}" stroke-width="2"' if point.on_front else ""
        body.append(
            f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{6 if point.on_front else 4}" fill="{colour}"{ring}>'
            f"<title>{escape(point.model)}: {escape(interval(acc, percent(acc.value)))} at "
            f"${point.cost:.4g}, {mark}</title></circle>"
        )
        ly = top + 10 + i * 16
        body.append(
            f'<circle cx="{_f(left + plot_width + 16)}" cy="{_f(ly - 4)}" r="5" fill="{colour}"/>'
        )
        body.append(
            text(left + plot_width + 26, ly, point.model + (" ★" if point.on_front else ""))
        )
    return svg(width, height, "Accuracy against cost; ★ marks the Pareto front", body)
