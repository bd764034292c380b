"""The engine alone, with no model and no driver: push results in, assert the next effect."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from alloy._config import Config
from alloy._engine import (
    Blocked,
    CallModel,
    Emit,
    Failed,
    Plan,
    RunRails,
    RunTools,
    Sleep,
    ToolOutcome,
    run,
)
from alloy._output import JsonOutput, TextOutput
from alloy._rail_types import (
    OutputSubject,
    PromptSubject,
    Rail,
    ToolCallSubject,
    ToolResultSubject,
)
from alloy._types import (
    FINALIZE_SCHEMA_PROMPT,
    Capabilities,
    ModelTurn,
    Response,
    RetryPrompt,
    Text,
    ToolCall,
    ToolDefinition,
    ToolResult,
    Usage,
    UserTurn,
)
from alloy.errors import (
    ConfigurationError,
    ParseError,
    ProviderTimeoutError,
    RailBlocked,
    RateLimitError,
    ServerError,
    ToolLoopLimitExceeded,
)

TOOL = ToolDefinition(
    "add",
    "Add.",
    {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
)


PROMPT = (Text("hi"),)


def plan(output: Any = None, **config: Any) -> Plan:
    return Plan(
        command="cmd",
        model="test:model",
        output=JsonOutput(output) if output is not None else TextOutput(),
        config=Config(**config),
        tools=(TOOL,),
    )


def text(value: str, **usage: int) -> Response:
    return Response((Text(value),), usage=Usage(**usage, requests=1))


def finish(engine: Any, value: Any) -> Any:
    with pytest.raises(StopIteration) as stop:
        engine.send(value)
    return stop.value.value


def test_plain_call_is_one_model_effect() -> None:
    engine = run(plan(), PROMPT)
    effect = next(engine)
    assert isinstance(effect, CallModel)
    assert effect.request.messages == (UserTurn((Text("hi"),)),)
    assert effect.request.tools == (TOOL,)
    assert effect.request.output is None
    outcome = finish(engine, text("hello", input_tokens=3, output_tokens=2))
    assert outcome.value == "hello"
    assert outcome.transcript.usage.total_tokens == 5


def test_the_engine_prices_nothing_the_driver_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's Result carries each model's usage and no cost; the driver prices it."""
    from alloy import pricing
    from alloy._drivers import priced

    monkeypatch.setattr(pricing, "_BOOK", pricing._PriceBook())
    pricing.set_price("test:model", pricing.Price(input=1.0, output=2.0))
    engine = run(plan(), PROMPT)
    next(engine)
    outcome = finish(engine, text("hello", input_tokens=3, output_tokens=2))
    assert outcome.cost is None
    assert outcome.usage_by_model == (("test:model", outcome.usage),)
    assert priced(outcome).cost == pytest.approx((3 * 1.0 + 2 * 2.0) / 1_000_000)


def test_tool_round_then_answer() -> None:
    engine = run(plan(int), PROMPT)
    first = next(engine)
    assert first.request.output.schema["properties"]["value"] == {"type": "integer"}
    calls = (ToolCall("1", "add", {}), ToolCall("2", "add", {}))
    effect = engine.send(Response(calls, finish_reason="tool_calls"))
    assert effect == RunTools(calls)
    results = [ToolOutcome(ToolResult("1", "add", "1")), ToolOutcome(ToolResult("2", "add", "2"))]
    second = engine.send(results)
    assert isinstance(second, CallModel)
    assert second.request.messages[-2] == ModelTurn(calls)
    assert second.request.messages[-1] == UserTurn(
        (ToolResult("1", "add", "1"), ToolResult("2", "add", "2"))
    )
    assert finish(engine, text('{"value": 3}')).value == 3


def test_reask_then_give_up() -> None:
    engine = run(plan(int, max_reasks=1), PROMPT)
    next(engine)
    retry = engine.send(text('{"value": "three"}'))
    assert isinstance(retry.request.messages[-1].parts[0], RetryPrompt)
    with pytest.raises(ParseError) as info:
        engine.send(text('{"value": "still"}'))
    assert info.value.transcript.attempts == 2
    assert len(info.value.transcript.messages) == 4


