"""``alloy map``: a command over a JSONL or CSV file from the shell, bad lines reported with
their line numbers, and a run that survives being killed at any point."""

from __future__ import annotations

import io
import json
import os
import random
import signal
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
    class Ticket:
        category: str
        urgent: bool

    @command(output=Ticket)
    def classify(text: str, priority: int = 1) -> str:
        return f"Classify (priority {priority}): {text}"
""")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tickets.py").write_text(COMMANDS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("ALLOY_MODEL", "offline")
    return tmp_path


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_jsonl_rows_in_records_out_and_bad_lines_named(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "rows.jsonl").write_text(
        '{"text": "printer on fire"}\n'
        '["screen flickers", 3]\n'
        "not json\n"
        '{"text": "x", "prio": 2}\n'
        '"just text"\n'
        "\n"
        '{"text": "y", "priority": "high"}\n'
    )
    status = main(["map", "tickets:classify", "--input", "rows.jsonl", "--output", "out.jsonl"])
    assert status == 1  # some rows failed
    found = records(workdir / "out.jsonl")
    assert [r["index"] for r in found] == [0, 1, 2, 3, 4, 5]
    assert [r["line"] for r in found] == [1, 2, 3, 4, 5, 7]
    assert [r["ok"] for r in found] == [True, True, False, False, True, False]
    assert set(found[0]["value"]) == {"category", "urgent"}  # type: ignore[arg-type]
    err = capsys.readouterr().err
    assert "row 2: RowInputError: line 3: not JSON" in err
    assert "line 4: no parameter named 'prio' (the parameters are priority, text)" in err
    assert "line 7: priority: Input should be a valid integer" in err
    assert "6 rows: 3 ok, 3 failed" in err
    assert "Traceback" not in err


def test_csv_cells_are_converted_to_the_parameter_types(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "rows.csv").write_text("text,priority\nprinter on fire,2\nscreen,\nbad,abc\n")
    assert main(["map", "tickets:classify", "--input", "rows.csv", "--output", "out.jsonl"]) == 1
    found = records(workdir / "out.jsonl")
    assert [r["ok"] for r in found] == [True, True, False]
    assert [r["line"] for r in found] == [2, 3, 4]
    assert "line 4: priority: Input should be a valid integer" in capsys.readouterr().err


def test_every_row_ok_exits_zero_and_resumes_from_the_checkpoint(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "rows.jsonl").write_text("".join(f'{{"text": "t{i}"}}\n' for i in range(12)))
    args = [
        "map",
        "tickets:classify",
        "--input",
        "rows.jsonl",
        "--output",
        "out.jsonl",
        "--checkpoint",
        "run.sqlite",
    ]
    assert main(args) == 0
    first = records(workdir / "out.jsonl")
    assert main(args) == 0
    again = records(workdir / "out.jsonl")
    assert [r["value"] for r in again] == [r["value"] for r in first]
    assert all(r["resumed"] for r in again)
    assert "12 rows: 12 ok, 0 failed (12 from the checkpoint)" in capsys.readouterr().err


CHECKED = textwrap.dedent("""
    import os
    from pydantic import BaseModel, field_validator
    from alloy import command

    class Ticket(BaseModel):
        category: str
        urgent: bool

        @field_validator("category")
        @classmethod
        def short(cls, value: str) -> str:
            most = int(os.environ.get("MOST_CHARS", "1000"))
            if len(value) > most:
                raise ValueError(f"at most {most} characters")
            return value

    @command(output=Ticket, max_reasks=0)
    def classify(text: str) -> str:
        return f"Classify: {text}"
