"""A canary API key never shows up in a log record, event, span attribute, error message or repr.

Every provider runs through its real SDK against the emulator, on success and on every failure
path the emulator can inject, with DEBUG logging and content logging switched on.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from alloy import CommandError, command, tool
from alloy import events as ev
from alloy.testing.emulator import (
    Disconnect,
    Emulator,
    HttpError,
    Overloaded,
    RateLimited,
    ReplyJson,
    ReplyMalformedJson,
    ReplyToolCalls,
    SchemaRejected,
    Slow,
    Unauthorized,
)

CANARY = "sk-canary-7f3a9c2e5b1d4f6a8c0e2b4d6f8a0c1e"

PROVIDERS = {
    "openai": ("openai:gpt-4o-mini", "openai", "OPENAI_API_KEY"),
    "openai-chat": ("openai-chat:gpt-4o-mini", "openai", "OPENAI_API_KEY"),
    "anthropic": ("anthropic:claude-sonnet-4-6", "anthropic", "ANTHROPIC_API_KEY"),
    # The variable the emulator's environment sets and google-genai reads first.
    "gemini": ("gemini:gemini-2.5-flash", "gemini", "GOOGLE_API_KEY"),
    "ollama": ("ollama:llama3.2", "ollama", "OLLAMA_API_KEY"),
}


def _available(provider: str) -> bool:
    module = "openai_responses" if provider == "openai" else provider.replace("-", "_")
    return importlib.util.find_spec(f"alloy.providers.{module}") is not None


@dataclass
class Weather:
    city: str
    temp_c: float


@tool
def lookup(city: str) -> str:
    """Look up a city."""
    return city


@pytest.fixture
def collected(caplog: pytest.LogCaptureFixture) -> Iterator[dict[str, list[Any]]]:
    """Collect events and spans (every SDK's key variable holds the canary, Ollama's too)."""
    events: list[Any] = []
    unsubscribe = ev.subscribe(events.append)
    spans: list[Any] = []
    stop_tracing = None
    if importlib.util.find_spec("opentelemetry.sdk") is not None:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from alloy.otel import instrument

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        stop_tracing = instrument(provider)
        spans = exporter  # type: ignore[assignment]
    caplog.set_level(logging.DEBUG)
    yield {"events": events, "spans": [spans]}
    unsubscribe()
    if stop_tracing:
        stop_tracing()


FAULTS = {
    "ok": lambda: (ReplyJson({"city": "Paris", "temp_c": 21.5}),),
    "tool_round": lambda: (
        ReplyToolCalls(("lookup", {"city": "Paris"})),
        ReplyJson({"city": "Paris", "temp_c": 1.0}),
    ),
    "unauthorized": lambda: (Unauthorized(),),
    "rate_limited": lambda: (RateLimited(), RateLimited()),
    "server_error": lambda: (HttpError(500), HttpError(500)),
    "overloaded": lambda: (Overloaded(), Overloaded()),
    "schema_rejected": lambda: (SchemaRejected(),),
    "malformed": lambda: (ReplyMalformedJson(), ReplyMalformedJson()),
    "disconnect": lambda: (Disconnect(), Disconnect()),
    "timeout": lambda: (Slow(2.0), Slow(2.0)),
}
#: The request timeout: 0.5 s, well within which an answer arrives even on a busy machine; 0.2 s
#: for the timeout fault, where nothing but the slow replies (each waited out) follows.
TIMEOUTS = {"timeout": 0.2}


def _texts(
    error: BaseException | None, collected: dict[str, list[Any]], caplog: pytest.LogCaptureFixture
) -> list[str]:
    texts = [record.getMessage() for record in caplog.records]
    texts += [repr(record.args) for record in caplog.records]
    texts += [
        "".join(traceback.format_exception(*r.exc_info)) for r in caplog.records if r.exc_info
    ]
    texts += [repr(event) for event in collected["events"]]
    for exporter in collected["spans"]:
        if hasattr(exporter, "get_finished_spans"):
            for span in exporter.get_finished_spans():
                texts.append(repr(dict(span.attributes)))
                texts.append(repr(span.status.description))
                texts += [repr(e.attributes) for e in span.events]
    if error is not None:
        texts += [str(error), repr(error), repr(vars(error))]
        # The whole printed traceback of alloy's error, SDK cause included.
        texts.append("".join(traceback.format_exception(type(error), error, error.__traceback__)))
    return texts


@pytest.mark.parametrize(
    "emu",
    [{variable: CANARY for _, _, variable in PROVIDERS.values()}],
    indirect=True,
    ids=["canary"],
)
@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
@pytest.mark.parametrize("driver", ["sync", "async"])
def test_canary_key_never_leaks(
    provider: str,
    fault: str,
    driver: str,
    emu: Emulator,
    collected: dict[str, list[Any]],
    caplog: pytest.LogCaptureFixture,
    sleeps: list[float],
) -> None:
    """Every fault, retried once: the waits before the retry are recorded, not slept (what is
    logged and emitted about them is the same)."""
    if not _available(provider):
        pytest.skip(f"the {provider} adapter is not available")
    model, queue, _ = PROVIDERS[provider]
    emu.push(queue, *FAULTS[fault]())

    @command(
        output=Weather,
        model=model,
        tools=[lookup],
        retries=1,
        max_reasks=1,
        timeout=TIMEOUTS.get(fault, 0.5),
        log_content=True,
    )
    def weather(city: str) -> str:
        return f"Weather in {city}?"

    error: BaseException | None = None
    try:
        if driver == "sync":
            weather("Paris")
        else:
            asyncio.run(weather.acall("Paris"))
    except CommandError as exc:
        error = exc
    if fault in ("ok", "tool_round"):
        assert error is None
    else:
        assert isinstance(error, CommandError)
    assert collected["events"], "events were emitted"
    assert all(CANARY in str(request.headers) for request in emu.requests), "the canary was sent"
    for text in _texts(error, collected, caplog):
        assert CANARY not in text
        assert CANARY[8:] not in text  # no partial key either


def _fallback_for(provider: str) -> str:
    """A provider on another emulator queue, for ``provider``'s calls to fall back to."""
    return "openai" if PROVIDERS[provider][1] != "openai" else "anthropic"


