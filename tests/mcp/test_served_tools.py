"""alloy's MCP server, tested by the SDK's own client (``mcp.Client``, in memory): each command
is one tool with the schemas ``/openapi.json`` publishes, a typed structured result, and
``isError`` results that say what to do."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from alloy import command
from alloy.testing import FunctionModel, override_model

from . import served
from .conftest import canonical, commands, inline

mcp = pytest.importorskip("mcp")

from alloy.mcp import RESULT_KEY, WRAPPED_META, mcp_server  # noqa: E402
from alloy.serve import ServeConfig, create_app  # noqa: E402


async def listed(server: Any) -> dict[str, Any]:
    async with mcp.Client(server) as client:
        result = await client.list_tools()
    return {tool.name: tool for tool in result.tools}


async def call(server: Any, name: str, arguments: dict[str, Any]) -> Any:
    async with mcp.Client(server) as client:
        return await client.call_tool(name, arguments)


def openapi_schemas(name: str) -> tuple[Any, Any]:
    """The request body schema and the response ``value`` schema of ``POST /commands/{name}``,
    with every reference inlined."""
    document = create_app(commands(), ServeConfig.create()).openapi()
    defs = document["components"]["schemas"]
    post = document["paths"][f"/commands/{name}"]["post"]
    request = inline(post["requestBody"]["content"]["application/json"]["schema"], defs)
    response = inline(post["responses"]["200"]["content"]["application/json"]["schema"], defs)
    value = dict(response["properties"]["value"])
    if value.get("title") == "Value":  # the response field's own title, not the type's
        del value["title"]
    return request, value


@pytest.mark.parametrize("name", ["review", "echo", "count", "in_stock", "guarded"])
async def test_each_tool_has_the_schemas_openapi_publishes(name: str) -> None:
    tool = (await listed(mcp_server(commands())))[name]
    request, value = openapi_schemas(name)
    assert canonical(inline(tool.input_schema, tool.input_schema.get("$defs", {}))) == canonical(
        request
    )
    output = inline(tool.output_schema, tool.output_schema.get("$defs", {}))
    wrapped = tool.meta[WRAPPED_META]
    assert wrapped is (name != "review")  # scalars and lists are wrapped, a dataclass is not
    assert canonical(output["properties"][RESULT_KEY] if wrapped else output) == canonical(value)
    assert output["type"] == "object"


async def test_a_tool_is_named_and_described_by_its_command() -> None:
    tools = await listed(mcp_server(commands(), prefix="shop_"))
    assert sorted(tools) == [f"shop_{n}" for n in sorted(commands())]
    assert tools["shop_review"].description.startswith("Review a product.")
    assert "product: What to review." in tools["shop_review"].description


async def test_a_command_without_tools_is_read_only_and_one_with_tools_is_not() -> None:
    tools = await listed(mcp_server(commands()))
    assert tools["review"].annotations.read_only_hint is True
    assert tools["in_stock"].annotations is None


async def test_a_typed_value_is_structured_content_with_its_json_as_text(model: Any) -> None:
    result = await call(mcp_server(commands()), "review", {"product": "pen"})
    assert result.is_error is False
    assert result.structured_content == {"title": "About pen", "stars": 4, "mood": "calm"}
    assert json.loads(result.content[0].text) == result.structured_content
    meta = result.meta
    assert meta["alloy/usage"]["input_tokens"] == 10
    assert meta["alloy/usage"]["requests"] == 1
    assert meta["alloy/model"] == "function"
    assert meta["alloy/attempts"] == 1
    assert meta.get("alloy/cost") is None  # a FunctionModel has no price


async def test_scalars_and_lists_come_wrapped_as_result(model: Any) -> None:
    server = mcp_server(commands())
    counted = await call(server, "count", {"n": 3})
    assert counted.structured_content == {"result": [1, 2, 3]}
    echoed = await call(server, "echo", {"name": "Ada"})
    assert echoed.structured_content == {"result": "Ada"}
    assert json.loads(echoed.content[0].text) == {"result": "Ada"}


async def test_arguments_are_checked_strictly_as_the_http_route_checks_them(model: Any) -> None:
    server = mcp_server(commands())
    result = await call(server, "count", {"n": "3"})
    assert result.is_error is True
    assert result.structured_content is None
    assert "n:" in result.content[0].text and "inputSchema" in result.content[0].text
    unknown = await call(server, "count", {"n": 3, "extra": 1})
    assert unknown.is_error is True and "extra" in unknown.content[0].text


async def test_a_blocked_rail_is_an_error_result_that_says_what_to_do(model: Any) -> None:
    result = await call(mcp_server(commands()), "guarded", {"text": "my password is x"})
    assert result.is_error is True
    assert result.structured_content is None
    text = result.content[0].text
    assert "no_passwords" in text and "Change the input" in text


async def test_a_configuration_error_is_an_error_result() -> None:
    broken = served.echo.with_options(model="no-such-provider:model")
    result = await call(mcp_server({"echo": broken}), "echo", {"name": "Ada"})
    assert result.is_error is True
    assert result.structured_content is None
    assert "cannot be made as given" in result.content[0].text


async def test_an_unusable_answer_is_an_error_result_without_the_answer() -> None:
    with override_model(FunctionModel(lambda request: "SECRET-ish not json")):
        result = await call(mcp_server(commands()), "review", {"product": "pen"})
    assert result.is_error is True
    assert result.structured_content is None
    text = result.content[0].text
    assert "unusable" in text and "Retry" in text and "SECRET" not in text


async def test_an_unknown_tool_is_an_error_result() -> None:
    result = await call(mcp_server(commands()), "nope", {})
    assert result.is_error is True
    assert "review" in result.content[0].text


async def test_concurrent_calls_with_distinct_inputs_each_get_their_own_answer(
    model: Any,
) -> None:
    server = mcp_server(commands())
    async with mcp.Client(server) as client:
        results = await asyncio.gather(
            *(client.call_tool("review", {"product": f"item-{i}"}) for i in range(200))
        )
    assert [r.structured_content["title"] for r in results] == [
        f"About item-{i}" for i in range(200)
    ]


def test_a_command_that_cannot_be_a_tool_is_refused_when_the_server_is_made() -> None:
    from alloy import ConfigurationError

    @command
    def takes_any(*parts: str) -> str:
        return " ".join(parts)

    with pytest.raises(ConfigurationError, match=r"\*parts"):
        mcp_server({"takes_any": takes_any})


async def test_a_client_of_the_older_protocol_gets_the_same_tools_and_results(
    model: Any,
) -> None:
    async with mcp.Client(mcp_server(commands()), mode="legacy") as client:
        assert client.protocol_version < "2026-07-28"
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        counted = await client.call_tool("count", {"n": 2})
    assert tools["count"].meta[WRAPPED_META] is True
    assert counted.structured_content == {"result": [1, 2]}  # an object, as that protocol wants
