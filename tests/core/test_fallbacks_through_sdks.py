"""Fallback models through every real SDK against the emulator.

Every provider falls over to every provider (OpenAI Responses, OpenAI Chat, Anthropic, Gemini,
Ollama), sending each fallback exactly the request a call on that model alone would send; the
failures that should move a call on do (5xx, overload, 429, a dropped connection, a timeout)
and the others do not; a streamed call moves on only before its first text; and no key shows
in an error, an event, a log line or a span, nor reaches another provider.

The suite runs these once per adapter (see ``per_adapter``): every adapter falls over to every
adapter, and each cloud sharing an adapter falls over once and is fallen over to once; `make
fuzz` runs the full cross.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from alloy import CommandError, ServerError, command
from alloy import events as ev
from alloy.testing.emulator import (
    DEFAULT_API_KEY,
    Disconnect,
    Emulator,
    HttpError,
    Item,
    Overloaded,
    RateLimited,
    ReplyJson,
    ReplyMalformedJson,
    ReplyMaxTokens,
    ReplyRaw,
    ReplyRefusal,
    ReplyText,
    SchemaRejected,
    Slow,
    StreamError,
    Unauthorized,
)

from ..conftest import Call
from ..hardening.conftest import ADAPTERS, CROSS, PROVIDERS, per_adapter
from ..hardening.test_key_leaks import observations, observed, shown  # noqa: F401  (fixture)

NAMES = sorted(PROVIDERS)


def other_queue(provider: str) -> str:
    """The next provider (in name order) served by another emulator queue than ``provider``'s."""
    queue = PROVIDERS[provider][1]
    rotated = NAMES[NAMES.index(provider) + 1 :] + NAMES
    return next(name for name in rotated if PROVIDERS[name][1] != queue)


@dataclass
class Weather:
    city: str
    temp_c: float


ANSWER = {"city": "Paris", "temp_c": 21.0}


def weather(primary: str, fallback: str | None, **options: Any) -> Any:
    if fallback is not None:
        options["fallback"] = [PROVIDERS[fallback][0]]

    @command(output=Weather, model=PROVIDERS[primary][0], **options)
    def forecast(city: str) -> str:
        return f"Weather in {city}?"

    return forecast


def chat(primary: str, fallback: str, **options: Any) -> Any:
    @command(model=PROVIDERS[primary][0], fallback=[PROVIDERS[fallback][0]], **options)
    def say(line: str) -> str:
        return line

    return say


def queue_of(provider: str) -> Any:
    return PROVIDERS[provider][1]


def pairs() -> list[Any]:
    """(primary, fallback) pairs: every adapter to every adapter and each cloud once each way
    in the suite, the rest of the cross under `make fuzz`."""
    return [
        (primary, fallback)
        if {primary, fallback} <= ADAPTERS
        or fallback == other_queue(primary)
        or primary == other_queue(fallback)
        else pytest.param(primary, fallback, marks=CROSS)
        for primary in NAMES
        for fallback in NAMES
    ]


@pytest.mark.parametrize(("primary", "fallback"), pairs())
def test_every_provider_falls_over_to_every_provider(
    primary: str, fallback: str, emu: Emulator, run_result: Call
) -> None:
    emu.push(queue_of(fallback), ReplyJson(ANSWER))
    run_result(weather(fallback, None, retries=0), "Paris")
    alone = emu.last_request(queue_of(fallback))
    emu.reset()

    emu.push(queue_of(primary), HttpError(500))
    emu.push(queue_of(fallback), ReplyJson(ANSWER))
    result = run_result(weather(primary, fallback, retries=0), "Paris")
    assert result.value == Weather("Paris", 21.0)
    assert result.model == PROVIDERS[fallback][0]
    first, second = emu.requests
    assert first.model == PROVIDERS[primary][0].split(":", 1)[1]
    # The fallback's request is the one a call on that model alone sends: its own output mode,
    # schema dialect and system prompt, from the same prompt.
    assert (second.api, second.body) == (alone.api, alone.body)
    assert len(result.messages) == 2  # the prompt and the fallback's answer


FALLS_OVER: dict[str, tuple[Callable[[], Item], dict[str, Any]]] = {
    "http-500": (lambda: HttpError(500), {}),
    "http-503": (lambda: HttpError(503), {}),
    "overloaded": (lambda: Overloaded(), {}),
    "rate-limited": (lambda: RateLimited(), {}),
    "disconnect": (lambda: Disconnect(), {}),
    "timeout": (lambda: Slow(1.0), {"timeout": 0.5, "deadline": 60}),
    # A 200 whose body is not what the API documents: UnreadableResponseError.
    "unreadable": (lambda: ReplyRaw(body=b'{"garbled": '), {}),
}
STAYS: dict[str, Callable[[], Item]] = {
    "unauthorized": lambda: Unauthorized(),
    "bad-request": lambda: HttpError(400),
    "schema-rejected": lambda: SchemaRejected(),
    "refusal": lambda: ReplyRefusal(),
    "max-tokens": lambda: ReplyMaxTokens(),
    "malformed-json": lambda: ReplyMalformedJson(),
}