def test_transient_failure_sleeps_then_retries_the_same_request() -> None:
    engine = run(plan(retries=2), PROMPT)
    first = next(engine)
    sleep = engine.send(Failed(RateLimitError("slow down", retry_after=0.25)))
    assert sleep == Sleep(attempt=1, retry_after=0.25, longest=0.25)
    again = engine.send(None)
    assert again == first
    assert finish(engine, text("ok")).transcript.attempts == 2


def test_retries_are_bounded_and_the_error_carries_the_transcript() -> None:
    engine = run(plan(retries=1), PROMPT)
    next(engine)
    assert isinstance(engine.send(Failed(ServerError("down"))), Sleep)
    engine.send(None)
    with pytest.raises(ServerError) as info:
        engine.send(Failed(ServerError("down")))
    assert info.value.command == "cmd"
    assert info.value.attempts == 2


def test_non_transient_failures_are_not_retried() -> None:
    from alloy.errors import AuthenticationError, BadRequestError

    for error in (AuthenticationError("no"), BadRequestError("bad")):
        engine = run(plan(retries=5), PROMPT)
        next(engine)
        with pytest.raises(type(error)):
            engine.send(Failed(error))


def test_a_retried_turn_never_reruns_tools() -> None:
    engine = run(plan(retries=1), PROMPT)
    next(engine)
    calls = (ToolCall("1", "add", {}),)
    assert isinstance(engine.send(Response(calls, finish_reason="tool_calls")), RunTools)
    engine.send([ToolOutcome(ToolResult("1", "add", "1"))])
    assert isinstance(engine.send(Failed(ServerError("down"))), Sleep)
    retried = engine.send(None)
    assert isinstance(retried, CallModel)  # the model call is repeated, not the tools
    assert retried.request.messages[-1] == UserTurn((ToolResult("1", "add", "1"),))


def test_tool_turn_limit() -> None:
    engine = run(plan(max_tool_turns=1), PROMPT)
    next(engine)
    call = Response((ToolCall("1", "add", {}),), finish_reason="tool_calls")
    engine.send(call)
    engine.send([ToolOutcome(ToolResult("1", "add", "1"))])
    with pytest.raises(ToolLoopLimitExceeded):
        engine.send(call)


def test_finalize_turn_drops_tools_and_keeps_schema() -> None:
    engine = run(plan(int), PROMPT)
    next(engine)
    engine.send(Response((ToolCall("1", "add", {}),), finish_reason="tool_calls"))
    engine.send([ToolOutcome(ToolResult("1", "add", "1"))])
    finalize = engine.send(text(""))
    assert finalize.request.tools == ()
    assert finalize.request.output is not None
    assert finish(engine, text('{"value": 9}')).value == 9


def test_tool_output_mode_reads_the_forced_tool() -> None:
    p = plan(int)
    p = replace(p, profile=Capabilities(native_schema=False))
    engine = run(p, PROMPT)
    effect = next(engine)
    assert effect.request.output.mode == "tool"
    assert finish(engine, Response((ToolCall("o", p.output.name, {"value": 4}),))).value == 4


def test_explicit_native_mode_on_a_model_without_it_is_a_configuration_error() -> None:
    p = plan(int, output_mode="native")
    p = replace(p, profile=Capabilities(native_schema=False))
    with pytest.raises(ConfigurationError, match="no native structured output"):
        next(run(p, PROMPT))


def test_backoff_grows_and_honours_retry_after() -> None:
    engine = run(plan(retries=7), PROMPT)
    next(engine)
    waits = []
    for _ in range(6):
        waits.append(engine.send(Failed(ServerError("down"))))
        engine.send(None)
    assert [w.longest for w in waits] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert [w.attempt for w in waits] == [1, 2, 3, 4, 5, 6]
    hinted = engine.send(Failed(RateLimitError("slow down", retry_after=3.0)))
    assert hinted == Sleep(7, 3.0, 3.0)


def test_the_driver_jitters_a_backoff_between_half_and_all_of_its_ceiling() -> None:
    backoff = Sleep(attempt=2, retry_after=None, longest=1.0)
    assert backoff.seconds(0.0) == 0.5
    assert backoff.seconds(0.5) == 0.75
    assert backoff.seconds(0.999) < 1.0
    assert Sleep(attempt=1, retry_after=3.0, longest=3.0).seconds(0.7) == 3.0  # a hint, as it is