""")


def test_stored_rows_that_no_longer_validate_run_again_and_are_counted(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "checked.py").write_text(CHECKED)
    (workdir / "rows.jsonl").write_text("".join(f'{{"text": "t{i}"}}\n' for i in range(8)))
    args = ["map", "checked:classify", "--input", "rows.jsonl", "--output", "out.jsonl"]
    args += ["--checkpoint", "run.sqlite"]
    assert main(args) == 0
    long = [r for r in records(workdir / "out.jsonl") if len(r["value"]["category"]) > 5]  # type: ignore[index]
    assert 0 < len(long) < 8
    capsys.readouterr()
    monkeypatch.setenv("MOST_CHARS", "5")  # the check is tightened; the schema stays the same
    main(args)
    again = records(workdir / "out.jsonl")
    assert sum(bool(r["resumed"]) for r in again) == 8 - len(long)
    err = capsys.readouterr().err
    assert (
        f"({8 - len(long)} from the checkpoint; {len(long)} stored rows no longer valid, run again)"
        in err
    )
    assert "Traceback" not in err


def old_output(workdir: Path) -> str:
    """An output of 20 records from an earlier run, as a user would have it."""
    text = "".join(
        json.dumps({"index": i, "ok": True, "value": f"old {i}"}) + "\n" for i in range(20)
    )
    (workdir / "out.jsonl").write_text(text)
    return text


def partials(workdir: Path) -> list[Path]:
    return sorted(workdir.glob("out.jsonl.*.partial"))


def test_an_existing_output_survives_a_mistake_found_as_the_run_starts(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = old_output(workdir)
    (workdir / "rows.jsonl").write_text('{"text": "a"}\n{"text": "b"}\n')
    run = ["map", "tickets:classify", "--input", "rows.jsonl", "--output", "out.jsonl"]
    assert main([*run, "--model", "nosuch:model"]) == 2
    assert "Unknown provider 'nosuch'" in capsys.readouterr().err
    assert main([*run, "--concurrency", "0"]) == 2
    assert main([*run, "--input", "missing.jsonl"]) == 2
    assert (workdir / "out.jsonl").read_text() == before
    assert partials(workdir) == []
    assert main([*run[:-1], "no/such/folder/out.jsonl"]) == 2
    assert "cannot write 'no/such/folder/out.jsonl'" in capsys.readouterr().err


def test_a_finished_run_replaces_the_output_whole(workdir: Path) -> None:
    old_output(workdir)
    (workdir / "out.jsonl").chmod(0o640)
    (workdir / "rows.jsonl").write_text('{"text": "a"}\n{"text": "b"}\n{"text": "c"}\n')
    assert main(["map", "tickets:classify", "--input", "rows.jsonl", "--output", "out.jsonl"]) == 0
    found = records(workdir / "out.jsonl")
    assert [r["index"] for r in found] == [0, 1, 2] and all(r["ok"] for r in found)
    assert (workdir / "out.jsonl").stat().st_mode & 0o777 == 0o640
    assert partials(workdir) == []


STOPS = textwrap.dedent("""
    from alloy import command

    @command(output=int)
    def count(n: int) -> str | None:
        return None if n == 5 else f"Count {n}"  # None: a ConfigurationError stops the run
""")


def test_a_run_that_stops_midway_leaves_the_output_and_keeps_its_records(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = old_output(workdir)
    (workdir / "stops.py").write_text(STOPS)
    (workdir / "rows.jsonl").write_text("".join(f"{n}\n" for n in range(10)))
    run = ["map", "stops:count", "--input", "rows.jsonl", "--output", "out.jsonl"]
    assert main([*run, "--concurrency", "1"]) == 2
    assert (workdir / "out.jsonl").read_text() == before
    [kept] = partials(workdir)
    assert [r["index"] for r in records(kept)] == [0, 1, 2, 3, 4]
    err = capsys.readouterr().err
    assert f"out.jsonl is left as it was, and the 5 records written are in {kept}" in err


def test_lines_that_are_not_unicode_fail_alone(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "rows.jsonl").write_bytes(
        b'{"text": "first"}\n'
        b'{"text": "half a pair \\ud800"}\n'  # a JSON escape: valid UTF-8, not valid Unicode
        b'{"text": "caf\xe9 in Latin-1"}\n'  # not UTF-8
        b'{"text": "last"}\n'
    )
    run = ["map", "tickets:classify", "--input", "rows.jsonl", "--output", "out.jsonl"]
    assert main(run) == 1
    found = records(workdir / "out.jsonl")
    assert [(r["line"], r["ok"]) for r in found] == [(1, True), (2, False), (3, False), (4, True)]
    assert found[1]["error"]["type"] == "RowInputError"  # type: ignore[index]
    assert "not valid Unicode" in found[1]["error"]["message"]  # type: ignore[index]
    assert found[2]["error"]["message"] == "line 3: not UTF-8 text (it holds the byte 0xe9)"  # type: ignore[index]
    (workdir / "rows.csv").write_bytes(b"text\nfirst\ncaf\xe9\nlast\n")
    assert main([*run[:2], "--input", "rows.csv", "--output", "out.jsonl"]) == 1
    assert [r["ok"] for r in records(workdir / "out.jsonl")] == [True, False, True]
    assert "Traceback" not in capsys.readouterr().err


def test_standard_input_that_is_not_utf8_fails_line_by_line(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b'{"text": "first"}\n{"text": "\xff\xfe"}\n{"text": "last"}\n'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    run = ["map", "tickets:classify", "--input", "-", "--output", "out.jsonl"]
    assert main(run) == 1
    assert [r["ok"] for r in records(workdir / "out.jsonl")] == [True, False, True]


HALVES = textwrap.dedent("""
    from alloy import command
    from alloy.testing import FunctionModel

    @command(model=FunctionModel(lambda request: "half a pair: \\ud83d"))
    def talk(text: str) -> str:
        return f"Talk about {text}"
