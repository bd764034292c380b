"""Running an eval end to end with scripted models (issue 31 items 2, 5, 6): the report's
figures, failures by kind, cheap exact re-runs (cache, repeats, replay, checkpoint), the
dataset checks, the JSON round trip and the regression gate."""

from __future__ import annotations

import asyncio
import enum
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from alloy import command, errors
from alloy.errors import CacheMissError, ConfigurationError
from alloy.eval import Case, Dataset, RegressionError, Report, within
from alloy.eval._failures import kind_of
from alloy.testing import FunctionModel, assert_no_regression, refusal, truncated


class Kind(enum.Enum):
    BUG = "bug"
    IDEA = "idea"


@dataclass
class Ticket:
    kind: Kind
    title: str
    points: int


@command(output=Ticket)
def triage(text: str) -> str:
    return f"Triage this ticket: {text}"


def expected(i: int) -> dict[str, Any]:
    return {"kind": "bug" if i % 2 else "idea", "title": f"Ticket {i}", "points": i % 5}


def cases(n: int = 20) -> Dataset:
    return Dataset([Case({"text": f"ticket {i}"}, expected(i), id=f"t{i}") for i in range(n)])


def number(request: Any) -> int:
    return int(str(request.messages[-1].parts[0].text).rsplit(" ", 1)[-1])


def answering(wrong: set[int] = frozenset(), name: str = "function:m") -> FunctionModel:  # type: ignore[assignment]
    """Answers every case right except those in ``wrong`` (its kind flipped)."""

    def reply(request: Any) -> str:
        i = number(request)
        answer = expected(i)
        if i in wrong:
            answer["kind"] = "idea" if answer["kind"] == "bug" else "bug"
        return json.dumps(answer)

    return FunctionModel(reply, name=name)


def test_a_report_has_figures_fields_failures_and_a_paired_comparison() -> None:
    good, bad = answering({3}), answering({1, 2, 3, 4, 5, 6})
    report = triage.eval(cases(), models={"good": good, "bad": bad})
    assert report.metrics["good"]["record_exact"].value == pytest.approx(19 / 20)
    assert report.metrics["bad"]["record_exact"].value == pytest.approx(14 / 20)
    assert report.fields["kind"]["bad"].kind == "enum"
    assert report.fields["kind"]["bad"]["accuracy"].value == pytest.approx(14 / 20)
    assert report.fields["title"]["bad"]["exact"].value == 1.0
    assert report.failures["good"]["parse"] == 0
    deltas = {d.target: d for d in report.compare("good", "bad")}
    assert deltas["record_exact"].delta == pytest.approx(-5 / 20)
    assert deltas["record_exact"].test == "mcnemar"
    assert deltas["kind/score"].p_holm >= deltas["kind/score"].p
    assert "good" in report.summary() and "bad" in report.summary()
    runs = [r for c in report.to_dict()["cases"] for r in c["runs"]["good"]]
    assert all(r["latency_s"] is not None and r["latency_s"] >= 0 for r in runs)
    assert report.metrics["good"]["latency_p90_s"].value is not None
    assert [c["target"] for c in report.to_dict()["comparisons"]][:2] == [
        "record_exact",
        "field_mean",
    ]


def test_failures_are_counted_by_kind_and_score_zero() -> None:
    def reply(request: Any) -> Any:
        i = number(request)
        if i == 0:
            return refusal()
        if i == 1:
            return truncated()
        if i == 2:
            return "not json at all"
        return json.dumps(expected(i))

    model = FunctionModel(reply, name="function:f")
    report = triage.with_options(retries=0, max_reasks=0).eval(cases(6), models={"m": model})
    failures = report.failures["m"]
    assert (failures["refusal"], failures["truncated"], failures["parse"]) == (1, 1, 1)
    assert report.metrics["m"]["record_exact"].value == pytest.approx(3 / 6)
    runs = {c["id"]: c["runs"]["m"][0] for c in report.to_dict()["cases"]}
    assert runs["t0"]["error"]["kind"] == "refusal" and runs["t0"]["scores"]["kind"] == 0.0


def test_a_rerun_with_the_cache_asks_nothing(tmp_path: Path) -> None:
    model = answering()
    cache = tmp_path / "evals.sqlite"
    first = triage.eval(cases(), models={"m": model}, cache=cache)
    assert len(model.requests) == 20
    again = triage.eval(cases(), models={"m": model}, cache=cache)
    assert len(model.requests) == 20  # 0 new requests
    assert again.metrics["m"]["record_exact"] == first.metrics["m"]["record_exact"]


def test_repeats_make_distinct_requests_each_cached_apart(tmp_path: Path) -> None:
    model = answering()
    hot = triage.with_options(temperature=0.7)
    report = hot.eval(cases(5), models={"m": model}, repeats=3, cache=tmp_path / "c.sqlite")
    assert len(model.requests) == 15  # 3 per case: the repeat index is in the cache key
    assert all(len(c["runs"]["m"]) == 3 for c in report.to_dict()["cases"])
    hot.eval(cases(5), models={"m": model}, repeats=3, cache=tmp_path / "c.sqlite")
    assert len(model.requests) == 15