def test_a_configuration_error_from_a_tool_is_raised_not_reported() -> None:
    engine = run(plan(), PROMPT)
    next(engine)
    calls = (ToolCall("1", "add", {}), ToolCall("2", "add", {}))
    engine.send(Response(calls, finish_reason="tool_calls"))
    mistake = ConfigurationError("No model configured")
    outcomes = [
        ToolOutcome(ToolResult("1", "add", "1")),
        ToolOutcome(ToolResult("2", "add", "Error: ...", is_error=True), mistake),
    ]
    with pytest.raises(ConfigurationError) as info:
        engine.send(outcomes)
    assert info.value is mistake


def test_a_lone_surrogate_in_the_system_prompt_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError) as info:
        next(run(plan(system="Be terse.\udce9"), PROMPT))
    message = str(info.value)
    assert "system prompt" in message and r"('\udce9') at index 9" in message
    assert "errors='replace'" in message


# -- the call's time budget, on a fake clock ----------------------------------------------------


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def timed(clock: FakeClock, **config: Any) -> Any:
    return run(plan(**config), PROMPT, clock=clock)


def test_a_retry_hint_that_does_not_fit_the_deadline_fails_at_once() -> None:
    engine = timed(FakeClock(), timeout=0.5, retries=2)  # deadline 0.5 * 3 = 1.5 s
    next(engine)
    with pytest.raises(RateLimitError) as info:
        engine.send(Failed(RateLimitError("slow down", retry_after=300)))
    assert info.value.retry_after == 300  # tells the caller when to come back
    assert info.value.attempts == 1


def test_a_backoff_that_does_not_fit_the_deadline_fails_at_once() -> None:
    clock = FakeClock()
    engine = timed(clock, deadline=10, retries=3)
    next(engine)
    clock.now += 9.9
    with pytest.raises(ServerError):
        engine.send(Failed(ServerError("down")))  # even the first backoff (0.25 s+) won't fit


def test_a_wait_that_fits_is_slept() -> None:
    engine = timed(FakeClock(), deadline=10, retries=2)
    next(engine)
    assert engine.send(Failed(RateLimitError("slow down", retry_after=2))) == Sleep(1, 2, 2.0)


def test_without_a_deadline_one_wait_is_capped_at_a_minute() -> None:
    engine = timed(FakeClock(), retries=2)
    next(engine)
    assert engine.send(Failed(RateLimitError("slow down", retry_after=300))) == Sleep(1, 300, 60.0)


def test_each_attempt_gets_the_smaller_of_timeout_and_time_left() -> None:
    clock = FakeClock()
    engine = timed(clock, timeout=4, deadline=10, retries=2)
    assert next(engine).request.settings.timeout == 4
    clock.now += 7
    assert engine.send(Failed(ServerError("down", retry_after=1))) == Sleep(1, 1, 1.0)
    clock.now += 1
    assert engine.send(None).request.settings.timeout == pytest.approx(2)


def test_without_deadline_the_attempts_bound_the_call() -> None:
    clock = FakeClock()
    engine = timed(clock, timeout=2, retries=1)  # deadline 2 * (1 + 1) + 0.5 backoff = 4.5 s
    next(engine)
    clock.now += 0.5
    assert engine.send(Failed(RateLimitError("slow down", retry_after=3))) == Sleep(1, 3, 3.0)
    clock.now += 3
    assert engine.send(None).request.settings.timeout == pytest.approx(1.0)


def test_without_deadline_a_timed_out_attempt_still_leaves_room_for_the_backoff() -> None:
    clock = FakeClock()
    engine = timed(clock, timeout=2, retries=2)  # 2 * 3 + (0.5 + 1) = 7.5 s
    next(engine)
    clock.now += 2  # the first attempt used its whole timeout
    wait = engine.send(Failed(ProviderTimeoutError("timed out")))
    assert isinstance(wait, Sleep) and wait.longest == 0.5
    clock.now += wait.longest
    assert engine.send(None).request.settings.timeout == 2