HISTORY = [
    {"role": "system", "content": "You report the weather."},
    {"role": "user", "content": "Weather in Lyon?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"city": "Lyon"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "Lyon"},
    {"role": "assistant", "content": '{"city": "Lyon", "temp_c": 18.0}'},
]

#: Each feature: what the call's provider (and its fallback) are sent, and the call's options.
FEATURES = {
    "fallback": lambda p: (
        {p: (HttpError(500, echo_key=True),), _fallback_for(p): FAULTS["ok"]()},
        {"fallback": [PROVIDERS[_fallback_for(p)][0]]},
    ),
    "fallback_fails_too": lambda p: (
        {
            p: (HttpError(500, echo_key=True),),
            _fallback_for(p): (HttpError(503, echo_key=True),),
        },
        {"fallback": [PROVIDERS[_fallback_for(p)][0]]},
    ),
    "history": lambda p: ({p: FAULTS["tool_round"]()}, {}),
    "history_fails": lambda p: ({p: (HttpError(400, echo_key=True),)}, {}),
    "prompt_cache": lambda p: (
        {p: FAULTS["tool_round"]()},
        {"prompt_cache": True}
        | ({"prompt_cache_key": "tenant-7"} if p.startswith("openai") else {}),
    ),
    "prompt_cache_fails": lambda p: ({p: (HttpError(429, echo_key=True),)}, {"prompt_cache": True}),
}


@pytest.mark.parametrize(
    "emu",
    [{variable: CANARY for _, _, variable in PROVIDERS.values()}],
    indirect=True,
    ids=["canary"],
)
@pytest.mark.parametrize("feature", sorted(FEATURES))
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
@pytest.mark.parametrize("driver", ["sync", "async"])
def test_canary_key_never_leaks_from_fallbacks_histories_or_prompt_caching(
    provider: str,
    feature: str,
    driver: str,
    emu: Emulator,
    collected: dict[str, list[Any]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Fallbacks (a failure that echoes the key moves the call on, or every model fails and
    the errors are chained), a history with a tool round carried on, and prompt caching."""
    if not _available(provider):
        pytest.skip(f"the {provider} adapter is not available")
    pushes, options = FEATURES[feature](provider)
    for name, items in pushes.items():
        emu.push(PROVIDERS[name][1], *items)
    history = HISTORY if feature.startswith("history") else None

    @command(
        output=Weather,
        model=PROVIDERS[provider][0],
        tools=[lookup],
        retries=0,
        log_content=True,
        **options,
    )
    def weather(city: str) -> str:
        return f"Weather in {city}?"

    error: BaseException | None = None
    try:
        if driver == "sync":
            result = weather.using(history=history).run("Paris")
        else:
            result = asyncio.run(weather.using(history=history).arun("Paris"))
    except CommandError as exc:
        error = exc
    if feature.endswith(("fails", "fails_too")):
        assert isinstance(error, CommandError)
        if feature == "fallback_fails_too":
            assert error.__cause__ is not None  # the primary's error, chained below
    else:
        assert error is None, error
        assert result.value.city == "Paris"
        if feature == "fallback":
            assert result.model == PROVIDERS[_fallback_for(provider)][0]
    assert all(not emu.pending(PROVIDERS[name][1]) for name in pushes)
    # Every request presented the key, so every failure's body echoed it back.
    assert all(CANARY in str(request.headers) for request in emu.requests)
    assert collected["events"], "events were emitted"
    for text in _texts(error, collected, caplog):
        assert CANARY not in text
        assert CANARY[8:] not in text
