"""A hit shows in tracing: the model span carries ``alloy.cache.hit``."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from alloy import command, use_config
from alloy.otel import instrument


def test_the_model_span_of_a_hit_says_so() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    stop = instrument(provider)

    @command(output=int, model="offline", temperature=0)
    def number(question: str) -> str:
        return question

    try:
        with use_config(cache="memory"):
            number("How many?")
            number("How many?")
    finally:
        stop()
    models = [span for span in exporter.get_finished_spans() if span.name.startswith("chat")]
    assert [(span.attributes or {}).get("alloy.cache.hit") for span in models] == [None, True]
