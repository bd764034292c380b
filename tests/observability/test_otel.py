"""OpenTelemetry spans with GenAI semantic-convention attributes, from the SDK's in-memory exporter."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from alloy import ParseError, command, tool
from alloy.otel import instrument
from alloy.testing import json_reply, override_model, script, tool_call

from ..conftest import Call


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    stop = instrument(provider)
    yield exporter
    stop()


@tool
def lookup(key: str) -> str:
    """Look up a key."""
    return key


@command(output=int, tools=[lookup], temperature=0.5, max_tokens=64)
def answer(question: str) -> str:
    return question


def by_name(exporter: InMemorySpanExporter) -> dict[str, Any]:
    return {span.name: span for span in exporter.get_finished_spans()}


def test_spans_for_command_model_and_tool_calls(call: Call, spans: InMemorySpanExporter) -> None:
    with override_model(
        script(tool_call("lookup", {"key": "k"}, id="c1"), json_reply(5, wrap=True))
    ):
        assert call(answer, "q") == 5
    finished = spans.get_finished_spans()
    assert sorted(s.name for s in finished) == [
        "chat script",
        "chat script",
        "command answer",
        "execute_tool lookup",
    ]
    command_span = by_name(spans)["command answer"]
    children = [s for s in finished if s.parent is not None]
    assert len(children) == 3
    assert all(s.parent.span_id == command_span.context.span_id for s in children)

    chat = next(s for s in finished if s.name == "chat script")
    attributes = dict(chat.attributes)
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.provider.name"] == "script"
    assert attributes["gen_ai.request.model"] == "script"
    assert attributes["gen_ai.request.temperature"] == 0.5
    assert attributes["gen_ai.request.max_tokens"] == 64
    assert attributes["gen_ai.usage.input_tokens"] == 10
    assert attributes["gen_ai.usage.output_tokens"] == 5
    assert attributes["gen_ai.output.type"] == "json"
    assert tuple(attributes["gen_ai.response.finish_reasons"]) in (("tool_calls",), ("stop",))

    tool_span = by_name(spans)["execute_tool lookup"]
    assert dict(tool_span.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "gen_ai.tool.call.id": "c1",
    }
    assert dict(command_span.attributes)["gen_ai.usage.input_tokens"] == 20


def test_failed_command_span_records_the_error(call: Call, spans: InMemorySpanExporter) -> None:
    with override_model(script('{"value": "x"}', '{"value": "y"}')), pytest.raises(ParseError):
        call(answer, "q")
    command_span = by_name(spans)["command answer"]
    assert command_span.status.status_code.name == "ERROR"
    assert dict(command_span.attributes)["error.type"] == "ParseError"


def test_prompts_are_not_recorded(call: Call, spans: InMemorySpanExporter) -> None:
    with override_model(script(json_reply(1, wrap=True))):
        call(answer, "a private question 42")
    for span in spans.get_finished_spans():
        assert "private question" not in repr(dict(span.attributes))


def test_a_streamed_value_is_one_command_span_from_request_to_final_value(
    spans: InMemorySpanExporter,
) -> None:
    @command(output=list[int])
    def numbers(question: str) -> str:
        return question

    with override_model(script(json_reply([1, 2, 3], wrap=True))):
        stream = numbers.stream_partial("q")
        first = next(stream)
        assert spans.get_finished_spans() == ()  # the command is open while its value streams
        rest = list(stream)
    assert not first.complete and rest[-1].value == [1, 2, 3]
    command_span = next(s for s in spans.get_finished_spans() if s.name.startswith("command "))
    assert by_name(spans)["chat script"].parent.span_id == command_span.context.span_id
    marks = [e for e in command_span.events if e.name == "alloy.stream.first_output"]
    assert [dict(e.attributes)["alloy.attempt"] for e in marks] == [1]
