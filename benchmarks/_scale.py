"""Iteration counts. ``FULL`` keeps a whole run near four minutes on two cores (plus the peers'
first install); ``TINY`` is for the smoke test, which checks the shape of results only."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scale:
    warm_calls: int = 400  # per side, per provider and driver
    warm_warmup: int = 40
    inproc_batch: int = 200  # calls per timed batch
    inproc_batches: int = 15  # batches per worker process
    inproc_rounds: int = 3  # worker processes per library, alternating
    conc_calls: int = 1000
    conc_limit: int = 100
    conc_reps: int = 6  # worker processes per side, alternating
    cold_runs: int = 11  # process launches per side, alternating
    big_bytes: int = 1_000_000
    big_calls: int = 80  # per side, interleaved
    profile_calls: int = 2000
    stream_bytes: int = 193 * 1024  # the answer stream_partial reads in 4-byte chunks
    stream_runs: int = 5  # per size, interleaved
    stream_baseline_cap: float = 8.0  # CPU seconds each re-parsing baseline may take
    rows: int = 10_000  # per side of the paced run over rows
    rows_rpm: float = 12_000  # the emulator's limit: binding, below what the client can send
    rows_concurrency: int = 32
    rows_memory: int = 100_000  # rows of the larger memory run (the smaller is a tenth)
    batch_rows: int = 10_000  # rows through the batch API and online
    ray_rows: int = 10_000  # rows each way: Ray Data with two actors, and one process
    ray_batch: int = 500
    ray_concurrency: int = 16  # calls at once in each actor (twice that in one process)
    ray_paced_rows: int = 3_000  # rows through two actors sharing a budget
    ray_rpm: float = 6_000  # the emulator's limit for them
    serve_calls: int = 300  # sequential requests per side, interleaved (latency)
    serve_load: int = 2000  # requests per side of the throughput run
    serve_concurrency: int = 32  # requests in flight at once in the throughput run
    eval_cases: int = 1000  # cases of the eval report page (3 models, 10 fields)
    eval_calls: int = 20  # page writes per side, interleaved
    mcp_calls: int = 1000  # MCP tool calls per side and row, interleaved
    mcp_warmup: int = 50

    def describe(self) -> str:
        return ", ".join(f"{name}={value}" for name, value in self.__dict__.items())


FULL = Scale()
TINY = Scale(
    warm_calls=5,
    warm_warmup=1,
    inproc_batch=5,
    inproc_batches=3,
    inproc_rounds=1,
    conc_calls=20,
    conc_limit=5,
    conc_reps=1,
    cold_runs=1,
    big_bytes=20_000,
    big_calls=3,
    profile_calls=20,
    stream_bytes=8_000,
    stream_runs=1,
    stream_baseline_cap=0.5,
    rows=60,
    rows_rpm=6_000,
    rows_concurrency=8,
    rows_memory=2_000,
    batch_rows=40,
    ray_rows=40,
    ray_batch=10,
    ray_concurrency=4,
    ray_paced_rows=40,
    ray_rpm=6_000,
    serve_calls=5,
    serve_load=20,
    serve_concurrency=4,
    eval_cases=20,
    eval_calls=2,
    mcp_calls=5,
    mcp_warmup=1,
)
