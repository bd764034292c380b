"""Fallback models, without a provider: the engine alone, the option, and commands on fakes.

The engine is pushed results and its next effect is checked; commands run on FunctionModels
under both drivers. The same behaviour through every real SDK is in
``test_fallbacks_through_sdks.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest

from alloy import (
    AuthenticationError,
    BadRequestError,
    BudgetExceeded,
    ConfigurationError,
    ContentFilteredError,
    ParseError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RailBlocked,
    RateLimitError,
    RefusalError,
    ServerError,
    TruncatedOutputError,
    UnreadableResponseError,
    command,
    configure,
    pricing,
    tool,
    use_config,
)
from alloy import events as ev
from alloy._config import Config, check_options
from alloy._engine import CallModel, Emit, Failed, Plan, run
from alloy._output import JsonOutput
from alloy._types import (
    Capabilities,
    Request,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    ToolCall,
    Usage,
    UserTurn,
)
from alloy.errors import CommandError, ProviderError
from alloy.rails import Block, output_rail
from alloy.testing import FunctionModel, override_model

from ..conftest import Call

PROMPT = (Text("How many?"),)


@dataclass
class Weather:
    city: str
    temp_c: float


NO_NATIVE = Capabilities(native_schema=False, tools=True)


def plans(*fallbacks: str, observed: bool = False, **config: Any) -> Plan:
    """A plan on ``a:one`` whose fallbacks have no native schema (so they answer in tool mode)."""
    primary = Plan(
        command="cmd",
        model="a:one",
        output=JsonOutput(int),
        config=Config(**config),
        observed=observed,
    )
    spare = tuple(replace(primary, model=m, profile=NO_NATIVE) for m in fallbacks or ("b:two",))
    return replace(primary, fallbacks=spare)


def text(value: str) -> Response:
    return Response((Text(value),), usage=Usage(input_tokens=10, output_tokens=5, requests=1))


def finish(engine: Any, value: Any) -> Any:
    with pytest.raises(StopIteration) as stop:
        engine.send(value)
    return stop.value.value


# -- the engine -----------------------------------------------------------------------------


def test_a_failure_retries_gave_up_on_moves_the_call_to_the_fallback() -> None:
    engine = run(plans(retries=0), PROMPT)
    first = next(engine)
    assert first == CallModel(first.request, 0) and first.request.model == "a:one"
    second = engine.send(Failed(ServerError("down", status_code=503)))
    assert isinstance(second, CallModel) and second.fallback == 1
    assert second.request.model == "b:two"
    # The same opening; the output derived again for the fallback's capabilities.
    assert second.request.messages == first.request.messages == (UserTurn(PROMPT),)
    assert (first.request.output.mode, second.request.output.mode) == ("native", "tool")
    result = finish(engine, text('{"value": 3}'))
    assert (result.value, result.model, result.transcript.attempts) == (3, "b:two", 2)
    assert result.transcript.messages[0] == UserTurn(PROMPT)


def test_the_move_is_an_event_between_the_two_models_requests() -> None:
    engine = run(plans(retries=0, observed=True), PROMPT)
    effects = [next(engine)]
    while not isinstance(effects[-1], CallModel):
        effects.append(engine.send(None))
    error = ServerError("down")
    effects.append(engine.send(Failed(error)))
    while not isinstance(effects[-1], CallModel):
        effects.append(engine.send(None))
    events = [e.event for e in effects if isinstance(e, Emit)]
    assert [type(e).__name__ for e in events] == [
        "CommandStarted",
        "PromptRendered",
        "ModelRequest",
        "FellBack",
        "ModelRequest",
    ]
    moved = events[3]
    assert isinstance(moved, ev.FellBack)
    assert (moved.from_model, moved.to_model, moved.error) == ("a:one", "b:two", error)
    assert moved.error.transcript is not None  # the failed model's turns, on its error
    assert events[4].attempt == 2  # attempts count on across models


@pytest.mark.parametrize(
    "error",
    [
        ServerError("down"),
        RateLimitError("slow down"),
        ProviderTimeoutError("timed out"),
        ProviderConnectionError("dropped"),
        UnreadableResponseError("garbled"),
    ],
    ids=type,
)
def test_every_transient_provider_failure_moves_on(error: ProviderError) -> None:
    engine = run(plans(retries=0), PROMPT)
    next(engine)
    assert engine.send(Failed(error)).fallback == 1


@pytest.mark.parametrize(
    "error",
    [AuthenticationError("bad key"), BadRequestError("bad request")],
    ids=type,
)
def test_a_provider_failure_retries_would_not_mend_does_not_move_on(error: ProviderError) -> None:
    engine = run(plans(retries=3), PROMPT)
    next(engine)
    with pytest.raises(type(error)) as info:
        engine.send(Failed(error))
    assert info.value.__cause__ is None


@pytest.mark.parametrize(
    ("reply", "raised"),
    [
        (Response((Text("No."),), finish_reason="refusal"), RefusalError),
        (Response((Text("..."),), finish_reason="content_filter"), ContentFilteredError),
        (Response((Text('{"val'),), finish_reason="length"), TruncatedOutputError),
        (text('{"value": "three"}'), ParseError),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_an_unusable_answer_does_not_move_on(reply: Response, raised: type) -> None:
    engine = run(plans(retries=3, max_reasks=0), PROMPT)
    next(engine)
    with pytest.raises(raised):
        engine.send(reply)


def test_each_models_error_is_the_cause_of_the_next_ones_when_all_fail() -> None:
    engine = run(plans("b:two", "c:three", retries=0), PROMPT)
    next(engine)
    errors = [ServerError("a down"), RateLimitError("b busy"), ProviderConnectionError("c gone")]
    assert engine.send(Failed(errors[0])).request.model == "b:two"
    assert engine.send(Failed(errors[1])).request.model == "c:three"
    with pytest.raises(ProviderConnectionError) as info:
        engine.send(Failed(errors[2]))
    assert info.value is errors[2]
    assert info.value.__cause__ is errors[1] and errors[1].__cause__ is errors[0]
    assert info.value.attempts == 3


def test_retries_come_first_then_the_fallback() -> None:
    engine = run(plans(retries=1), PROMPT)
    next(engine)
    wait = engine.send(Failed(ServerError("down")))
    assert wait.attempt == 1
    assert engine.send(None).fallback == 0  # the retry, on the same model
    assert engine.send(Failed(ServerError("down"))).fallback == 1


def test_a_stream_that_showed_text_does_not_move_on() -> None:
    engine = run(plans(retries=0), PROMPT)
    next(engine)
    with pytest.raises(ServerError) as info:
        engine.send(Failed(ServerError("cut mid-stream"), after_text=True))
    assert info.value.attempts == 1


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_deadline_bounds_the_whole_call_fallbacks_included() -> None:
    clock = FakeClock()
    engine = run(plans(deadline=10, retries=0), PROMPT, clock=clock)
    next(engine)
    clock.now += 4
    moved = engine.send(Failed(ServerError("down")))
    assert moved.fallback == 1 and moved.request.settings.timeout == 6  # what is left of 10 s


def test_past_the_deadline_no_fallback_starts() -> None:
    clock = FakeClock()
    engine = run(plans(deadline=10, retries=0), PROMPT, clock=clock)
    next(engine)
    clock.now += 11
    with pytest.raises(ServerError):
        engine.send(Failed(ServerError("down")))


def test_without_a_deadline_each_model_gets_its_own_attempts_time() -> None:
    clock = FakeClock()
    engine = run(plans(timeout=2, retries=0), PROMPT, clock=clock)
    next(engine)
    clock.now += 5  # the primary's whole budget (2 s) spent, and more
    moved = engine.send(Failed(ProviderTimeoutError("timed out")))
    assert moved.fallback == 1 and moved.request.settings.timeout == 2


# -- the option -----------------------------------------------------------------------------


def test_one_model_or_a_list_of_them() -> None:
    spare = FunctionModel(lambda r: "x", name="spare")
    assert check_options({"fallback": "offline"}, source="t") == {"fallback": ("offline",)}
    assert check_options({"fallback": ["offline", spare]}, source="t") == {
        "fallback": ("offline", spare)
    }


@pytest.mark.parametrize("value", [42, [1], {"openai:gpt-5-mini": 1}, ["offline", None], b"x"])
def test_a_fallback_that_is_no_model_is_refused_where_it_is_written(value: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"option 'fallback' in @command"):

        @command(output=int, fallback=value)
        def count() -> str:
            return "How many?"

    with pytest.raises(ConfigurationError, match=r"option 'fallback' in configure\(\)"):
        configure(fallback=value)


def test_an_unknown_fallback_model_fails_the_call_before_any_request(call: Call) -> None:
    primary = FunctionModel(lambda r: '{"value": 1}', name="primary")

    @command(output=int, model=primary, fallback=["offline", "nosuch:model"])
    def count() -> str:
        return "How many?"

    with pytest.raises(ConfigurationError) as info:
        call(count)
    message = str(info.value)
    assert "option 'fallback'" in message and "'nosuch:model'" in message
    assert "Unknown provider 'nosuch'" in message
    assert primary.requests == []


def test_a_fallback_that_cannot_honour_the_output_mode_fails_before_any_request() -> None:
    primary = FunctionModel(lambda r: '{"value": 1}', name="primary")
    plain = FunctionModel(lambda r: '{"value": 1}', name="plain", capabilities=NO_NATIVE)

    @command(output=int, model=primary, fallback=[plain], output_mode="native")
    def count() -> str:
        return "How many?"

    with pytest.raises(ConfigurationError, match="'plain' has no native structured output"):
        count()
    assert primary.requests == []


def test_the_variable_and_the_layers_name_fallbacks(
    monkeypatch: pytest.MonkeyPatch, call: Call
) -> None:
    failing = FunctionModel(lambda r: ServerError("down"), name="primary")

    @command(output=int, model=failing, retries=0)
    def count() -> str:
        return "How many?"

    monkeypatch.setenv("ALLOY_FALLBACK_MODELS", "offline")
    assert isinstance(call(count), int)  # the offline model took the call over
    spare = FunctionModel(lambda r: '{"value": 8}', name="spare")
    with use_config(fallback=[spare]):
        assert call(count) == 8
        with pytest.raises(ServerError):
            call(count.with_options(fallback=[]))
    assert len(spare.requests) == 1


def test_a_bad_variable_names_the_option_and_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ALLOY_FALLBACK_MODELS", "anthropic:claude-sonnet-4-5, nosuch:model")
    with pytest.raises(ConfigurationError) as info:
        count_offline()
    assert "option 'fallback' in environment variable ALLOY_FALLBACK_MODELS" in str(info.value)
    assert "Unknown provider 'nosuch'" in str(info.value)


@command(output=int, model="offline")
def count_offline() -> str:
    return "How many?"


def test_the_forced_model_variable_leaves_fallbacks_out(
    monkeypatch: pytest.MonkeyPatch, call: Call
) -> None:
    monkeypatch.setenv("ALLOY_FORCE_MODEL", "offline")
    unknown = count_offline.with_options(fallback=["nosuch:model"])
    assert isinstance(call(unknown), int)  # the fallback was never even looked up


def test_a_forced_model_is_the_only_model(call: Call) -> None:
    spare = FunctionModel(lambda r: '{"value": 8}', name="spare")

    @command(output=int, model="offline", fallback=[spare], retries=0)
    def count() -> str:
        return "How many?"

    forced = FunctionModel(lambda r: ServerError("down"), name="forced")
    with override_model(forced), pytest.raises(ServerError):
        call(count)
    assert spare.requests == []


# -- commands on fakes: what moves on and what does not -------------------------------------


def failing_with(reply: Any) -> FunctionModel:
    return FunctionModel(lambda r: reply, name="primary")


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    raise ConfigurationError("lookup is not configured")


@output_rail
def no_sevens(value: int) -> Any:
    return Block("sevens are not allowed") if value == 7 else None


CASES: dict[str, tuple[Any, dict[str, Any], type[Exception]]] = {
    "refusal": (Response((Text("No."),), finish_reason="refusal"), {}, RefusalError),
    "content-filter": (Response((), finish_reason="content_filter"), {}, ContentFilteredError),
    "truncated": (Response((Text('{"va'),), finish_reason="length"), {}, TruncatedOutputError),
    "invalid": ('{"value": "x"}', {}, ParseError),
    "budget": ('{"value": "x"}', {"max_reasks": 1, "token_budget": 5}, BudgetExceeded),
    "rail": ('{"value": 7}', {"rails": [no_sevens]}, RailBlocked),
    "tool-configuration": (
        ToolCall("c1", "lookup", {"key": "k"}),
        {"tools": [lookup]},
        ConfigurationError,
    ),
    "auth": (AuthenticationError("bad key"), {}, AuthenticationError),
    "bad-request": (BadRequestError("bad"), {}, BadRequestError),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_does_not_move_on(case: str, call: Call) -> None:
    reply, options, raised = CASES[case]
    spare = FunctionModel(lambda r: '{"value": 1}', name="spare")

    options = {"max_reasks": 0, **options}

    @command(output=int, model=failing_with(reply), fallback=[spare], **options)
    def count() -> str:
        return "How many?"

    with pytest.raises(raised):
        call(count)
    assert spare.requests == []


@pytest.mark.parametrize(
    "error",
    [ServerError("down", status_code=500), RateLimitError("busy"), ProviderConnectionError("gone")],
    ids=type,
)
def test_what_moves_on(error: ProviderError, run_result: Call) -> None:
    spare = FunctionModel(lambda r: '{"value": 1}', name="spare")

    @command(output=int, model=failing_with(error), fallback=[spare], retries=0)
    def count() -> str:
        return "How many?"

    result = run_result(count)
    assert (result.value, result.model) == (1, "spare")
    assert len(spare.requests) == 1


def test_a_fallback_reruns_the_tools_of_the_turns_it_starts_over(call: Call) -> None:
    runs: list[str] = []

    @tool
    def note(key: str) -> str:
        """Note a key."""
        runs.append(key)
        return "noted"

    def primary_reply(request: Request) -> Any:
        if len(request.messages) == 1:
            return ToolCall("c1", "note", {"key": "k"})
        return ServerError("down")

    spare = FunctionModel(
        lambda r: ToolCall("c2", "note", {"key": "k"}) if len(r.messages) == 1 else '{"value": 2}',
        name="spare",
    )

    @command(
        output=int,
        model=FunctionModel(primary_reply, name="primary"),
        fallback=[spare],
        tools=[note],
        retries=0,
    )
    def count() -> str:
        return "How many?"

    assert call(count) == 2
    assert runs == ["k", "k"]
    assert spare.requests[0].messages == (UserTurn((Text("How many?"),)),)


def test_each_models_tokens_count_and_are_priced_at_its_own_price(
    run_result: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pricing, "_BOOK", pricing._PriceBook())
    pricing.set_price("primary", pricing.Price(input=1.0, output=1.0))
    pricing.set_price("spare", pricing.Price(input=100.0, output=100.0))

    @tool
    def note(key: str) -> str:
        """Note a key."""
        return "noted"

    def primary_reply(request: Request) -> Any:
        if len(request.messages) == 1:
            return ToolCall("c1", "note", {"key": "k"})
        return ServerError("down")

    @command(
        output=int,
        model=FunctionModel(primary_reply, name="primary"),  # 10 in, 5 out a turn
        fallback=[FunctionModel(lambda r: '{"value": 2}', name="spare")],
        tools=[note],
        retries=0,
    )
    def count() -> str:
        return "How many?"

    result = run_result(count)
    assert result.usage.total_tokens == 30  # the primary's tool turn and the spare's answer
    assert [(model, usage.total_tokens) for model, usage in result.usage_by_model] == [
        ("primary", 15),
        ("spare", 15),
    ]
    assert result.cost == pytest.approx((15 * 1.0 + 15 * 100.0) / 1_000_000)


class CutAfter:
    """A model whose streams send ``text`` and then fail; its whole calls fail at once."""

    capabilities = Capabilities()

    def __init__(self, text: str) -> None:
        self.name, self.text = "cut", text

    def request(self, request: Request) -> Response:
        raise ServerError("down")

    async def arequest(self, request: Request) -> Response:
        raise ServerError("down")

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        yield TextDelta(self.text)
        raise ServerError("cut mid-stream")

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        yield TextDelta(self.text)
        raise ServerError("cut mid-stream")


def partials(cmd: Any, mode: str) -> tuple[list[Any], Exception | None]:
    """What ``stream_partial`` (or its async twin) yielded, and the error it ended in."""
    seen: list[Any] = []
    try:
        if mode == "sync":
            seen.extend(cmd.stream_partial())
        else:

            async def gather() -> None:
                async for partial in cmd.astream_partial():
                    seen.append(partial)

            asyncio.run(gather())
    except CommandError as error:
        return seen, error
    return seen, None


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_typed_stream_moves_on_only_before_its_first_output(mode: str) -> None:
    spare = FunctionModel(lambda r: '{"city": "Paris", "temp_c": 21}', name="spare")

    def weather(model: Any) -> Any:
        @command(output=Weather, model=model, fallback=[spare], retries=0)
        def forecast() -> str:
            return "Weather in Paris?"

        return forecast

    shown, error = partials(weather(failing_with(ServerError("down"))), mode)
    assert error is None and shown[-1].value == Weather("Paris", 21.0)
    shown, error = partials(weather(CutAfter('{"city": "Lyon", "temp_c": 1')), mode)
    assert isinstance(error, ServerError) and shown[0].data == {"city": "Lyon"}
    assert len(spare.requests) == 1  # only the first call reached it


# -- events and spans -----------------------------------------------------------------------


def test_spans_show_the_move(call: Call) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from alloy.otel import instrument

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    stop = instrument(provider)
    spare = FunctionModel(lambda r: '{"value": 1}', name="spare:m")

    @command(output=int, model=failing_with(ServerError("down")), fallback=[spare], retries=0)
    def count() -> str:
        return "How many?"

    try:
        assert call(count) == 1
    finally:
        stop()
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert sorted(spans) == ["chat m", "chat primary", f"command {count.name}"]
    assert spans["chat primary"].attributes["error.type"] == "ServerError"
    assert "error.type" not in spans["chat m"].attributes
    (moved,) = spans[f"command {count.name}"].events
    assert moved.name == "alloy.fallback"
    assert dict(moved.attributes) == {
        "alloy.fallback.from": "primary",
        "alloy.fallback.to": "spare:m",
        "error.type": "ServerError",
    }


def test_the_move_is_logged_without_content(call: Call, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG", logger="alloy")
    spare = FunctionModel(lambda r: '{"value": 1}', name="spare")

    @command(output=int, model=failing_with(ServerError("down")), fallback=[spare], retries=0)
    def count() -> str:
        return "How many?"

    call(count)
    lines = [r.getMessage() for r in caplog.records if "FellBack" in r.getMessage()]
    assert len(lines) == 1
    assert lines[0].endswith("from=primary to=spare error=ServerError")
