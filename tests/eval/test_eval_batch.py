"""``eval(mode="batch")`` through a provider's batch API, by the real SDK against the emulator
(issue 31 item 5): half the online run's cost, and the same values for the same replies."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from alloy import command
from alloy.eval import Case, Dataset
from alloy.rows import Settings
from alloy.testing.emulator import Emulator


@dataclass
class City:
    name: str
    country: str


@command(output=City, model="openai:gpt-4o-mini")
def capital(country: str) -> str:
    return f"What is the capital of {country}?"


def test_batch_mode_costs_half_and_gives_the_same_values(emu: Emulator) -> None:
    emu.vary_answers()
    cases = Dataset(
        [
            Case({"country": f"country {i}"}, {"name": "x", "country": "y"}, id=f"c{i}")
            for i in range(6)
        ]
    )
    quick = Settings(poll_interval=0)
    online = capital.eval(cases, settings=quick).to_dict()
    batch = capital.eval(cases, mode="batch", settings=quick).to_dict()
    assert len(emu.batches.jobs) == 1
    assert batch["mode"] == "batch"
    model = next(iter(online["models"]))
    outputs = [[r["output"] for r in c["runs"][model]] for c in online["cases"]]
    assert [[r["output"] for r in c["runs"][model]] for c in batch["cases"]] == outputs
    assert len({o[0]["name"] for o in outputs}) > 1  # the answers differ case by case
    assert batch["fields"] == online["fields"]
    cost = online["metrics"][model]["cost_usd"]["value"]
    assert cost and batch["metrics"][model]["cost_usd"]["value"] == pytest.approx(cost / 2)


def test_batch_mode_runs_each_repeat(emu: Emulator) -> None:
    cases = Dataset(
        [Case({"country": f"country {i}"}, {"name": "x", "country": "y"}) for i in range(4)]
    )
    hot = capital.with_options(temperature=0.5)
    report = hot.eval(cases, mode="batch", repeats=2, settings=Settings(poll_interval=0)).to_dict()
    model = next(iter(report["models"]))
    runs = [c["runs"][model] for c in report["cases"]]
    assert all([r["repeat"] for r in case] == [0, 1] for case in runs)
    assert all(r["output"] is not None for case in runs for r in case)
    assert sum(len(job.requests) for job in emu.batches.jobs.values()) == 8


def test_models_named_by_string_run_through_their_sdks_with_cost_and_tokens(emu: Emulator) -> None:
    cases = Dataset(
        [Case({"country": f"country {i}"}, {"name": "x", "country": "y"}) for i in range(3)]
    )
    models = ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"]
    report = capital.eval(cases, models=models)
    assert report.models == {m: m for m in models}
    for model in models:
        figures = report.metrics[model]
        assert figures["cost_usd"].value and figures["cost_usd"].value > 0
        assert figures["input_tokens"].value and figures["output_tokens"].value
        assert figures["latency_p50_s"].value is not None
    assert [d.target for d in report.comparisons][:1] == ["record_exact"]
