"""``alloy map --mode batch`` and ``alloy batch status|wait|cancel|results``, and a batch run
killed at random points: every row lands once, and no job is submitted twice."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import random
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from alloy.batch import RecordedRun
from alloy.cli import load_command, main
from alloy.errors import ConfigurationError
from alloy.testing.emulator import Emulator, HttpError, ReplyMalformedJson

COMMANDS = textwrap.dedent("""
    from dataclasses import dataclass
    from alloy import command

    @dataclass
    class City:
        name: str
        country: str

    @command(output=City, model="anthropic:claude-sonnet-4-6")
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"
""")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "cities.py").write_text(COMMANDS)
    (tmp_path / "rows.jsonl").write_text("".join(f'{{"country": "c{i}"}}\n' for i in range(30)))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_batch_run_from_the_shell_and_its_jobs(
    workdir: Path, emu: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    emu.batch_options(seconds=3600)  # running until the options change
    args = [
        "map",
        "cities:capital",
        "--input",
        "rows.jsonl",
        "--output",
        "out.jsonl",
        "--checkpoint",
        "run.sqlite",
        "--mode",
        "batch",
        "--poll-interval",
        "0.01",
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "alloy", *args, "--no-progress"],
        cwd=workdir,
        env={**os.environ, "PYTHONPATH": str(workdir)},
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not emu.batches.jobs:  # killed once the provider has the job, recorded or not yet
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.02)
    process.kill()
    process.wait()
    assert main(["batch", "status", "run.sqlite"]) == 0
    shown = capsys.readouterr().out
    job = next(iter(emu.batches.jobs))
    assert job in shown and "running" in shown and "rows finished: 0 ok" in shown
    assert main(["batch", "cancel", "run.sqlite"]) == 0
    assert "cancelled 1 of 1 batch jobs" in capsys.readouterr().out
    assert main(["batch", "wait", "run.sqlite", "--poll-interval", "0.01"]) == 0
    assert main(args) == 0  # the cancelled job's rows run online
    found = records(workdir / "out.jsonl")
    assert [r["index"] for r in found] == list(range(30)) and all(r["ok"] for r in found)
    assert len(emu.batches.jobs) == 1
    assert main(["batch", "results", "run.sqlite", "--output", "results.jsonl"]) == 0
    results = records(workdir / "results.jsonl")
    assert len(results) == 30 and set(results[0]["value"]) == {"name", "country"}  # type: ignore[arg-type]
    assert main(["batch", "status", "run.sqlite", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["rows_ok"] == 30 and status["jobs"][0]["counts"]["canceled"] == 30


def test_a_checkpoint_that_is_not_there(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["batch", "status", "nothing.sqlite"]) == 2
    assert "no checkpoint at 'nothing.sqlite'" in capsys.readouterr().err


def _jobs_of(workdir: Path, recorded: bool = False) -> int:
    """The jobs the checkpoint knows (``recorded``: only those with the provider's job id)."""
    where = " WHERE job IS NOT NULL" if recorded else ""
    try:
        with sqlite3.connect(workdir / "run.sqlite", timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM batches" + where).fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_killed_at_random_points_a_batch_run_submits_each_job_once(
    workdir: Path, emu: Emulator
) -> None:
    """SIGKILL while submitting, while polling and while reading, then run to the end: one job
    per batch, every row once."""
    emu.batch_options(seconds=1.5, fail=0.2, seed=4)
    args = [
        sys.executable,
        "-m",
        "alloy",
        "map",
        "cities:capital",
        "--input",
        "rows.jsonl",
        "--output",
        "out.jsonl",
        "--checkpoint",
        "run.sqlite",
        "--mode",
        "batch",
        "--poll-interval",
        "0.05",
        "--no-progress",
    ]
    chance = random.Random(3)
    for _ in range(3):
        process = subprocess.Popen(
            args,
            cwd=workdir,
            env={**os.environ, "PYTHONPATH": str(workdir)},
            stderr=subprocess.DEVNULL,
        )
        time.sleep(chance.uniform(0.3, 2.5))
        process.kill()
        process.wait()
    done = subprocess.run(
        args,
        cwd=workdir,
        env={**os.environ, "PYTHONPATH": str(workdir)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = records(workdir / "out.jsonl")
    assert [r["index"] for r in found] == list(range(30)) and all(r["ok"] for r in found)
    submitted = [job for job in emu.batches.jobs.values()]
    assert len(submitted) == _jobs_of(workdir)  # each recorded job submitted once
    ids = [custom_id for job in submitted for custom_id, _ in job.requests]
    assert len(ids) == len(set(ids))  # no request in two jobs


MODELS = {
    "openai": "openai-chat:gpt-4o-mini",
    "anthropic": "anthropic:claude-sonnet-4-6",
    "gemini": "gemini:gemini-2.5-flash",
}


def _stopped_run(workdir: Path, provider: str, rows: int = 12) -> str:
    """A batch run on ``provider`` stopped while its job runs, from a module of its own in
    ``workdir`` (so ``alloy batch results`` can import its command); the checkpoint's path."""
    module = f"cities_{provider}_{workdir.name}".replace("-", "_")
    (workdir / f"{module}.py").write_text(
        COMMANDS.replace("anthropic:claude-sonnet-4-6", MODELS[provider])
    )
    capital = importlib.import_module(module).capital

    async def stopped() -> None:
        run = capital.amap([f"c{i}" for i in range(rows)], mode="batch",
                           checkpoint="run.sqlite", poll_interval=0.01, progress=False)  # fmt: skip
        polling = asyncio.ensure_future(run.__aiter__().__anext__())
        deadline = time.monotonic() + 60
        while _jobs_of(workdir, recorded=True) < 1:  # stopped once its job is recorded
            assert time.monotonic() < deadline and not polling.done()
            await asyncio.sleep(0.02)
        polling.cancel()
        with pytest.raises(asyncio.CancelledError):
            await polling

    asyncio.run(stopped())
    return "run.sqlite"


@pytest.mark.parametrize("provider", MODELS)
def test_wait_then_results_prints_every_row(
    provider: str, workdir: Path, emu: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    """``alloy batch wait`` then ``alloy batch results``, with no map run in between: every
    row, read from the ended job and recorded in the checkpoint."""
    emu.batch_options(seconds=3600)
    path = _stopped_run(workdir, provider)
    assert main(["batch", "results", path]) == 0
    out = capsys.readouterr()
    assert out.out == "" and "12 rows not finished (its job is running: 12)" in out.err
    emu.batch_options(seconds=0)
    assert main(["batch", "wait", path, "--poll-interval", "0.01"]) == 0
    capsys.readouterr()
    assert main(["batch", "results", path]) == 0
    out = capsys.readouterr()
    found = [json.loads(line) for line in out.out.splitlines()]
    assert [r["index"] for r in found] == list(range(12)) and all(r["ok"] for r in found)
    assert set(found[0]["value"]) == {"name", "country"} and out.err == ""
    online = [r for r in emu.requests_for() if r.api and "batch" not in r.api]
    assert not online  # read from the batch, not asked again
    assert main(["batch", "status", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows_ok"] == 12  # recorded in the checkpoint


def test_results_leaves_rows_that_need_a_call_to_the_run(
    workdir: Path, emu: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows the batch did not answer are not printed (they need a call online); stderr says
    so, and the map, run again, finishes them without submitting anything again."""
    emu.batch_options(seconds=3600)
    path = _stopped_run(workdir, "anthropic")
    emu.push("anthropic", *[HttpError(500)] * 3)  # the batch's first 3 requests fail
    emu.batch_options(seconds=0)
    assert main(["batch", "results", path]) == 0
    out = capsys.readouterr()
    done = [json.loads(line) for line in out.out.splitlines()]
    failed = 3
    assert len(done) == 12 - failed and all(record["ok"] for record in done)
    assert "3 rows not finished (its batch did not answer it: 3)" in out.err
    capital = importlib.import_module(f"cities_anthropic_{workdir.name}".replace("-", "_")).capital
    rows = list(capital.map([f"c{i}" for i in range(12)], mode="batch", checkpoint=path,
                            poll_interval=0, progress=False))  # fmt: skip
    assert all(row.ok for row in rows) and sum(row.resumed for row in rows) == 12 - failed
    assert len(emu.batches.jobs) == 1


def test_list_shows_the_jobs_the_checkpoint_knows(
    workdir: Path, emu: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    emu.batch_options(seconds=3600)
    path = _stopped_run(workdir, "openai")
    (job,) = emu.batches.jobs
    emu.reset()  # the provider is not asked: list shows what the checkpoint recorded
    assert main(["batch", "list", path]) == 0
    shown = capsys.readouterr().out
    assert job in shown and "openai-chat:gpt-4o-mini" in shown and "12 requests" in shown
    assert main(["batch", "list", path, "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)["jobs"]
    assert listed["job"] == job and listed["state"] == "submitted" and listed["requests"] == 12


def test_status_counts_the_requests_of_a_gemini_job(
    workdir: Path, emu: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    emu.batch_options(seconds=3600)
    path = _stopped_run(workdir, "gemini")
    assert main(["batch", "status", path, "--json"]) == 0
    (job,) = json.loads(capsys.readouterr().out)["jobs"]
    assert job["counts"] == {"total": 12, "succeeded": 0, "failed": 0, "pending": 12}
    emu.batch_options(seconds=0, fail=0.25, seed=2)
    assert main(["batch", "status", path]) == 0
    (ran,) = emu.batches.jobs.values()
    failed = sum(kind != "ok" for _, kind, _ in ran.results)
    assert (
        f"total 12, succeeded {12 - failed}, failed {failed}, pending 0" in capsys.readouterr().out
    )


def test_results_leaves_an_answer_that_is_re_asked_to_the_run(
    workdir: Path, emu: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    emu.batch_options(seconds=3600)
    emu.push("anthropic", ReplyMalformedJson())  # the batch's first answer fails validation
    path = _stopped_run(workdir, "anthropic")
    emu.batch_options(seconds=0)
    assert main(["batch", "results", path]) == 0
    out = capsys.readouterr()
    assert len(out.out.splitlines()) == 11
    assert "1 row not finished (its answer needs a call online: 1)" in out.err
    assert not [r for r in emu.requests_for("anthropic") if r.api and "batch" not in r.api]


def test_results_when_the_runs_command_cannot_be_imported(
    workdir: Path,
    emu: Emulator,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rows finished so far are printed, then a one-line error (exit 2) names the command
    and what to do."""
    emu.batch_options(seconds=3600)
    path = _stopped_run(workdir, "openai")
    module = f"cities_openai_{workdir.name}".replace("-", "_")
    (workdir / f"{module}.py").unlink()
    monkeypatch.delitem(sys.modules, module)
    emu.batch_options(seconds=0)
    assert main(["batch", "results", path]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert f"cannot load the run's command {module}:capital" in out.err
    assert len(out.err.strip().splitlines()) == 1


def test_a_recorded_run_is_read_through_the_public_api(workdir: Path, emu: Emulator) -> None:
    """``alloy.batch.RecordedRun``, what ``alloy batch`` stands on: the jobs as the checkpoint
    recorded them, and the answers of ended jobs read in by the run's command, which the caller
    loads from the target the run noted."""
    emu.batch_options(seconds=3600)
    path = _stopped_run(workdir, "openai")
    (job,) = emu.batches.jobs
    loaded: list[str] = []

    def load(target: str) -> Any:
        loaded.append(target)
        return load_command(target)

    with RecordedRun(path) as run:
        (recorded,) = run.jobs()
        assert (recorded.job, recorded.model, recorded.requests) == (job, MODELS["openai"], 12)
        assert run.read_ended(load) == Counter({"its job is running": 12})
        assert list(run.records()) == [] and run.counts() == (0, 0)
        emu.batch_options(seconds=0)
        assert run.read_ended(load) == Counter()
        found = list(run.records())
        assert [r["index"] for r in found] == list(range(12)) and run.counts() == (12, 0)
        assert set(found[0]["value"]) == {"name", "country"}
    assert loaded == [f"cities_openai_{workdir.name}:capital".replace("-", "_")] * 2
    with pytest.raises(ConfigurationError, match="no checkpoint at"):
        RecordedRun(workdir / "missing.sqlite")
