"""``alloy map --mode batch`` and ``alloy batch status|wait|cancel|results``, and a batch run
killed at random points: every row lands once, and no job is submitted twice."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from alloy.cli import main
from alloy.testing.emulator import Emulator

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


def _jobs_of(workdir: Path) -> int:
    try:
        with sqlite3.connect(workdir / "run.sqlite", timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM batches").fetchone()[0])
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
