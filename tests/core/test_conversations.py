"""Conversations: prompt functions that return messages, ``history=``, and carrying a call on.

The shapes are checked with a FunctionModel (what reaches the Request); the conversation that
crosses providers goes through every real SDK to the emulator and back.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

import alloy
from alloy import Assistant, ConfigurationError, Image, System, User, command, tool
from alloy._types import Opaque, Request, Text, ToolCall, ToolResult
from alloy.testing import FunctionModel
from alloy.testing.emulator import (
    Emulator,
    ReplyJson,
    ReplyRaw,
    ReplyText,
    ReplyToolCall,
    ReplyToolCalls,
)

from ..conftest import Call
from ..hardening.conftest import PROVIDERS, per_adapter


def recording(answer: str = '{"value": 4}') -> tuple[FunctionModel, list[Request]]:
    seen: list[Request] = []

    def reply(request: Request) -> str:
        seen.append(request)
        return answer

    return FunctionModel(reply), seen


def texts(request: Request) -> list[tuple[str, str]]:
    """The request's turns as (role, text) pairs."""
    return [
        (
            "user" if isinstance(m, User) else "assistant",
            "".join(p.text for p in m.parts if isinstance(p, Text)),
        )
        for m in request.messages
    ]


# -- what a prompt function may return -----------------------------------------------------------


def test_a_prompt_function_returns_a_conversation_of_alloy_messages(call: Call) -> None:
    model, seen = recording()

    @command(output=int, model=model)
    def sums(question: str) -> list[Any]:
        return [
            System("Answer with a number."),
            User("What is 1+1?"),
            Assistant('{"value": 2}'),
            User(question),
        ]

    assert call(sums, "And 2+2?") == 4
    assert seen[0].system == "Answer with a number."
    assert texts(seen[0]) == [
        ("user", "What is 1+1?"),
        ("assistant", '{"value": 2}'),
        ("user", "And 2+2?"),
    ]


def test_role_dicts_as_users_write_them_for_the_sdks() -> None:
    model, seen = recording()
    image_url = "https://example.com/cat.png"

    @command(output=int, model=model)
    def chat() -> list[dict[str, Any]]:
        return [
            {"role": "developer", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "How many cats?"},
                    {"type": "image_url", "image_url": {"url": image_url}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "count", "arguments": '{"what": "cats"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "3"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Three."},
                    {"type": "tool_use", "id": "toolu_9", "name": "note", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_9", "content": "ok"},
                    {"type": "text", "text": "As JSON?"},
                ],
            },
        ]

    assert chat() == 4
    request = seen[0]
    assert request.system == "Be brief."
    first, call_turn, result_turn, answer, last = request.messages
    assert isinstance(first, User) and first.parts[1] == Image.from_url(image_url)
    assert call_turn.parts == (ToolCall("call_1", "count", {"what": "cats"}),)
    # A tool message names only its call: the tool's name comes from that call.
    assert result_turn.parts == (ToolResult("call_1", "count", "3"),)
    assert isinstance(answer, Assistant) and answer.text == "Three."
    assert answer.parts[1] == ToolCall("toolu_9", "note", {})
    assert last.parts == (ToolResult("toolu_9", "note", "ok"), Text("As JSON?"))


def test_a_lone_user_message_is_a_prompt() -> None:
    model, seen = recording()

    @command(output=int, model=model)
    def one() -> User:
        return User("What is 2+2?")

    assert one() == 4
    assert texts(seen[0]) == [("user", "What is 2+2?")]


# -- history= and Result.messages ------------------------------------------------------------


def test_history_carries_a_conversation_on(run_result: Call) -> None:
    model, seen = recording()

    @command(output=int, model=model)
    def ask(question: str) -> str:
        return question

    first = run_result(ask, "What is 2+2?")
    assert first.messages == first.new_messages
    assert [type(m) for m in first.messages] == [User, Assistant]

    second = run_result(ask, "And doubled?", history=first.messages)
    assert texts(seen[1]) == [
        ("user", "What is 2+2?"),
        ("assistant", '{"value": 4}'),
        ("user", "And doubled?"),
    ]
    assert second.messages == (*first.messages, *second.new_messages)
    assert texts_of(second.new_messages) == [
        ("user", "And doubled?"),
        ("assistant", '{"value": 4}'),
    ]


def texts_of(messages: Sequence[Any]) -> list[tuple[str, str]]:
    return texts(Request("m", tuple(messages)))


