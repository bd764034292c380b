"""Commands inside Ray Data on a real local Ray cluster (two CPUs, started once for this module
and stopped after it, so its dozen processes leave the rest of the run alone),
against the emulator: the same records as ``cmd.map`` in one process, and a budget shared by the
actors that keeps them within a rate limit each of them alone would overshoot, and actors that
find a limit nobody told them by its 429s."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

ray = pytest.importorskip(
    "ray", reason="the Ray tests need Ray Data: pip install 'alloy[ray]' (make test installs it)"
)

from ray.data import ActorPoolStrategy, DataContext  # noqa: E402

from alloy.providers import env_prefixes  # noqa: E402
from alloy.ray import CommandBatches, RayBudget, typed  # noqa: E402
from alloy.testing.emulator import Emulator  # noqa: E402

from .commands import Ticket, classify_offline, count, count_on_gemini  # noqa: E402

#: A Ray cluster starts a dozen processes: on a machine busy with other work, starting it and
#: its actors takes longer than the suite's 60 s a test.
pytestmark = pytest.mark.timeout(300)

#: Words of many lengths, so each row's prompt (and usage) is its own.
WORDS = [f"{'x' * (4 * (n % 7))}word{n}" for n in range(40)]


@pytest.fixture(scope="module")
def ray_cluster(alloy_emulator_session: Emulator) -> Iterator[None]:
    """A local Ray cluster of two CPUs on 127.0.0.1, without dashboard or usage reports.

    Ray's workers inherit the environment Ray starts in: it is made the emulator's (every
    provider's SDK pointed at it) and nothing else of alloy's or the providers', nor
    coverage.py's (under ``make test`` it would trace each of Ray's dozen processes, slow on
    two cores, and one such run failed inside Ray with a SystemError). Usage reports stay off
    for the session (Ray Data's driver asks for them after every run)."""
    session = pytest.MonkeyPatch()
    session.setenv("RAY_USAGE_STATS_ENABLED", "0")
    with pytest.MonkeyPatch.context() as env:
        for name in list(os.environ):
            if name.startswith(("ALLOY_", "RAY_ADDRESS", "COVERAGE_", *env_prefixes())):
                env.delenv(name)
        for name, value in alloy_emulator_session.env().items():
            env.setenv(name, value)
        env.setenv("ALLOY_NO_DOTENV", "1")
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            configure_logging=False,
            log_to_driver=False,
        )
    context = DataContext.get_current()
    context.enable_progress_bars = False
    context.wait_for_min_actors_s = 120  # rows go out once both actors are up, together
    try:
        yield
    finally:
        ray.shutdown()
        session.undo()


def mapped(
    command: Any, rows: list[dict[str, Any]], batch_size: int = 8, **options: Any
) -> list[dict[str, Any]]:
    """``rows`` through ``command`` in two actors, back in input order."""
    dataset = ray.data.from_items(rows).map_batches(
        CommandBatches,
        fn_constructor_args=(command,),
        fn_constructor_kwargs=options,
        compute=ActorPoolStrategy(size=2),
        batch_size=batch_size,
        batch_format="pandas",
    )
    return sorted(dataset.take_all(), key=lambda row: row["id"])


def test_two_actors_give_the_records_of_one_process(ray_cluster: None, emu: Emulator) -> None:
    rows = [{"id": n, "word": word} for n, word in enumerate(WORDS)]
    remote = mapped(count, rows, concurrency=4)
    local = list(count.map(WORDS, progress=False))
    assert [row["word"] for row in remote] == WORDS  # every input column kept
    assert [
        (r["value"], r["ok"], r["error"], r["attempts"], r["input_tokens"], r["output_tokens"])
        for r in remote
    ] == [
        (r.value, True, None, r.attempts, r.usage.input_tokens, r.usage.output_tokens)
        for r in local
    ]
    assert len({row["input_tokens"] for row in remote}) > 3  # each row its own prompt
    assert len(emu.requests_for("openai")) == 2 * len(WORDS)


def test_object_outputs_come_back_a_column_per_field(ray_cluster: None) -> None:
    texts = [f"ticket {n}: {'urgent ' * (n % 3)}printer fire" for n in range(24)]
    remote = mapped(classify_offline, [{"id": n, "text": t} for n, t in enumerate(texts)])
    local = [row.value for row in classify_offline.map(texts, progress=False)]
    assert [typed(classify_offline, row) for row in remote] == local
    assert [(row["category"], row["urgent"]) for row in remote] == [
        (ticket.category, ticket.urgent) for ticket in local
    ]
    assert all(isinstance(ticket, Ticket) for ticket in local)
    assert len({ticket.category for ticket in local}) > 1


def test_a_shared_budget_keeps_two_actors_within_the_limit(
    ray_cluster: None, emu: Emulator
) -> None:
    """Both actors learn 300 requests a minute from OpenAI's headers, each with a batch of
    30 rows. Each pacing alone, they send twice that and meet 429s; sharing a RayBudget, they
    meet next to none. (At 600 a minute, on two cores busy with the rest of the suite, the
    actors apart once met no 429: a pace of ten a second, or batches of three seconds that
    overlap, is more than a busy machine keeps. At 300, apart met 26 and 27, beside two CPU
    spinners and beside them with the busiest files too; 8 are required.) Either
    way every row ends ``ok`` with the command's default retries (a failed row's error is
    shown): a 429'd call is sent again once its pause is over."""
    rows = [{"id": n, "word": f"w{n}"} for n in range(60)]
    limits = emu.rate_limit("openai", rpm=300, burst=2)
    apart = mapped(count, rows, batch_size=30, concurrency=16)
    refused_apart = limits.refused
    emu.reset()
    limits = emu.rate_limit("openai", rpm=300, burst=2)
    shared = mapped(count, rows, batch_size=30, concurrency=16, budget=RayBudget())
    failed = [(row["id"], row["error"]) for row in apart + shared if not row["ok"]]
    assert not failed
    assert limits.admitted == 60
    print(f"refused: {refused_apart} apart, {limits.refused} sharing a budget")
    assert limits.refused <= 3 < 8 <= refused_apart


@pytest.mark.fuzz
def test_two_actors_lose_no_rows_to_a_limit_nobody_states(
    ray_cluster: None, emu: Emulator, fuzz_scale: int
) -> None:
    """Gemini states no limits, and the actors get no ``rpm=`` and no budget: each sends 16
    calls at once into a limit that holds 10, finds the limit by its 429s (fewer calls at once
    after each) and sends each 429'd call again once its ``retry-after`` has passed. With the
    command's default retries every row ends ``ok`` (a failed row's error is shown). 40 rows
    in the suite, 400 under ``make fuzz``."""
    limits = emu.rate_limit("gemini", rpm=600)
    rows = [{"id": n, "word": f"w{n}"} for n in range(40 if fuzz_scale == 1 else 400)]
    done = mapped(count_on_gemini, rows, batch_size=len(rows) // 2, concurrency=16)
    failed = [(row["id"], row["error"]) for row in done if not row["ok"]]
    assert not failed
    assert limits.admitted == len(rows) and limits.refused > 0
    assert all(row["attempts"] == 1 for row in done)  # the 429s were the pacer's, not retries
