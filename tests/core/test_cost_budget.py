"""``cost_budget``: a call never sends a request that would pass its cap in US dollars.

Prices are set with ``set_price`` on FunctionModels: an output rate of $1,000 per million
tokens with a free input makes each reply of 5 output tokens cost $0.005, and a request with
``max_tokens=5`` at most that, so the arithmetic of each test is plain.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from typing import Any

import pytest

from alloy import (
    BudgetExceeded,
    ConfigurationError,
    ProviderTimeoutError,
    ServerError,
    command,
    configure,
    pricing,
    tool,
)
from alloy._cost_cap import input_tokens, worst_case
from alloy._types import Media, Request, Text, ToolCall, UserTurn
from alloy.pricing import Price, set_price
from alloy.testing import FunctionModel
from alloy.testing.emulator import Emulator, ReplyText

from ..conftest import Call
from ..hardening.conftest import PROVIDERS

#: A reply's 5 output tokens cost $0.005; input is free.
OUTPUT_ONLY = Price(input=0.0, output=1000.0)


@pytest.fixture(autouse=True)
def own_prices(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Prices set here are gone after the test."""
    monkeypatch.setattr(pricing, "_BOOK", pricing._PriceBook())
    yield


def never_valid(request: Request) -> str:
    return "not a number"


def test_a_call_stops_before_the_request_that_would_pass_its_cap(run_result: Call) -> None:
    set_price("priced", OUTPUT_ONLY)
    model = FunctionModel(never_valid, name="priced")

    @command(output=int, model=model, max_reasks=5, max_tokens=5, cost_budget=0.0125)
    def number() -> str:
        return "A number"

    with pytest.raises(BudgetExceeded) as info:
        run_result(number)
    # $0.005 a request: after two ($0.010) a third ($0.015) would pass $0.0125, so it is not sent.
    assert len(model.requests) == 2
    error = info.value
    assert (error.spent, error.limit, error.unit) == (pytest.approx(0.01), 0.0125, "USD")
    assert error.attempts == 2  # the refused request was never made
    assert error.usage is not None and error.usage.total_tokens == 30
    assert "cost budget of $0.0125" in str(error) and "not sent" in str(error)


def test_a_request_that_lands_on_the_cap_is_sent(run_result: Call) -> None:
    set_price("priced", OUTPUT_ONLY)
    model = FunctionModel(never_valid, name="priced")

    @command(output=int, model=model, max_reasks=5, max_tokens=5, cost_budget=0.01)
    def number() -> str:
        return "A number"

    with pytest.raises(BudgetExceeded):
        run_result(number)
    assert len(model.requests) == 2  # $0.005 + $0.005 is the cap, not past it


def test_the_first_request_is_refused_when_its_input_alone_would_pass_the_cap(
    call: Call,
) -> None:
    set_price("priced", Price(input=1000.0, output=0.0))  # $0.001 an input token
    model = FunctionModel(never_valid, name="priced")

    @command(output=int, model=model, cost_budget=0.001)
    def number(text: str) -> str:
        return f"Count the words of: {text}"

    with pytest.raises(BudgetExceeded, match="input tokens"):
        call(number, "many words " * 50)
    assert model.requests == []


def test_tool_rounds_and_fallback_models_spend_from_one_purse(run_result: Call) -> None:
    set_price("primary", OUTPUT_ONLY)
    set_price("spare", OUTPUT_ONLY)

    @tool
    def note(key: str) -> str:
        """Note a key."""
        return "noted"

    def primary_reply(request: Request) -> Any:
        if len(request.messages) == 1:
            return ToolCall("c1", "note", {"key": "k"})
        return ServerError("down", status_code=500)  # answered with an error: costs nothing

    def make(budget: float) -> tuple[Any, FunctionModel]:
        spare = FunctionModel(lambda r: '{"value": 2}', name="spare")

        @command(
            output=int,
            model=FunctionModel(primary_reply, name="primary"),
            fallback=[spare],
            tools=[note],
            retries=0,
            max_tokens=5,
            cost_budget=budget,
        )
        def count() -> str:
            return "How many?"

        return count, spare

    count, spare = make(0.010)  # the primary's tool turn and the spare's answer fit
    assert run_result(count).cost == pytest.approx(0.010)
    count, spare = make(0.009)  # the tool turn spent $0.005: the spare's $0.005 would pass
    with pytest.raises(BudgetExceeded) as info:
        run_result(count)
    assert spare.requests == []
    assert info.value.spent == pytest.approx(0.005)


