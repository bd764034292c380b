"""One OpenTelemetry trace per request with the command's spans inside, and access logs that
carry no content unless asked."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from alloy.serve import ServeConfig

from .conftest import Start

SECRET = "prompt-text-5c1e"


@pytest.fixture
def traced() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def tree(exporter: InMemorySpanExporter, roots: int = 1) -> dict[str, Any]:
    """The finished spans by name, once ``roots`` server spans have ended (a server span ends
    just after its last byte is sent, so a moment after the client has the answer)."""
    wait_until(lambda: len([s for s in exporter.get_finished_spans() if s.parent is None]) >= roots)
    return {span.name: span for span in exporter.get_finished_spans()}


def wait_until(condition: Callable[[], bool]) -> None:
    for _ in range(500):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError("the server did not finish the request")


def access_lines(caplog: pytest.LogCaptureFixture, count: int) -> list[str]:
    def lines() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.name == "alloy.serve.access"]

    wait_until(lambda: len(lines()) >= count)
    return lines()


@pytest.mark.parametrize("route", ["/commands/review", "/commands/review/stream"])
def test_each_request_is_one_trace_with_the_commands_spans(
    start: Start, offline: None, traced: Any, route: str
) -> None:
    provider, exporter = traced
    url = start(tracer_provider=provider)
    assert httpx.post(url + route, json={"product": "kettle"}).status_code == 200
    spans = tree(exporter)
    server = spans[f"POST {route}"]
    command = spans["command review"]
    model = spans["chat offline"]
    assert server.parent is None
    assert server.attributes["http.response.status_code"] == 200
    assert command.parent.span_id == server.context.span_id
    assert model.parent.span_id == command.context.span_id
    assert {s.context.trace_id for s in exporter.get_finished_spans()} == {server.context.trace_id}


def test_two_requests_are_two_traces(start: Start, offline: None, traced: Any) -> None:
    provider, exporter = traced
    url = start(tracer_provider=provider)
    httpx.post(f"{url}/commands/echo", json={"name": "a"})
    httpx.post(f"{url}/commands/echo", json={"name": "b"})
    tree(exporter, roots=2)
    roots = [s for s in exporter.get_finished_spans() if s.parent is None]
    assert len(roots) == 2
    assert len({s.context.trace_id for s in exporter.get_finished_spans()}) == 2


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
def test_the_openai_routes_trace_their_call_as_a_command_call(
    start: Start, offline: None, traced: Any, path: str
) -> None:
    """The spans of a command call: ``command {rail config}``, with the model's inside."""
    provider, exporter = traced
    url = start(tracer_provider=provider)
    for stream in (False, True):
        exporter.clear()
        body: dict[str, Any] = {"model": "open", "stream": stream}
        if path == "/v1/responses":
            body["input"] = "hi"
        else:
            body["messages"] = [{"role": "user", "content": "hi"}]
        assert httpx.post(f"{url}{path}", json=body).status_code == 200
        spans = tree(exporter)
        server = spans[f"POST {path}"]
        command = spans["command open"]
        model = spans["chat offline"]
        assert command.parent.span_id == server.context.span_id
        assert model.parent.span_id == command.context.span_id
        assert model.attributes["gen_ai.usage.output_tokens"] > 0
        trace_ids = {s.context.trace_id for s in exporter.get_finished_spans()}
        assert trace_ids == {server.context.trace_id}


def test_a_blocked_request_is_marked_on_its_span(start: Start, offline: None, traced: Any) -> None:
    provider, exporter = traced
    url = start(tracer_provider=provider)
    httpx.post(f"{url}/commands/guarded", json={"text": "the password"})
    spans = tree(exporter)
    assert spans["POST /commands/guarded"].attributes["http.response.status_code"] == 403
    assert spans["command guarded"].attributes["error.type"] == "RailBlocked"


def test_access_logs_carry_no_content_unless_asked(
    start: Start, offline: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="alloy.serve.access")
    url = start()
    httpx.post(f"{url}/commands/echo", json={"name": SECRET})
    lines = access_lines(caplog, 1)
    assert len(lines) == 1
    assert '"POST /commands/echo" 200' in lines[0]
    assert SECRET not in lines[0]
    caplog.clear()
    loud = start(config=ServeConfig.create(log_content=True))
    httpx.post(f"{loud}/commands/echo", json={"name": SECRET})
    lines = access_lines(caplog, 1)
    assert len(lines) == 1  # the body is on the request's one line
    assert '"POST /commands/echo" 200' in lines[0] and SECRET in lines[0]
