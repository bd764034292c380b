"""Running an eval: each model, each repeat, every case, through ``cmd.map`` / ``cmd.amap``
(so the cache, the checkpoint, pacing and the batch API all apply as to any run over rows),
then scoring the answers and building the :class:`~alloy.eval.Report`.

Each (model, repeat) is one run over the cases. Repeat ``r > 0`` asks the model through
:class:`~alloy.eval._repeat.Repeat`, which puts ``r`` in the response-cache key. With
``cache=`` the eval caches every request, repeatable or not (``cache_all``): an eval run again
unchanged asks nothing. With ``checkpoint=DIR`` each run keeps its finished cases in
``DIR/<model>.<repeat>.sqlite``, so a run stopped halfway resumes where it was.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import CacheMissError, ConfigurationError
from ._build import build_report
from ._dataset import Case, Dataset
from ._failures import describe
from ._fields import Fields
from ._plan import Plan
from ._report import Report
from ._timings import Timings


def plan(
    command: Any,
    cases: Dataset | Iterable[Case | Mapping[str, Any]],
    *,
    models: Any,
    repeats: int,
    mode: str,
    cache: str | os.PathLike[str] | None,
    checkpoint: str | os.PathLike[str] | None,
    scorers: Mapping[str, Any] | None,
    concurrency: int,
    seed: int,
    settings: Any,
) -> Plan:
    from pydantic import TypeAdapter

    from ..rows import Settings

    if not isinstance(cases, Dataset):
        cases = Dataset(cases)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ConfigurationError(
            f"eval(repeats=...) must be a whole number of at least 1, got {repeats!r}"
        )
    if mode not in ("online", "batch"):
        raise ConfigurationError(f"eval(mode=...) must be 'online' or 'batch', got {mode!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigurationError(f"eval(seed=...) must be a whole number, got {seed!r}")
    if settings is None:
        settings = Settings()
    elif not isinstance(settings, Settings):
        raise ConfigurationError(
            f"eval(settings=...) takes an alloy.rows.Settings, got {type(settings).__name__}"
        )
    settings = dataclasses.replace(
        settings, concurrency=concurrency, mode=mode, progress=settings.progress or False
    )
    fields = Fields(command.output_type.value_type, scorers)
    ready, skipped = cases.check(command)
    if not ready:
        reasons = "; ".join(
            f"line {s.line}: {s.reason}" if s.line else s.reason for s in skipped[:3]
        )
        raise ConfigurationError(
            f"eval of {command.name}: no case fits the command ({reasons or 'the dataset is empty'})"
        )
    chosen, ids = _models(command, models)
    if checkpoint is not None:
        Path(checkpoint).mkdir(parents=True, exist_ok=True)
    return Plan(
        command=command,
        ready=ready,
        skipped=skipped,
        models=chosen,
        model_ids=ids,
        repeats=repeats,
        mode=mode,  # type: ignore[arg-type]
        settings=settings,
        cache=None if cache is None else os.fspath(cache),
        checkpoint=None if checkpoint is None else Path(checkpoint),
        fields=fields,
        seed=seed,
        dump=TypeAdapter(command.output_type.value_type),
    )


def evaluate(command: Any, cases: Any, **options: Any) -> Report:
    """``command.eval(cases, ...)``: see :meth:`alloy.Command.eval`."""
    return run(plan(command, cases, **options))


async def aevaluate(command: Any, cases: Any, **options: Any) -> Report:
    """``await command.aeval(cases, ...)``."""
    return await arun(plan(command, cases, **options))


def _models(command: Any, models: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """Display name -> Model, and display name -> model id, from ``models=``."""
    if models is None:
        given: dict[str, Any] = {"": None}
    elif isinstance(models, Mapping):
        given = dict(models)
    elif isinstance(models, (list, tuple)):
        names = [m if isinstance(m, str) else getattr(m, "name", repr(m)) for m in models]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ConfigurationError(
                f"eval(models=...) names {', '.join(map(repr, twice))} more than once: give a "
                "dict of display name -> model to tell them apart"
            )
        given = dict(zip(names, models, strict=True))
    else:
        raise ConfigurationError(
            "eval(models=...) takes a list of model strings, or a dict of name -> model string or Model"
        )
    if not given:
        raise ConfigurationError("eval(models=...) names no model")
    chosen: dict[str, Any] = {}
    ids: dict[str, str] = {}
    for name, spec in given.items():
        prepared = (command if spec is None else command.with_options(model=spec)).prepare()
        model = prepared.model
        shown = name or model.name
        chosen[shown] = model
        ids[shown] = spec if isinstance(spec, str) else model.name
    return chosen, ids


def _rows(plan: Plan) -> list[Any]:
    from ..rows import Args

    return [Args(**case.kwargs) for case in plan.ready]


def run(plan: Plan) -> Report:
    """The eval, blocking."""
    started = time.time()
    rows = _rows(plan)
    for name, repeat, command, settings, timings in plan.runs():
        _keep(plan, name, repeat, list(command.map(rows, settings=settings)), timings)
    return build_report(plan, started)


async def arun(plan: Plan) -> Report:
    """The eval, on the running event loop."""
    started = time.time()
    rows = _rows(plan)
    for name, repeat, command, settings, timings in plan.runs():
        _keep(plan, name, repeat, await command.amap(rows, settings=settings), timings)
    return build_report(plan, started)


def _keep(plan: Plan, name: str, repeat: int, found: list[Any], timings: Timings) -> None:
    """One run's rows as records; a replay-mode miss stops the eval, naming the command."""
    records = plan.records.setdefault(name, [])
    kept = []
    for row in found:
        if not row.ok and isinstance(row.error, CacheMissError):
            raise CacheMissError(
                f"eval of {plan.command.name} ({name}, repeat {repeat}): {row.error} "
                "(the prompt, the model or its options changed since the cache was recorded: "
                "run the eval once with cache_mode='readwrite' or 'record' to store the new requests)",
                key=row.error.key,
                model=row.error.model,
            ) from None
        kept.append(_record(plan, repeat, row, timings.of(row)))
    records.append(kept)


def _record(plan: Plan, repeat: int, row: Any, seconds: float | None) -> dict[str, Any]:
    usage = row.usage
    record: dict[str, Any] = {
        "repeat": repeat,
        "output": None,
        "error": None,
        "reasked": row.attempts > 1,
        "cost": row.cost,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "latency_s": seconds,
    }
    if row.ok:
        record["output"] = plan.dump.dump_python(row.value, mode="json")
    else:
        record["error"] = describe(row.error)
    return record
