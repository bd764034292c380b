"""``plot(report)``: the page's charts as matplotlib Figures, with matplotlib imported only then."""

from __future__ import annotations

import builtins
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from alloy.errors import ConfigurationError
from alloy.eval._plot import plot

from .report_data import synthetic_report


def test_plot_draws_the_same_charts_as_the_page(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    report = synthetic_report(cases=12, models={"mini": 0.85, "haiku": 0.95, "sonnet": 0.97})
    figures = plot(report)
    assert list(figures) == [
        "metrics",
        "cost",
        "fields",
        "comparisons",
        "confusion:status",
        "confusion:currency",
        "confusion:paid",
    ]
    assert all(isinstance(f, Figure) for f in figures.values())
    assert len(figures["confusion:status"].axes) == 3  # a panel per model
    heat = figures["fields"].axes[0]
    assert [t.get_text() for t in heat.get_xticklabels()] == ["mini", "haiku", "sonnet"]
    assert len(heat.get_yticklabels()) == 10
    out = tmp_path / "comparisons.png"
    figures["comparisons"].savefig(out, dpi=30)
    assert out.stat().st_size > 500


def test_plot_copes_with_a_bare_report() -> None:
    pytest.importorskip("matplotlib")
    assert plot({}) == {}
    report = synthetic_report(cases=3, models={"only": 0.9}, hostile=False)
    report["comparisons"] = []
    report["fields"] = {}
    assert list(plot(report)) == ["metrics", "cost"]


def test_plot_without_matplotlib_names_the_install_command(monkeypatch: Any) -> None:
    real_import = builtins.__import__

    def no_matplotlib(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(ConfigurationError, match=r"pip install 'alloy\[plot\]'") as raised:
        plot(synthetic_report(cases=2))
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_the_report_modules_import_matplotlib_only_when_plotting() -> None:
    code = (
        "import sys, alloy.eval._html, alloy.eval._plot, alloy.eval._svg; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
