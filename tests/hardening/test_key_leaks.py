"""The key-leak matrix: no cell may show the API key anywhere, not even a piece of it.

Every provider x call form (call, acall, stream, astream, and the typed streams stream_partial,
astream_partial, stream_items, astream_items) x HTTP status (400, 401, 403, 404, 429, 500, 529,
an error inside a running stream, and 200 bodies alloy cannot read that hold the key across
the point where an error's snippet of them is cut) x key source (the ``api_key`` option, the
SDK's environment variable) x key shape (a key-shaped ``sk-...`` and an opaque proxy token),
through the real SDKs against the emulator, whose error bodies repeat the key as
OpenAI-compatible servers and proxies do. Looked at for each cell: the error's message, repr,
attributes and ``args``, its whole printed traceback, its ``__cause__``/``__context__`` chain,
every event, every log record (DEBUG, with content logging on) and every span; none may hold
ten characters of the key in a row.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import traceback
from collections.abc import Iterator
from typing import Any

import pytest

from alloy import AlloyError, CommandError
from alloy import events as ev
from alloy.testing.emulator import Emulator, HttpError, ReplyRaw, ReplyText, StreamError

from .conftest import ASYNC_FORMS, FORMS, PROVIDERS, TYPED_STREAMS, run_form, weather_command

KEYS = {
    "key-shaped": "sk-proj-Zk3p9QvB7mW2xR5tL8nJ4cF6hD1gS0aE",
    "opaque": "prx_7f3a9c2e5b1d4f6a8c0e2b4d",
}
#: Where an error's snippet of a reply alloy cannot read is cut (see alloy.providers._base).
SNIPPET_CUT = 200
STATUSES = (400, 401, 403, 404, 429, 500, 529, "200-html", "200-cut-json", "in-stream")
STREAMED_FORMS = ("stream", "astream", *TYPED_STREAMS)
#: How many characters of the key in a row count as showing it.
PIECE = 10


def pieces(key: str) -> list[str]:
    """Every run of PIECE characters of ``key``: a snippet cut inside the key shows one."""
    return [key[start : start + PIECE] for start in range(len(key) - PIECE + 1)]


def shows_key(text: str, key: str) -> bool:
    return any(piece in text for piece in pieces(key))


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


def across_the_cut(key: str, before: str) -> bytes:
    """A body that starts with ``before`` and holds ``key`` across character SNIPPET_CUT."""
    start = SNIPPET_CUT - len(key) // 2
    return (before + "x" * (start - len(before)) + key + " and more").encode()


def fault(status: int | str, key: str) -> Any:
    if status == "in-stream":
        return StreamError(after=1, echo_key=True, reply=ReplyText("a long answer " * 4))
    if status == "200-html":  # a proxy's error page, sent with 200
        body = across_the_cut(key, "<html><body>Bad gateway for key ") + b"</body></html>"
        return ReplyRaw(200, body, "text/html")
    if status == "200-cut-json":
        return ReplyRaw(200, across_the_cut(key, '{"error": {"message": "bad key '))
    return HttpError(int(status), echo_key=True)


def run(form: str, model: str, source: str, key: str, statuses: tuple[Any, ...]) -> list[Any]:
    """One command per status, run in ``form``; the errors they end in (or None)."""
    options: dict[str, Any] = {"model": model, "retries": 0, "log_content": True}
    if source == "option":
        options["api_key"] = key
    answer = weather_command(form, **options)

    async def one_async() -> Any:
        try:
            await run_form(answer, form, "Paris")
        except CommandError as error:
            return error
        return None

    def one_sync() -> Any:
        try:
            run_form(answer, form, "Paris")
        except CommandError as error:
            return error
        return None

    if form not in ASYNC_FORMS:
        return [one_sync() for _ in statuses]

    async def all_async() -> list[Any]:
        return [await one_async() for _ in statuses]

    return asyncio.run(all_async())


@pytest.mark.parametrize("shape", sorted(KEYS))
@pytest.mark.parametrize("source", ["option", "environment"])
@pytest.mark.parametrize("form", (*FORMS, *TYPED_STREAMS))
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
    statuses = STATUSES if form in STREAMED_FORMS else STATUSES[:-1]
    emu.push(queue, *(fault(status, key) for status in statuses))  # type: ignore[arg-type]

    errors = run(form, model, source, key, statuses)

    assert not emu.pending(queue)
    echoed = [r for r in emu.requests if key in r.headers.get("authorization", "") + str(r.headers)]
    assert len(echoed) == len(statuses), "every request presented the key, so every body echoed it"
    for status, error in zip(statuses, errors, strict=True):
        assert isinstance(error, CommandError), f"HTTP {status} ended in {error!r}"
        assert error.__cause__ is None and error.__context__ is None
        assert all(isinstance(link, AlloyError) for link in chain(error))
        for text in shown(error):
            assert not shows_key(text, key), f"HTTP {status}: the key is in {text[:400]!r}"
    for text in observations(observed, caplog):
        assert not shows_key(text, key), text[:400]