@pytest.mark.parametrize("fault", sorted(FALLS_OVER))
@pytest.mark.parametrize("primary", per_adapter())
def test_failures_retries_gave_up_on_move_the_call_on(
    primary: str, fault: str, emu: Emulator, run_result: Call
) -> None:
    make, options = FALLS_OVER[fault]
    fallback = other_queue(primary)
    emu.push(queue_of(primary), make())
    emu.push(queue_of(fallback), ReplyJson(ANSWER))
    result = run_result(weather(primary, fallback, retries=0, **options), "Paris")
    assert (result.value, result.model) == (Weather("Paris", 21.0), PROVIDERS[fallback][0])
    assert [r.provider for r in emu.requests] == [queue_of(primary), queue_of(fallback)]


@pytest.mark.parametrize("fault", sorted(STAYS))
@pytest.mark.parametrize("primary", per_adapter())
def test_other_failures_do_not_move_the_call_on(
    primary: str, fault: str, emu: Emulator, call: Call
) -> None:
    fallback = other_queue(primary)
    emu.push(queue_of(primary), STAYS[fault]())
    emu.push(queue_of(fallback), ReplyJson(ANSWER))
    with pytest.raises(CommandError) as info:
        call(weather(primary, fallback, retries=3, max_reasks=0), "Paris")
    assert not getattr(info.value, "transient", False)
    assert emu.requests_for(queue_of(fallback)) == []
    assert emu.pending(queue_of(fallback)) == [ReplyJson(ANSWER)]


def test_retries_come_first(emu: Emulator, call: Call, sleeps: list[float]) -> None:
    emu.push("openai", RateLimited(), RateLimited())
    emu.push("anthropic", ReplyJson(ANSWER))
    assert call(weather("openai", "anthropic", retries=1), "Paris") == Weather("Paris", 21.0)
    assert [r.provider for r in emu.requests] == ["openai", "openai", "anthropic"]
    assert len(sleeps) == 1


def test_the_variable_names_the_fallbacks(
    emu: Emulator, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "ALLOY_FALLBACK_MODELS", f"{PROVIDERS['gemini'][0]}, {PROVIDERS['ollama'][0]}"
    )
    emu.push("openai", HttpError(502))
    emu.push("gemini", HttpError(503))
    emu.push("ollama", ReplyJson(ANSWER))
    assert call(weather("openai", None, retries=0), "Paris") == Weather("Paris", 21.0)
    assert [r.provider for r in emu.requests] == ["openai", "gemini", "ollama"]


def test_when_every_model_fails_the_errors_are_chained_and_the_moves_are_events(
    emu: Emulator, call: Call
) -> None:
    seen: list[ev.Event] = []
    unsubscribe = ev.subscribe(seen.append)
    emu.push("anthropic", HttpError(500))
    emu.push("gemini", HttpError(503))
    emu.push("ollama", Disconnect())
    forecast = weather("anthropic", "gemini", retries=0).with_options(
        fallback=[PROVIDERS["gemini"][0], PROVIDERS["ollama"][0]]
    )
    try:
        with pytest.raises(CommandError) as info:
            call(forecast, "Paris")
    finally:
        unsubscribe()
    last = info.value
    assert type(last).__name__ == "ProviderConnectionError" and last.attempts == 3
    middle = last.__cause__
    assert isinstance(middle, ServerError) and middle.provider == "gemini"
    assert isinstance(middle.__cause__, ServerError) and middle.__cause__.provider == "anthropic"
    moves = [e for e in seen if isinstance(e, ev.FellBack)]
    assert [(m.from_model, m.to_model) for m in moves] == [
        (PROVIDERS["anthropic"][0], PROVIDERS["gemini"][0]),
        (PROVIDERS["gemini"][0], PROVIDERS["ollama"][0]),
    ]
    assert [m.error for m in moves] == [middle.__cause__, middle]
    assert len({e.call_id for e in seen}) == 1
    assert [type(e).__name__ for e in seen if not isinstance(e, ev.ModelRequest)] == [
        "CommandStarted",
        "PromptRendered",
        "FellBack",
        "FellBack",
        "CommandFailed",
    ]


# -- streamed calls -------------------------------------------------------------------------


@pytest.mark.parametrize("primary", per_adapter())
def test_a_stream_moves_on_before_its_first_text(primary: str, emu: Emulator, stream: Call) -> None:
    fallback = other_queue(primary)
    emu.push(queue_of(primary), HttpError(500))
    emu.push(queue_of(fallback), ReplyText("From the fallback."))
    assert "".join(stream(chat(primary, fallback, retries=0), "Hi")) == "From the fallback."


