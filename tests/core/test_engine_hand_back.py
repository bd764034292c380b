"""A plan that hands back (``Plan.hand_back``, the ``/v1`` proxy's): the engine alone, with no
model and no driver. Tool calls are returned to the caller after the tool rails, never run;
the caller's tool results pass the tool rails; a reply cut off or refused is the answer; a
streamed reply that reached the caller is not sent again."""

from __future__ import annotations

from typing import Any

import pytest

from alloy._config import Config
from alloy._engine import CallModel, Failed, HandedBack, Plan, Prelude, RunRails, Sleep, run
from alloy._output import SchemaOutput, TextOutput
from alloy._rail_types import OutputSubject, Rail, ToolCallSubject, ToolResultSubject
from alloy._types import (
    ModelTurn,
    Response,
    Text,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserTurn,
)
from alloy.errors import ServerError

TOOL = ToolDefinition("get_weather", "The weather.", {"type": "object", "properties": {}})
PROMPT = (Text("Weather in Oslo?"),)
CALL = ToolCall("call_1", "get_weather", {"city": "Oslo"})


def plan(*rails: Rail, output: Any = None, **config: Any) -> Plan:
    return Plan(
        command="support",
        model="test:model",
        output=output or TextOutput(),
        config=Config(**config),
        tools=(TOOL,),
        rails=rails,
        hand_back=True,
    )


def rail(kind: Any) -> Rail:
    return Rail(kind, f"{kind}_rail", lambda *args: None)


def result(engine: Any, reply: Any) -> Any:
    with pytest.raises(StopIteration) as stop:
        engine.send(reply)
    return stop.value.value


def test_tool_calls_are_handed_back_after_the_tool_rails_never_run() -> None:
    engine: Any = run(plan(rail("tool")), PROMPT)
    next(engine)
    check = engine.send(Response((Text("Looking."), CALL), finish_reason="tool_calls"))
    assert check == RunRails(check.rails, ToolCallSubject(CALL))
    rewritten = ToolCall("call_1", "get_weather", {"city": "Bergen"})
    done = result(engine, ToolCallSubject(rewritten))
    assert done.value == HandedBack("tool_calls", "Looking.", (rewritten,))
    assert done.transcript.messages[-1] == ModelTurn((Text("Looking."), rewritten))


def test_the_callers_tool_results_pass_the_tool_rails() -> None:
    asked = UserTurn(PROMPT)
    given = ToolResult("call_1", "get_weather", "secret")
    prelude = Prelude((asked, ModelTurn((CALL,))), 0, 2)
    engine: Any = run(plan(rail("tool")), (given,), prelude=prelude)
    check = next(engine)
    assert check.subject == ToolResultSubject(CALL, given)
    cleaned = ToolResult("call_1", "get_weather", "[redacted]")
    request = engine.send(ToolResultSubject(CALL, cleaned))
    assert isinstance(request, CallModel)
    assert request.request.messages[-1] == UserTurn((cleaned,))


@pytest.mark.parametrize("finish", ["length", "refusal", "content_filter"])
def test_a_reply_that_ended_early_is_handed_back_after_the_output_rails(finish: Any) -> None:
    engine: Any = run(plan(rail("output")), PROMPT)
    next(engine)
    refusal = "No." if finish == "refusal" else None
    reply = Response((Text("Half"),), finish_reason=finish, refusal=refusal)
    check = engine.send(reply)
    assert check.subject == OutputSubject("Half")
    if finish == "refusal":
        check = engine.send(OutputSubject("Half"))
        assert check.subject == OutputSubject("No.")
        done = result(engine, OutputSubject("No."))
    else:
        done = result(engine, OutputSubject("Half"))
    assert done.value == HandedBack(finish, "Half", (), refusal)


def test_an_empty_text_reply_is_the_answer() -> None:
    engine: Any = run(plan(), PROMPT)
    next(engine)
    assert result(engine, Response((Text(""),))).value == ""


def test_a_json_answer_is_parsed_and_asked_again_when_it_is_not_json() -> None:
    engine: Any = run(plan(output=SchemaOutput("Rating", {"type": "object"}, strict=False)), PROMPT)
    first = next(engine)
    assert (first.request.output.name, first.request.output.strict) == ("Rating", False)
    again = engine.send(Response((Text("not json"),)))
    assert isinstance(again, CallModel)
    assert result(engine, Response((Text('{"stars": 4}'),))).value == {"stars": 4}


def test_a_failure_after_streamed_text_is_not_retried_one_before_it_is() -> None:
    engine: Any = run(plan(retries=2), PROMPT)
    next(engine)
    assert isinstance(engine.send(Failed(ServerError("down"))), Sleep)
    engine.send(None)
    with pytest.raises(ServerError):
        engine.send(Failed(ServerError("down"), after_text=True))


def test_an_input_rail_rewriting_a_turn_of_tool_results_keeps_them_first() -> None:
    given = ToolResult("call_1", "get_weather", "-3C")
    prelude = Prelude((UserTurn(PROMPT), ModelTurn((CALL,))), 0, 2)
    engine: Any = run(plan(rail("input")), (given, Text("And tomorrow?")), prelude=prelude)
    check = next(engine)
    rewritten = Rail("input", "rewrite", lambda text: "And tomorrow, briefly?")
    request = engine.send(rewritten.apply(check.subject))
    assert request.request.messages[-1] == UserTurn((given, Text("And tomorrow, briefly?")))


def test_the_seam_prepares_calls_that_hand_back_with_the_callers_tools() -> None:
    """``prepare(..., tool_definitions=, hand_back=True)``: the plan of every model, fallbacks
    included, offers the caller's tool definitions and hands their calls back."""
    from alloy._call import Spec, prepare

    def ask(text: str) -> str:
        return text

    spec = Spec(ask, TextOutput(), {"model": "offline", "fallback": ["offline"]})
    prepared = prepare(spec, tool_definitions=(TOOL,), hand_back=True)
    for each in (prepared.plan, *prepared.plan.fallbacks):
        assert (each.tools, each.hand_back) == ((TOOL,), True)
    assert prepared.runtime.tools == {}
    assert not prepare(spec).plan.hand_back
