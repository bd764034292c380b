"""The ``/v1`` proxy runs through the engine, as a command does: retries, fallbacks, the
deadline, the response cache, events and spans, with the RailConfig's call options; the
caller's tools come back to it as tool calls, never run here. Driven by the official openai
SDK against the emulator."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from alloy import command
from alloy import events as ev
from alloy.errors import ConfigurationError
from alloy.rails import tool_rail
from alloy.serve import RailConfig
from alloy.testing.emulator import (
    HttpError,
    ReplyMaxTokens,
    ReplyRefusal,
    ReplyText,
    ReplyToolCall,
    ReplyToolCalls,
    Slow,
    StreamError,
)

from .conftest import Start
from .served import no_canary
from .test_openai import MESSAGES, WEATHER, client

PRIMARY = "openai:gpt-5-mini"
FALLBACK = "anthropic:claude-sonnet-4-6"


@command
def echo(name: str) -> str:
    return f"Say exactly: {name}"


@pytest.fixture
def seen() -> Iterator[list[ev.Event]]:
    """Every event of every call while the test runs (the server's thread included)."""
    events: list[ev.Event] = []
    lock = threading.Lock()

    def keep(event: ev.Event) -> None:
        with lock:
            events.append(event)

    stop = ev.subscribe(keep)
    yield events
    stop()


def kinds(events: list[ev.Event]) -> list[str]:
    return [type(event).__name__ for event in events]


def text_of(made: Any, stream: bool) -> str:
    """The answer's text: a completion's, or a stream's chunks joined."""
    if stream:
        return "".join(c.choices[0].delta.content or "" for c in made if c.choices)
    return str(made.choices[0].message.content)


@pytest.mark.parametrize("stream", [False, True])
def test_a_500_then_a_200_succeeds_with_two_upstream_requests_as_a_command_does(
    start: Start, on_emulator: Any, stream: bool
) -> None:
    url = start({"echo": echo, "open": RailConfig("open")})
    on_emulator.push("openai", HttpError(500), ReplyText("Hello."))
    answer = httpx.post(f"{url}/commands/echo", json={"name": "x"}, timeout=30)
    assert (answer.status_code, answer.json()["value"]) == (200, "Hello.")
    assert len(on_emulator.requests) == 2
    on_emulator.reset()

    on_emulator.push("openai", HttpError(500), ReplyText("Hello."))
    made = client(url).chat.completions.create(model="open", messages=MESSAGES, stream=stream)
    assert text_of(made, stream) == "Hello."
    assert len(on_emulator.requests) == 2


def test_the_responses_route_retries_too(start: Start, on_emulator: Any) -> None:
    on_emulator.push("openai", HttpError(503), ReplyText("Again."))
    response = client(start({"open": RailConfig("open")})).responses.create(
        model="open", input="Hi"
    )
    assert response.output_text == "Again."
    assert len(on_emulator.requests) == 2


def test_the_rail_configs_call_options_hold(start: Start, on_emulator: Any) -> None:
    """``retries=0``: one upstream request, then the provider's failure as a 502."""
    url = start({"once": RailConfig("once", retries=0)})
    on_emulator.push("openai", HttpError(500), ReplyText("never sent"))
    with pytest.raises(openai.InternalServerError) as caught:
        client(url).chat.completions.create(model="once", messages=MESSAGES)
    assert caught.value.status_code == 502
    assert caught.value.body["type"] == "provider_error"
    assert len(on_emulator.requests) == 1


@pytest.mark.parametrize("stream", [False, True])
def test_a_fallback_answers_when_the_first_model_keeps_failing(
    start: Start, on_emulator: Any, stream: bool
) -> None:
    config = RailConfig("fb", model=PRIMARY, fallback=[FALLBACK], retries=1)
    url = start({"fb": config})
    on_emulator.push("openai", HttpError(500), HttpError(500))
    on_emulator.push("anthropic", ReplyText("From the fallback."))
    made = client(url).chat.completions.create(model="fb", messages=MESSAGES, stream=stream)
    assert text_of(made, stream) == "From the fallback."
    assert [r.provider for r in on_emulator.requests] == ["openai", "openai", "anthropic"]


def test_the_response_cache_answers_a_repeated_request(start: Start, on_emulator: Any) -> None:
    url = start({"cached": RailConfig("cached", cache="memory", cache_all=True)})
    on_emulator.push("openai", ReplyText("Paid once."), ReplyText("Paid twice."))
    api = client(url)
    first = api.chat.completions.create(model="cached", messages=MESSAGES)
    second = api.chat.completions.create(model="cached", messages=MESSAGES)
    assert first.choices[0].message.content == second.choices[0].message.content == "Paid once."
    assert len(on_emulator.requests) == 1


def test_the_deadline_bounds_the_proxied_call(start: Start, on_emulator: Any) -> None:
    """A reply slower than the deadline: the request is given up at the deadline, a 504,
    and there is no time left to send it again."""
    url = start({"rushed": RailConfig("rushed", deadline=0.3)})
    on_emulator.push("openai", Slow(2.0), ReplyText("never sent"))
    with pytest.raises(openai.APIStatusError) as caught:
        client(url).chat.completions.create(model="rushed", messages=MESSAGES)
    assert caught.value.status_code == 504
    assert caught.value.body["type"] == "provider_timeout"
    assert len(on_emulator.requests) == 1


def test_a_proxied_call_emits_the_events_of_a_command_call(
    start: Start, on_emulator: Any, seen: list[ev.Event]
) -> None:
    url = start({"echo": echo, "open": RailConfig("open")})
    on_emulator.push("openai", ReplyText("Hello."), ReplyText("Hello."))
    httpx.post(f"{url}/commands/echo", json={"name": "x"}, timeout=30).raise_for_status()
    by_command = kinds(seen)
    seen.clear()
    client(url).chat.completions.create(model="open", messages=MESSAGES)
    assert kinds(seen) == by_command
    started = seen[0]
    assert isinstance(started, ev.CommandStarted) and started.command == "open"
    assert len({event.call_id for event in seen}) == 1


def test_the_callers_tools_come_back_as_tool_calls_and_are_never_run(
    start: Start, on_emulator: Any, seen: list[ev.Event]
) -> None:
    url = start({"open": RailConfig("open")})
    on_emulator.push(
        "openai", ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Rome"}, id="call_7"))
    )
    for stream in (False, True):
        made = client(url).chat.completions.create(
            model="open", messages=MESSAGES, tools=[WEATHER], stream=stream
        )
        if stream:
            chunks = list(made)
            deltas = [
                call for c in chunks if c.choices for call in c.choices[0].delta.tool_calls or []
            ]
            # The arguments come as deltas: the first names the call, the rest add to it.
            first = deltas[0]
            first.function.arguments = "".join(d.function.arguments or "" for d in deltas)
            assert {d.index for d in deltas} == {0} and [d.id for d in deltas[1:]] == [None] * (
                len(deltas) - 1
            )
            calls = [first]
            finish = [c.choices[0].finish_reason for c in chunks if c.choices][-1]
        else:
            calls, finish = made.choices[0].message.tool_calls, made.choices[0].finish_reason
        assert [(c.id, c.function.name) for c in calls] == [("call_7", "get_weather")]
        assert json.loads(calls[0].function.arguments) == {"city": "Rome"}
        assert finish == "tool_calls"
        on_emulator.push(
            "openai", ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Rome"}, id="call_7"))
        )
    assert not [e for e in seen if isinstance(e, (ev.ToolCallStarted, ev.ToolCallFinished))]
    assert len(on_emulator.requests) == 2  # one per request: nothing was run and sent back


@tool_rail
def redact(call: Any, result: Any) -> str | None:
    """Rewrites the tool results the caller sends back."""
    if result is not None and "secret" in result.content:
        return "[redacted]"
    return None


def test_tool_rails_see_the_results_the_caller_sends(start: Start, on_emulator: Any) -> None:
    url = start({"tools": RailConfig("tools", rails=[redact])})
    on_emulator.push("openai", ReplyText("Noted."))
    history = [
        *MESSAGES,
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "the secret is 42"},
    ]
    client(url).chat.completions.create(model="tools", messages=history, tools=[WEATHER])
    sent = json.dumps(on_emulator.last_request("openai").body["input"])
    assert "[redacted]" in sent and "secret" not in sent


