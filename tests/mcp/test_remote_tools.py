"""alloy's MCP client, tested against servers written with the SDK's ``MCPServer`` (in memory,
and once over stdio): MCP tools inside commands, and typed one-off calls. The model side is a
scripted model."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from alloy import ConfigurationError, ToolError, command
from alloy.testing import FunctionModel, override_model, tool_call, tool_results

from .conftest import answer_from_prompt, commands
from .files_server import files_server

mcp = pytest.importorskip("mcp")

import alloy.mcp  # noqa: E402
from alloy.mcp import mcp_server, mcp_tools  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def closed() -> Iterator[None]:
    """Each test's connections are closed after it."""
    yield
    alloy.mcp.close()


def calls_then_answers(*calls: Any) -> FunctionModel:
    """A model that makes ``calls``, then answers with the tool results it got, as JSON."""

    def reply(request: Any) -> Any:
        results = tool_results(request)
        if not results:
            return list(calls)
        return json.dumps([{"content": r.content, "error": r.is_error} for r in results])

    return FunctionModel(reply)


@dataclass
class Seen:
    """A tool result as the model saw it."""

    content: str
    error: bool


def using(tools: list[Any]) -> Any:
    """A command offering ``tools`` to the model; it answers with the results it saw."""

    @command(output=list[Seen], tools=tools)
    def use_tools(path: str) -> str:
        return f"Use the tools on {path}"

    return use_tools


def test_tools_come_with_the_servers_schemas_strict_where_lossless(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "alloy.mcp")
    tools = {t.name: t for t in mcp_tools(files_server(), prefix="fs_")}
    assert sorted(tools) == ["fs_head", "fs_read_file", "fs_stats"]
    read = tools["fs_read_file"].definition
    assert read.strict is True
    assert read.parameters == {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    }
    assert read.description == "Read a file's text."
    head = tools["fs_head"].definition
    assert head.strict is False  # `lines` is optional: strict mode would make it required
    assert head.parameters["required"] == ["path"]
    assert "fs_read_file: strict parameters" in caplog.text
    assert "fs_head: non-strict parameters (optional properties at $: lines)" in caplog.text


def test_a_command_calls_mcp_tools_and_reads_structured_and_text_results() -> None:
    tools = mcp_tools(files_server(), prefix="fs_")
    model = calls_then_answers(
        tool_call("fs_stats", {"path": "a.txt"}, id="1"),
        tool_call("fs_head", {"path": "a.txt", "lines": 1}, id="2"),
        tool_call("fs_read_file", {"path": "b.txt"}, id="3"),
    )
    with override_model(model):
        answer = using(tools)("a.txt")
    assert [json.loads(a.content) if a.content[0] == "{" else a.content for a in answer] == [
        {"lines": 2, "words": 3},  # structuredContent, validated against the outputSchema
        "one two",  # no outputSchema: the text content
        {"result": "four"},  # the SDK's own wrapping, kept: nothing says to unwrap it
    ]
    assert not any(a.error for a in answer)


def test_an_is_error_result_is_reported_to_the_model_as_a_tool_error() -> None:
    tools = mcp_tools(files_server(), include=["read_file"])
    model = calls_then_answers(tool_call("read_file", {"path": "nope.txt"}))
    with override_model(model):
        (answer,) = using(tools)("nope.txt")
    assert answer.error is True
    assert answer.content.startswith("Error: McpToolError:")
    assert "no file 'nope.txt'" in answer.content


def test_naming_tools_starts_no_server_until_a_call_uses_them() -> None:
    starts: list[int] = []
    tools = mcp_tools(files_server(starts), prefix="fs_", include=["read_file"])
    assert starts == [] and [t.name for t in tools] == ["fs_read_file"]
    with override_model(calls_then_answers(tool_call("fs_read_file", {"path": "a.txt"}))):
        using(tools)("a.txt")
    assert starts == [1]


def test_rows_of_a_map_share_one_connection() -> None:
    starts: list[int] = []
    tools = mcp_tools(files_server(starts), include=["read_file"])
    model = calls_then_answers(tool_call("read_file", {"path": "a.txt"}))
    with override_model(model, threads=True):
        records = using(tools).map([f"row-{i}" for i in range(8)], concurrency=4, progress=False)
    assert all(record.ok for record in records)
    assert starts == [1]


def test_a_tool_the_server_does_not_have_is_named_with_those_it_has() -> None:
    (missing,) = mcp_tools(files_server(), include=["write_file"])
    with pytest.raises(ConfigurationError, match=r"no tool named 'write_file'.*read_file"):
        _ = missing.definition


def test_only_read_only_idempotent_tools_can_be_cacheable() -> None:
    tools = {t.name: t for t in mcp_tools(files_server(), cacheable=True)}
    assert tools["read_file"].cacheable is True
    assert tools["stats"].cacheable is False  # read-only, but not marked idempotent
    assert tools["head"].cacheable is False
    (plain,) = mcp_tools(files_server(), include=["read_file"])
    assert plain.cacheable is False  # eligible, not asked for


def test_a_server_given_wrongly_is_refused_at_once() -> None:
    with pytest.raises(ConfigurationError, match="stdio:COMMAND"):
        mcp_tools("ftp://example.com/mcp")
    with pytest.raises(ConfigurationError, match="headers="):
        mcp_tools("stdio:python -m srv", headers={"Authorization": "Bearer x"})


