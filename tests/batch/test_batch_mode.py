"""``cmd.map(rows, mode="batch")`` through each provider's batch API, driven by the real SDKs
against the emulator: the same requests as online, each answer on its own row whatever order and
fate the results come back in, half the price, and jobs that survive the submitter."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from alloy import ConfigurationError, command, tool
from alloy.batch import Limits
from alloy.providers.gemini_batch import GeminiBatchAPI
from alloy.providers.openai_batch import OpenAIBatchAPI
from alloy.rows._checkpoint import Checkpoint
from alloy.testing.emulator import Emulator

MODELS = {
    "openai-chat": ("openai", "openai-chat:gpt-4o-mini"),
    "openai": ("openai", "openai:gpt-4o-mini"),
    "anthropic": ("anthropic", "anthropic:claude-sonnet-4-6"),
    "gemini": ("gemini", "gemini:gemini-2.5-flash"),
}


@dataclass
class City:
    name: str
    country: str


@dataclass
class Reading:
    n: int
    x: float


def capital_on(model: str) -> Any:
    @command(output=City, model=model)
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    return capital


def values(rows: list[Any]) -> list[Any]:
    return [row.value for row in rows]


def batch(cmd: Any, rows: Any, **options: Any) -> list[Any]:
    options.setdefault("poll_interval", 0)
    options.setdefault("progress", False)
    return list(cmd.map(rows, mode="batch", **options))


@pytest.mark.parametrize("provider", MODELS)
def test_each_row_gets_the_answer_its_online_call_gets(provider: str, emu: Emulator) -> None:
    wire, model = MODELS[provider]
    emu.vary_answers()
    countries = [f"country {i}" for i in range(12)]
    online = list(capital_on(model).map(countries, progress=False))
    sent_online = [r.body for r in emu.requests_for(wire) if r.api and "batches" not in r.api]
    found = batch(capital_on(model), countries)
    assert values(found) == values(online)
    assert len({v.name for v in values(found)}) > 1  # the answers differ row by row
    jobs = list(emu.batches.jobs.values())
    assert len(jobs) == 1 and len(jobs[0].requests) == 12
    batched = [body for _, body in jobs[0].requests]
    if provider == "gemini":  # the batch holds the request without the model, which is the job's
        sent_online = [{k: v for k, v in body.items() if k != "model"} for body in sent_online]
    assert sorted(map(repr, batched)) == sorted(map(repr, sent_online))


@pytest.mark.parametrize("provider", MODELS)
def test_shuffled_failed_and_expired_results_each_land_on_their_own_row(
    provider: str, emu: Emulator, fuzz_scale: int
) -> None:
    """Results come back out of order, a fifth failed and a fifth expired: every row still
    gets its own answer (the failed and expired ones asked online)."""
    _, model = MODELS[provider]
    emu.vary_answers()
    countries = [f"country {i}" for i in range(60 * fuzz_scale)]
    online = list(capital_on(model).map(countries, progress=False, concurrency=16))
    emu.batch_options(fail=0.2, expire=0.2, shuffle=True, seed=11)
    found = batch(capital_on(model), countries, concurrency=16)
    assert [row.index for row in found] == list(range(len(countries)))
    assert values(found) == values(online)


def test_unanswered_rows_can_go_in_a_follow_up_batch(emu: Emulator) -> None:
    emu.vary_answers().batch_options(fail=0.3, seed=5)
    _, model = MODELS["openai-chat"]
    found = batch(capital_on(model), [f"c{i}" for i in range(40)], batch_retry="batch")
    assert all(row.ok for row in found)
    first, second = sorted(emu.batches.jobs.values(), key=lambda job: job.created)
    missed = {custom_id for custom_id, kind, _ in first.results if kind != "ok"}
    assert {custom_id for custom_id, _ in second.requests} == missed  # what it did not answer
    still = sum(kind != "ok" for _, kind, _ in second.results)  # after the rounds: online
    assert len([r for r in emu.requests_for("openai") if r.api == "openai.chat"]) == still


def test_requests_are_split_at_the_providers_limits(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(OpenAIBatchAPI, "limits", Limits(requests=10, bytes=10_000_000))
    found = batch(capital_on("openai-chat:gpt-4o-mini"), [f"c{i}" for i in range(35)])
    assert len(found) == 35 and all(row.ok for row in found)
    assert sorted(len(job.requests) for job in emu.batches.jobs.values()) == [5, 10, 10, 10]
    monkeypatch.setattr(OpenAIBatchAPI, "limits", Limits(requests=1000, bytes=3_000))
    emu.reset()
    batch(capital_on("openai-chat:gpt-4o-mini"), [f"c{i}" for i in range(35)])
    assert len(emu.batches.jobs) > 1  # by bytes this time
    assert all(len(job.requests) < 35 for job in emu.batches.jobs.values())


def test_rows_with_the_same_key_share_one_request(emu: Emulator) -> None:
    found = batch(capital_on("anthropic:claude-sonnet-4-6"), ["France", "Peru", "France"])
    assert found[0].value == found[2].value
    assert len(next(iter(emu.batches.jobs.values())).requests) == 2
    assert found[2].usage.total_tokens == 0  # its one call is counted on the first row


def test_batched_tokens_cost_half(emu: Emulator) -> None:
    model = "openai-chat:gpt-4o-mini"
    online = list(capital_on(model).map(["France"], progress=False))
    found = batch(capital_on(model), ["France"])
    assert online[0].cost and found[0].cost == pytest.approx(online[0].cost / 2)
    assert found[0].usage == online[0].usage


def test_providers_without_a_batch_api_and_commands_with_tools(emu: Emulator) -> None:
    with pytest.raises(ConfigurationError, match="has no batch API"):
        batch(capital_on("ollama:llama3.2"), ["France"])

    @tool
    def look_up(country: str) -> str:
        return "Paris"

    @command(output=City, model="openai-chat:gpt-4o-mini", tools=[look_up])
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    with pytest.raises(ConfigurationError, match="has tools"):
        batch(capital, ["France"])
    # auto runs them online instead
    for cmd in (capital_on("ollama:llama3.2"), capital):
        found = list(cmd.map(["France"] * 3, mode="auto", batch_min_rows=2, progress=False))
        assert all(row.ok for row in found)
    assert not emu.batches.jobs


def test_auto_takes_the_batch_api_for_enough_rows(emu: Emulator) -> None:
    cmd = capital_on("gemini:gemini-2.5-flash")
    list(cmd.map(["a", "b"], mode="auto", batch_min_rows=3, progress=False))
    assert not emu.batches.jobs
    list(cmd.map(["a", "b", "c"], mode="auto", batch_min_rows=3, poll_interval=0, progress=False))
    assert len(emu.batches.jobs) == 1


def test_a_new_process_polls_the_jobs_of_the_one_that_stopped(
    emu: Emulator, tmp_path: Path
) -> None:
    """The submitter stops while its job runs; the next run finds the job in the checkpoint
    and polls it: no second submission, every row once."""
    emu.batch_options(seconds=3600)  # the job runs until the options change
    path = tmp_path / "run.sqlite"
    cmd = capital_on("anthropic:claude-sonnet-4-6")

    async def stopped_while_polling() -> None:
        rows = cmd.amap([f"c{i}" for i in range(20)], mode="batch", checkpoint=path,
                        poll_interval=0.01, progress=False).__aiter__()  # fmt: skip
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(rows.__anext__(), 1.0)

    asyncio.run(stopped_while_polling())
    assert len(emu.batches.jobs) == 1
    emu.batch_options(seconds=0)
    found = batch(cmd, [f"c{i}" for i in range(20)], checkpoint=path)
    assert [row.index for row in found] == list(range(20)) and all(row.ok for row in found)
    assert len(emu.batches.jobs) == 1
    again = batch(cmd, [f"c{i}" for i in range(20)], checkpoint=path)
    assert all(row.resumed for row in again) and len(emu.batches.jobs) == 1


@pytest.mark.parametrize("provider", MODELS)
def test_a_job_submitted_but_not_recorded_is_found_not_submitted_again(
    provider: str, emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process dies right after the provider accepted the job, before the checkpoint
    recorded its id: the next run finds the job by its tag."""
    _, model = MODELS[provider]
    path = tmp_path / "run.sqlite"

    class Died(BaseException):
        pass

    def dies(self: Checkpoint, tag: str, job: str) -> None:
        raise Died

    with monkeypatch.context() as patched:
        patched.setattr(Checkpoint, "submitted", dies)
        with pytest.raises(Died):
            batch(capital_on(model), [f"c{i}" for i in range(6)], checkpoint=path)
    assert len(emu.batches.jobs) == 1
    found = batch(capital_on(model), [f"c{i}" for i in range(6)], checkpoint=path)
    assert all(row.ok for row in found)
    assert len(emu.batches.jobs) == 1


