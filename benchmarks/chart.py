"""Draw the report's one chart: every ratio, with its interval and target. Runs in the chart venv.

``python benchmarks/chart.py figures.json chart.png``; the JSON is a list of objects with
``label``, ``suite``, ``ratio``, ``low``, ``high``, ``target`` and ``met`` (written by
``benchmarks.report``). Standalone on purpose: it imports matplotlib and nothing of alloy's.
"""

from __future__ import annotations

import json
import sys
from typing import Any

COLOURS = {True: "#2e7d32", False: "#c62828", None: "#78909c"}


def draw(figures: list[dict[str, Any]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    height = 0.32 * len(figures) + 1.2
    fig, ax = plt.subplots(figsize=(9, height))
    ys = list(range(len(figures)))[::-1]
    for y, f in zip(ys, figures, strict=True):
        ax.barh(y, f["ratio"], color=COLOURS[f["met"]], height=0.6)
        if f["low"] is not None:
            ax.errorbar(
                f["ratio"],
                y,
                xerr=[[f["ratio"] - f["low"]], [f["high"] - f["ratio"]]],
                fmt="none",
                ecolor="black",
                capsize=2,
                linewidth=0.8,
            )
        if f["target"] is not None:
            ax.plot([f["target"], f["target"]], [y - 0.4, y + 0.4], color="black", linewidth=1.5)
    ax.axvline(1.0, color="#455a64", linestyle="--", linewidth=0.8)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"[{f['suite']}] {f['label']}" for f in figures], fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel(
        "alloy / baseline (log scale; bars: median ratio, whiskers: 95% CI, black tick: target)",
        fontsize=8,
    )
    ax.set_title("alloy against its baselines, measured side by side in one run", fontsize=10)
    ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    with open(sys.argv[1]) as source:
        draw(json.load(source), sys.argv[2])
