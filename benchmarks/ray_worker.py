"""One side of the Ray suite, in its own process: prints JSON.

``python -m benchmarks.ray_worker local ROOT ROWS CONCURRENCY`` runs ROWS rows through
``cmd.map`` in this one process; ``... ray ROOT ROWS CONCURRENCY BATCH`` runs them through
``alloy.ray.CommandBatches`` on a local Ray cluster of two CPUs with two actors (CONCURRENCY
calls at once in each), and ``... ray-paced`` the same with the two actors sharing a
``RayBudget`` against an emulator that keeps to a rate limit. Each prints the seconds the rows
took and a digest of every row's record (value, ok, attempts, tokens), so the sides can be
checked to agree without shipping the rows.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from typing import Any

from ._subjects import CASES, PERSON, emulator_env


def _command() -> Any:
    return next(c for c in CASES if c.key == "openai-chat").command()


def _digest(records: list[tuple[Any, ...]]) -> str:
    return hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()


def local(rows: int, concurrency: int) -> dict[str, Any]:
    command = _command()
    started = time.perf_counter()
    records = list(command.map([f"Ada {i}" for i in range(rows)], concurrency=concurrency))
    seconds = time.perf_counter() - started
    digest = _digest(
        [
            (
                row.index,
                PERSON.dump_python(row.value, mode="json") if row.ok else None,
                row.ok,
                row.attempts,
                row.usage.input_tokens,
                row.usage.output_tokens,
            )
            for row in records
        ]
    )
    failed = sum(not row.ok for row in records)
    return {"seconds": seconds, "failed": failed, "digest": digest}


def on_ray(rows: int, concurrency: int, batch: int, shared: bool) -> dict[str, Any]:
    import ray
    from ray.data import ActorPoolStrategy, DataContext

    from alloy.ray import CommandBatches, RayBudget, typed

    started = time.perf_counter()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        configure_logging=False,
        log_to_driver=False,
    )
    context = DataContext.get_current()
    context.enable_progress_bars = False
    context.wait_for_min_actors_s = 300
    startup = time.perf_counter() - started
    command = _command()
    options: dict[str, Any] = {"concurrency": concurrency}
    if shared:
        options["budget"] = RayBudget()
    started = time.perf_counter()
    dataset = ray.data.from_items([{"id": i, "subject": f"Ada {i}"} for i in range(rows)])
    out = dataset.map_batches(
        CommandBatches,
        fn_constructor_args=(command,),
        fn_constructor_kwargs=options,
        compute=ActorPoolStrategy(size=2),
        batch_size=batch,
        batch_format="pyarrow",
    ).take_all()
    seconds = time.perf_counter() - started
    out.sort(key=lambda row: row["id"])
    digest = _digest(
        [
            (
                row["id"],
                PERSON.dump_python(typed(command, row), mode="json") if row["ok"] else None,
                row["ok"],
                row["attempts"],
                row["input_tokens"],
                row["output_tokens"],
            )
            for row in out
        ]
    )
    ray.shutdown()
    failed = sum(not row["ok"] for row in out)
    return {"seconds": seconds, "startup": startup, "failed": failed, "digest": digest}


if __name__ == "__main__":
    side, root, rows, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    os.environ.update(emulator_env(root))  # Ray's workers inherit it
    os.environ["ALLOY_NO_DOTENV"] = "1"
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    if side == "local":
        result = local(rows, concurrency)
    else:
        result = on_ray(rows, concurrency, int(sys.argv[5]), shared=side == "ray-paced")
    print(json.dumps(result))