def test_history_is_given_to_a_prompt_function_that_takes_it() -> None:
    """Declaring ``history`` is the typed way: the function builds the conversation itself."""
    model, seen = recording()

    @command(output=int, model=model)
    def ask(question: str, history: Sequence[Any] = ()) -> list[Any]:
        return [*history, User(question.upper())]

    first = ask.run("one")
    ask.run("two", history=first.messages)
    assert texts(seen[1]) == [("user", "ONE"), ("assistant", '{"value": 4}'), ("user", "TWO")]


def test_history_given_as_role_dicts_and_an_empty_history(call: Call) -> None:
    model, seen = recording()

    @command(output=int, model=model)
    def ask(question: str) -> str:
        return question

    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert call(ask, "2+2?", history=history) == 4
    assert texts(seen[0]) == [("user", "hi"), ("assistant", "hello"), ("user", "2+2?")]
    assert call(ask, "again", history=[]) == 4  # no earlier turns: a chat's first call
    assert texts(seen[1]) == [("user", "again")]


def test_a_streamed_call_takes_history_too(stream: Call) -> None:
    model, seen = recording("Four.")

    @command(model=model)
    def ask(question: str) -> str:
        return question

    history = [User("What is 2+2?"), Assistant("4")]
    assert "".join(stream(ask, "In words?", history=history)) == "Four."
    assert texts(seen[0]) == [("user", "What is 2+2?"), ("assistant", "4"), ("user", "In words?")]


def test_an_earlier_tool_call_without_a_result_is_answered_as_recorded() -> None:
    """A tool-mode answer is a call of the output tool that got no result; every provider
    wants one before the next user turn."""
    model, seen = recording()

    @command(output=int, model=model)
    def ask(question: str) -> str:
        return question

    history = [User("2+2?"), Assistant(ToolCall("c1", "final_answer", {"value": 4}))]
    ask("And 3+3?", history=history)
    last = seen[0].messages[-1]
    assert last.parts == (ToolResult("c1", "final_answer", "Recorded."), Text("And 3+3?"))


# -- the system prompt: ALLOY_SYSTEM, then the option, then a System message -----------------


def test_system_prompt_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    model, seen = recording()

    def asker(**options: Any) -> Callable[..., Any]:
        @command(output=int, model=model, **options)
        def ask(*messages: Any) -> Any:
            return list(messages) if messages else "2+2?"

        return ask

    monkeypatch.setenv("ALLOY_SYSTEM", "from the environment")
    asker()()
    assert seen[-1].system == "from the environment"
    asker(system="from the option")()
    assert seen[-1].system == "from the option"
    asker(system="from the option")(System("from the conversation"), User("2+2?"))
    assert seen[-1].system == "from the conversation"
    # A System message in the history counts as the conversation's, unless the prompt has one.
    asker(system="from the option")("2+2?")
    asker(system="from the option").run("2+2?", history=[System("from the history")])
    assert seen[-1].system == "from the history"


def test_output_instructions_still_follow_a_conversations_system_prompt() -> None:
    model, seen = recording("yes")

    @command(output=alloy.YesNo(), model=model)
    def check() -> list[Any]:
        return [System("You check facts."), User("Is water wet?")]

    assert check() is True
    system = seen[0].system or ""
    assert system.startswith("You check facts.") and len(system) > len("You check facts.")