def test_the_deadline_reached_before_a_model_turn_ends_the_call() -> None:
    clock = FakeClock()
    engine = timed(clock, deadline=5)
    next(engine)
    calls = (ToolCall("1", "add", {}),)
    engine.send(Response(calls, finish_reason="tool_calls"))
    clock.now += 6  # the tools took longer than the whole call may
    with pytest.raises(ProviderTimeoutError, match="deadline of 5 s was reached") as info:
        engine.send([ToolOutcome(ToolResult("1", "add", "1"))])
    assert info.value.attempts == 1


def test_a_deadline_alone_is_each_attempts_timeout_too() -> None:
    clock = FakeClock()
    engine = timed(clock, deadline=30)
    assert next(engine).request.settings.timeout == 30
    clock.now += 12
    assert engine.send(Failed(ServerError("down", retry_after=1))) == Sleep(1, 1, 1.0)
    clock.now += 1
    assert engine.send(None).request.settings.timeout == pytest.approx(17)


def test_without_timeout_or_deadline_requests_are_unbounded() -> None:
    engine = timed(FakeClock())
    assert next(engine).request.settings.timeout is None


def test_tool_runs_are_told_the_tool_timeout_and_the_time_left() -> None:
    clock = FakeClock()
    engine = timed(clock, tool_timeout=3, timeout=10, retries=0)
    next(engine)
    clock.now += 4
    calls = (ToolCall("1", "add", {}),)
    assert engine.send(Response(calls, finish_reason="tool_calls")) == RunTools(
        calls, tool_timeout=3, time_left=6
    )
    clock.now += 1
    after = engine.send([ToolOutcome(ToolResult("1", "add", "1"))])
    assert after.request.settings.timeout == pytest.approx(5)


def test_without_a_deadline_tools_are_told_no_time_left() -> None:
    engine = timed(FakeClock())
    next(engine)
    calls = (ToolCall("1", "add", {}),)
    assert engine.send(Response(calls, finish_reason="tool_calls")) == RunTools(calls)


def test_the_first_attempt_keeps_the_configured_timeout() -> None:
    ticks = iter(1000.0 + 0.0004 * n for n in range(100))  # each reading a little later
    engine = run(plan(timeout=7.5, retries=0), PROMPT, clock=lambda: next(ticks))
    assert next(engine).request.settings.timeout == 7.5


def test_the_cache_is_told_of_each_reply_the_call_goes_on_from_and_no_other() -> None:
    """A reply the response cache missed (``cache="miss"``) is announced with ``Accepted`` once
    the engine goes on from it or made the value from it; an invalid one never is."""
    from alloy._engine import Accepted

    def missed(response: Response) -> Response:
        return replace(response, cache="miss")

    engine = run(plan(int), PROMPT)
    next(engine)
    tool_turn = missed(Response((ToolCall("1", "add", {}),), finish_reason="tool_calls"))
    assert engine.send(tool_turn) == Accepted(tool_turn)
    assert isinstance(engine.send(None), RunTools)
    outcome = ToolOutcome(ToolResult("1", "add", "2"))
    assert isinstance(engine.send([outcome]), CallModel)
    invalid = missed(text('{"value": "seven"}'))
    assert isinstance(engine.send(invalid), CallModel)  # a re-ask: nothing accepted
    valid = missed(text('{"value": 7}'))
    assert engine.send(valid) == Accepted(valid)
    assert finish(engine, None).value == 7

    hit = run(plan(int), PROMPT)
    next(hit)
    assert finish(hit, replace(text('{"value": 7}'), cache="hit")).value == 7  # nothing to store
    uncached = run(plan(int), PROMPT)
    next(uncached)
    assert finish(uncached, text('{"value": 7}')).value == 7


# -- events: an observed call tells of each step, before or after its effect ---------------------


def observed(p: Plan) -> Plan:
    return replace(p, observed=True)


def step(engine: Any, value: Any = None) -> Any:
    """The next effect after sending ``value``; a finished call's Result."""
    try:
        return engine.send(value)
    except StopIteration as stop:
        return stop.value


