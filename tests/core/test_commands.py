"""@command: call forms, return contracts, signatures, ask(), and the errors a call can end in."""

from __future__ import annotations

import asyncio
import inspect
import json
from dataclasses import dataclass

import pytest

from alloy import (
    CommandError,
    ConfigurationError,
    ContentFilteredError,
    EmptyOutputError,
    ParseError,
    RefusalError,
    TruncatedOutputError,
    ask,
    command,
    use_config,
)
from alloy._types import Request, Response, RetryPrompt, Text, UserTurn
from alloy.testing import FunctionModel, override_model, refusal, script, truncated

from ..conftest import Call


@dataclass
class Price:
    amount: float
    currency: str


@command
def summarize(text: str, *, words: int = 10) -> str:
    """Summarize text."""
    return f"Summarize in {words} words: {text}"


@command(output=float)
def extract_price(text: str) -> str:
    """Extract a price."""
    return f"Extract the price (number only) from: {text}"


def test_bare_decorator_returns_text(call: Call) -> None:
    with override_model(script("a summary")) as model:
        assert call(summarize, "long text", words=3) == "a summary"
    assert model.requests[0].messages == (UserTurn((Text("Summarize in 3 words: long text"),)),)
    assert model.requests[0].output is None


def test_command_keeps_name_docstring_and_signature() -> None:
    assert summarize.__name__ == "summarize"
    assert summarize.__doc__ == "Summarize text."
    assert list(inspect.signature(summarize).parameters) == ["text", "words"]
    assert inspect.signature(extract_price).parameters["text"].annotation in (str, "str")
    assert "extract_price" in repr(extract_price) and "float" in repr(extract_price)


def test_typed_output(call: Call) -> None:
    with override_model(script('{"value": 49.99}')) as model:
        assert call(extract_price, "This item costs $49.99.") == 49.99
    request = model.requests[0]
    assert request.output is not None
    assert request.output.schema == extract_price.schema
    assert request.output.mode == "native"


def test_output_none_is_side_effect_only(call: Call) -> None:
    @command(output=None)
    def notify(who: str) -> str:
        return f"notify {who}"

    with override_model(script("whatever the model says")):
        assert call(notify, "ops") is None
    with override_model(script("")):
        assert call(notify, "ops") is None
    assert notify.schema is None


def test_text_command_with_no_final_text_raises(call: Call) -> None:
    with override_model(script("")), pytest.raises(EmptyOutputError, match="no final output"):
        call(summarize, "x")


def test_parse_error_message_matches_the_seed(call: Call) -> None:
    reply = '{"value": "Please provide the text you want me to read the price from."}'
    with override_model(script(reply, reply)), pytest.raises(ParseError) as info:
        call(extract_price, "no price here")
    error = info.value
    assert str(error).startswith(
        "Failed to parse model output as float: Input should be a valid number"
    )
    assert '\'{"value": "Please provide the text' in str(error)
    assert error.command == "extract_price"
    assert error.expected == "float"
    assert error.output_mode == "native"
    assert str(error).endswith("(command 'extract_price', output mode native)")
    assert error.output == reply
    assert error.attempts == 2
    assert error.usage is not None and error.usage.requests == 2
    assert isinstance(error, CommandError)


def test_reask_sends_the_validation_errors_then_succeeds(run_result: Call) -> None:
    with override_model(script('{"value": "n/a"}', '{"value": 12.5}')) as model:
        result = run_result(extract_price, "x")
    assert result.value == 12.5
    assert result.transcript.attempts == 2
    messages = model.requests[1].messages
    assert len(messages) == 3
    assert messages[2] == UserTurn(
        (RetryPrompt('- the answer: Input should be a valid number (got "n/a")'),)
    )


def test_reask_budget_is_an_option(call: Call) -> None:
    bad = '{"value": "x"}'
    with override_model(script(bad, bad, bad, '{"value": 1}')) as model:
        assert call(extract_price.with_options(max_reasks=3), "x") == 1.0
    assert len(model.requests) == 4
    with override_model(script(bad)), pytest.raises(ParseError):
        call(extract_price.with_options(max_reasks=0), "x")


