"""A model (with its SDK clients and their connections) per caller key is bounded.

``cmd.with_options(api_key=tenant_key)`` and ``alloy serve --pass-through-keys`` build one
model per distinct key. They were kept forever: 1,500 random keys took a server from 49 open
files to 1,556 and from 76 to 1,321 MB. alloy now keeps the ``ALLOY_MAX_CLIENTS`` most
recently used (64 by default) and closes the clients of the one it lets go, once no call is
using them. No raw key is ever a dict key. ``make test`` runs 48 keys against a bound of 8,
``make fuzz`` 2,000 through a server, whose memory stays flat over the second 1,000.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from alloy import command
from alloy.providers import _MODELS, clear_model_cache, get_model
from alloy.providers._base import SDKModel
from alloy.serve import ServeConfig
from alloy.testing.emulator import ReplyText, Slow

MODEL = "openai:gpt-5-mini"
BOUND = 8


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


def resident_mb() -> float:
    """Resident memory once freed memory is handed back: glibc's allocator keeps what it freed
    and hands it back unevenly, which made resident memory wander by ±60 MB while the live
    memory stayed flat."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


@pytest.fixture
def bounded(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """At most BOUND models kept, from an empty model cache."""
    monkeypatch.setenv("ALLOY_MAX_CLIENTS", str(BOUND))
    clear_model_cache()
    yield BOUND
    clear_model_cache()


def keys(count: int) -> list[str]:
    return [f"sk-tenant-{number:05d}-0123456789abcdef" for number in range(count)]


@command(model=MODEL, retries=0)
def echo(name: str) -> str:
    return f"Say {name}"


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_a_client_per_tenant_key_is_bounded_in_one_event_loop(emu: Any, bounded: int) -> None:
    """The server's case: one long-lived event loop, a new key per request."""

    async def run() -> tuple[int, int, int]:
        await echo.with_options(api_key="sk-warm-up-0123456789").acall("x")
        files, connections = open_files(), emu.open_connections()
        for key in keys(6 * bounded):
            await echo.with_options(api_key=key).acall("x")
        for _ in range(20):  # let the closes scheduled on this loop run
            await asyncio.sleep(0)
        return open_files() - files, emu.open_connections() - connections, len(_MODELS)

    files, connections, kept = asyncio.run(run())
    assert kept <= bounded
    assert connections <= bounded + 2, f"{connections} more connections open after 48 keys"
    assert files <= 2 * bounded + 4, f"{files} more open files after 48 keys"
    assert len(emu.requests) == 6 * bounded + 1


def test_no_key_is_a_dict_key(emu: Any, bounded: int) -> None:
    secret = "sk-tenant-canary-5b1f0c7e2d"
    get_model(MODEL, api_key=secret)
    assert all(secret not in repr(key) for key in _MODELS)


def test_an_evicted_model_has_its_clients_closed(emu: Any, bounded: int) -> None:
    first = get_model(MODEL, api_key="sk-first-0123456789")
    assert isinstance(first, SDKModel)
    sync_client = first.client()

    async def build_async() -> Any:
        return first.aclient()

    async def scenario() -> Any:
        async_client = await build_async()
        for key in keys(bounded):  # the first is now the least recently used: let go
            get_model(MODEL, api_key=key)
        for _ in range(20):
            await asyncio.sleep(0)
        return async_client

    async_client = asyncio.run(scenario())
    assert sync_client.is_closed()
    assert async_client.is_closed()
    # What holds it still (a command's plan) gets new clients when it calls again.
    assert first.client() is not sync_client and not first.client().is_closed()
    first.client().close()


def test_a_model_in_use_is_closed_only_when_its_call_ends(emu: Any, bounded: int) -> None:
    emu.push("openai", Slow(0.5, ReplyText("slow but whole")))
    tenant = echo.with_options(api_key="sk-slow-tenant-0123456789")

    async def scenario() -> tuple[str, bool, bool]:
        pieces: list[str] = []

        async def stream() -> None:
            async for piece in tenant.astream("x"):
                pieces.append(piece)

        running = asyncio.create_task(stream())
        while not emu.requests:
            await asyncio.sleep(0.01)
        model = get_model(MODEL, api_key="sk-slow-tenant-0123456789")
        assert isinstance(model, SDKModel)
        client = model.aclient()
        for key in keys(bounded):  # let the streaming tenant's model go while it streams
            get_model(MODEL, api_key=key)
        await asyncio.sleep(0)
        open_during = not client.is_closed()
        await running
        for _ in range(20):
            await asyncio.sleep(0)
        return "".join(pieces), open_during, client.is_closed()

    text, open_during, closed_after = asyncio.run(scenario())
    assert text == "slow but whole"
    assert open_during  # not closed under the stream
    assert closed_after  # closed once it ended, while its loop still runs


def test_the_bound_is_read_from_the_environment(emu: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from alloy.errors import ConfigurationError

    monkeypatch.setenv("ALLOY_MAX_CLIENTS", "none")
    clear_model_cache()
    with pytest.raises(ConfigurationError, match="ALLOY_MAX_CLIENTS"):
        get_model(MODEL, api_key="sk-x-0123456789")
    monkeypatch.setenv("ALLOY_MAX_CLIENTS", "0")
    with pytest.raises(ConfigurationError, match="ALLOY_MAX_CLIENTS"):
        get_model(MODEL, api_key="sk-x-0123456789")


@pytest.mark.fuzz
@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_pass_through_keys_keep_a_server_bounded(
    emu: Any, bounded: int, fuzz_scale: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``alloy serve --pass-through-keys`` with a new random key per request."""
    from alloy.serve import create_app
    from tests.serve.conftest import Running

    monkeypatch.setenv("ALLOY_MODEL", MODEL)
    count = 2000 if fuzz_scale > 1 else 6 * bounded
    server = Running(create_app({"echo": echo}, ServeConfig.create(pass_through_keys=True)))
    try:
        with httpx.Client(base_url=server.url) as client:

            def call(key: str) -> None:
                answer = client.post(
                    "/commands/echo", json={"name": "x"}, headers={"x-alloy-provider-key": key}
                )
                assert answer.status_code == 200, answer.text

            call("sk-warm-up-0123456789")
            files, connections = open_files(), emu.open_connections()
            halfway = 0.0
            for start in range(0, count, 100):
                for key in keys(count)[start : start + 100]:
                    call(key)
                emu.reset()  # its own log of requests grows with every call
                if start + 100 == count // 2:
                    halfway = resident_mb()  # the allocator has settled by now
            grown_files = open_files() - files
            grown_connections = emu.open_connections() - connections
            grown_memory = resident_mb() - halfway
    finally:
        server.stop()
    assert grown_connections <= bounded + 2, f"{grown_connections} more after {count} keys"
    assert grown_files <= 2 * bounded + 4, f"{grown_files} more open files after {count} keys"
    if fuzz_scale > 1:  # a model with its clients was ~0.8 MB a key (1,321 MB at 1,500 keys)
        assert grown_memory < 15, f"resident memory grew {grown_memory:.0f} MB over 1,000 keys"
