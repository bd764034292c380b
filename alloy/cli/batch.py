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
import json
import sys
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ._shared import Verbs

if TYPE_CHECKING:
    from ..batch import BatchAPI, JobStatus, RecordedRun

#: A job to ask the provider about: (tag, model, the provider's job id if known).
_Job = tuple[str, str, str | None]


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
    from .._importing import load_command
    from ..batch import RecordedRun

    with RecordedRun(args.checkpoint) as run:
        if args.action == "results":
            try:
                left = run.read_ended(load_command)
            except ConfigurationError:  # the rows finished so far, then why not the rest
                _results(run, args.output)
                raise
            _results(run, args.output)
            if left:
                total = left.total()
                reasons = "; ".join(f"{why}: {count}" for why, count in left.most_common())
                print(
                    f"alloy: {total} row{'' if total == 1 else 's'} not finished ({reasons}); "
                    f"run the map again with --checkpoint {run.path} to finish them",
                    file=sys.stderr,
                )
            return 0
        if args.action == "list":
            return _list(run, args.json)
        apis: dict[str, BatchAPI] = {}
        jobs: list[_Job] = []
        for recorded in run.jobs():
            job = recorded.job
            if job is None:  # the run died before recording it: the provider may have it
                job = _batch_api(recorded.model, apis).find(
                    recorded.tag, recorded.requests, recorded.intended - 5
                )
            jobs.append((recorded.tag, recorded.model, job))
        if not jobs:
            print(f"{run.path}: no batch jobs (the run was not a batch run, or submitted nothing)")
            return 0
        if args.action == "cancel":
            return _cancel(jobs, apis)
        if args.action == "wait":
            return _wait(jobs, apis, args.poll_interval)
        return _status(run, jobs, apis, args.json)


def _list(run: RecordedRun, as_json: bool) -> int:
    """The jobs the checkpoint knows, as it recorded them: no provider is asked."""
    jobs = [
        {
            "tag": job.tag,
            "provider": job.batch_api,
            "model": job.model,
            "job": job.job,
            "state": job.state,
            "requests": job.requests,
            "intended": datetime.fromtimestamp(job.intended, timezone.utc).isoformat(),
        }
        for job in run.jobs()
    ]
    if as_json:
        print(json.dumps({"jobs": jobs}, indent=2))
        return 0
    if not jobs:
        print(f"{run.path}: no batch jobs (the run was not a batch run, or submitted nothing)")
    for shown in jobs:
        print(
            f"{shown['job'] or '(not submitted)'}  {shown['provider']}  {shown['model']}  "
            f"{shown['state']}  {shown['requests']} requests  {shown['intended']}"
        )
    return 0


def _batch_api(model: str, apis: dict[str, BatchAPI]) -> BatchAPI:
    if model not in apis:
        from ..batch import batch_api_for
        from ..providers import get_model

        apis[model] = batch_api_for(get_model(model))
    return apis[model]


def _states(jobs: list[_Job], apis: dict[str, BatchAPI]) -> list[JobStatus]:
    from ..batch import JobStatus

    return [
        _batch_api(model, apis).status(job) if job else JobStatus("running", {}, "not submitted")
        for _, model, job in jobs
    ]


def _status(run: RecordedRun, jobs: list[_Job], apis: dict[str, BatchAPI], as_json: bool) -> int:
    ok, failed = run.counts()
    states = _states(jobs, apis)
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


def _wait(jobs: list[_Job], apis: dict[str, BatchAPI], interval: float) -> int:
    while True:
        states = _states(jobs, apis)
        running = sum(state.state == "running" for state in states)
        print(f"alloy: {len(states) - running} of {len(states)} batch jobs ended", file=sys.stderr)
        if not running:
            return 0
        time.sleep(interval)


def _cancel(jobs: list[_Job], apis: dict[str, BatchAPI]) -> int:
    cancelled = 0
    for (_, model, job), state in zip(jobs, _states(jobs, apis), strict=True):
        if job and state.state == "running":
            _batch_api(model, apis).cancel(job)
            cancelled += 1
    print(f"cancelled {cancelled} of {len(jobs)} batch jobs")
    return 0


def _results(run: RecordedRun, output: str) -> None:
    target: Any = sys.stdout if output == "-" else open(output, "w", encoding="utf-8")  # noqa: SIM115
    try:
        for record in run.records():
            target.write(json.dumps(record, ensure_ascii=False) + "\n")
    finally:
        if target is not sys.stdout:
            target.close()
