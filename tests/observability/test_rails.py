"""Rails: each kind passing, rewriting and blocking; judge commands; built-ins; switching off per call."""

from __future__ import annotations

from typing import Any

import pytest

from alloy import ConfigurationError, RailBlocked, command, tool
from alloy._types import Media, Request, Text, ToolCall, ToolResult, UserTurn
from alloy.rails import (
    Block,
    blocklist,
    input_rail,
    judge,
    mask_pii,
    mask_text,
    output_rail,
    self_check_input,
    self_check_output,
    tool_rail,
)
from alloy.testing import FunctionModel, json_reply, override_model, script, tool_call, tool_results

from ..conftest import Call


@input_rail
def shout(text: str) -> str:
    return text.upper()


@input_rail
def no_secrets(text: str) -> Block | None:
    return Block("mentions a secret") if "secret" in text else None


@input_rail
def passes(text: str) -> None:
    return None


def make(rails: list[Any], output: Any = None, **options: Any) -> Any:
    @(
        command(output=output, rails=rails, **options)
        if output is not None
        else command(rails=rails, **options)
    )
    def talk(text: str) -> str:
        return text

    return talk


def test_input_rail_pass_rewrite_block(call: Call) -> None:
    model = script("ok", "ok")
    with override_model(model):
        assert call(make([passes]), "hello") == "ok"
        assert call(make([shout]), "hello") == "ok"
        with pytest.raises(RailBlocked) as info:
            call(make([no_secrets]), "the secret plan")
    assert model.requests[0].messages[0] == UserTurn((Text("hello"),))
    assert model.requests[1].messages[0] == UserTurn((Text("HELLO"),))
    assert len(model.requests) == 2  # the blocked call never reached the model
    assert info.value.rail == "no_secrets"
    assert info.value.reason == "mentions a secret"
    assert "Blocked by rail 'no_secrets': mentions a secret" in str(info.value)


def test_input_rail_sees_media_and_keeps_it(call: Call) -> None:
    seen: list[Any] = []

    @input_rail
    def inspect_media(text: str, media: tuple[Media, ...]) -> str:
        seen.append(media)
        return text + "!"

    image = Media("image", "image/png", data="aGk=")

    @command(rails=[inspect_media])
    def look() -> list[str | Media]:
        return ["What is it?", image]

    with override_model(script("a cat")) as model:
        call(look)
    assert seen == [(image,)]
    assert model.requests[0].messages[0] == UserTurn((Text("What is it?!"), image))


def test_output_rail_pass_rewrite_block(call: Call) -> None:
    @output_rail
    def double(value: int) -> int:
        return value * 2

    @output_rail
    def no_negatives(value: int) -> Block | None:
        return Block("negative") if value < 0 else None

    with override_model(script(json_reply(21, wrap=True), json_reply(-1, wrap=True))):
        assert call(make([double, no_negatives], output=int), "x") == 42
        with pytest.raises(RailBlocked, match="negative"):
            call(make([double, no_negatives], output=int), "x")


def test_tool_rails_see_arguments_before_and_results_after(call: Call) -> None:
    @tool
    def fetch(url: str) -> str:
        """Fetch a URL."""
        return f"contents of {url}"

    seen: list[tuple[str, Any]] = []

    @tool_rail
    def guard(call_: ToolCall, result: ToolResult | None) -> Any:
        seen.append((call_.name, result.content if result else None))
        if result is None:
            if "evil" in call_.args["url"]:
                return Block("blocked host")
            return {"url": call_.args["url"].replace("http:", "https:")}
        return result.content.replace("contents", "CONTENTS")

    @command(tools=[fetch], rails=[guard])
    def browse() -> str:
        return "browse"

    model = script(tool_call("fetch", {"url": "http://good.example"}), "done")
    with override_model(model):
        assert call(browse) == "done"
    assert tool_results(model.requests[1])[0].content == "CONTENTS of https://good.example"
    assert seen == [("fetch", None), ("fetch", "contents of https://good.example")]

    with (
        override_model(script(tool_call("fetch", {"url": "http://evil.example"}))),
        pytest.raises(RailBlocked, match="blocked host"),
    ):
        call(browse)


def test_a_rail_that_raises_blocks_the_call(call: Call) -> None:
    @input_rail
    def buggy(text: str) -> None:
        raise ValueError("rail bug")

    with (
        override_model(script("never")),
        pytest.raises(RailBlocked, match="rail raised ValueError: rail bug") as info,
    ):
        call(make([buggy]), "x")
    assert isinstance(info.value.__cause__, ValueError)


def test_async_rails(call: Call) -> None:
    @input_rail
    async def polite(text: str) -> str:
        return "please " + text

    with override_model(script("ok")) as model:
        call(make([polite]), "help")
    assert model.requests[0].messages[0] == UserTurn((Text("please help"),))