def test_a_cut_off_or_refused_reply_is_the_callers_answer(start: Start, on_emulator: Any) -> None:
    api = client(start({"open": RailConfig("open")}))
    on_emulator.push("openai", ReplyMaxTokens("Half an ans"))
    cut = api.chat.completions.create(model="open", messages=MESSAGES)
    assert (cut.choices[0].finish_reason, cut.choices[0].message.content) == (
        "length",
        "Half an ans",
    )
    on_emulator.push("openai", ReplyRefusal("I can't help with that."))
    refused = api.chat.completions.create(model="open", messages=MESSAGES)
    assert refused.choices[0].message.refusal == "I can't help with that."
    assert len(on_emulator.requests) == 2  # neither was retried nor re-asked


def test_a_stream_that_reached_the_caller_is_not_sent_again(start: Start, on_emulator: Any) -> None:
    url = start({"open": RailConfig("open")})
    on_emulator.push(
        "openai",
        StreamError(after=7, reply=ReplyText("alpha beta gamma delta eps")),
        ReplyText("never sent"),
    )
    raw = httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "open", "messages": MESSAGES, "stream": True},
        timeout=30,
    ).text
    assert raw.rstrip().endswith("data: [DONE]")
    assert '"error"' in raw.rsplit("data: ", 2)[1]
    assert "never sent" not in raw
    assert len(on_emulator.requests) == 1


