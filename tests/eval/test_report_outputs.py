"""Report.save writes the HTML page through alloy.eval._html and Report.plot draws through
alloy.eval._plot, each given the report's dict (the contract both sides build to)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from alloy import ConfigurationError, command
from alloy.eval import Case, Dataset, Report, _html, _plot
from alloy.testing import FunctionModel


@command(output=int)
def double(n: int) -> str:
    return f"Double {n}"


def report() -> Report:
    model = FunctionModel(lambda r: json.dumps({"value": 4}), name="function:four")
    return double.eval(Dataset([Case(2, 4), Case(3, 6)]), models={"four": model})


def test_save_and_plot_hand_the_report_dict_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given: list[dict[str, Any]] = []
    monkeypatch.setattr(_html, "render", lambda data: given.append(data) or "<!doctype html>")
    monkeypatch.setattr(_plot, "plot", lambda data: given.append(data) or "figure")
    made = report()
    assert made.save(tmp_path / "r.html").read_text() == "<!doctype html>"
    assert made.plot() == "figure"
    assert given == [made.to_dict(), made.to_dict()]
    assert given[0]["fields"]["value"]["four"]["metrics"]["exact"]["value"] == 0.5


def test_save_refuses_other_suffixes(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"\.json or \.html"):
        report().save(tmp_path / "r.csv")
