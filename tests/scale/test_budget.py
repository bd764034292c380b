"""Budgets: runs in many threads, processes or machines keep together within one provider's
limits, where each pacing alone would send its own full share and meet 429s."""

from __future__ import annotations

import multiprocessing
import pickle
import threading
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest

from alloy import ConfigurationError
from alloy.rows import Budget, LocalBudget, Pacer, RedisBudget
from alloy.rows._pacer import HEADROOM, Ticket
from alloy.testing.emulator import Emulator

from .commands import count

#: Retried often enough that a row meeting 429s after 429s still lands.
PATIENT = count.with_options(retries=8)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["local", "redis"])
def budget(request: pytest.FixtureRequest) -> Budget:
    """Each kind of budget, fresh (a Redis one under a name of its own)."""
    if request.param == "local":
        return LocalBudget()
    url = request.getfixturevalue("redis_url")
    return RedisBudget(url, name=request.node.name)


def test_a_budget_keeps_the_pacers_bucket_arithmetic(budget: Budget) -> None:
    """600 a minute: 8 at once (80% of a second's worth), then one every 1/(10 x 97%) s."""
    limits = (600.0, None)
    assert [budget.take("m", limits, 1.0, 1.0) for _ in range(8)] == [0.0] * 8
    assert budget.take("m", limits, 1.0, 1.0) == pytest.approx(1 / (10 * HEADROOM), rel=0.2)
    assert budget.take("other", limits, 1.0, 1.0) == 0.0  # each model its own allowance


def test_tokens_are_reserved_given_back_and_capped(budget: Budget) -> None:
    limits = (None, 6000.0)  # 100 tokens a second, 80 at once
    assert budget.take("m", limits, 70.0, 1.0) == 0.0
    assert budget.take("m", limits, 60.0, 1.0) > 0.4  # ~10 left: 50 short
    budget.give("m", 55.0)  # the call used 15 of its 70
    assert budget.take("m", limits, 60.0, 1.0) == 0.0
    budget.cap("m", (None, 0.0), 0.0)  # the provider says none are left
    assert budget.take("m", limits, 10.0, 1.0) > 0.05


def test_a_429_pauses_everyone_who_shares_it(budget: Budget) -> None:
    limits = (6000.0, None)
    assert budget.take("m", limits, 1.0, 1.0) == 0.0
    budget.pause("m", 2.0)
    assert budget.take("m", limits, 1.0, 1.0) == pytest.approx(2.0, abs=0.2)


def test_a_new_limit_makes_a_new_bucket(budget: Budget) -> None:
    assert [budget.take("m", (60.0, None), 1.0, 1.0) for _ in range(2)][1] > 0
    assert budget.take("m", (6000.0, None), 1.0, 1.0) == 0.0  # learned higher: full again


def test_two_pacers_sharing_a_budget_take_one_allowance() -> None:
    clock = Clock()
    shared = LocalBudget(clock)
    pacers = [Pacer(rpm=600, clock=clock, budget=shared, name="m") for _ in range(2)]
    let_through = 0
    for _ in range(10):
        let_through += sum(pacer._take(1) == 0 for pacer in pacers)
    assert let_through == 8  # as one pacer alone: 8 at once
    alone = [Pacer(rpm=600, clock=clock) for _ in range(2)]
    assert sum(pacer._take(1) == 0 for _ in range(10) for pacer in alone) == 16
    pacers[0].settle(Ticket(1.0), None)
    assert pacers[0].stats.calls + pacers[1].stats.calls == 8


def test_map_refuses_what_is_not_a_budget() -> None:
    with pytest.raises(ConfigurationError, match=r"map\(budget=...\) takes an alloy.rows.Budget"):
        count.map(["a"], budget="redis://localhost")  # type: ignore[arg-type]


def test_a_redis_budget_travels_by_its_url_and_a_local_one_stays(redis_url: str) -> None:
    budget = RedisBudget(redis_url, name="nightly", ttl=60)
    again = pickle.loads(pickle.dumps(budget))
    assert (again.url, again.name, again.ttl) == (redis_url, "nightly", 60)
    assert "redis://" not in repr(budget)  # the URL may carry a password
    with pytest.raises(TypeError, match=r"RedisBudget or alloy\.ray\.RayBudget"):
        pickle.dumps(LocalBudget())


#: Calls each run lets out at once. The emulator counts a request when its handler thread runs,
#: in this process, beside every client thread: on a busy machine, requests the budget let out
#: evenly can reach that count in a bunch, and more than the pacer's slack (a fifth of a
#: second's worth) in a bunch meet 429s that no budget could have avoided. Four at once per run
#: bound the bunch to eight, half the sixteen with eight, and still send each run's full share.
AT_ONCE = 4


def two_runs(rows: int, budgets: list[Any]) -> list[Any]:
    """Two runs of ``count`` at once, in threads, each with its budget; their summaries."""
    summaries: list[Any] = [None, None]

    def run(worker: int) -> None:
        words = [f"w{worker}-{n}" for n in range(rows)]
        handle = PATIENT.map(words, concurrency=AT_ONCE, progress=False, budget=budgets[worker])
        records = list(handle)
        assert len(records) == rows and all(row.ok for row in records)
        summaries[worker] = handle.summary

    threads = [threading.Thread(target=run, args=(worker,)) for worker in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return summaries


def test_runs_sharing_a_budget_keep_within_the_limit_together(emu: Emulator) -> None:
    """Two runs learning 1,200 requests a minute from OpenAI's headers, at once: each alone
    sends its own full share and meets many 429s; sharing a budget, they meet next to none.
    (Twenty a second is a pace each run keeps even on a busy machine, so that apart they
    certainly ask for more than the limit; the bucket still holds both runs' first calls.)"""
    limits = emu.rate_limit("openai", rpm=1200)
    two_runs(40, [None, None])
    apart = limits.refused
    emu.reset()
    limits = emu.rate_limit("openai", rpm=1200)
    shared = LocalBudget()
    summaries = two_runs(40, [shared, shared])
    assert limits.admitted == 80
    assert limits.refused <= 3 < 10 <= apart
    assert sum(s.rate_limited for s in summaries) == limits.refused


def count_words(words: list[str], budget: RedisBudget | None) -> int:
    """One worker's share of the rows: the 429s its run met (run in a process pool)."""
    handle = PATIENT.map(words, concurrency=8, progress=False, budget=budget)
    records = list(handle)
    assert all(row.ok for row in records) and handle.summary is not None
    return handle.summary.rate_limited


def test_processes_sharing_a_redis_budget_keep_within_the_limit(
    emu: Emulator, redis_url: str
) -> None:
    """What Dask, Spark or a process pool does: each worker runs its part of the rows."""
    limits = emu.rate_limit("openai", rpm=2400)
    budget = RedisBudget(redis_url, name="pool")
    parts = [[f"w{worker}-{n}" for n in range(40)] for worker in range(2)]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        met = list(pool.map(count_words, parts, [budget, budget]))
    assert limits.admitted == 80 and limits.refused <= 3
    assert sum(met) == limits.refused