def test_each_call_has_a_purse_of_its_own(call: Call) -> None:
    set_price("priced", OUTPUT_ONLY)
    model = FunctionModel(lambda r: '{"value": 1}', name="priced")

    @command(output=int, model=model, max_tokens=5, cost_budget=0.005)
    def number() -> str:
        return "A number"

    assert [call(number) for _ in range(3)] == [1, 1, 1]
    assert len(model.requests) == 3


def test_a_streamed_call_is_capped_too(stream: Call) -> None:
    set_price("priced", OUTPUT_ONLY)
    model = FunctionModel(lambda r: "hello", name="priced")

    @command(output=str, model=model, max_tokens=5, cost_budget=0.004)
    def greet() -> str:
        return "Say hello"

    with pytest.raises(BudgetExceeded):
        stream(greet)
    assert model.requests == []


def test_the_budget_comes_from_configure_and_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    set_price("priced", OUTPUT_ONLY)
    model = FunctionModel(never_valid, name="priced")

    @command(output=int, model=model, max_reasks=5, max_tokens=5)
    def number() -> str:
        return "A number"

    monkeypatch.setenv("ALLOY_COST_BUDGET", "$0.012")
    with pytest.raises(BudgetExceeded):
        number()
    assert len(model.requests) == 2
    configure(cost_budget=0.007)  # above the environment
    with pytest.raises(BudgetExceeded):
        number()
    assert len(model.requests) == 3
    with pytest.raises(BudgetExceeded):  # per call, above both
        number.with_options(cost_budget=0.02)()
    assert len(model.requests) == 7


def test_a_bad_environment_value_is_a_clear_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ALLOY_MODEL", "offline")
    monkeypatch.setenv("ALLOY_COST_BUDGET", "5 dollars")

    @command(output=int)
    def number() -> str:
        return "A number"

    with pytest.raises(ConfigurationError) as info:
        number()
    assert str(info.value) == (
        "ALLOY_COST_BUDGET must be an amount in US dollars, such as 2.50, got '5 dollars'"
    )


@pytest.mark.parametrize("where", ["model", "fallback"])
def test_a_model_without_a_price_is_a_configuration_error_naming_set_price(
    call: Call, where: str
) -> None:
    set_price("priced", OUTPUT_ONLY)
    unpriced = FunctionModel(lambda r: '{"value": 1}', name="homebrew")
    priced = FunctionModel(lambda r: '{"value": 1}', name="priced")
    models = {"model": unpriced, "fallback": [unpriced]} if where == "model" else {}
    if where == "fallback":
        models = {"model": priced, "fallback": [unpriced]}

    @command(output=int, cost_budget=1.0, **models)
    def number() -> str:
        return "A number"

    with pytest.raises(ConfigurationError, match=r"set_price\('homebrew'"):
        call(number)
    assert unpriced.requests == [] and priced.requests == []


def test_without_a_budget_an_unpriced_model_runs_as_before(call: Call) -> None:
    model = FunctionModel(lambda r: '{"value": 1}', name="homebrew")

    @command(output=int, model=model)
    def number() -> str:
        return "A number"

    assert call(number) == 1


def test_a_cache_hit_costs_nothing_and_is_never_refused(tmp_path: Any) -> None:
    set_price("priced", OUTPUT_ONLY)
    model = FunctionModel(lambda r: '{"value": 1}', name="priced")

    @command(
        output=int,
        model=model,
        max_tokens=5,
        temperature=0,
        cache=str(tmp_path / "replies.sqlite"),
        cost_budget=0.005,
    )
    def number() -> str:
        return "A number"

    assert number() == 1
    assert number.with_options(cost_budget=0.001)() == 1  # from the cache: nothing to send
    assert len(model.requests) == 1


