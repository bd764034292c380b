"""The report's charts with matplotlib, for notebooks and papers: ``Report.plot()``.

matplotlib is imported only here, when called, so ``import alloy.eval`` stays light. The
figures are built as ``matplotlib.figure.Figure`` objects, not through pyplot: nothing is shown,
no backend or global state is touched, and each can be saved with ``fig.savefig(...)``. They
read the same views as the HTML page (:mod:`alloy.eval._views`), so both show the same thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from . import _svg, _views
from ._views import Report

if TYPE_CHECKING:
    from matplotlib.figure import Figure

INSTALL = "pip install 'alloy[plot]'"


def plot(report: Report) -> dict[str, Figure]:
    """One matplotlib Figure per chart, by name, in the page's order.

    ``"metrics"`` (bars with 95% whiskers), ``"cost"`` (record_exact against cost, the Pareto
    front marked), ``"fields"`` (the field by model heatmap), ``"comparisons"`` (the forest plot
    of paired deltas), and ``"confusion:<path>"`` per enum field (one panel per model). A chart
    whose data the report lacks is left out.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ConfigurationError(f"Report.plot() needs matplotlib: {INSTALL}") from None
    models = _views.models(report)
    palette = _svg.colours(models)
    figures: dict[str, Figure] = {}
    bars = _views.metric_bars(report)
    if bars:
        figures["metrics"] = metric_bars(Figure(), bars, palette)
    points = _views.cost_points(report)
    if points:
        figures["cost"] = cost_front(Figure(), points, palette, _views.cost_metric(report) or "")
    heat = _views.field_heatmap(report)
    if heat.paths:
        figures["fields"] = heatmap(Figure(), heat)
    deltas = _views.deltas(report)
    if deltas:
        figures["comparisons"] = forest(Figure(), deltas)
    by_path: dict[str, list[_views.Confusion]] = {}
    for matrix in _views.confusions(report):
        by_path.setdefault(matrix.path, []).append(matrix)
    for path, matrices in by_path.items():
        figures[f"confusion:{path}"] = confusion(Figure(), matrices)
    return figures


def _errors(figs: list[_views.Estimate]) -> list[list[float]]:
    """Whisker lengths below and above each value (0 where the interval is unknown)."""
    below, above = [], []
    for fig in figs:
        value = fig.value or 0.0
        below.append(max(0.0, value - fig.low) if fig.low is not None else 0.0)
        above.append(max(0.0, fig.high - value) if fig.high is not None else 0.0)
    return [below, above]


def metric_bars(
    fig: Figure, groups: list[tuple[str, list[_views.Bar]]], palette: dict[str, str]
) -> Figure:
    axes = fig.subplots()
    models = [bar.model for bar in groups[0][1]]
    height = 0.8 / max(len(models), 1)
    for m, model in enumerate(models):
        figs = [bars[m].estimate for _, bars in groups]
        ys = [g - 0.4 + height * (m + 0.5) for g in range(len(groups))]
        axes.barh(
            ys,
            [f.value or 0.0 for f in figs],
            height=height,
            xerr=_errors(figs),
            color=palette[model],
            label=model,
            capsize=3,
        )
    axes.set_yticks(range(len(groups)), [name for name, _ in groups])
    axes.invert_yaxis()
    axes.set_xlim(0, 1)
    axes.set_xlabel("share of cases (95% interval)")
    axes.legend()
    axes.set_title("Whole-record metrics")
    fig.tight_layout()
    return fig


def cost_front(
    fig: Figure, points: list[_views.CostPoint], palette: dict[str, str], cost_label: str
) -> Figure:
    axes = fig.subplots()
    for point in points:
        axes.errorbar(
            [point.cost],
            [point.accuracy.value or 0.0],
            yerr=_errors([point.accuracy]),
            fmt="o",
            color=palette[point.model],
            markersize=9 if point.on_front else 6,
            markeredgecolor="black" if point.on_front else palette[point.model],
            label=point.model + (" (Pareto front)" if point.on_front else ""),
        )
    front = sorted((p for p in points if p.on_front), key=lambda p: p.cost)
    if len(front) > 1:
        axes.plot(
            [p.cost for p in front],
            [p.accuracy.value or 0.0 for p in front],
            linestyle="--",
            color="grey",
        )
    axes.set_xlim(left=0)
    axes.set_ylim(0, 1)
    axes.set_xlabel(cost_label)
    axes.set_ylabel("record_exact")
    axes.legend()
    axes.set_title("Accuracy against cost")
    fig.tight_layout()
    return fig


def heatmap(fig: Figure, view: _views.Heatmap) -> Figure:
    axes = fig.subplots()
    cells = [[f.value if f.value is not None else float("nan") for f in row] for row in view.cells]
    image = axes.imshow(cells, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    axes.set_xticks(range(len(view.models)), view.models)
    axes.set_yticks(
        range(len(view.paths)),
        [f"{p} · {m}" for p, m in zip(view.paths, view.metrics, strict=True)],
    )
    for r, row in enumerate(view.cells):
        for c, cell in enumerate(row):
            axes.text(c, r, _svg.percent(cell.value), ha="center", va="center", fontsize=8)
    fig.colorbar(image, ax=axes)
    axes.set_title("Per-field score by model")
    fig.tight_layout()
    return fig


def forest(fig: Figure, rows: list[_views.Delta]) -> Figure:
    axes = fig.subplots()
    fig.set_figheight(max(3.0, 0.3 * len(rows) + 1))
    ys = list(range(len(rows)))
    figs = [row.estimate for row in rows]
    for y, row in zip(ys, rows, strict=True):
        axes.errorbar(
            [row.estimate.value or 0.0],
            [y],
            xerr=_errors([row.estimate]),
            fmt="o",
            color="black",
            markerfacecolor="black" if row.significant else "white",
            capsize=3,
        )
    axes.axvline(0, color="grey", linestyle="--")
    axes.set_yticks(ys, [f"{r.b} {_svg.MINUS} {r.a}: {r.target}" for r in rows])
    axes.invert_yaxis()
    axes.set_xlabel("paired difference (95% interval); filled: significant after Holm")
    axes.set_title("Paired comparisons")
    if not any(f.value for f in figs):
        axes.set_xlim(-0.01, 0.01)
    fig.tight_layout()
    return fig


def confusion(fig: Figure, matrices: list[_views.Confusion]) -> Figure:
    panels: Any = fig.subplots(1, len(matrices), squeeze=False)[0]
    fig.set_figwidth(max(4.0, 3.6 * len(matrices)))
    for axes, matrix in zip(panels, matrices, strict=True):
        shares = [[count / (sum(row) or 1) for count in row] for row in matrix.counts]
        axes.imshow(shares, cmap="Greens", vmin=0, vmax=1)
        ticks = range(len(matrix.labels))
        axes.set_xticks(ticks, matrix.labels, rotation=45, ha="right")
        axes.set_yticks(ticks, matrix.labels)
        for i, row in enumerate(matrix.counts):
            for j, count in enumerate(row):
                ink = "white" if shares[i][j] > 0.6 else "black"
                axes.text(j, i, str(count), ha="center", va="center", fontsize=8, color=ink)
        axes.set_xlabel("got")
        axes.set_ylabel("expected")
        axes.set_title(f"{matrix.path} · {matrix.model}")
    fig.tight_layout()
    return fig