# -- bad shapes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conversation", "message"),
    [
        ([{"role": "robot", "content": "beep"}], "message 0 has role 'robot'"),
        ([{"content": "no role"}], "message 0 has role None"),
        (
            [User("look"), Assistant(Image.from_url("https://example.com/a.png"))],
            "message 1: an assistant turn holds text and tool calls, not media",
        ),
        (
            [
                {
                    "role": "assistant",
                    "content": [{"type": "image_url", "image_url": "https://example.com/a.png"}],
                }
            ],
            "an assistant turn holds text and tool calls, not media",
        ),
        ([], "returned an empty list"),
        ([System("only instructions")], "with no turn at all last"),
        ([User("2+2?"), Assistant("4")], "with an assistant turn last"),
        ([User("hi"), System("late")], "message 1 is a system message after the conversation"),
        ([User("hi"), "and text"], "message 1 must be alloy.System/User/Assistant or a role dict"),
        ([{"role": "user", "content": [{"type": "audio"}]}], "block 0 has type 'audio'"),
        ([{"role": "tool", "content": "3"}], "a tool message needs its tool_call_id"),
        ([{"role": "user", "content": ""}], "a user message needs content"),
        ([User(), User("2+2?")], "message 0: a user turn needs content"),
        ([User(" "), User("2+2?")], "message 0: a user turn needs content"),
        ([User("hi"), Assistant(), User("2+2?")], "message 1: an assistant turn needs text"),
        (
            [User("hi"), {"role": "assistant", "content": ""}, User("2+2?")],
            "message 1: an assistant turn needs text",
        ),
        (
            [User("hi"), User(ToolResult("call_7", "count", "3"), "2+2?")],
            "conversation holds a tool result for call 'call_7'",
        ),
        (
            [{"role": "tool", "tool_call_id": "call_7", "content": "3"}, User("2+2?")],
            "tool result for call 'call_7' that no earlier assistant turn made",
        ),
    ],
)
def test_bad_conversations_are_configuration_errors(conversation: list[Any], message: str) -> None:
    model, _ = recording()

    @command(output=int, model=model)
    def bad() -> list[Any]:
        return conversation

    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(")):
        bad()


def test_bad_history_is_named_as_history() -> None:
    model, _ = recording()

    @command(output=int, model=model)
    def ask() -> str:
        return "2+2?"

    with pytest.raises(ConfigurationError, match=r"ask: history=, message 0 has role 'bot'"):
        ask(history=[{"role": "bot", "content": "x"}])  # type: ignore[call-arg]
    with pytest.raises(ConfigurationError, match="history= must be a list of messages"):
        ask(history="hello")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("history", "message"),
    [
        ([User()], "ask: history=, message 0: a user turn needs content"),
        (
            [System("Be brief."), User("hi"), Assistant(""), User("more")],
            "ask: history=, message 2: an assistant turn needs text or tool calls",
        ),
        (
            # A history cut between the model's tool call and its result.
            [User(ToolResult("c1", "forecast", "sunny")), Assistant("Sunny.")],
            "ask: history= holds a tool result for call 'c1' \\(forecast\\) that no earlier",
        ),
    ],
)
def test_a_history_no_provider_would_take_is_refused(
    history: list[Any], message: str, call: Call
) -> None:
    model, seen = recording()

    @command(output=int, model=model)
    def ask(question: str) -> str:
        return question

    with pytest.raises(ConfigurationError, match=message):
        call(ask.using(history=history), "2+2?")
    assert not seen  # refused before any request


def test_a_tool_result_may_answer_a_call_made_in_the_history() -> None:
    """The prompt function's conversation goes on from ``history=``: its tool result may
    answer the history's last tool call."""
    model, seen = recording()

    @command(output=int, model=model)
    def ask() -> list[Any]:
        return [User(ToolResult("c1", "forecast", "sunny"), "So, warm?")]

    history = [User("Weather?"), Assistant(ToolCall("c1", "forecast", {"city": "Paris"}))]
    assert ask.using(history=history)() == 4
    assert seen[0].messages[-1].parts[0] == ToolResult("c1", "forecast", "sunny")


def test_every_result_carries_on_even_one_with_an_empty_answer_in_it(call: Call) -> None:
    """alloy's own record of an empty answer (the one before a finalize turn, and an
    ``output=None`` call's) is not refused when it comes back as history."""
    replies = iter([ToolCall("c1", "forecast", {"city": "Paris"}), "", '{"value": 4}', ""])
    model = FunctionModel(lambda request: next(replies))

    @command(output=int, model=model, tools=[forecast])
    def ask(question: str) -> str:
        return question

    @command(output=None, model=model)
    def note(line: str) -> str:
        return line

    first = ask.run("2+2?")  # a tool round, an empty answer, the finalize turn, the answer
    said = [m for m in first.messages if isinstance(m, Assistant)]
    assert [bool(m.text or m.parts[0:1] != (Text(""),)) for m in said] == [True, False, True]
    second = note.run("Noted.", history=first.messages)  # an empty answer, last
    replies = iter(['{"value": 8}'])
    assert call(ask, "Doubled?", history=second.messages) == 8


def test_message_types_refuse_what_a_turn_cannot_hold() -> None:
    with pytest.raises(TypeError, match="holds text"):
        User(42)  # type: ignore[arg-type]
    assert User("a", Text("b")).parts == (Text("a"), Text("b"))
    assert Assistant("done").text == "done"


# -- across providers, through the real SDKs ---------------------------------------------------


@dataclass
class Weather:
    city: str
    temp_c: float