def test_invalid_json_is_reasked_with_a_readable_message(call: Call) -> None:
    with override_model(script("{not json", '{"value": 2}')) as model:
        assert call(extract_price, "x") == 2.0
    retry = model.requests[1].messages[-1].parts[0]
    assert isinstance(retry, RetryPrompt)
    assert retry.errors.startswith("- the reply is not valid JSON")


def test_truncation_is_its_own_error_and_not_reasked(call: Call) -> None:
    with (
        override_model(script(truncated('{"value": 4'))) as model,
        pytest.raises(TruncatedOutputError) as info,
    ):
        call(extract_price, "x")
    assert len(model.requests) == 1
    assert "max_tokens" in str(info.value)
    assert info.value.output == '{"value": 4'


def test_refusal_is_its_own_error(call: Call) -> None:
    with override_model(script(refusal("I won't."))), pytest.raises(RefusalError, match="I won't"):
        call(extract_price, "x")


def test_content_filter_is_its_own_error(call: Call) -> None:
    stopped = Response((Text(""),), finish_reason="content_filter")
    with override_model(script(stopped)), pytest.raises(ContentFilteredError):
        call(extract_price, "x")


def test_async_prompt_function_makes_the_command_awaitable() -> None:
    @command(output=int)
    async def count(text: str) -> str:
        await asyncio.sleep(0)
        return f"count {text}"

    with override_model(script('{"value": 3}')):
        pending = count("abc")
        assert inspect.isawaitable(pending)
        assert asyncio.run(pending) == 3
    with override_model(script('{"value": 4}')):
        assert asyncio.run(count.async_("abc")) == 4
    with pytest.raises(ConfigurationError, match="async prompt function"):
        count.run("abc")


def test_async_spelling_of_the_seed() -> None:
    with override_model(script('{"value": 1.5}')):
        assert asyncio.run(extract_price.async_("x")) == 1.5


def test_prompt_function_must_return_a_prompt(call: Call) -> None:
    @command
    def broken() -> str:
        return 42  # type: ignore[return-value]

    with (
        override_model(script("x")),
        pytest.raises(ConfigurationError, match="must return the prompt"),
    ):
        call(broken)


def test_ask_one_off_questions() -> None:
    with override_model(script("Paris")) as model:
        assert ask("Capital of France?", temperature=0.0) == "Paris"
    assert model.requests[0].settings.temperature == 0.0
    with override_model(script("Rome")):
        assert asyncio.run(ask.acall("Capital of Italy?")) == "Rome"
    with override_model(FunctionModel(lambda r: "streamed answer here")):
        assert "".join(ask.stream("q")) == "streamed answer here"


def test_an_async_reply_function_answers_a_sync_call_inside_a_running_loop() -> None:
    async def reply(request: Request) -> str:
        await asyncio.sleep(0)
        return "from a coroutine"

    async def inside_a_loop() -> str:
        with override_model(FunctionModel(reply)):
            return summarize("x")  # a sync call, made while this thread runs an event loop

    assert asyncio.run(inside_a_loop()) == "from a coroutine"


def test_stream_yields_text_deltas_sync_and_async() -> None:
    with override_model(FunctionModel(lambda r: "one two three four")):
        chunks = list(summarize.stream("x"))
        assert len(chunks) > 1 and "".join(chunks) == "one two three four"

        async def collect() -> str:
            return "".join([c async for c in summarize.astream("x")])

        assert asyncio.run(collect()) == "one two three four"


def test_stream_on_typed_command_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="streams text"):
        extract_price.stream("x")


def test_with_options_is_per_call_and_leaves_the_command_alone() -> None:
    warm = extract_price.with_options(temperature=1.5, max_tokens=10)
    with override_model(script('{"value": 1}', '{"value": 2}')) as model:
        warm("x")
        extract_price("x")
    assert model.requests[0].settings.temperature == 1.5
    assert model.requests[0].settings.max_tokens == 10
    assert model.requests[1].settings.temperature is None


def test_result_record(run_result: Call) -> None:
    with override_model(script('{"value": 3.5}')):
        result = run_result(extract_price, "x")
    assert result.value == 3.5
    assert result.output == '{"value": 3.5}'
    assert result.usage.input_tokens == 10


