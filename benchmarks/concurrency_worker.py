"""One side of the concurrency suite, in its own process: prints JSON.

``python -m benchmarks.concurrency_worker alloy|raw ROOT CALLS LIMIT PROVIDER``. After a warm-up
burst that opens the connections, it times one burst of CALLS async calls with at most LIMIT in
flight, then reads peak RSS, then repeats the burst under tracemalloc for the peak of Python
allocations (that burst is not timed).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any

from ._subjects import CASES, emulator_env


async def burst(call: Callable[[str], Awaitable[Any]], calls: int, limit: int) -> tuple[float, int]:
    """Seconds for ``calls`` calls with at most ``limit`` in flight, and how many failed."""
    gate = asyncio.Semaphore(limit)

    async def one() -> Any:
        async with gate:
            return await call("Ada")

    start = time.perf_counter()
    outcomes = await asyncio.gather(*(one() for _ in range(calls)), return_exceptions=True)
    elapsed = time.perf_counter() - start
    return elapsed, sum(isinstance(o, BaseException) for o in outcomes)


def rss_mb() -> float:
    """This process's peak RSS so far, in MiB.

    Linux's VmHWM is reset by exec; ru_maxrss is not (a child starts with its parent's peak at
    fork time), so it is only the fallback.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def main(side: str, root: str, calls: int, limit: int, provider: str) -> dict[str, Any]:
    case = next(c for c in CASES if c.key == provider)
    os.environ.update(emulator_env(root))
    call = case.command().acall if side == "alloy" else case.raw_async()
    await burst(call, max(limit * 2, 10), limit)
    before = rss_mb()
    cpu = time.process_time()
    elapsed, failed = await burst(call, calls, limit)
    cpu = time.process_time() - cpu
    peak = rss_mb()
    tracemalloc.start()
    await burst(call, calls, limit)
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return {
        "seconds": elapsed,
        "throughput": calls / elapsed,
        "failed": failed,
        "cpu_us_per_call": cpu / calls * 1e6,
        "rss_before_mb": before,
        "rss_peak_mb": peak,
        "traced_peak_mb": traced,
    }


if __name__ == "__main__":
    side, root, calls, limit, provider = sys.argv[1:6]
    print(json.dumps(asyncio.run(main(side, root, int(calls), int(limit), provider))))
