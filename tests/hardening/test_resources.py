"""Calling ``asyncio.run(cmd.acall(...))`` over and over leaves open files and memory flat.

Async SDK clients belong to one event loop; alloy keeps one per loop and closes it when the
loop shuts down. Before that, every such call left a client, its connection pool and the loop
alive (one more open file and ~0.8 MB each, until "too many open files"). Measured after a
warm-up: open file descriptors (give or take the sync client's pooled connection), objects tracked by the garbage collector (exact, give
or take a few), and resident memory (allocator noise allowed, far below one leaked client per
call). ``make test`` runs 20 calls per provider, ``make fuzz`` 1,000: 20 are enough to show a
leak of the kind these tests exist for (a client or an event loop kept per call is hundreds of
objects, a file each and, for a client, ~0.8 MB: 16 MB over the 8 MB allowed). Each provider runs in a
fresh process (``resource_probe.py``: one subprocess for the module, which imports the SDKs
once and forks a child per provider), so the counts see these calls alone and not what earlier
tests in the session left behind, nor coverage.py's tracers (one set per thread).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import PROVIDERS

WARM_UP = 15
PROBE = Path(__file__).with_name("resource_probe.py")


#: The first test's setup probes every provider (the fixture below): tens of seconds on a busy
#: machine, more than the suite's 60 s a test. The probe's own timeout bounds it instead.
pytestmark = pytest.mark.timeout(1800)


def probed_providers(session: pytest.Session) -> list[str]:
    """The providers whose test below this session runs (all of them but for ``-k`` and such)."""
    return [
        item.callspec.params["provider"]
        for item in session.items
        if isinstance(item, pytest.Function)
        and item.originalname == "test_one_event_loop_per_call_leaks_nothing"
    ]


@pytest.fixture(scope="module")
def leftovers(request: pytest.FixtureRequest) -> dict[str, dict[str, Any]]:
    """What each selected provider's calls left, probed in one subprocess (a fresh child each)."""
    calls = 1000 if int(request.config.getoption("--fuzz-scale")) > 1 else 20
    # Not under coverage.py either: it keeps objects for every thread it sees.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ALLOY_", "COVERAGE_"))}
    env["ALLOY_NO_DOTENV"] = "1"
    models = [PROVIDERS[name][0] for name in probed_providers(request.session)]
    done = subprocess.run(
        [sys.executable, str(PROBE), str(calls), str(WARM_UP), *models],
        capture_output=True,
        text=True,
        env=env,
        timeout=240 if calls == 20 else 1700,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {"calls": calls, **json.loads(done.stdout.splitlines()[-1])}


@pytest.mark.fuzz
@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_one_event_loop_per_call_leaks_nothing(provider: str, leftovers: dict[str, Any]) -> None:
    calls, counts = leftovers["calls"], leftovers[PROVIDERS[provider][0]]
    assert "error" not in counts, counts.get("error", "")[-3000:]
    before, after = counts["before"], counts["after"]

    # The sync client keeps a pooled connection or two, open or not at the moment of measuring;
    # a leak was one more per call.
    files = after["files"] - before["files"]
    assert files <= 2, f"{files} more open files after {calls} calls"
    assert after["connections"] - before["connections"] <= 1
    objects = after["objects"] - before["objects"]
    assert objects <= 50, f"{objects} more live objects"
    grown = after["memory_mb"] - before["memory_mb"]
    assert grown <= max(8.0, 0.05 * calls), (
        f"resident memory grew {grown:.1f} MB over {calls} calls"
    )
