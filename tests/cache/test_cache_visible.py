"""Hits and misses show: the ModelResponse event's ``cache``, its log line, and the model span's
``alloy.cache.hit`` and ``alloy.cache.status``."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from alloy import command, events, use_config
from alloy.otel import instrument


@command(output=int, model="offline", temperature=0)
def number(question: str) -> str:
    return question


@command(output=int, model="offline")  # the provider's default temperature: not repeatable
def guess(question: str) -> str:
    return question


def test_the_model_span_says_hit_or_miss_and_why() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    stop = instrument(provider)
    try:
        number("No cache?")
        with use_config(cache="memory"):
            number("How many?")
            number("How many?")
            guess("How many?")
    finally:
        stop()
    models = [span for span in exporter.get_finished_spans() if span.name.startswith("chat")]
    seen = [
        (
            (span.attributes or {}).get("alloy.cache.hit"),
            (span.attributes or {}).get("alloy.cache.status"),
        )
        for span in models
    ]
    assert seen == [
        (None, None),
        (False, "miss"),
        (True, "hit"),
        (False, "skipped: not repeatable"),
    ]


def test_the_model_response_event_says_where_the_cache_stood() -> None:
    seen: list[events.ModelResponse] = []
    stop = events.subscribe(seen.append, events.ModelResponse)
    try:
        number("Off?")
        with use_config(cache="memory"):
            number("Twice?")
            number("Twice?")
            guess("Twice?")
            with use_config(cache_all=True):
                guess("Twice?")
                guess("Twice?")
            with use_config(cache_mode="record"):
                number("Twice?")
    finally:
        stop()
    assert [event.cache for event in seen] == [
        None,
        "miss",
        "hit",
        "skipped: not repeatable",
        "miss",
        "hit",
        "record",
    ]
    assert [event.cached for event in seen] == [False, False, True, False, False, True, False]


def test_the_debug_log_line_names_the_cache_status(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="alloy"), use_config(cache="memory"):
        number("Logged?")
        number("Logged?")
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("ModelResponse")]
    assert "cache='miss'" in lines[0] and "cached=true" not in lines[0]
    assert "cache='hit'" in lines[1] and "cached=true" in lines[1]
