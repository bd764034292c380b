"""OpenTelemetry spans with GenAI semantic-convention attributes, from the SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
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


STOPS = [
    "stream_partial",
    "stream_items",
    "stream",
    "astream_partial break",
    "astream_items aclose",
]


@pytest.mark.parametrize("how", STOPS)
def test_a_stream_stopped_early_ends_its_spans_as_cancelled(
    how: str, spans: InMemorySpanExporter
) -> None:
    """Closing a stream (or leaving an async for over it) ends the command span and the open
    model span, marked alloy.cancelled with the reason as a span event; nothing failed, so
    their status stays unset."""

    @command(output=list[int])
    def numbers(question: str) -> str:
        return question

    @command
    def words(question: str) -> str:
        return question

    with override_model(script(json_reply([1, 2, 3], wrap=True), "many words")):
        if how == "stream":
            chunks = words.stream("q")
            next(chunks)
            chunks.close()
        elif how in ("stream_partial", "stream_items"):
            stream = getattr(numbers, how)("q")
            next(stream)
            assert spans.get_finished_spans() == ()
            stream.close()
        else:

            async def main() -> None:
                if how == "astream_partial break":
                    async for _ in numbers.astream_partial("q"):
                        break
                else:
                    stream = numbers.astream_items("q")
                    await stream.__anext__()
                    await stream.aclose()

            asyncio.run(main())
    finished = by_name(spans)
    assert [name.split(".")[-1] for name in sorted(finished)] == [
        "chat script",
        "words" if how == "stream" else "numbers",
    ]
    for span in finished.values():
        assert dict(span.attributes)["alloy.cancelled"] is True
        assert span.status.status_code.name == "UNSET"
        [event] = [e for e in span.events if e.name == "alloy.cancelled"]
        assert dict(event.attributes) == {"alloy.cancel.reason": "the stream was closed"}
    assert (
        finished["chat script"].end_time
        <= next(s for n, s in finished.items() if n.startswith("command")).end_time
    )


# -- the GenAI conventions, through the real SDKs and the emulator ----------------------------

#: Per provider: (alloy model, emulator queue, gen_ai.provider.name, the model id, the id's start).
PROVIDERS = [
    ("openai:gpt-5-mini", "openai", "openai", "gpt-5-mini", "resp_"),
    ("openai-chat:gpt-5-mini", "openai", "openai", "gpt-5-mini", "chatcmpl-"),
    ("anthropic:claude-sonnet-4-6", "anthropic", "anthropic", "claude-sonnet-4-6", "msg_"),
    ("gemini:gemini-2.5-flash", "gemini", "gcp.gemini", "gemini-2.5-flash", ""),
]


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(
    ("model", "queue", "provider", "model_id", "id_start"), PROVIDERS, ids=[p[0] for p in PROVIDERS]
)
def test_model_spans_follow_the_genai_conventions(
    emu: Any,
    spans: InMemorySpanExporter,
    streamed: bool,
    model: str,
    queue: str,
    provider: str,
    model_id: str,
    id_start: str,
) -> None:
    from opentelemetry.trace import SpanKind

    from alloy.testing.emulator import ReplyText

    @command(model=model)
    def greet(name: str) -> str:
        return f"Greet {name}."

    emu.push(queue, ReplyText("Hello, Ada."))
    text = "".join(greet.stream("Ada")) if streamed else greet("Ada")
    assert text == "Hello, Ada."
    spans_by_name = by_name(spans)
    chat = spans_by_name[f"chat {model_id}"]
    attributes = dict(chat.attributes)
    assert chat.kind is SpanKind.CLIENT
    assert attributes["gen_ai.request.model"] == model_id
    assert attributes["gen_ai.provider.name"] == provider
    response_id = attributes["gen_ai.response.id"]
    assert isinstance(response_id, str) and response_id.startswith(id_start) and response_id
    (command_span,) = [s for n, s in spans_by_name.items() if n.startswith("command ")]
    assert command_span.kind is SpanKind.INTERNAL
    assert dict(command_span.attributes)["gen_ai.request.model"] == model_id


def test_ollama_has_no_response_id_to_give(emu: Any, spans: InMemorySpanExporter) -> None:
    from alloy.testing.emulator import ReplyText

    @command(model="ollama:gpt-oss:20b")
    def greet(name: str) -> str:
        return f"Greet {name}."

    emu.push("ollama", ReplyText("Hello."))
    assert greet("Ada") == "Hello."
    attributes = dict(by_name(spans)["chat gpt-oss:20b"].attributes)
    assert attributes["gen_ai.request.model"] == "gpt-oss:20b"
    assert attributes["gen_ai.provider.name"] == "ollama"
    assert "gen_ai.response.id" not in attributes  # Ollama's chat API names no reply


def test_tool_spans_are_internal(call: Call, spans: InMemorySpanExporter) -> None:
    from opentelemetry.trace import SpanKind

    with override_model(
        script(tool_call("lookup", {"key": "k"}, id="c1"), json_reply(5, wrap=True))
    ):
        assert call(answer, "q") == 5
    assert by_name(spans)["execute_tool lookup"].kind is SpanKind.INTERNAL
    assert {s.kind for s in spans.get_finished_spans() if s.name == "chat script"} == {
        SpanKind.CLIENT
    }