def test_last_result_is_gone_and_says_to_use_run() -> None:
    """A record on the command was shared by all its calls (and raced); run() returns one."""
    with pytest.raises(AttributeError, match=r"last_result was removed.*cmd\.run\(\.\.\.\)"):
        extract_price.last_result
    assert not hasattr(extract_price, "last_result")


def test_concurrent_calls_each_get_their_own_result() -> None:
    """One command, many threads: each call's Result is its own."""
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    def reply(request: Request) -> str:
        text = request.messages[0].parts[0]
        assert isinstance(text, Text)
        return text.text.rsplit(" ", 1)[-1].upper()  # the word it was called with

    words = [f"word{n}" for n in range(64)]
    with override_model(FunctionModel(reply)):
        contexts = [contextvars.copy_context() for _ in words]  # the override, in each thread
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda c, w: c.run(summarize.run, w), contexts, words))
    assert [r.value for r in results] == [w.upper() for w in words]


def test_unknown_option_is_rejected_at_decoration() -> None:
    with pytest.raises(ConfigurationError, match="Unknown option"):
        command(output=int, temprature=0.2)  # type: ignore[call-overload]


def test_bad_option_value_is_rejected_at_decoration() -> None:
    with pytest.raises(ConfigurationError, match="temperature"):
        command(output=int, temperature="warm")  # type: ignore[call-overload]
    with pytest.raises(ConfigurationError, match=r"temperature.*between 0 and 2"):
        command(output=int, temperature=7)


def test_no_model_configured_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="No model configured: set ALLOY_MODEL"):
        extract_price("x")


def test_media_in_prompts_reaches_the_request(call: Call) -> None:
    from alloy._types import Media

    image = Media("image", "image/png", data="aGk=")

    @command
    def describe() -> list[str | Media]:
        return ["What is this?", image]

    with override_model(script("a cat")) as model:
        assert call(describe) == "a cat"
    assert model.requests[0].messages[0] == UserTurn((Text("What is this?"), image))


def test_errors_pickle_with_their_context() -> None:
    import pickle

    with (
        override_model(script('{"value": "x"}', '{"value": "y"}')),
        pytest.raises(ParseError) as info,
    ):
        extract_price("x")
    copy = pickle.loads(pickle.dumps(info.value))
    assert str(copy) == str(info.value)
    assert copy.expected == "float"


def test_json_of_request_parts_is_inspectable() -> None:
    with override_model(script('{"value": 1}')) as model:
        extract_price("x")
    assert json.loads(json.dumps(model.requests[0].output.schema)) == extract_price.schema  # type: ignore[union-attr]


# -- text that cannot be sent: lone surrogates -------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "where"),
    [
        ("abc\udc80", r"The prompt text has a lone surrogate ('\udc80') at index 3"),
        (["fine", "ok \ud800 no"], r"Prompt part 1 has a lone surrogate ('\ud800') at index 3"),
    ],
)
def test_a_lone_surrogate_in_the_prompt_is_a_configuration_error(
    call: Call, prompt: object, where: str
) -> None:
    @command
    def echo() -> object:
        return prompt

    with (
        override_model(script("never sent")) as model,
        pytest.raises(ConfigurationError) as info,
    ):
        call(echo)
    message = str(info.value)
    assert where in message
    assert "lone surrogate" in message and "errors='replace'" in message
    assert model.requests == []


def test_a_lone_surrogate_in_the_system_prompt_is_a_configuration_error(call: Call) -> None:
    # Refused where it is set, or at the latest before anything is sent.
    with (
        override_model(script("never sent")) as model,
        pytest.raises(ConfigurationError, match=r"(?i)system.*(lone surrogate|not valid UTF-8)"),
        use_config(system="Be terse.\udce9"),
    ):
        call(summarize, "x")
    assert model.requests == []


def test_text_with_surrogate_pairs_is_fine(call: Call) -> None:
    with override_model(script("ok")) as model:
        assert call(summarize, "emoji \U0001f600 and é") == "ok"
    assert "\U0001f600" in model.requests[0].messages[0].parts[0].text  # type: ignore[union-attr]