def test_an_observed_call_emits_each_event_around_its_effects() -> None:
    clock = FakeClock()
    engine = run(observed(plan(int)), PROMPT, clock=clock, call_id="c1")
    effects = [next(engine)]
    while isinstance(effects[-1], Emit):
        effects.append(step(engine))
    assert [type(e.event).__name__ for e in effects[:-1]] == [
        "CommandStarted",
        "PromptRendered",
        "ModelRequest",
    ]
    assert isinstance(effects[-1], CallModel)
    assert all(e.event.call_id == "c1" and e.event.command == "cmd" for e in effects[:-1])
    started, rendered, request = (e.event for e in effects[:-1])
    assert (started.model, started.expected, rendered.prompt) == ("test:model", "int", PROMPT)
    assert (request.request, request.attempt) == (effects[-1].request, 1)
    clock.now += 2.5
    after = [step(engine, text('{"value": 3}'))]
    while isinstance(after[-1], Emit):
        after.append(step(engine))
    assert [type(e.event).__name__ for e in after[:-1]] == [
        "ModelResponse",
        "OutputParsed",
        "OutputReady",
        "CommandFinished",
    ]
    response, parsed, ready, finished = (e.event for e in after[:-1])
    assert (response.attempt, response.duration) == (1, 2.5)
    assert (parsed.value, parsed.raw, ready.value) == (3, '{"value": 3}', 3)
    assert (finished.value, finished.duration) == (3, 2.5)
    assert after[-1].value == 3  # the Result, once every event was carried out


def test_a_failed_observed_call_emits_command_failed_then_raises() -> None:
    clock = FakeClock()
    engine = run(observed(plan(retries=1)), PROMPT, clock=clock, call_id="c1")
    while not isinstance(next(engine), CallModel):
        pass
    retry = engine.send(Failed(ServerError("down")))
    assert isinstance(retry, Emit) and type(retry.event).__name__ == "ProviderRetry"
    assert (str(retry.event.error), retry.event.delay) == ("down", 0.5)
    assert engine.send(None) == Sleep(1, None, 0.5)
    request = engine.send(None)
    assert isinstance(request, Emit) and request.event.attempt == 2
    assert isinstance(engine.send(None), CallModel)
    clock.now += 1.5
    failed = engine.send(Failed(ServerError("still down")))
    assert isinstance(failed, Emit) and type(failed.event).__name__ == "CommandFailed"
    assert (str(failed.event.error), failed.event.duration) == ("still down (command 'cmd')", 1.5)
    with pytest.raises(ServerError, match="still down") as info:
        engine.send(None)
    assert info.value is failed.event.error


# -- rails: each kind of RunRails, let through, rewritten or Blocked -------------------------------


def railed(output: Any, *rails: Rail, **config: Any) -> Plan:
    return replace(plan(output, **config), rails=rails)


def rail(kind: Any) -> Rail:
    return Rail(kind, f"{kind}-rail", lambda *args: None)


def test_input_rails_run_on_the_prompt_and_may_rewrite_it() -> None:
    check = rail("input")
    engine = run(railed(None, check), PROMPT)
    assert next(engine) == RunRails((check,), PromptSubject(PROMPT))
    call = engine.send(PromptSubject((Text("HI"),)))
    assert isinstance(call, CallModel)
    assert call.request.messages == (UserTurn(Text("HI")),)


def test_a_blocked_prompt_ends_the_call_before_any_model_call() -> None:
    engine = run(railed(None, rail("input")), PROMPT)
    next(engine)
    with pytest.raises(RailBlocked) as info:
        engine.send(Blocked("input-rail", "no shouting"))
    assert (info.value.rail, info.value.reason) == ("input-rail", "no shouting")
    assert info.value.transcript.attempts == 0


def test_output_rails_see_the_parsed_value_and_may_replace_it() -> None:
    check = rail("output")
    engine = run(railed(int, check), PROMPT)
    next(engine)
    assert engine.send(text('{"value": 3}')) == RunRails((check,), OutputSubject(3))
    assert finish(engine, OutputSubject(4)).value == 4


def test_a_blocked_output_is_an_error_that_keeps_the_transcript() -> None:
    error = ValueError("broke")
    engine = run(railed(int, rail("output")), PROMPT)
    next(engine)
    engine.send(text('{"value": 3}'))
    with pytest.raises(RailBlocked) as info:
        engine.send(Blocked("output-rail", "rail raised ValueError: broke", error))
    assert info.value.__cause__ is error
    assert info.value.transcript.messages == (
        UserTurn(Text("hi")),
        ModelTurn(Text('{"value": 3}')),
    )


