"""Calling ``asyncio.run(cmd.acall(...))`` over and over leaves open files and memory flat.

Async SDK clients belong to one event loop; alloy keeps one per loop and closes it when the
loop shuts down. Before that, every such call left a client, its connection pool and the loop
alive (one more open file and ~0.8 MB each, until "too many open files"). Measured after a
warm-up: open file descriptors (give or take the sync client's pooled connection), objects tracked by the garbage collector (exact, give
or take a few), and resident memory (allocator noise allowed, far below one leaked client per
call). ``make test`` runs 40 calls per provider, ``make fuzz`` 1,000.
"""

from __future__ import annotations

import asyncio
import gc
import os
import types
from typing import Any

import pytest

from alloy import command
from alloy.testing.emulator import Emulator

from .conftest import PROVIDERS

WARM_UP = 15


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def live_objects() -> int:
    """Objects the garbage collector tracks, less coverage.py's own: under ``make test`` it keeps
    a tracer (and four bound methods) for every thread it ever saw, and each ``asyncio.run``
    resolves the host on its loop's short-lived executor thread."""
    return sum(
        1
        for o in gc.get_objects()
        if not (type(o) is types.MethodType and type(o.__self__).__module__.startswith("coverage"))
    )


def measure(emu: Emulator) -> tuple[int, int, int, float]:
    emu.reset()  # the emulator's own request log grows with every call
    gc.collect()
    return open_files(), emu.open_connections(), live_objects(), resident_mb()


@pytest.mark.fuzz
@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_one_event_loop_per_call_leaks_nothing(
    provider: str, emu: Emulator, fuzz_scale: int
) -> None:
    calls = 1000 if fuzz_scale > 1 else 40

    # A deadline gives every request a timeout of its own: no client or cache may grow by it.
    @command(model=PROVIDERS[provider][0], deadline=600)
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

    rounds(WARM_UP)
    files, connections, objects, memory = measure(emu)
    rounds(calls)
    files_after, connections_after, objects_after, memory_after = measure(emu)

    # The sync client keeps a pooled connection or two, open or not at the moment of measuring;
    # a leak was one more per call.
    assert files_after - files <= 2, f"{files_after - files} more open files after {calls} calls"
    assert connections_after - connections <= 1
    assert objects_after - objects <= 50, f"{objects_after - objects} more live objects"
    allowed = max(8.0, 0.05 * calls)
    assert memory_after - memory <= allowed, (
        f"resident memory grew {memory_after - memory:.1f} MB over {calls} calls"
    )
