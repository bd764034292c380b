"""Run one provider's calls in this fresh process and print what they left behind, as JSON.

``test_resources`` runs this as a subprocess so that its counts of open files, live objects
and resident memory measure these calls alone, not what earlier tests in the session left.
Usage: ``python resource_probe.py MODEL CALLS WARM_UP``.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
from typing import Any

from alloy import command
from alloy.testing import loopback_only
from alloy.testing.emulator import Emulator


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def live_objects() -> int:
    """Objects the garbage collector tracks (the probe runs without coverage.py, which keeps a
    tracer and its bound methods for every thread it ever saw: each ``asyncio.run`` resolves
    the host on its loop's short-lived executor thread)."""
    return len(gc.get_objects())


def measure(emu: Emulator) -> dict[str, float]:
    emu.reset()  # the emulator's own request log grows with every call
    gc.collect()
    return {
        "files": open_files(),
        "connections": emu.open_connections(),
        "objects": live_objects(),
        "memory_mb": resident_mb(),
    }


def probe(model: str, calls: int, warm_up: int) -> dict[str, dict[str, float]]:
    # A deadline gives every request a timeout of its own: no client or cache may grow by it.
    @command(model=model, deadline=600)
    def answer(city: str) -> str:
        return f"Weather in {city}?"

    async def one(streamed: bool) -> Any:
        if streamed:
            return [chunk async for chunk in answer.astream("Paris")]
        return await answer.acall("Paris")

    def rounds(count: int) -> None:
        # Whole calls, then streamed ones (a command keeps the plan of its last call form);
        # then as many sync calls, which share one client.
        for i in range(count):
            asyncio.run(one(streamed=i >= count // 2))
        for _ in range(count):
            answer("Paris")

    with loopback_only(), Emulator() as emu:
        os.environ.update(emu.env())
        rounds(warm_up)
        before = measure(emu)
        rounds(calls)
        return {"before": before, "after": measure(emu)}


if __name__ == "__main__":
    model, calls, warm_up = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    print(json.dumps(probe(model, calls, warm_up)))