def test_replay_with_a_changed_prompt_fails_naming_the_command(tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    triage.eval(cases(3), models={"m": answering()}, cache=cache)

    @command(output=Ticket)
    def triage_v2(text: str) -> str:
        return f"Triage this ticket, carefully: {text}"

    replaying = triage_v2.with_options(cache_mode="replay")
    with pytest.raises(CacheMissError, match=r"eval of \S*triage_v2"):
        replaying.eval(cases(3), models={"m": answering()}, cache=cache)
    # the unchanged command replays from the cache with no model behind it
    silent = answering()
    triage.with_options(cache_mode="replay").eval(cases(3), models={"m": silent}, cache=cache)
    assert silent.requests == []


class Killed(BaseException):
    """Stands for the process being stopped."""


def test_an_eval_stopped_halfway_resumes_from_its_checkpoint_asking_no_case_twice(
    tmp_path: Path,
) -> None:
    asked: list[int] = []
    kill_at = [10]

    def reply(request: Any) -> str:
        i = number(request)
        if len(asked) == kill_at[0]:
            raise Killed()
        asked.append(i)
        return json.dumps(expected(i))

    model = FunctionModel(reply, name="function:k")
    with pytest.raises(Killed):
        triage.eval(cases(), models={"m": model}, checkpoint=tmp_path / "ck", concurrency=1)
    assert len(asked) == 10
    done = list(asked)
    asked.clear()
    kill_at[0] = -1
    report = triage.eval(cases(), models={"m": model}, checkpoint=tmp_path / "ck", concurrency=1)
    assert sorted(asked) == sorted(set(range(20)) - set(done))  # no case asked twice
    assert report.metrics["m"]["record_exact"].value == 1.0


def test_dataset_lines_that_do_not_fit_are_reported_with_their_line_and_not_scored(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cases.jsonl"
    lines = [
        {"id": "a", "input": {"text": "ticket 1"}, "expected": expected(1)},
        "not json",
        {"id": "b", "input": {"txt": "ticket 2"}, "expected": expected(2)},
        {
            "id": "c",
            "input": "ticket 3",
            "expected": {"kind": "feature", "title": "x", "points": 1},
        },
        {"id": "d", "input": "ticket 4", "expected": expected(4), "tags": ["short"]},
        {"id": "e", "expected": expected(5)},
    ]
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    report = triage.eval(Dataset.load(path), models={"m": answering()})
    skipped = {s["line"]: s for s in report.skipped}
    assert sorted(skipped) == [2, 3, 4, 6]
    assert "not JSON" in skipped[2]["reason"]
    assert skipped[3]["reason"].startswith("input:") and "txt" in skipped[3]["reason"]
    assert skipped[4]["reason"].startswith("expected: kind")
    assert "'input'" in skipped[6]["reason"]
    assert [c["id"] for c in report.to_dict()["cases"]] == ["a", "d"]


def test_the_json_report_round_trips_and_the_gate_reads_it(tmp_path: Path) -> None:
    base = triage.eval(cases(60), models={"m": answering()})
    base.save(tmp_path / "main.json")
    loaded = Report.load(tmp_path / "main.json")
    assert loaded.to_dict() == base.to_dict()
    assert loaded.compare("m", "m")[0].delta == 0
    same = triage.eval(cases(60), models={"m": answering()})
    assert same.check(tmp_path / "main.json", metric="record_exact", margin=0.02).status == "pass"
    worse = triage.eval(cases(60), models={"m": answering(set(range(0, 60, 3)))})
    with pytest.raises(RegressionError, match="regression: record_exact") as caught:
        worse.check(tmp_path / "main.json", metric="record_exact", margin=0.02)
    assert caught.value.result.exit_code == 1
    slightly = triage.eval(cases(60), models={"m": answering({0, 7})})
    result = slightly.check(tmp_path / "main.json", metric="record_exact", margin=0.02)
    assert result.status == "inconclusive" and result.exit_code == 3
    assert_no_regression(same, baseline=tmp_path / "main.json", margin=0.02)
    with pytest.raises(AssertionError, match="regression"):
        assert_no_regression(worse, baseline=tmp_path / "main.json", margin=0.02)
    with pytest.raises(AssertionError, match="inconclusive"):
        assert_no_regression(slightly, baseline=tmp_path / "main.json", margin=0.02)


def test_a_seed_makes_every_bound_the_same_bit_for_bit() -> None:
    first = triage.eval(cases(), models={"m": answering({1, 4})}, seed=3).to_dict()
    again = triage.eval(cases(), models={"m": answering({1, 4})}, seed=3).to_dict()
    assert first["metrics"]["m"]["record_exact"] == again["metrics"]["m"]["record_exact"]
    assert first["fields"] == again["fields"]


def test_aeval_gives_the_same_report() -> None:
    sync = triage.eval(cases(8), models={"m": answering({2})})
    run = asyncio.run(triage.aeval(cases(8), models={"m": answering({2})}))
    assert run.to_dict()["fields"] == sync.to_dict()["fields"]


def test_bad_arguments_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="repeats"):
        triage.eval(cases(2), models={"m": answering()}, repeats=0)
    with pytest.raises(ConfigurationError, match="mode"):
        triage.eval(cases(2), models={"m": answering()}, mode="auto")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="no field"):
        triage.eval(cases(2), models={"m": answering()}, scorers={"nope": within(1)})
    with pytest.raises(ConfigurationError, match="more than once"):
        triage.eval(cases(2), models=[answering(), answering()])
    with pytest.raises(ConfigurationError, match="no case fits"):
        triage.eval(Dataset([Case({"nope": 1}, expected(1))]), models={"m": answering()})


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (errors.ParseError("x"), "parse"),
        (errors.RefusalError("x"), "refusal"),
        (errors.TruncatedOutputError("x"), "truncated"),
        (errors.SchemaRejectedError("x"), "schema_rejected"),
        (errors.ToolLoopLimitExceeded("x"), "tool_limit"),
        (errors.RateLimitError("x"), "rate_limit"),
        (errors.ServerError("x"), "other"),
    ],
)
def test_each_error_has_its_failure_kind(error: BaseException, kind: str) -> None:
    assert kind_of(error) == kind
