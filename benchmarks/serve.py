"""Suite: what ``alloy serve`` adds to a call, over real HTTP on loopback.

The server runs as ``alloy serve`` in its own process (one uvicorn worker), forwarding to the
emulator in another; this process is the client. Three comparisons:

- ``POST /commands/greet`` (a typed command) against calling the same command in-process,
  both reaching the emulator: p50 and p99 latency, one request at a time, interleaved (ABBA);
- throughput: ``serve_load`` requests, ``serve_concurrency`` in flight, over HTTP against the
  same calls made in-process on one event loop;
- ``/v1/chat/completions`` through a rail config without rails against the same openai SDK
  call made to the emulator directly: p50 and p99;
- what one rail adds: ``/v1/chat/completions`` through the same config with one cheap
  synchronous rail (the built-in blocklist) against it without, p50 (target ≤ 1.05).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from ._measure import Figure, SuiteResult, Target, compare, interleave
from ._scale import Scale
from ._subjects import API_KEY, emulator_env, pointing_at

ROOT = Path(__file__).resolve().parent.parent
MESSAGES = [{"role": "user", "content": "Greet Ada warmly."}]
ONE_RAIL = Target("max", 1.05)  # issue 33: a rail adds at most 5% to p50


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def tail(suite: str, name: str, a: Sequence[float], b: Sequence[float], label: str) -> Figure:
    """The p99 of two interleaved samples (seconds), in ms."""
    return Figure(
        suite=suite,
        name=name,
        alloy=percentile(a, 0.99) * 1e3,
        baseline=percentile(b, 0.99) * 1e3,
        baseline_label=label,
        unit="ms",
        samples=f"{len(a)} + {len(b)} calls, interleaved",
    )


class Server:
    """``alloy serve benchmarks.serve_app`` on a free port, pointed at the emulator."""

    def __init__(self, root: str) -> None:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        env = {**os.environ, **emulator_env(root), "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [
                *(sys.executable, "-m", "alloy", "serve", "benchmarks.serve_app"),
                *("--port", str(self.port), "--no-playground"),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        self._wait()

    def _wait(self) -> None:
        import httpx

        for _ in range(600):
            if self.process.poll() is not None:
                raise RuntimeError("alloy serve exited before it served")
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("alloy serve did not start")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


async def _rate(call: Callable[[int], Awaitable[Any]], total: int, concurrency: int) -> float:
    """Calls per second for ``total`` calls, ``concurrency`` in flight."""
    gate = asyncio.Semaphore(concurrency)

    async def one(index: int) -> None:
        async with gate:
            await call(index)

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(total)))
    return total / (time.perf_counter() - started)


def _throughput(url: str, scale: Scale) -> tuple[float, float]:
    import httpx

    from benchmarks import serve_app

    async def run() -> tuple[float, float]:
        limits = httpx.Limits(max_connections=scale.serve_concurrency)
        async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

            async def over_http(index: int) -> None:
                response = await client.post("/commands/greet", json={"name": f"Ada {index}"})
                response.raise_for_status()

            async def in_process(index: int) -> None:
                await serve_app.greet.acall(f"Ada {index}")

            await _rate(over_http, scale.serve_concurrency, scale.serve_concurrency)  # warm up
            await _rate(in_process, scale.serve_concurrency, scale.serve_concurrency)
            http = await _rate(over_http, scale.serve_load, scale.serve_concurrency)
            local = await _rate(in_process, scale.serve_load, scale.serve_concurrency)
            return http, local

    return asyncio.run(run())


def rail_cost(url: str, *, n: int, warmup: int) -> Figure:
    """What one cheap synchronous rail adds to a proxied call: ``bench-rail`` (the blocklist's
    input rail) against ``bench`` (no rails) on the same server, interleaved, p50."""
    import openai

    proxied = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
    railed, bare = interleave(
        lambda: proxied.chat.completions.create(model="bench-rail", messages=MESSAGES),
        lambda: proxied.chat.completions.create(model="bench", messages=MESSAGES),
        n=n,
        warmup=warmup,
    )
    return compare(
        "serve",
        "/v1/chat/completions with one rail (blocklist), p50",
        railed,
        bare,
        baseline_label="the same call through the config without rails",
        unit="ms",
        scale=1e3,
        target=ONE_RAIL,
    )


def run(root: str, scale: Scale) -> SuiteResult:
    started = time.perf_counter()
    result = SuiteResult("serve", "alloy serve: a command over HTTP against the call in-process")
    try:
        import httpx
        import openai
    except ImportError:
        result.notes.append("skipped: alloy[serve] or the openai SDK is missing")
        return result
    from benchmarks import serve_app

    server = Server(root)
    try:
        with pointing_at(root), httpx.Client(base_url=server.url, timeout=60) as client:

            def over_http() -> Any:
                response = client.post("/commands/greet", json={"name": "Ada"})
                response.raise_for_status()
                return response

            n, warmup = scale.serve_calls, max(scale.serve_calls // 10, 1)
            http, local = interleave(over_http, lambda: serve_app.greet("Ada"), n=n, warmup=warmup)
            label = "the same command called in-process"
            result.figures.append(
                compare(
                    "serve",
                    "POST /commands/greet, p50",
                    http,
                    local,
                    baseline_label=label,
                    unit="ms",
                    scale=1e3,
                )
            )
            result.figures.append(tail("serve", "POST /commands/greet, p99", http, local, label))
            rate_http, rate_local = _throughput(server.url, scale)
            result.figures.append(
                Figure(
                    suite="serve",
                    name=f"POST /commands/greet, requests/s at {scale.serve_concurrency} in flight",
                    alloy=rate_http,
                    baseline=rate_local,
                    baseline_label="the same calls in-process on one event loop",
                    unit="req/s",
                    samples=f"{scale.serve_load} + {scale.serve_load} calls",
                )
            )
            proxied = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
            direct = openai.OpenAI(base_url=f"{root}/v1", api_key=API_KEY, max_retries=0)
            through, straight = interleave(
                lambda: proxied.chat.completions.create(model="bench", messages=MESSAGES),
                lambda: direct.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES),
                n=n,
                warmup=warmup,
            )
            label = "the same openai SDK call to the emulator directly"
            result.figures.append(
                compare(
                    "serve",
                    "/v1/chat/completions, p50",
                    through,
                    straight,
                    baseline_label=label,
                    unit="ms",
                    scale=1e3,
                )
            )
            result.figures.append(
                tail("serve", "/v1/chat/completions, p99", through, straight, label)
            )
            result.figures.append(rail_cost(server.url, n=n, warmup=warmup))
    finally:
        server.stop()
    result.notes.append(
        f"`alloy serve` (one uvicorn worker, its own process) forwarding to the emulator "
        f"(`{serve_app.MODEL}`); the client is this process (httpx, keep-alive). The HTTP side "
        "pays a loopback hop, JSON request validation, the call, and response serialization; "
        "the in-process side only the call. Throughput runs the HTTP side in one server "
        "process and the in-process side on this process's event loop. The one-rail row sends "
        "the same request to two rail configs of that server, `bench-rail` (the built-in "
        "blocklist's input rail, which runs inline on the event loop) and `bench` (no rails)."
    )
    result.seconds = time.perf_counter() - started
    return result
