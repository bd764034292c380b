"""``alloy batch list|status|wait|cancel|results CHECKPOINT``: a batch run's jobs, from the shell.

The checkpoint of a batch run (``cmd.map(rows, mode="batch", checkpoint=...)`` or ``alloy map
--mode batch --checkpoint ...``) records each job it submitted, with the provider and model, so
these work from any process with the provider's key set:

- ``list``: the jobs the checkpoint knows, as it recorded them (no provider is asked);
- ``status``: each job's state and request counts as the provider reports them now, and the
  rows finished so far;
- ``wait``: poll until every job has ended;
- ``cancel``: cancel the jobs still running;
- ``results``: the rows as JSON Lines (the value as the command read and validated it). The
  answers of jobs that have ended are read first, by the run's command (imported as the run
  noted it), and recorded in the checkpoint; a row that needs a call (its batch did not answer
  it, or its answer is re-asked) is left to the run, run again, and counted on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ._shared import Verbs

if TYPE_CHECKING:
    from ..batch import JobStatus, Wire
    from ..rows._checkpoint import Checkpoint


def add_parser(verbs: Verbs) -> None:
    batch = verbs.add_parser(
        "batch",
        help="the batch jobs of a run: list, status, wait, cancel, results",
        description="The provider batch jobs a batch run (alloy map --mode batch, or "
        "cmd.map(..., mode='batch')) recorded in its checkpoint: the jobs it knows, their "
        "state now, waiting for them to end, cancelling them, or the rows as JSON Lines "
        "(the answers of ended jobs read in first).",
    )
    batch.add_argument("action", choices=("list", "status", "wait", "cancel", "results"))
    batch.add_argument("checkpoint", help="the run's checkpoint (SQLite file)")
    batch.add_argument("--json", action="store_true", help="list and status as JSON")
    batch.add_argument("--output", default="-", help="results: where to write (default stdout)")
    batch.add_argument(
        "--poll-interval",
        type=float,
        default=30.0,
        dest="poll_interval",
        help="wait: seconds between looks (default 30)",
    )
    batch.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ..rows._checkpoint import Checkpoint

    action, path, as_json, output = args.action, args.checkpoint, args.json, args.output
    if not Path(path).is_file():
        raise ConfigurationError(f"no checkpoint at {path!r}")
    with Checkpoint(path) as checkpoint:
        if action == "results":
            try:
                left = _read_ended(path, checkpoint)
            except ConfigurationError:  # the rows finished so far, then why not the rest
                _results(checkpoint, output)
                raise
            _results(checkpoint, output)
            if left:
                total = left.total()
                reasons = "; ".join(f"{why}: {count}" for why, count in left.most_common())
                print(
                    f"alloy: {total} row{'' if total == 1 else 's'} not finished ({reasons}); "
                    f"run the map again with --checkpoint {path} to finish them",
                    file=sys.stderr,
                )
            return 0
        if action == "list":
            return _list(path, checkpoint, as_json)
        wires: dict[str, Wire] = {}
        jobs = []
        for tag, _, model, job, _, requests, intended in checkpoint.batches():
            if job is None:  # the run died before recording it: the provider may have it
                job = _wire(model, wires).find(tag, requests, intended - 5)
            jobs.append((tag, model, job))
        if not jobs:
            print(f"{path}: no batch jobs (the run was not a batch run, or submitted nothing)")
            return 0
        if action == "cancel":
            return _cancel(jobs, wires)
        if action == "wait":
            return _wait(jobs, wires, args.poll_interval)
        return _status(checkpoint, jobs, wires, as_json)


def _list(path: str, checkpoint: Checkpoint, as_json: bool) -> int:
    """The jobs the checkpoint knows, as it recorded them: no provider is asked."""
    jobs = [
        {
            "tag": tag,
            "provider": wire,
            "model": model,
            "job": job,
            "state": state,
            "requests": requests,
            "intended": datetime.fromtimestamp(intended, timezone.utc).isoformat(),
        }
        for tag, wire, model, job, state, requests, intended in checkpoint.batches()
    ]
    if as_json:
        print(json.dumps({"jobs": jobs}, indent=2))
        return 0
    if not jobs:
        print(f"{path}: no batch jobs (the run was not a batch run, or submitted nothing)")
    for shown in jobs:
        print(
            f"{shown['job'] or '(not submitted)'}  {shown['provider']}  {shown['model']}  "
            f"{shown['state']}  {shown['requests']} requests  {shown['intended']}"
        )
    return 0


def _read_ended(path: str, checkpoint: Checkpoint) -> Counter[str]:
    """Read the answers of the ended jobs into the checkpoint (see ``BatchRun.read_ended``);
    why rows were left, counted."""
    if not any(checkpoint.unfinished(tag) for tag, *_ in checkpoint.batches()):
        return Counter()
    notes = checkpoint.notes()
    target, model = notes.get("target"), notes.get("model")
    if not isinstance(target, str) or not isinstance(model, str):
        raise ConfigurationError(
            f"{path} does not say which command made it (an older alloy wrote it): run the "
            "map again with this checkpoint to read its batch answers"
        )
    from .._importing import load_command
    from ..batch._run import BatchRun
    from ..rows._run import Settings

    try:
        command = load_command(target)
    except Exception as exc:  # not found, or its module failed as it ran
        raise ConfigurationError(
            f"cannot load the run's command {target} to read its batch answers ({exc}); run "
            "alloy batch results where the run's module imports, or run the map again"
        ) from None
    options = {k: v for k, v in (notes.get("options") or {}).items() if v is not None}
    command = command.with_options(**{**options, "model": model})
    settings = Settings(checkpoint=path, progress=False, mode="batch")
    return asyncio.run(BatchRun(command.prepare(), [], settings).read_ended())


def _wire(model: str, wires: dict[str, Wire]) -> Wire:
    if model not in wires:
        from ..batch import wire_for
        from ..providers import get_model

        wires[model] = wire_for(get_model(model))
    return wires[model]


def _states(jobs: list[tuple[str, str, str | None]], wires: dict[str, Wire]) -> list[JobStatus]:
    from ..batch import JobStatus

    return [
        _wire(model, wires).status(job) if job else JobStatus("running", {}, "not submitted")
        for _, model, job in jobs
    ]


def _status(
    checkpoint: Checkpoint,
    jobs: list[tuple[str, str, str | None]],
    wires: dict[str, Wire],
    as_json: bool,
) -> int:
    ok, failed = checkpoint.counts()
    states = _states(jobs, wires)
    if as_json:
        shown = [
            {
                "tag": tag,
                "model": model,
                "job": job,
                "state": s.state,
                "provider_state": s.detail,
                "counts": dict(s.counts),
            }
            for (tag, model, job), s in zip(jobs, states, strict=True)
        ]
        print(json.dumps({"jobs": shown, "rows_ok": ok, "rows_failed": failed}, indent=2))
        return 0
    for (_, model, job), state in zip(jobs, states, strict=True):
        counts = ", ".join(f"{k} {v}" for k, v in state.counts.items())
        print(f"{job or '(not submitted)'}  {model}  {state.state} ({state.detail})  {counts}")
    print(f"rows finished: {ok} ok, {failed} failed")
    return 0


def _wait(jobs: list[tuple[str, str, str | None]], wires: dict[str, Wire], interval: float) -> int:
    while True:
        states = _states(jobs, wires)
        running = sum(state.state == "running" for state in states)
        print(f"alloy: {len(states) - running} of {len(states)} batch jobs ended", file=sys.stderr)
        if not running:
            return 0
        time.sleep(interval)


def _cancel(jobs: list[tuple[str, str, str | None]], wires: dict[str, Wire]) -> int:
    cancelled = 0
    for (_, model, job), state in zip(jobs, _states(jobs, wires), strict=True):
        if job and state.state == "running":
            _wire(model, wires).cancel(job)
            cancelled += 1
    print(f"cancelled {cancelled} of {len(jobs)} batch jobs")
    return 0


def _results(checkpoint: Checkpoint, output: str) -> None:
    target: Any = sys.stdout if output == "-" else open(output, "w", encoding="utf-8")  # noqa: SIM115
    try:
        for key, position, ok, value, error_type, error in checkpoint.finished():
            record: dict[str, Any] = {"index": position, "key": key, "ok": bool(ok)}
            if ok:
                record["value"] = json.loads(value) if value is not None else None
            else:
                record["error"] = {"type": error_type, "message": error}
            target.write(json.dumps(record, ensure_ascii=False) + "\n")
    finally:
        if target is not sys.stdout:
            target.close()