@tool
def forecast(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}, 21 C"


def weather(model: str) -> Any:
    @command(output=Weather, model=model, tools=[forecast])
    def ask(question: str) -> str:
        return question

    return ask


# Started on each adapter's provider and carried on to every provider (the clouds sharing an
# adapter start one under `make fuzz`).
@pytest.mark.parametrize("first", per_adapter())
def test_a_conversation_with_a_tool_round_continues_on_every_provider(
    first: str, emu: Emulator, run_result: Call
) -> None:
    model, queue, _ = PROVIDERS[first]
    emu.push(
        queue,
        ReplyToolCalls(("forecast", {"city": "Paris"})),
        ReplyJson({"city": "Paris", "temp_c": 21}),
    )
    started = run_result(weather(model), "Weather in Paris?")
    assert started.value == Weather("Paris", 21)

    for second in sorted(PROVIDERS):
        model2, queue2, _ = PROVIDERS[second]
        emu.reset()
        emu.push(queue2, ReplyJson({"city": "Lyon", "temp_c": 18}))
        result = run_result(weather(model2), "And in Lyon?", history=started.messages)
        assert result.value == Weather("Lyon", 18), (first, second)
        body = json.dumps(emu.last_request(queue2).body)
        # The earlier prompt, the tool's result and the earlier answer all reached the wire.
        for earlier in ("Weather in Paris?", "sunny in Paris, 21 C", "And in Lyon?"):
            assert earlier in body, (first, second, earlier)
        assert result.messages[: len(started.messages)] == started.messages


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_streamed_call_continues_a_conversation(
    provider: str, emu: Emulator, stream: Call
) -> None:
    model, queue, _ = PROVIDERS[provider]

    @command(model=model)
    def chat(line: str) -> str:
        return line

    history = [System("You are terse."), User("Say hi"), Assistant("hi")]
    chunks = stream(chat, "Say bye", history=history)
    assert "".join(chunks)
    body = json.dumps(emu.last_request(queue).body)
    for said in ("You are terse.", "Say hi", "Say bye"):
        assert said in body


def test_async_and_sync_results_carry_the_same_conversation() -> None:
    model, _ = recording()

    @command(output=int, model=model)
    def ask(question: str) -> str:
        return question

    sync = ask.run("2+2?", history=[User("hi"), Assistant("hello")])
    async_ = asyncio.run(ask.arun("2+2?", history=[User("hi"), Assistant("hello")]))
    assert sync.messages == async_.messages


# -- using(): history= and deps= for every call form, typed ----------------------------------


@dataclass
class Caller:
    name: str


@tool
def whoami(ctx: alloy.Context[Caller]) -> str:
    """The calling user's name."""
    return ctx.deps.name


def answering_whoami(typed: bool) -> FunctionModel:
    """Calls ``whoami`` first, then answers with what it returned (as a list when ``typed``)."""

    def reply(request: Request) -> Any:
        results = [p for m in request.messages for p in m.parts if isinstance(p, ToolResult)]
        if not results:
            return ToolCall("w1", "whoami", {})
        name = results[-1].content
        return json.dumps({"value": [name]}) if typed else name

    return FunctionModel(reply)


async def _drain(stream: Any) -> list[Any]:
    return [item async for item in stream]


FORM_RUNS: dict[str, Callable[[Any], Any]] = {
    "run": lambda c: c.run("q").value,
    "arun": lambda c: asyncio.run(c.arun("q")).value,
    "call": lambda c: c("q"),
    "acall": lambda c: asyncio.run(c.acall("q")),
    "stream": lambda c: "".join(c.stream("q")),
    "astream": lambda c: "".join(asyncio.run(_drain(c.astream("q")))),
    "stream_partial": lambda c: list(c.stream_partial("q"))[-1].value,
    "astream_partial": lambda c: asyncio.run(_drain(c.astream_partial("q")))[-1].value,
    "stream_items": lambda c: list(c.stream_items("q")),
    "astream_items": lambda c: asyncio.run(_drain(c.astream_items("q"))),
}
TEXT_FORMS = ("stream", "astream")