""")


def test_a_reply_that_is_not_unicode_is_written_and_checkpointed(workdir: Path) -> None:
    (workdir / "halves.py").write_text(HALVES)
    (workdir / "rows.jsonl").write_text('"a"\n"b"\n')
    run = ["map", "halves:talk", "--input", "rows.jsonl", "--output", "out.jsonl"]
    run += ["--checkpoint", "run.sqlite"]
    for resumed in (False, True):
        assert main(run) == 0
        found = records(workdir / "out.jsonl")
        assert [r["value"] for r in found] == ["half a pair: \ud83d"] * 2
        assert all(r["resumed"] is resumed for r in found)


def test_usage_mistakes_are_one_line(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["map", "tickets:classify", "--input", "missing.jsonl"]) == 2
    assert "cannot open 'missing.jsonl'" in capsys.readouterr().err
    (workdir / "rows.jsonl").write_text('{"text": "a"}\n')
    assert main(["map", "tickets:classify", "--input", "rows.jsonl", "--concurrency", "0"]) == 2
    assert "concurrency" in capsys.readouterr().err


def _start(workdir: Path, rows: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "alloy",
            "map",
            "tickets:classify",
            "--input",
            "rows.jsonl",
            "--output",
            "out.jsonl",
            "--checkpoint",
            "run.sqlite",
            "--concurrency",
            "4",
            "--model",
            "openai-chat:gpt-4o-mini",
            "--no-progress",
        ],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(workdir)},
    )


def _finished(workdir: Path) -> int:
    try:
        with sqlite3.connect(workdir / "run.sqlite", timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM rows").fetchone()[0])
    except sqlite3.OperationalError:
        return 0  # not made yet


def _wait_for_rows(workdir: Path, count: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while _finished(workdir) < count and process.poll() is None:
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.02)


def test_killed_at_random_points_then_resumed_loses_and_repeats_nothing(
    workdir: Path, emu: Emulator
) -> None:
    """SIGKILL three times mid-run, then run to the end: every row's record once, and no row
    asked for again once it was finished (only those in flight at a kill are asked twice). The
    output of an earlier run stays whole until the run that reaches its end replaces it."""
    rows, kills, concurrency = 60, 3, 4
    (workdir / "rows.jsonl").write_text("".join(f'{{"text": "ticket {i}"}}\n' for i in range(rows)))
    emu.rate_limit("openai", rpm=900)  # 15 a second: a run lasts a few seconds
    chance = random.Random(7)
    before = old_output(workdir)
    for kill in range(kills):
        process = _start(workdir, rows)
        _wait_for_rows(workdir, (kill + 1) * 8 + chance.randrange(6), process)
        process.kill()
        process.wait(timeout=10)
        assert (workdir / "out.jsonl").read_text() == before  # a killed run replaced nothing
    process = _start(workdir, rows)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    found = records(workdir / "out.jsonl")
    assert [r["index"] for r in found] == list(range(rows))
    assert all(r["ok"] for r in found)
    asked: dict[str, int] = {}
    for request in emu.requests_for("openai", api="openai.chat"):
        if not isinstance(request.body, dict) or "messages" not in request.body:
            continue  # cut off mid-send by a kill: it never reached the model
        prompt = request.body["messages"][-1]["content"]
        asked[prompt] = asked.get(prompt, 0) + 1
    assert len(asked) == rows
    assert sum(asked.values()) - rows <= kills * concurrency
    assert max(asked.values()) <= 1 + kills


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_ctrl_c_stops_cleanly_and_leaves_a_checkpoint_to_resume(
    workdir: Path, emu: Emulator
) -> None:
    (workdir / "rows.jsonl").write_text("".join(f'{{"text": "ticket {i}"}}\n' for i in range(40)))
    emu.rate_limit("openai", rpm=600)
    process = _start(workdir, 40)
    _wait_for_rows(workdir, 6, process)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=20)
    assert process.returncode == 130
    assert "Traceback" not in err
    kept = _finished(workdir)
    assert 6 <= kept < 40
    process = _start(workdir, 40)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert f"({kept} from the checkpoint)" in err
    assert [r["index"] for r in records(workdir / "out.jsonl")] == list(range(40))
