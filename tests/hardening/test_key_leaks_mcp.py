"""The key-leak matrix over MCP: a served command whose provider fails with bodies that echo the
key answers ``isError`` results that hold no piece of it, nor do the logs, events or spans.

Every provider x HTTP status (400, 401, 403, 404, 429, 500, 529, and 200 bodies alloy cannot
read that hold the key across the point where an error's snippet of them is cut) x key shape,
through the real SDKs against the emulator, called by the MCP SDK's own client in memory. The
key comes as the ``api_key`` option: where the adapters find it is the main matrix's business
(test_key_leaks.py); what the MCP layer makes of their errors is this one's.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from alloy import command
from alloy.testing.emulator import Emulator

from .conftest import PROVIDERS
from .test_key_leaks import KEYS, STATUSES, fault, observations, observed, shows_key

mcp = pytest.importorskip("mcp")

from alloy.mcp import mcp_server  # noqa: E402

__all__ = ["observed"]  # the fixture, used by name


def calls(server: Any, count: int) -> list[Any]:
    async def run() -> list[Any]:
        async with mcp.Client(server) as client:
            return [await client.call_tool("weather", {"city": "Paris"}) for _ in range(count)]

    return asyncio.run(run())


@pytest.mark.parametrize("shape", sorted(KEYS))
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_no_mcp_error_result_shows_the_key(
    provider: str,
    shape: str,
    emu: Emulator,
    observed: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    model, queue, _ = PROVIDERS[provider]
    key = KEYS[shape]
    options: dict[str, Any] = {"model": model, "retries": 0, "log_content": True, "api_key": key}

    @command(**options)
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"Weather in {city}?"

    statuses = STATUSES[:-1]  # an MCP call is not streamed
    emu.push(queue, *(fault(status, key) for status in statuses))  # type: ignore[arg-type]

    results = calls(mcp_server({"weather": weather}), len(statuses))

    assert not emu.pending(queue)
    for status, result in zip(statuses, results, strict=True):
        assert result.is_error is True, f"HTTP {status} answered {result!r}"
        assert result.structured_content is None
        shown = result.model_dump_json(by_alias=True)
        assert not shows_key(shown, key), f"HTTP {status}: the key is in {shown[:400]!r}"
    for text in observations(observed, caplog):
        assert not shows_key(text, key), text[:400]