@pytest.mark.parametrize("form", sorted(FORM_RUNS))
def test_using_gives_every_call_form_its_history_and_deps(form: str) -> None:
    typed = form not in TEXT_FORMS
    model = answering_whoami(typed)

    @command(output=list[str], model=model, tools=[whoami])
    def names(question: str) -> str:
        return question

    @command(model=model, tools=[whoami])
    def chat(question: str) -> str:
        return question

    history = [User("Who is there?"), Assistant("Nobody yet.")]
    bound = (chat if not typed else names).using(history=history, deps=Caller("ada"))
    got = FORM_RUNS[form](bound)
    assert got == ("ada" if not typed else ["ada"])
    first = model.requests[0]
    assert texts(first)[:2] == [("user", "Who is there?"), ("assistant", "Nobody yet.")]


def test_using_is_a_copy_and_a_keyword_given_to_the_call_wins() -> None:
    model = answering_whoami(typed=False)

    @command(model=model, tools=[whoami])
    def chat(question: str) -> str:
        return question

    ada = chat.using(deps=Caller("ada"))
    assert ada.using(history=[]).run("q").value == "ada"  # using() adds to what was given
    assert ada.run("q", deps=Caller("bob")).value == "bob"  # type: ignore[call-arg]
    with pytest.raises(ConfigurationError, match="takes a Context parameter"):
        chat("q")  # the command itself was left as it was


def test_using_passes_history_to_a_prompt_function_that_takes_it() -> None:
    model, seen = recording()

    @command(output=int, model=model)
    def ask(question: str, history: Sequence[Any] = ()) -> list[Any]:
        return [*history, User(question.upper())]

    ask.using(history=[User("one"), Assistant("1")])("two")
    assert texts(seen[0]) == [("user", "one"), ("assistant", "1"), ("user", "TWO")]


# -- a streamed call carried on: its Result, tool rounds included -----------------------------


@pytest.fixture(params=["sync", "async"])
def streamed(request: pytest.FixtureRequest) -> Call:
    """``streamed(cmd, *args)`` streams a text command (``stream`` or ``astream``) to its end:
    its text and the stream's Result."""

    def collect(cmd: Any, *args: Any, **kwargs: Any) -> tuple[str, alloy.Result[Any]]:
        if request.param == "sync":
            chunks = cmd.stream(*args, **kwargs)
            return "".join(chunks), chunks.result

        async def gather() -> tuple[str, alloy.Result[Any]]:
            chunks = cmd.astream(*args, **kwargs)
            text = "".join([chunk async for chunk in chunks])
            return text, chunks.result

        return asyncio.run(gather())

    return collect


def forecaster(model: str) -> Any:
    @command(model=model, tools=[forecast])
    def ask(question: str) -> str:
        return question

    return ask


def test_a_streams_result_is_there_once_it_has_run_to_its_end() -> None:
    model, _ = recording("Four.")

    @command(model=model)
    def ask(question: str) -> str:
        return question

    chunks = ask.stream("2+2?")
    with pytest.raises(ValueError, match="has not run to its end"):
        chunks.result
    assert "".join(chunks) == "Four."
    assert chunks.result.value == "Four."
    assert texts_of(chunks.result.messages) == [("user", "2+2?"), ("assistant", "Four.")]


def test_a_typed_streams_result_is_there_with_its_last_partial() -> None:
    model, _ = recording('{"value": [1, 2]}')

    @command(output=list[int], model=model)
    def numbers() -> str:
        return "Two numbers"

    partials = numbers.stream_partial()
    for partial in partials:
        if partial.complete:
            break  # the caller stops at the final value, before the stream's own end
    assert partials.result.value == [1, 2]
    items = numbers.stream_items()
    assert list(items) == [1, 2] and items.result.value == [1, 2]
    assert items.result.messages[-1] == Assistant('{"value": [1, 2]}')


# Started on each adapter's provider and carried on to every provider (the clouds sharing an
# adapter start one under `make fuzz`).
@pytest.mark.parametrize("first", per_adapter())
def test_a_streamed_tool_round_is_carried_on_to_every_provider_streamed(
    first: str, emu: Emulator, streamed: Call
) -> None:
    """A streamed call's tool round is in its Result, which a streamed call on any provider
    carries on: the history it sends holds that tool call and its result."""
    model, queue, _ = PROVIDERS[first]
    emu.push(queue, ReplyToolCalls(("forecast", {"city": "Paris"})), ReplyText("Sunny, 21 C."))
    text, started = streamed(forecaster(model), "Weather in Paris?")
    assert text == "Sunny, 21 C."
    kinds = [type(p).__name__ for m in started.messages for p in m.parts]
    assert kinds == ["Text", "ToolCall", "ToolResult", "Text"]

    for second in sorted(PROVIDERS):
        model2, queue2, _ = PROVIDERS[second]
        emu.reset()
        emu.push(queue2, ReplyText("Cloudy in Lyon."))
        text, result = streamed(forecaster(model2), "And in Lyon?", history=started.messages)
        assert text == "Cloudy in Lyon.", (first, second)
        body = json.dumps(emu.last_request(queue2).body)
        for earlier in ("Weather in Paris?", "forecast", "sunny in Paris, 21 C", "Sunny, 21 C."):
            assert earlier in body, (first, second, earlier)
        assert result.messages[: len(started.messages)] == started.messages
        assert texts_of(result.new_messages) == [
            ("user", "And in Lyon?"),
            ("assistant", "Cloudy in Lyon."),
        ]