def collect(say: Any, mode: str) -> tuple[list[str], BaseException | None]:
    """The chunks a streamed call yielded, and the error it ended in (or None)."""
    chunks: list[str] = []
    try:
        if mode == "sync":
            for chunk in say.stream("Hi"):
                chunks.append(chunk)
        else:

            async def gather() -> None:
                async for chunk in say.astream("Hi"):
                    chunks.append(chunk)

            asyncio.run(gather())
    except CommandError as error:
        return chunks, error
    return chunks, None


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("primary", per_adapter())
def test_a_stream_that_failed_after_text_raises_its_error(
    primary: str, mode: str, emu: Emulator
) -> None:
    fallback = other_queue(primary)
    emu.push(queue_of(primary), StreamError(after=5, reply=ReplyText("a long answer " * 4)))
    emu.push(queue_of(fallback), ReplyText("From the fallback."))
    chunks, error = collect(chat(primary, fallback, retries=0), mode)
    assert chunks and "".join(chunks) in "a long answer " * 4
    assert isinstance(error, ServerError)
    assert emu.requests_for(queue_of(fallback)) == []


# -- keys -----------------------------------------------------------------------------------

KEY = "sk-proj-Fa11backKeyZk3p9QvB7mW2xR5tL8nJ4"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_key_option_stays_with_its_provider_and_shows_nowhere(
    mode: str,
    emu: Emulator,
    observed: dict[str, Any],  # noqa: F811  (the fixture)
    caplog: pytest.LogCaptureFixture,
) -> None:
    emu.push("openai", HttpError(500, echo_key=True))
    emu.push("anthropic", HttpError(503, echo_key=True))
    say = chat("openai", "anthropic", retries=0, api_key=KEY, log_content=True)
    chunks, error = collect(say, mode)
    assert chunks == [] and error is not None
    to_openai, to_anthropic = emu.requests
    assert KEY in json.dumps(dict(to_openai.headers))
    assert KEY not in json.dumps(dict(to_anthropic.headers))  # its own key, from its variable
    assert DEFAULT_API_KEY in json.dumps(dict(to_anthropic.headers))
    assert any(isinstance(e, ev.FellBack) for e in observed["events"])
    texts = shown(error) + observations(observed, caplog)
    assert not [t for t in texts if KEY in t]


def test_the_key_option_serves_a_fallback_that_reads_the_same_key(
    emu: Emulator, call: Call
) -> None:
    emu.push("openai", HttpError(500), ReplyJson(ANSWER))
    forecast = weather("openai", "openai-chat", retries=0, api_key=KEY)
    assert call(forecast, "Paris") == Weather("Paris", 21.0)
    responses, chat_completions = emu.requests
    assert (responses.api, chat_completions.api) == ("openai.responses", "openai.chat")
    assert KEY in json.dumps(dict(chat_completions.headers))


# -- spans ----------------------------------------------------------------------------------


@pytest.fixture
def spans() -> Iterator[Any]:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from alloy.otel import instrument

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    stop = instrument(tracer_provider)
    yield exporter
    stop()


def assert_spans_show_the_move(spans: Any, command_name: str, primary: str, fallback: str) -> None:
    """The call's span holds both models' spans, the first marked with its error, and an
    ``alloy.fallback`` event naming the two models and the error that moved the call on."""
    finished = spans.get_finished_spans()
    (command_span,) = [s for s in finished if s.name == f"command {command_name}"]
    first, second = sorted(
        (s for s in finished if s.name.startswith("chat ")), key=lambda s: s.start_time
    )
    assert {first.parent.span_id, second.parent.span_id} == {command_span.context.span_id}
    primary_model, fallback_model = PROVIDERS[primary][0], PROVIDERS[fallback][0]
    assert first.name == f"chat {primary_model.split(':', 1)[1]}"
    assert second.name == f"chat {fallback_model.split(':', 1)[1]}"
    assert first.attributes["gen_ai.provider.name"] != second.attributes["gen_ai.provider.name"]
    assert first.attributes["error.type"] == "ServerError"
    assert "error.type" not in second.attributes
    assert second.attributes["gen_ai.usage.output_tokens"] > 0
    (moved,) = command_span.events
    assert moved.name == "alloy.fallback"
    assert dict(moved.attributes) == {
        "alloy.fallback.from": primary_model,
        "alloy.fallback.to": fallback_model,
        "error.type": "ServerError",
    }
    assert "error.type" not in command_span.attributes  # the call itself succeeded


@pytest.mark.parametrize("primary", per_adapter())
def test_spans_show_the_move_through_the_sdks(
    primary: str, emu: Emulator, spans: Any, call: Call
) -> None:
    fallback = other_queue(primary)
    emu.push(queue_of(primary), HttpError(500))
    emu.push(queue_of(fallback), ReplyJson(ANSWER))
    forecast = weather(primary, fallback, retries=0)
    assert call(forecast, "Paris") == Weather("Paris", 21.0)
    assert_spans_show_the_move(spans, forecast.name, primary, fallback)


@pytest.mark.parametrize("primary", per_adapter())
def test_a_streams_spans_show_the_move_through_the_sdks(
    primary: str, emu: Emulator, spans: Any, stream: Call
) -> None:
    fallback = other_queue(primary)
    emu.push(queue_of(primary), HttpError(500))
    emu.push(queue_of(fallback), ReplyText("From the fallback."))
    say = chat(primary, fallback, retries=0)
    assert "".join(stream(say, "Hi")) == "From the fallback."
    assert_spans_show_the_move(spans, say.name, primary, fallback)
