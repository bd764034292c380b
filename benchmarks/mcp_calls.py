"""Suite: what alloy's MCP layer adds to a call, against the bare SDK (``mcp`` 2.x).

Issue 32's target: at most 1 ms more per call at the median, in memory and over stdio, on each
side:

- **client**: ``alloy.mcp.acall(server, "length", ...)`` (the shared connection on its own
  loop, the tool lookup, the typed value) against ``mcp.Client.call_tool`` on a client opened
  by the caller, both calling one plain ``MCPServer`` tool;
- **server**: ``mcp.Client`` calling a command served by ``alloy.mcp.mcp_server`` against the
  same client calling the SDK's ``MCPServer`` whose tool calls the same command and returns its
  value. The command answers from the offline model, so both sides do the same work but the
  MCP layer.

Calls are interleaved, one in flight at a time. The bound is alloy's median at most the bare
SDK's plus 1 ms, written as a ratio bound for each row.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from ._measure import SuiteResult, Target, ainterleave, compare, median
from ._scale import Scale

ROOT = Path(__file__).resolve().parents[1]
SERVED = ROOT / "benchmarks" / "mcp_served.py"
#: What alloy's layer may add to a call's median, in seconds.
ALLOWANCE = 0.001


def _stdio(*args: str) -> Any:
    import mcp

    return mcp.StdioServerParameters(
        command=sys.executable,
        args=list(args),
        env={**os.environ, "ALLOY_MODEL": "offline"},
        cwd=str(ROOT),
    )


@asynccontextmanager
async def _client(server: Any) -> AsyncIterator[Any]:
    import mcp

    async with mcp.Client(server) as client:
        yield client


def _figure(name: str, a: list[float], b: list[float], baseline: str, note: str) -> Any:
    bound = (median(b) + ALLOWANCE) / median(b)
    return compare(
        "mcp",
        name,
        a,
        b,
        baseline_label=baseline,
        unit="ms",
        scale=1e3,
        target=Target("max", round(bound, 3)),
        note=f"{note}; bound = bare median + 1 ms",
    )


async def _client_side(where: Any, label: str, scale: Scale, result: SuiteResult) -> None:
    import alloy.mcp

    words = iter(range(10**9))
    try:
        async with _client(where if not isinstance(where, str) else _where_params(where)) as bare:

            async def ours() -> None:
                await alloy.mcp.acall(where, "length", {"word": f"w{next(words)}"}, output=int)

            async def theirs() -> None:
                await bare.call_tool("length", {"word": f"w{next(words)}"})

            a, b = await ainterleave(ours, theirs, n=scale.mcp_calls, warmup=scale.mcp_warmup)
    finally:
        alloy.mcp.close()
    result.figures.append(
        _figure(
            f"client, {label}: alloy.mcp.acall",
            a,
            b,
            "mcp.Client.call_tool",
            "one plain MCPServer tool",
        )
    )


def _where_params(where: str) -> Any:
    return _stdio(*where.removeprefix(f"stdio:{sys.executable} ").split())


async def _server_side(
    ours_at: Any, theirs_at: Any, label: str, scale: Scale, result: SuiteResult
) -> None:
    words = iter(range(10**9))
    async with _client(ours_at) as ours_client, _client(theirs_at) as theirs_client:

        async def ours() -> None:
            answer = await ours_client.call_tool("lookup", {"word": f"w{next(words)}"})
            assert not answer.is_error, answer

        async def theirs() -> None:
            answer = await theirs_client.call_tool("lookup", {"word": f"w{next(words)}"})
            assert not answer.is_error, answer

        a, b = await ainterleave(ours, theirs, n=scale.mcp_calls, warmup=scale.mcp_warmup)
    result.figures.append(
        _figure(
            f"server, {label}: a command as a tool",
            a,
            b,
            "MCPServer tool calling the command",
            "the command answers from the offline model",
        )
    )


async def _run(scale: Scale, result: SuiteResult, stdio: bool) -> None:
    from alloy.mcp import mcp_server

    from . import mcp_served

    await _client_side(mcp_served.tools_server(), "in memory", scale, result)
    if stdio:
        await _client_side(f"stdio:{sys.executable} {SERVED} --tools", "stdio", scale, result)
    await _server_side(
        mcp_server({"lookup": mcp_served.lookup}),
        mcp_served.bare_server(),
        "in memory",
        scale,
        result,
    )
    if not stdio:
        return
    await _server_side(
        _stdio("-m", "alloy", "mcp", f"{SERVED}:lookup"),
        _stdio(str(SERVED)),
        "stdio",
        scale,
        result,
    )


def run(scale: Scale, *, stdio: bool = True) -> SuiteResult:
    """The suite's rows; ``stdio=False`` leaves out the two that start subprocesses."""
    started = time.perf_counter()
    result = SuiteResult("mcp", "MCP: alloy's layer against the bare SDK")
    previous = os.environ.get("ALLOY_MODEL")
    os.environ["ALLOY_MODEL"] = "offline"
    try:
        asyncio.run(_run(scale, result, stdio))
    finally:
        if previous is None:
            os.environ.pop("ALLOY_MODEL", None)
        else:
            os.environ["ALLOY_MODEL"] = previous
    result.notes.append(
        f"{scale.mcp_calls} calls per side and row, interleaved, one in flight at a time, after "
        f"{scale.mcp_warmup} warm-up calls each. Target: alloy's median at most the bare SDK's "
        "plus 1 ms (issue 32); each row's ratio bound is that, divided by the bare median."
    )
    result.seconds = time.perf_counter() - started
    return result
