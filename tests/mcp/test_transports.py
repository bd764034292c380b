"""alloy's MCP server over real transports, tested by ``mcp.Client``: one ``alloy mcp``
subprocess over stdio, and one ``alloy serve --mcp`` app on 127.0.0.1 (uvicorn) over
Streamable HTTP, behind the server's bearer auth. The commands answer from the offline model."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")
pytest.importorskip("fastapi")

import httpx2  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from alloy.serve import ServeConfig, create_app  # noqa: E402

from ..serve.conftest import Running  # noqa: E402
from .conftest import commands  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KEY = "mcp-test-key-1"


async def test_alloy_mcp_serves_a_module_over_stdio() -> None:
    server = mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "alloy", "mcp", "tests.mcp.served", "--prefix", "shop_"],
        env={**os.environ, "ALLOY_MODEL": "offline"},
        cwd=str(ROOT),
    )
    async with mcp.Client(server) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "shop_review" in tools and "shop_count" in tools
        result = await client.call_tool("shop_review", {"product": "pen"})
        refused = await client.call_tool("shop_guarded", {"text": "a password"})
    assert result.is_error is False
    assert set(result.structured_content) == {"title", "stars", "mood"}
    assert result.meta["alloy/model"].startswith("offline")
    assert refused.is_error is True and "no_passwords" in refused.content[0].text


@pytest.fixture(scope="module")
def mcp_url() -> Any:
    """One ``alloy serve --mcp`` app for the module's tests, with a bearer key."""
    offline = {name: cmd.with_options(model="offline") for name, cmd in commands().items()}
    server = Running(create_app(offline, ServeConfig.create(api_keys=[KEY], mcp=True)))
    yield f"{server.url}/mcp"
    server.stop()


async def test_alloy_serve_mcp_answers_over_streamable_http_with_a_key(mcp_url: str) -> None:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"})
    async with http, mcp.Client(streamable_http_client(mcp_url, http_client=http)) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        result = await client.call_tool("count", {"n": 2})
    assert tools == set(commands())
    assert result.is_error is False
    assert list(result.structured_content) == ["result"]
    assert all(isinstance(n, int) for n in result.structured_content["result"])


async def test_alloy_serve_mcp_refuses_a_caller_without_a_key(mcp_url: str) -> None:
    async with httpx2.AsyncClient() as http:
        answer = await http.post(
            mcp_url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith("Bearer")


def test_alloy_mcp_call_and_mcp_tools_reach_served_commands_by_url_with_headers(
    mcp_url: str,
) -> None:
    import alloy.mcp

    headers = {"Authorization": f"Bearer {KEY}"}
    try:
        counted = alloy.mcp.call(mcp_url, "count", {"n": 2}, output=list[int], headers=headers)
        tools = {tool.name: tool for tool in alloy.mcp.mcp_tools(mcp_url, headers=headers)}
        review = tools["review"].definition
    finally:
        alloy.mcp.close()
    assert all(isinstance(n, int) for n in counted)
    assert sorted(tools) == sorted(commands())
    assert review.strict is False  # review's strict and limit have defaults: optional
    assert review.description.startswith("Review a product.")


def test_alloy_mcp_refuses_a_target_it_cannot_serve_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from alloy.cli import main

    assert main(["mcp", "tests.mcp.no_such_module"]) == 2
    assert main(["mcp", "tests.mcp.served:nope"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2
    assert "no_such_module" in lines[0]
    assert "no alloy command named 'nope'" in lines[1]


def test_mcp_is_served_only_when_asked_for() -> None:
    from starlette.testclient import TestClient

    assert ServeConfig.from_env({"ALLOY_SERVE_MCP": "1"}).mcp is True
    assert ServeConfig.from_env({}).mcp is False
    offline = {name: cmd.with_options(model="offline") for name, cmd in commands().items()}
    with TestClient(
        create_app(offline, ServeConfig.create()), base_url="http://127.0.0.1"
    ) as client:
        answer = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert answer.status_code == 404