def test_the_estimate_counts_every_part_of_the_request() -> None:
    bare = Request("m", (UserTurn((Text("abc" * 100),)),))
    assert input_tokens(bare) == 4 + 100  # a message, and 300 ASCII characters / 3
    wide = Request("m", (UserTurn((Text("日本語" * 10),)),))
    assert input_tokens(wide) == 4 + 30  # one a character outside ASCII
    with_system = Request("m", bare.messages, system="x" * 30)
    assert input_tokens(with_system) == input_tokens(bare) + 10
    pdf = base64.b64encode(b"%PDF /Type /Pages /Type /Page 1 /Type/Page 2 /Type /Page 3").decode()
    media = (Media("image", "image/png", data="iVBO"), Media("pdf", "application/pdf", data=pdf))
    with_media = Request("m", (UserTurn(media),))
    assert input_tokens(with_media) == 4 + 1_600 + 3 * 3_000  # an image, and a PDF of 3 pages
    cost, tokens = worst_case(
        Request("m", bare.messages), Price(input=1.0, output=2.0, cache_write=1.25)
    )
    assert (tokens, cost) == (104, pytest.approx(104 * 1.25 / 1_000_000))


def test_concurrent_calls_of_one_command_do_not_share_a_purse() -> None:
    set_price("priced", OUTPUT_ONLY)
    model = FunctionModel(lambda r: '{"value": 1}', name="priced")

    @command(output=int, model=model, max_tokens=5, cost_budget=0.005)
    def number() -> str:
        return "A number"

    async def many() -> list[int]:
        return list(await asyncio.gather(*(number.acall() for _ in range(5))))

    assert asyncio.run(many()) == [1] * 5


@pytest.mark.parametrize(
    ("failure", "sent"),
    [
        (ServerError("down", status_code=500), 2),  # answered with an error: cost nothing
        (ProviderTimeoutError("timed out"), 1),  # may have been billed: counted at its worst
    ],
)
def test_a_failed_request_costs_nothing_only_when_the_provider_answered_it(
    sleeps: list[float], failure: Exception, sent: int
) -> None:
    set_price("priced", OUTPUT_ONLY)
    replies = iter([failure, '{"value": 1}'])
    model = FunctionModel(lambda r: next(replies), name="priced")

    @command(output=int, model=model, retries=1, max_tokens=5, cost_budget=0.008)
    def number() -> str:
        return "A number"

    if sent == 2:
        assert number() == 1
    else:
        with pytest.raises(BudgetExceeded) as info:
            number()
        assert info.value.spent == pytest.approx(0.005)
    assert len(model.requests) == sent


def test_a_spent_token_budget_gives_its_figures_in_tokens() -> None:
    model = FunctionModel(never_valid)

    @command(output=int, model=model, token_budget=10, max_reasks=5)
    def number() -> str:
        return "A number"

    with pytest.raises(BudgetExceeded) as info:
        number()
    assert (info.value.spent, info.value.limit, info.value.unit) == (15, 10, "tokens")


def test_the_refusal_is_the_calls_failure_event_and_survives_pickling() -> None:
    import pickle

    from alloy import events

    set_price("priced", OUTPUT_ONLY)
    model = FunctionModel(never_valid, name="priced")

    @command(output=int, model=model, max_tokens=5, cost_budget=0.004)
    def number() -> str:
        return "A number"

    seen: list[events.Event] = []
    number.subscribe(seen.append)
    with pytest.raises(BudgetExceeded) as info:
        number()
    failed = [event for event in seen if isinstance(event, events.CommandFailed)]
    assert len(failed) == 1 and failed[0].error is info.value
    copy = pickle.loads(pickle.dumps(info.value))
    assert (copy.spent, copy.limit, copy.unit, str(copy)) == (
        0.0,
        0.004,
        "USD",
        str(info.value),
    )


@pytest.mark.parametrize(
    ("model", "queue"),
    [(model, wire) for model, wire, _ in PROVIDERS.values()],
    ids=list(PROVIDERS),
)
def test_through_the_real_sdks_the_emulator_sees_no_request_past_the_cap(
    emu: Emulator, call: Call, model: str, queue: Any
) -> None:
    """The emulator counts a token per four characters: "no, no!!" is 2 output tokens, $0.002
    at $1,000 per million, and ``max_tokens=2`` makes that each request's worst case too."""
    set_price(model, Price(input=0.0, output=1000.0))
    emu.push(queue, *[ReplyText("no, no!!")] * 5)

    @command(output=int, model=model, max_reasks=4, max_tokens=2, cost_budget=0.005)
    def number() -> str:
        return "A number"

    with pytest.raises(BudgetExceeded) as info:
        call(number)
    assert len(emu.requests_for(queue)) == 2  # a third would have made $0.006
    assert info.value.spent == pytest.approx(0.004)
