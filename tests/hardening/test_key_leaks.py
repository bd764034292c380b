"""The key-leak matrix: no cell may show the API key anywhere.

Every provider x call form (call, acall, stream, astream) x HTTP status (400, 401, 403, 404,
429, 500, 529, and an error inside a running stream) x key source (the ``api_key`` option, the
SDK's environment variable) x key shape (a key-shaped ``sk-...`` and an opaque proxy token),
through the real SDKs against the emulator, whose error bodies repeat the key as
OpenAI-compatible servers and proxies do. Looked at for each cell: the error's message, repr,
attributes and ``args``, its whole printed traceback, its ``__cause__``/``__context__`` chain,
every event, every log record (DEBUG, with content logging on) and every span.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import traceback
from collections.abc import Iterator
from typing import Any

import pytest

from alloy import AlloyError, CommandError, command
from alloy import events as ev
from alloy.testing.emulator import Emulator, HttpError, ReplyText, StreamError

from .conftest import FORMS, PROVIDERS

KEYS = {
    "key-shaped": "sk-proj-Zk3p9QvB7mW2xR5tL8nJ4cF6hD1gS0aE",
    "opaque": "prx_7f3a9c2e5b1d4f6a8c0e2b4d",
}
STATUSES = (400, 401, 403, 404, 429, 500, 529, "in-stream")


@pytest.fixture
def observed(caplog: pytest.LogCaptureFixture) -> Iterator[dict[str, Any]]:
    """Collect events and spans; log at DEBUG."""
    events: list[Any] = []
    unsubscribe = ev.subscribe(events.append)
    exporter: Any = None
    stop_tracing = None
    if importlib.util.find_spec("opentelemetry.sdk") is not None:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from alloy.otel import instrument

        exporter = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
        stop_tracing = instrument(tracer_provider)
    caplog.set_level(logging.DEBUG)
    yield {"events": events, "spans": exporter}
    unsubscribe()
    if stop_tracing:
        stop_tracing()


def chain(error: BaseException) -> list[BaseException]:
    """The error and everything chained below it."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and all(current is not s for s in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def shown(error: BaseException) -> list[str]:
    """Every text a person or an error reporter could see of ``error``."""
    texts = []
    for link in chain(error):
        texts += [str(link), repr(link), repr(link.args), repr(vars(link))]
    texts.append("".join(traceback.format_exception(type(error), error, error.__traceback__)))
    return texts


def observations(observed: dict[str, Any], caplog: pytest.LogCaptureFixture) -> list[str]:
    texts = [record.getMessage() for record in caplog.records]
    texts += [
        "".join(traceback.format_exception(*r.exc_info)) for r in caplog.records if r.exc_info
    ]
    texts += [repr(event) for event in observed["events"]]
    exporter = observed["spans"]
    if exporter is not None:
        for span in exporter.get_finished_spans():
            texts += [repr(dict(span.attributes or {})), repr(span.status.description)]
            texts += [repr(dict(e.attributes or {})) for e in span.events]
    return texts


def fault(status: int | str) -> Any:
    if status == "in-stream":
        return StreamError(after=1, echo_key=True, reply=ReplyText("a long answer " * 4))
    return HttpError(int(status), echo_key=True)


def run(form: str, model: str, source: str, key: str, statuses: tuple[Any, ...]) -> list[Any]:
    """One command per status, run in ``form``; the errors they end in (or None)."""
    options: dict[str, Any] = {"model": model, "retries": 0, "log_content": True}
    if source == "option":
        options["api_key"] = key

    @command(**options)
    def answer(city: str) -> str:
        return f"Weather in {city}?"

    async def one_async() -> Any:
        try:
            if form == "acall":
                await answer.acall("Paris")
            else:
                async for _ in answer.astream("Paris"):
                    pass
        except CommandError as error:
            return error
        return None

    def one_sync() -> Any:
        try:
            if form == "call":
                answer("Paris")
            else:
                for _ in answer.stream("Paris"):
                    pass
        except CommandError as error:
            return error
        return None

    if form in ("call", "stream"):
        return [one_sync() for _ in statuses]

    async def all_async() -> list[Any]:
        return [await one_async() for _ in statuses]

    return asyncio.run(all_async())


@pytest.mark.parametrize("shape", sorted(KEYS))
@pytest.mark.parametrize("source", ["option", "environment"])
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_no_cell_shows_the_key(
    provider: str,
    form: str,
    source: str,
    shape: str,
    emu: Emulator,
    monkeypatch: pytest.MonkeyPatch,
    observed: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    model, queue, key_variable = PROVIDERS[provider]
    key = KEYS[shape]
    if source == "environment":
        monkeypatch.setenv(key_variable, key)
    statuses = STATUSES if form in ("stream", "astream") else STATUSES[:-1]
    emu.push(queue, *(fault(status) for status in statuses))  # type: ignore[arg-type]

    errors = run(form, model, source, key, statuses)

    assert not emu.pending(queue)
    echoed = [r for r in emu.requests if key in r.headers.get("authorization", "") + str(r.headers)]
    assert len(echoed) == len(statuses), "every request presented the key, so every body echoed it"
    for status, error in zip(statuses, errors, strict=True):
        assert isinstance(error, CommandError), f"HTTP {status} ended in {error!r}"
        assert error.__cause__ is None and error.__context__ is None
        assert all(isinstance(link, AlloyError) for link in chain(error))
        for text in shown(error):
            assert key not in text, f"HTTP {status}: the key is in {text[:300]!r}"
            assert key[6:] not in text
    for text in observations(observed, caplog):
        assert key not in text and key[6:] not in text
