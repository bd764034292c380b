"""Suite: ``alloy serve``'s ``/v1/chat/completions`` against other Python proxies.

Three proxies front the same emulator, each in its own process with one worker:

- ``alloy serve benchmarks.serve_app`` (the ``bench`` rail config, without rails, on OpenAI
  Chat Completions);
- LiteLLM's proxy (``litellm --config``), from ``litellm[proxy]`` in a venv of its own under
  benchmarks/.venvs/ (it is no dependency of alloy's);
- a bare FastAPI app that forwards the body with httpx (benchmarks/proxy_forwarder.py), the
  floor for a Python proxy.

Latency: the same request to each proxy and to the emulator directly, one at a time, in
rotating order, so load lands on every side alike; a proxy's added latency is its median less
the direct median. Throughput: ``serve_load`` requests with ``serve_concurrency`` in flight,
each proxy in turn, twice in opposite orders.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import _setup
from ._measure import Figure, SuiteResult, Target, median
from ._scale import Scale
from ._subjects import API_KEY, emulator_env
from .serve import ROOT, Server, percentile

LITELLM = "litellm[proxy]==1.106.12"  # the newest whose proxy extras the registry has
BODY = {"model": "bench", "messages": [{"role": "user", "content": "Greet Ada warmly."}]}
#: The key callers give the proxies: LiteLLM's master key (it refuses to start without one).
PROXY_KEY = "sk-" + "5eed" * 16
QUIET = ("--log-level", "warning", "--no-access-log")
LITELLM_CONFIG = """\
model_list:
  - model_name: bench
    litellm_params:
      model: openai/gpt-4o-mini
      api_base: {root}/v1
      api_key: {key}