def test_judge_command_rail(call: Call) -> None:
    @command(output=bool)
    def is_off_topic(text: str) -> str:
        return f"Is this off topic for a cooking assistant? {text}"

    topic_rail = judge(is_off_topic, kind="input")

    def reply(request: Request) -> str:
        prompt = request.messages[0].parts[0].text  # type: ignore[union-attr]
        if prompt.startswith("Is this off topic"):
            return json_reply("stocks" in prompt, wrap=True)
        return "Here is a recipe."

    with override_model(FunctionModel(reply)):
        assert call(make([topic_rail]), "How do I bake bread?") == "Here is a recipe."
        with pytest.raises(RailBlocked, match="judge:is_off_topic said yes"):
            call(make([topic_rail]), "Which stocks should I buy?")


def test_self_check_rails_use_replaceable_prompts(call: Call) -> None:
    prompts: list[str] = []

    def reply(request: Request) -> str:
        text = request.messages[0].parts[0].text  # type: ignore[union-attr]
        prompts.append(text)
        if text.startswith("CHECK-IN"):
            return json_reply("attack" in text, wrap=True)
        if text.startswith("CHECK-OUT"):
            return json_reply(False, wrap=True)
        return "fine answer"

    rails = [self_check_input("CHECK-IN {text}"), self_check_output("CHECK-OUT {text}")]
    with override_model(FunctionModel(reply)):
        assert call(make(rails), "hello") == "fine answer"
        with pytest.raises(RailBlocked, match="self_check_input"):
            call(make(rails), "attack the server")
    assert prompts[:3] == ["CHECK-IN hello", "hello", "CHECK-OUT fine answer"]


def test_default_self_check_prompt_mentions_the_text() -> None:
    rail = self_check_input()
    assert rail.kind == "input" and rail.name == "self_check_input"


def test_blocklist_rails(call: Call) -> None:
    rails = blocklist(words=["darn"], patterns=[r"\bDROP TABLE\b"])
    with override_model(script("clean", "oh darn")):
        assert call(make(rails), "hello") == "clean"
        with pytest.raises(RailBlocked, match="blocklist:output"):
            call(make(rails), "hello")
    with override_model(script("x")), pytest.raises(RailBlocked, match="blocklist:input"):
        call(make(rails), "please DROP TABLE users")


def test_mask_pii_rewrites_the_prompt(call: Call) -> None:
    prompt = "Mail ada@example.com or call +1 415 555 0100; card 4111 1111 1111 1111; order 12345."
    with override_model(script("ok")) as model:
        call(make(mask_pii()), prompt)
    sent = model.requests[0].messages[0].parts[0].text  # type: ignore[union-attr]
    assert sent == "Mail [EMAIL] or call [PHONE]; card [CARD]; order 12345."


def test_mask_text_leaves_non_luhn_numbers() -> None:
    assert mask_text("id 1234 5678 9012 3456") == "id 1234 5678 9012 3456"
    assert mask_text("x@y.io") == "[EMAIL]"


def test_rails_can_be_switched_off_per_call_by_kind(call: Call) -> None:
    guarded = make([no_secrets])
    with override_model(script("ok")):
        assert call(guarded.with_options(skip_rails=["input"]), "the secret") == "ok"


def test_rails_must_be_rails() -> None:
    with pytest.raises(ConfigurationError, match="rails= entries"):
        command(rails=[lambda text: None])  # type: ignore[list-item]


def test_an_async_rail_works_from_sync_code_inside_a_running_event_loop() -> None:
    """A sync call made from async code (a notebook cell, a sync helper in an async app): the
    async rail runs to completion on a private loop instead of failing in asyncio.run."""
    import asyncio

    @output_rail
    async def double(value: int) -> int:
        await asyncio.sleep(0)
        return value * 2

    async def inside_a_loop() -> int:
        with override_model(script(json_reply(21, wrap=True))):
            result: int = make([double], output=int)("x")
        return result

    assert asyncio.run(inside_a_loop()) == 42


def test_each_subject_is_applied_by_its_type() -> None:
    """Rails get plain values and give back a subject of the type they were given."""
    from alloy._rail_types import OutputSubject, PromptSubject, ToolCallSubject, ToolResultSubject

    image = Media("image", "image/png", data="AAAA")
    prompt = input_rail(lambda text, media: f"{text}!" if media else None)
    assert prompt.apply(PromptSubject((Text("hi"), image))) == PromptSubject((Text("hi!"), image))
    assert output_rail(lambda value: value + 1).apply(OutputSubject(1)) == OutputSubject(2)
    call = ToolCall("1", "fetch", {"url": "a"})
    before = tool_rail(lambda c, result: {"url": "b"} if result is None else None)
    assert before.apply(ToolCallSubject(call)) == ToolCallSubject(
        ToolCall("1", "fetch", {"url": "b"})
    )
    after = tool_rail(lambda c, result: None if result is None else result.content.upper())
    done = ToolResultSubject(call, ToolResult("1", "fetch", "body"))
    assert after.apply(done) == ToolResultSubject(call, ToolResult("1", "fetch", "BODY"))
    assert output_rail(lambda value: Block("no")).apply(OutputSubject(1)) == Block("no")
    with pytest.raises(TypeError, match="must return None, Block or str"):
        input_rail(lambda text: 5).apply(PromptSubject((Text("hi"),)))