def test_a_rail_config_takes_commands_options_and_refuses_unknown_ones() -> None:
    config = RailConfig("x", model=PRIMARY, retries=5, deadline=30.0, fallback=[FALLBACK])
    assert config.model == PRIMARY
    assert config.options["retries"] == 5
    assert "api_key" not in repr(RailConfig("y", api_key="sk-secret-1"))
    assert "sk-secret-1" not in repr(RailConfig("y", api_key="sk-secret-1"))
    with pytest.raises(ConfigurationError, match="retires"):
        RailConfig("z", retires=3)  # type: ignore[call-arg]


def test_a_streamed_json_answer_from_a_fallback_in_tool_mode_is_sent(
    start: Start, on_emulator: Any
) -> None:
    """The fallback has no native structured output, so its answer is a tool call: the
    stream sends it whole at the end, as for a first model in tool mode."""
    config = RailConfig("fbjson", model=PRIMARY, fallback=["openai:gpt-4"], retries=0)
    url = start({"fbjson": config})
    answer = ReplyToolCall("Rating", {"title": "Good", "stars": 5})
    on_emulator.push("openai", HttpError(500), ReplyToolCalls(answer))
    schema = {
        "type": "object",
        "properties": {"title": {"type": "string"}, "stars": {"type": "integer"}},
        "required": ["title", "stars"],
        "additionalProperties": False,
    }
    made = client(url).chat.completions.create(
        model="fbjson",
        messages=MESSAGES,
        stream=True,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "Rating", "schema": schema, "strict": True},
        },
    )
    assert json.loads(text_of(made, True)) == {"title": "Good", "stars": 5}
    assert [r.model for r in on_emulator.requests] == ["gpt-5-mini", "gpt-4"]


def test_a_held_back_stream_that_fails_is_sent_again(start: Start, on_emulator: Any) -> None:
    """With output rails nothing reaches the caller before the answer is whole, so a reply
    that breaks off mid-stream is asked again, as a whole call's would be."""
    url = start({"held": RailConfig("held", rails=[no_canary])})
    on_emulator.push(
        "openai",
        StreamError(after=7, reply=ReplyText("alpha beta gamma delta eps")),
        ReplyText("A whole answer."),
    )
    made = client(url).chat.completions.create(model="held", messages=MESSAGES, stream=True)
    assert text_of(made, True) == "A whole answer."
    assert len(on_emulator.requests) == 2


def test_serve_runs_no_rail_and_no_model_of_its_own() -> None:
    """Rails and model requests go through the engine and its driver: no module of
    alloy.serve applies a rail or sends a request itself, nor imports a private of Command."""
    import ast
    from pathlib import Path

    import alloy.serve

    calls = {"apply", "aapply", "request", "arequest", "stream", "astream"}
    found = []
    for path in Path(alloy.serve.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in calls
                and isinstance(node.value, ast.Name)
                and node.value.id in ("rail", "model")
            ):
                found.append(f"{path.name}: {node.value.id}.{node.attr}")
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("_command"):
                found += [f"{path.name}: {a.name}" for a in node.names if a.name.startswith("_")]
    assert not found
