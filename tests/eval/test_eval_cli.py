"""``alloy eval``: the report from the shell, the dataset line schema, and the exit codes of
the CI gate (0 pass, 1 regression, 2 usage error, 3 inconclusive)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alloy.cli import main

TARGET = str(Path(__file__).with_name("commands_for_eval.py")) + ":add"


def dataset(tmp_path: Path, n: int = 60) -> str:
    path = tmp_path / "cases.jsonl"
    lines = [
        {"id": f"n{i}", "input": {"n": i}, "expected": {"total": 2 * i, "parity": "even"}}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def wrong(monkeypatch: pytest.MonkeyPatch, numbers: list[int]) -> None:
    monkeypatch.setenv("EVAL_WRONG", ",".join(map(str, numbers)))


def test_eval_prints_the_summary_and_writes_the_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = dataset(tmp_path, 10)
    status = main(
        [
            "eval",
            TARGET,
            "--data",
            data,
            "--json",
            str(tmp_path / "r.json"),
            "--html",
            str(tmp_path / "r.html"),
        ]
    )
    out = capsys.readouterr().out
    assert status == 0 and "record_exact" in out and "function:adder" in out
    assert json.loads((tmp_path / "r.json").read_text())["alloy_eval"] == 1
    assert (tmp_path / "r.html").read_text().lstrip().lower().startswith("<!doctype html")


def test_the_gate_exits_0_on_pass_1_on_regression_3_when_inconclusive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = dataset(tmp_path)
    baseline = str(tmp_path / "main.json")
    assert main(["eval", TARGET, "--data", data, "--json", baseline]) == 0
    gate = ["--baseline", baseline, "--metric", "record_exact", "--margin", "0.02"]
    assert main(["eval", TARGET, "--data", data, *gate]) == 0
    wrong(monkeypatch, list(range(0, 60, 3)))
    assert main(["eval", TARGET, "--data", data, *gate]) == 1
    assert "regression" in capsys.readouterr().out
    wrong(monkeypatch, [0, 7])
    assert main(["eval", TARGET, "--data", data, *gate]) == 3
    assert "inconclusive" in capsys.readouterr().out


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", TARGET]) == 2
    assert "--data" in capsys.readouterr().err
    assert main(["eval", "nowhere_module_xyz:cmd", "--data", dataset(tmp_path, 2)]) == 2
    data = dataset(tmp_path, 2)
    assert main(["eval", TARGET, "--data", data, "--baseline", str(tmp_path / "missing.json")]) == 2
    assert main(["eval", TARGET, "--data", data, "--repeats", "0"]) == 2


def test_eval_schema_prints_the_json_schema_of_a_dataset_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["eval", "schema", TARGET]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["required"] == ["input", "expected"]
    assert schema["properties"]["expected"]["properties"]["total"]["type"] == "integer"
    by_object = schema["properties"]["input"]["anyOf"][0]
    assert by_object["properties"]["n"]["type"] == "integer" and by_object["required"] == ["n"]