@pytest.mark.fuzz
@pytest.mark.timeout(3600)
def test_many_rows_back_shuffled_failed_and_expired_each_on_its_own_input(
    emu: Emulator, fuzz_scale: int
) -> None:
    """2,000 rows in the suite, 100,000 under ``make fuzz``: two batch runs whose results come
    back in other orders, with other rows failed and expired, give every row the same answer,
    each row its own (answers differ per request), and a sample matches the online call."""
    rows = [f"station {i}" for i in range(2_000 * fuzz_scale)]

    @command(output=Reading, model="anthropic:claude-sonnet-4-6")
    def read(station: str) -> str:
        return f"What does {station} read?"

    cmd = read
    emu.vary_answers()
    runs = []
    for seed in (1, 2):
        emu.batch_options(fail=0.1, expire=0.1, shuffle=True, seed=seed)
        runs.append(values(batch(cmd, rows, concurrency=32)))
    assert runs[0] == runs[1]
    assert len({(value.n, value.x) for value in runs[0]}) > len(rows) // 2
    sample = random.Random(9).sample(range(len(rows)), 40)
    online = list(cmd.map([rows[i] for i in sample], progress=False))
    assert [runs[0][i] for i in sample] == values(online)


def test_gemini_batches_above_the_inline_limit_go_in_a_file(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over 20 MB of requests go as a JSONL file, each line the GenerateContentRequest the SDK
    sends online, and the answers come back as a file too."""
    monkeypatch.setattr(GeminiBatchAPI, "inline_bytes", 1_000)
    emu.vary_answers()

    @command(output=City, model="gemini:gemini-2.5-flash", system="Be brief.", temperature=0.2)
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    countries = [f"country {i}" for i in range(15)]
    online = list(capital.map(countries, progress=False))
    sent_online = [r.body for r in emu.requests_for("gemini") if r.api and "batches" not in r.api]
    found = batch(capital, countries)
    assert values(found) == values(online)
    (job,) = emu.batches.jobs.values()
    assert job.input_file_id is not None and job.output_file_id is not None
    assert sorted(map(repr, (body for _, body in job.requests))) == sorted(map(repr, sent_online))