@dataclass
class Stats:
    lines: int
    words: int


def test_call_returns_a_typed_value() -> None:
    server = files_server()
    assert alloy.mcp.call(server, "stats", {"path": "a.txt"}, output=Stats) == Stats(2, 3)
    assert alloy.mcp.call(server, "read_file", {"path": "b.txt"}, output=str) == "four"
    assert alloy.mcp.call(server, "head", {"path": "a.txt"}) == "one two"


async def test_acall_failures_are_tool_errors() -> None:
    server = files_server()
    with pytest.raises(ToolError, match="no file 'x'"):
        await alloy.mcp.acall(server, "read_file", {"path": "x"})
    with pytest.raises(ToolError, match="not int"):
        await alloy.mcp.acall(server, "read_file", {"path": "b.txt"}, output=int)
    with pytest.raises(ConfigurationError, match="no tool named 'nope'"):
        await alloy.mcp.acall(server, "nope")


def test_alloy_on_both_sides_unwraps_what_its_server_wrapped() -> None:
    outer = calls_then_answers(tool_call("count", {"n": 2}, id="1"))

    def reply(request: Any) -> Any:  # the served command answers from its prompt
        prompt = request.messages[0].parts[0].text
        return (
            outer.fn(request) if prompt.startswith("Use the tools") else answer_from_prompt(request)
        )

    server = mcp_server(commands())
    (count,) = mcp_tools(server, include=["count"])
    with override_model(FunctionModel(reply)):
        assert alloy.mcp.call(server, "count", {"n": 3}, output=list[int]) == [1, 2, 3]
        (answer,) = using([count])("x")
    assert json.loads(answer.content) == [1, 2]


def test_a_stdio_server_is_started_once_and_its_tools_used() -> None:
    where = f"stdio:{sys.executable} -m tests.mcp.files_server"
    tools = mcp_tools(where, prefix="fs_", include=["read_file", "stats"])
    model = calls_then_answers(
        tool_call("fs_read_file", {"path": "b.txt"}, id="1"),
        tool_call("fs_stats", {"path": "a.txt"}, id="2"),
    )
    with override_model(model):
        answer = using(tools)("b.txt")
    assert [a.error for a in answer] == [False, False]
    assert json.loads(answer[1].content) == {"lines": 2, "words": 3}
    assert alloy.mcp.call(where, "read_file", {"path": "a.txt"}, output=str) == "one two\nthree"


def test_connections_are_closed_when_the_process_exits() -> None:
    import subprocess

    script = (
        "from contextlib import asynccontextmanager\n"
        "from mcp.server import MCPServer\n"
        "import alloy.mcp\n"
        "@asynccontextmanager\n"
        "async def announced(server):\n"
        "    yield {}\n"
        "    print('closed', flush=True)\n"
        "files = MCPServer('files', lifespan=announced)\n"
        "@files.tool()\n"
        "def read_file(path: str) -> str:\n"
        "    return 'text'\n"
        "print(alloy.mcp.call(files, 'read_file', {'path': 'a'}, output=str), flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["text", "closed"]


def test_a_listing_that_would_wait_on_itself_is_refused_not_a_deadlock() -> None:
    (read,) = mcp_tools(files_server(), include=["read_file"])

    @command(tools=[read])
    def reader(path: str) -> str:
        """Read a file."""
        return f"Read {path}"

    with pytest.raises(ToolError, match="wait on itself"):
        alloy.mcp.call(
            mcp_server([reader.with_options(model="offline")]), "reader", {"path": "a.txt"}
        )


async def test_concurrent_calls_with_distinct_inputs_each_get_their_own_answer() -> None:
    from mcp.server import MCPServer

    echo = MCPServer("echo")

    @echo.tool()
    async def shout(word: str) -> str:
        """The word in capitals."""
        return word.upper()

    import asyncio

    answers = await asyncio.gather(
        *(alloy.mcp.acall(echo, "shout", {"word": f"w{i}"}, output=str) for i in range(200))
    )
    assert answers == [f"W{i}" for i in range(200)]


def test_import_alloy_imports_no_mcp() -> None:
    import subprocess

    code = "import sys, alloy; print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types') or m.startswith('alloy.mcp')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_tool_pickles_as_where_its_server_is_and_never_with_headers() -> None:
    import pickle

    where = f"stdio:{sys.executable} -m tests.mcp.files_server"
    (read,) = mcp_tools(where, prefix="fs_", include=["read_file"], cacheable=True)
    again = pickle.loads(pickle.dumps(read))  # nothing is started: the listing waits for use
    assert (again.name, again.remote_name, again.connection.where) == (
        "fs_read_file",
        "read_file",
        where,
    )
    (secret,) = mcp_tools(
        "http://127.0.0.1:9/mcp", include=["x"], headers={"Authorization": "Bearer k-123"}
    )
    with pytest.raises(TypeError, match="reached with headers"):
        pickle.dumps(secret)
    (in_memory,) = mcp_tools(files_server(), include=["read_file"])
    with pytest.raises(TypeError, match="in memory"):
        pickle.dumps(in_memory)