litellm_settings:
  telemetry: false
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Proxy:
    """A proxy process on a free port, ready once ``ready`` answers 200."""

    def __init__(self, command: Sequence[str], env: dict[str, str], ready: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import httpx

        deadline = time.monotonic() + 180  # LiteLLM's proxy imports for tens of seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{command[0]} exited before it served")
            try:
                if httpx.get(self.url + ready, timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{command[0]} did not start")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def rotate(calls: dict[str, Callable[[], Any]], *, n: int, warmup: int) -> dict[str, list[float]]:
    """Seconds per call of each callable, one call at a time, the order rotating each round."""
    names = list(calls)
    for _ in range(warmup):
        for name in names:
            calls[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    clock = time.perf_counter
    for i in range(n):
        order = names[i % len(names) :] + names[: i % len(names)]
        for name in reversed(order) if i % 2 else order:
            start = clock()
            calls[name]()
            times[name].append(clock() - start)
    return times


def throughput(urls: dict[str, str], scale: Scale) -> tuple[dict[str, float], dict[str, int]]:
    """Answered requests per second through each proxy, ``serve_concurrency`` in flight, and
    how many requests each failed (a dropped connection, an error status): counted, not fatal."""
    import httpx

    failed = dict.fromkeys(urls, 0)

    async def rate(name: str, client: httpx.AsyncClient, total: int) -> float:
        gate = asyncio.Semaphore(scale.serve_concurrency)
        answered = 0

        async def one() -> None:
            nonlocal answered
            async with gate:
                try:
                    (await client.post("/v1/chat/completions", json=BODY)).raise_for_status()
                    answered += 1
                except httpx.HTTPError:
                    failed[name] += 1

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(total)))
        return answered / (time.perf_counter() - started)

    async def run() -> dict[str, float]:
        rates: dict[str, list[float]] = {name: [] for name in urls}
        limits = httpx.Limits(max_connections=scale.serve_concurrency)
        headers = {"authorization": f"Bearer {PROXY_KEY}"}
        for order in (list(urls), list(reversed(urls))):
            for name in order:
                async with httpx.AsyncClient(
                    base_url=urls[name], limits=limits, timeout=60, headers=headers
                ) as client:
                    await rate(name, client, scale.serve_concurrency)  # warm the connections
                    rates[name].append(await rate(name, client, scale.serve_load))
        return {name: sum(values) / len(values) for name, values in rates.items()}

    return asyncio.run(run()), failed


def run(root: str, scale: Scale, *, litellm: bool = True) -> SuiteResult:
    """The figures; ``litellm=False`` leaves LiteLLM's proxy out (the smoke test's run)."""
    started = time.perf_counter()
    result = SuiteResult(
        "proxy", "alloy serve /v1/chat/completions against LiteLLM's proxy and a bare forwarder"
    )
    try:
        import fastapi  # noqa: F401
        import httpx  # noqa: F401
    except ImportError:
        result.notes.append("skipped: alloy[serve] is missing")
        return result
    problems: list[str] = []
    litellm_python = None
    if litellm:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch when checked
        litellm_python = _setup.ensure(
            "litellm-proxy", LITELLM, "litellm.proxy.proxy_server", problems
        )
    env = {**emulator_env(root), "PYTHONPATH": str(ROOT)}
    proxies: dict[str, Proxy | Server] = {}
    with tempfile.TemporaryDirectory() as folder:
        try:
            proxies["alloy serve"] = Server(root)
            proxies["bare forwarder"] = Proxy(
                [sys.executable, "-m", "uvicorn", "benchmarks.proxy_forwarder:app", *QUIET],
                {**env, "UPSTREAM": f"{root}/v1"},
                "/docs",
            )
            if litellm_python is not None:
                config = Path(folder) / "litellm.yaml"
                config.write_text(LITELLM_CONFIG.format(root=root, key=API_KEY))
                command = str(Path(litellm_python).parent / "litellm")
                proxies["LiteLLM proxy"] = Proxy(
                    [command, "--config", str(config), "--num_workers", "1"],
                    {
                        **env,
                        "LITELLM_MASTER_KEY": PROXY_KEY,
                        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                        "LITELLM_LOG": "ERROR",
                    },
                    "/health/liveliness",
                )
            result.figures += measure(root, {k: v.url for k, v in proxies.items()}, scale)
            result.notes += [f"{f.name}: {f.note}" for f in result.figures if f.note]
        finally:
            for proxy in proxies.values():
                proxy.stop()
    result.notes += [f"not measured: {problem}" for problem in problems]
    result.notes.append(
        "Each proxy runs in its own process with one worker and forwards to the emulator's "
        "Chat Completions (alloy serve: the `bench` rail config, no rails; LiteLLM: "
        f"`{LITELLM}`, `litellm --config` with one model, a master key and no database; the bare forwarder: "
        "FastAPI posting the body as it came with one shared httpx client). The client is this "
        "process (httpx, keep-alive). Added latency is a proxy's median less the median of the "
        "same request sent to the emulator directly, interleaved with it."
    )
    result.seconds = time.perf_counter() - started
    return result


def measure(root: str, urls: dict[str, str], scale: Scale) -> list[Figure]:
    import httpx

    clients = {name: httpx.Client(base_url=url, timeout=60) for name, url in urls.items()}
    direct = httpx.Client(base_url=root, timeout=60)
    upstream_body = {**BODY, "model": "gpt-4o-mini"}

    def call(client: httpx.Client, body: dict[str, Any], key: str) -> Callable[[], Any]:
        headers = {"authorization": f"Bearer {key}"}

        def one() -> None:
            client.post("/v1/chat/completions", json=body, headers=headers).raise_for_status()

        return one

    calls = {name: call(client, BODY, PROXY_KEY) for name, client in clients.items()}
    calls["direct"] = call(direct, upstream_body, API_KEY)
    n, warmup = scale.serve_calls, max(scale.serve_calls // 10, 1)
    try:
        times = rotate(calls, n=n, warmup=warmup)
    finally:
        for client in [*clients.values(), direct]:
            client.close()
    rates, failed = throughput(urls, scale)
    floor = median(times["direct"])
    samples = f"{n} calls per side, rotating with the emulator directly"
    figures = []
    for other in ("bare forwarder", "LiteLLM proxy"):
        if other not in urls:
            continue
        target = Target("max", 1.2) if other == "bare forwarder" else Target("max", 1.0, True)
        figures += [
            Figure(
                suite="proxy",
                name=f"/v1/chat/completions added p50 vs {other}",
                alloy=(median(times["alloy serve"]) - floor) * 1e3,
                baseline=(median(times[other]) - floor) * 1e3,
                baseline_label=f"{other}, the same request",
                unit="ms",
                samples=samples,
                target=target,
            ),
            Figure(
                suite="proxy",
                name=f"/v1/chat/completions p99 vs {other}",
                alloy=percentile(times["alloy serve"], 0.99) * 1e3,
                baseline=percentile(times[other], 0.99) * 1e3,
                baseline_label=f"{other}, the same request",
                unit="ms",
                samples=samples,
            ),
            Figure(
                suite="proxy",
                name=f"/v1/chat/completions req/s at {scale.serve_concurrency} vs {other}",
                alloy=rates["alloy serve"],
                baseline=rates[other],
                baseline_label=f"{other}, the same load",
                unit="req/s",
                samples=f"2 x {scale.serve_load} requests per side, in opposite orders",
                target=Target("min", 1.0, True) if other == "LiteLLM proxy" else None,
                note="; ".join(
                    f"{name}: {failed[name]} requests failed"
                    for name in ("alloy serve", other)
                    if failed[name]
                ),
            ),
        ]
    return figures