# -- provider-only data stays with its provider ------------------------------------------------

OPENAI_REASONING = "ENC-openai-reasoning-item"
ANTHROPIC_SIGNATURE = "SIG-anthropic-thinking-block"
GEMINI_SIGNATURE = b"gemini-thought-signature"


def openai_reply_with_reasoning() -> ReplyRaw:
    return ReplyRaw.json(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "status": "completed",
            "model": "gpt-5-mini",
            "output": [
                {
                    "type": "reasoning",
                    "id": "rs_1",
                    "summary": [],
                    "encrypted_content": OPENAI_REASONING,
                },
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}],
                },
            ],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": 10,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 5,
                "output_tokens_details": {"reasoning_tokens": 3},
                "total_tokens": 15,
            },
        }
    )


def anthropic_reply_with_thinking() -> ReplyRaw:
    return ReplyRaw.json(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [
                {"type": "thinking", "thinking": "It is sunny.", "signature": ANTHROPIC_SIGNATURE},
                {"type": "text", "text": "Sunny."},
            ],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
    )


#: A first call whose answer carries provider-only data, per provider that has some: the
#: replies to queue, and the marker of that data on the wire.
WITH_PROVIDER_DATA: dict[str, tuple[Callable[[], tuple[Any, ...]], str]] = {
    "openai": (lambda: (openai_reply_with_reasoning(),), OPENAI_REASONING),
    "anthropic": (lambda: (anthropic_reply_with_thinking(),), ANTHROPIC_SIGNATURE),
    "gemini": (
        lambda: (
            ReplyToolCalls(
                ReplyToolCall("forecast", {"city": "Paris"}, signature=GEMINI_SIGNATURE)
            ),
            ReplyText("Sunny."),
        ),
        base64.b64encode(GEMINI_SIGNATURE).decode(),
    ),
}


#: Providers whose adapter speaks another's API to the same models: Claude's thinking blocks
#: carry signatures that Anthropic's docs say every platform serving Claude accepts, and
#: Gemini's thought signatures come from the same Gemini models on Vertex AI. Data made by one
#: of these goes back to all of them, and to no other provider.
SAME_SERVICE = {
    "anthropic": {"anthropic", "anthropic-bedrock", "anthropic-foundry", "anthropic-vertex"},
    "gemini": {"gemini", "vertex"},
}


@pytest.mark.parametrize("first", sorted(WITH_PROVIDER_DATA))
def test_provider_only_data_goes_back_to_its_provider_and_no_other(
    first: str, emu: Emulator, run_result: Call
) -> None:
    """Reasoning items (OpenAI Responses), thinking blocks (Anthropic) and thought signatures
    (Gemini) are kept in Result.messages; carried on, they are sent back to the provider they
    came from, and left out of the request to any other."""
    model, queue, _ = PROVIDERS[first]
    replies, marker = WITH_PROVIDER_DATA[first]
    emu.push(queue, *replies())
    started = run_result(forecaster(model), "Weather in Paris?")
    assert started.value == "Sunny."
    kept = [p for m in started.messages for p in m.parts if isinstance(p, Opaque)]
    assert kept and {p.provider for p in kept} == {first}

    for second in sorted(PROVIDERS):
        model2, queue2, _ = PROVIDERS[second]
        emu.reset()
        emu.push(queue2, ReplyText("Cloudy in Lyon."))
        result = run_result(forecaster(model2), "And in Lyon?", history=started.messages)
        assert result.value == "Cloudy in Lyon."
        body = json.dumps(emu.last_request(queue2).body)
        assert "Weather in Paris?" in body and "And in Lyon?" in body, (first, second)
        assert (marker in body) == (second in SAME_SERVICE.get(first, {first})), (first, second)