def test_tool_rails_run_before_each_call_and_after_its_result() -> None:
    check = rail("tool")
    engine = run(railed(int, check), PROMPT)
    next(engine)
    call = ToolCall("1", "add", {"a": 1})
    assert engine.send(Response((call,), finish_reason="tool_calls")) == RunRails(
        (check,), ToolCallSubject(call)
    )
    rewritten = ToolCall("1", "add", {"a": 2})
    assert engine.send(ToolCallSubject(rewritten)) == RunTools((rewritten,))
    result = ToolResult("1", "add", "2")
    assert engine.send([ToolOutcome(result)]) == RunRails(
        (check,), ToolResultSubject(rewritten, result)
    )
    redacted = ToolResult("1", "add", "[redacted]")
    after = engine.send(ToolResultSubject(rewritten, redacted))
    assert isinstance(after, CallModel)
    assert after.request.messages[-1] == UserTurn(redacted)


def test_a_blocked_tool_call_is_never_run() -> None:
    engine = run(railed(int, rail("tool")), PROMPT)
    next(engine)
    engine.send(Response((ToolCall("1", "add", {}),), finish_reason="tool_calls"))
    with pytest.raises(RailBlocked, match="Blocked by rail 'tool-rail': not that one"):
        engine.send(Blocked("tool-rail", "not that one"))


def test_skipped_rail_kinds_yield_no_run_rails() -> None:
    engine = run(railed(int, rail("input"), rail("output"), skip_rails=["input", "output"]), PROMPT)
    assert isinstance(next(engine), CallModel)
    assert finish(engine, text('{"value": 3}')).value == 3


# -- whole transcripts, pushed through the engine alone -------------------------------------------


def test_the_whole_transcript_of_a_reask() -> None:
    engine = run(plan(int, max_reasks=1), PROMPT)
    next(engine)
    reask = engine.send(text('{"value": "three"}'))
    result = finish(engine, text('{"value": 3}'))
    assert result.transcript.messages == (
        UserTurn(Text("hi")),
        ModelTurn(Text('{"value": "three"}')),
        UserTurn(RetryPrompt('- the answer: Input should be a valid integer (got "three")')),
        ModelTurn(Text('{"value": 3}')),
    )
    assert reask.request.messages == result.transcript.messages[:3]


def test_the_whole_transcript_of_a_tool_round() -> None:
    engine = run(plan(int), PROMPT)
    next(engine)
    call = ToolCall("1", "add", {"a": 1})
    engine.send(Response((call,), finish_reason="tool_calls"))
    engine.send([ToolOutcome(ToolResult("1", "add", "2"))])
    result = finish(engine, text('{"value": 2}'))
    assert result.transcript.messages == (
        UserTurn(Text("hi")),
        ModelTurn(call),
        UserTurn(ToolResult("1", "add", "2")),
        ModelTurn(Text('{"value": 2}')),
    )


def test_the_whole_transcript_of_a_finalize_turn() -> None:
    engine = run(plan(int), PROMPT)
    next(engine)
    call = ToolCall("1", "add", {})
    engine.send(Response((call,), finish_reason="tool_calls"))
    engine.send([ToolOutcome(ToolResult("1", "add", "1"))])
    finalize = engine.send(text(""))
    result = finish(engine, text('{"value": 1}'))
    assert result.transcript.messages == (
        UserTurn(Text("hi")),
        ModelTurn(call),
        UserTurn(ToolResult("1", "add", "1")),
        ModelTurn(Text("")),
        UserTurn(Text(FINALIZE_SCHEMA_PROMPT)),
        ModelTurn(Text('{"value": 1}')),
    )
    assert finalize.request.messages == result.transcript.messages[:5]
    assert finalize.request.tools == ()


def test_the_whole_transcript_of_a_retried_failure() -> None:
    engine = run(plan(int, retries=1), PROMPT)
    first = next(engine)
    engine.send(Failed(ServerError("down")))
    again = engine.send(None)
    result = finish(engine, text('{"value": 5}', input_tokens=4, output_tokens=1))
    assert again == first  # the same request again, nothing of the failure in it
    assert result.transcript.messages == (UserTurn(Text("hi")), ModelTurn(Text('{"value": 5}')))
    assert (result.transcript.attempts, result.transcript.turn_usage) == (
        2,
        (Usage(4, 1, requests=1),),
    )
