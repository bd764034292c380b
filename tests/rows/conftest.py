"""``run_map(cmd, rows, **options)``: a run over rows through ``map`` or ``amap``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ..conftest import Call


@pytest.fixture(params=["map", "amap"])
def run_map(request: pytest.FixtureRequest) -> Call:
    """The records of ``cmd.map(rows, ...)`` (blocking, on its worker thread) or of ``await
    cmd.amap(rows, ...)`` (on this test's event loop), with the run's summary as ``.summary``
    of the returned list."""

    def run(cmd: Any, rows: Any, **options: Any) -> Any:
        options.setdefault("progress", False)
        if request.param == "map":
            handle = cmd.map(rows, **options)
            records = Records(handle)
            records.summary = handle.summary
            return records

        async def collect() -> Records:
            handle = cmd.amap(rows, **options)
            found = Records(await handle)
            found.summary = handle.summary
            return found

        return asyncio.run(collect())

    return run


class Records(list[Any]):
    summary: Any = None
