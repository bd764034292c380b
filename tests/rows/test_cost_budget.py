"""``map(cost_budget=...)``: a run spends no more than its cap, and what it did not run runs
when the same map is run again from its checkpoint.

Every row costs $0.005 (5 output tokens at $1,000 per million, input free), and its request
at most that (``max_tokens=5``), so a cap of $0.02 pays for exactly four rows.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from alloy import BudgetExceeded, ConfigurationError, command, pricing
from alloy._types import Request
from alloy.cli import main
from alloy.pricing import Price, set_price
from alloy.rows import Failed, Ok
from alloy.testing import FunctionModel, json_reply

from ..conftest import Call

ROW_PRICE = Price(input=0.0, output=1000.0)


@pytest.fixture(autouse=True)
def own_prices(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(pricing, "_BOOK", pricing._PriceBook())
    set_price("priced", ROW_PRICE)
    yield


def doubling_model(name: str = "priced") -> FunctionModel:
    def answer(request: Request) -> Any:
        n = int(request.messages[0].parts[0].text.rsplit(" ", 1)[1])  # type: ignore[union-attr]
        return json_reply(n * 2, wrap=True)

    return FunctionModel(answer, name=name)


def doubling(model: FunctionModel) -> Any:
    @command(output=int, model=model, retries=0, max_tokens=5)
    def double(n: int) -> str:
        return f"Double {n}"

    return double


@pytest.mark.parametrize("concurrency", [1, 3])
def test_a_run_stops_at_its_cap_and_resumes_from_its_checkpoint(
    tmp_path: Path, run_map: Call, concurrency: int
) -> None:
    model = doubling_model()
    path = tmp_path / "run.sqlite"
    first = run_map(
        doubling(model), range(10), checkpoint=path, cost_budget=0.02, concurrency=concurrency
    )
    assert len(model.requests) == 4  # $0.02 pays for four rows, and a fifth is never sent
    assert [row.ok for row in first] == [True] * 4 + [False] * 6
    assert all(isinstance(row.error, BudgetExceeded) for row in first[4:])
    assert "before this row started" in str(first[-1].error)
    assert (first.summary.ok, first.summary.failed) == (4, 6)
    assert first.summary.cost == pytest.approx(0.02)

    again = run_map(doubling(model), range(10), checkpoint=path, cost_budget=1.0)
    assert len(model.requests) == 10  # only the six rows the cap stopped
    assert [row.value for row in again] == [n * 2 for n in range(10)]
    assert [row.resumed for row in again] == [True] * 4 + [False] * 6


def test_requests_in_flight_hold_their_worst_case_and_others_wait_for_them(
    run_map: Call,
) -> None:
    """``max_tokens=50`` makes a request's worst case $0.05, ten times what a reply costs: a
    row waits while those in flight may still cost that much, and is refused only when what was
    spent leaves no room, so the cap of $0.10 pays for 11 rows ($0.055) in any order."""
    model = doubling_model()

    @command(output=int, model=model, retries=0, max_tokens=50)
    def double(n: int) -> str:
        return f"Double {n}"

    records = run_map(double, range(20), cost_budget=0.1, concurrency=4)
    assert sum(row.ok for row in records) == 11
    assert len(model.requests) == 11
    assert records.summary.cost == pytest.approx(0.055)


def test_rows_the_cap_stopped_run_again_even_when_failed_rows_are_kept(
    tmp_path: Path, run_map: Call
) -> None:
    model = doubling_model()
    path = tmp_path / "run.sqlite"
    run_map(doubling(model), range(6), checkpoint=path, cost_budget=0.01, concurrency=1)
    assert len(model.requests) == 2
    again = run_map(doubling(model), range(6), checkpoint=path, retry_failed=False)
    assert all(isinstance(row, Ok) for row in again)
    assert len(model.requests) == 6


def test_the_run_cap_counts_every_request_of_every_row(run_map: Call) -> None:
    """A row that re-asks spends twice: the cap counts both requests."""
    calls = {"n": 0}

    def answer(request: Request) -> Any:
        calls["n"] += 1
        return "not a number" if len(request.messages) == 1 else json_reply(1, wrap=True)

    model = FunctionModel(answer, name="priced")

    @command(output=int, model=model, retries=0, max_tokens=5, max_reasks=1)
    def one(n: int) -> str:
        return f"One {n}"

    records = run_map(one, range(5), cost_budget=0.02, concurrency=1)
    assert [row.ok for row in records] == [True, True, False, False, False]
    assert len(model.requests) == 4


def test_a_run_over_a_model_without_a_price_refuses_before_sending(run_map: Call) -> None:
    model = doubling_model("homebrew")
    with pytest.raises(ConfigurationError, match=r"set_price\('homebrew'"):
        run_map(doubling(model), range(3), cost_budget=1.0)
    assert model.requests == []


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), True, "5"])
def test_a_bad_run_cap_is_a_configuration_error(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="cost_budget"):
        doubling(doubling_model()).map(range(3), cost_budget=bad)


def test_a_batch_run_cannot_take_a_cost_cap() -> None:
    with pytest.raises(ConfigurationError, match="mode='online'"):
        doubling(doubling_model()).map(range(3), cost_budget=1.0, mode="batch")


def test_a_call_cap_applies_to_each_row_of_a_run(run_map: Call) -> None:
    model = doubling_model()
    double = doubling(model).with_options(cost_budget=0.004)  # less than one request
    records = run_map(double, range(3))
    assert all(isinstance(row, Failed) for row in records)
    assert all(isinstance(row.error, BudgetExceeded) for row in records)
    assert model.requests == []


COMMANDS = textwrap.dedent("""
    from alloy import command
    from alloy.testing import FunctionModel, json_reply

    model = FunctionModel(lambda request: json_reply(7, wrap=True), name="priced")

    @command(output=int, model=model, max_tokens=5)
    def seven(text: str) -> str:
        return f"Seven for {text}"
""")


def test_alloy_map_takes_a_cost_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sevens.py").write_text(COMMANDS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "rows.jsonl").write_text("".join(f'{{"text": "t{i}"}}\n' for i in range(6)))
    args = ["map", "sevens:seven", "--input", "rows.jsonl", "--output", "out.jsonl"]
    args += ["--checkpoint", "run.sqlite", "--concurrency", "1", "--no-progress"]
    assert main([*args, "--cost-budget", "0.015"]) == 1
    found = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["ok"] for r in found] == [True] * 3 + [False] * 3
    assert {r["error"]["type"] for r in found[3:]} == {"BudgetExceeded"}
    assert "cost budget of $0.015" in capsys.readouterr().err
    assert main(args) == 0  # resumed: the three rows left run now
    found = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["resumed"] for r in found] == [True] * 3 + [False] * 3
    assert main([*args, "--cost-budget", "-1"]) == 2
    assert "cost_budget" in capsys.readouterr().err
