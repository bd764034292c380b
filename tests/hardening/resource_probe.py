"""Run each provider's calls in a fresh process and print what they left behind, as JSON.

``test_resources`` runs this as a subprocess so that its counts of open files, live objects
and resident memory measure these calls alone, not what earlier tests in the session left.
The parent imports alloy, the emulator and each provider's adapter and SDK once, and makes no
call; each provider then runs in a child forked from it (importing the SDKs again for every
provider was most of the test's time). Usage:
``python resource_probe.py CALLS WARM_UP MODEL [MODEL ...]``; prints ``{model: counts}``, where
the counts are ``{"before": ..., "after": ...}`` or ``{"error": traceback}``.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import json
import os
import sys
import traceback
from typing import Any

from alloy import command
from alloy.providers import providers
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


def import_once(model: str) -> None:
    """Import ``model``'s adapter and SDK in the parent, so no child pays for it."""
    provider = providers()[model.split(":", 1)[0]]
    importlib.import_module(provider.factory.split(":", 1)[0])
    if provider.sdk_module:
        importlib.import_module(provider.sdk_module)


def in_child(model: str, calls: int, warm_up: int) -> dict[str, Any]:
    """``probe(model, ...)`` in a process forked from this one, which has made no call."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: probe, write the counts (or what went wrong) and leave
        os.close(read_end)
        try:
            counts: dict[str, Any] = probe(model, calls, warm_up)
        except BaseException:
            counts = {"error": traceback.format_exc()}
        with os.fdopen(write_end, "w") as out:
            out.write(json.dumps(counts))
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as results:
        text = results.read()
    _, status = os.waitpid(pid, 0)
    return json.loads(text) if text else {"error": f"the child ended with status {status}"}


if __name__ == "__main__":
    calls, warm_up, models = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    for name in models:
        import_once(name)
    # What the parent imported is no child's doing: its collections leave it alone (and its
    # pages unshared), so each one walks the child's own objects, not the SDKs' hundreds of
    # thousands.
    gc.freeze()
    print(json.dumps({name: in_child(name, calls, warm_up) for name in models}))
