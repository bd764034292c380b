"""What the clients people use send to ``/v1``, driven by the official openai SDK against the
served app with the emulator upstream: forced tool use (pydantic-ai's ``tool_choice:
"required"``, instructor's TOOLS mode), ``parallel_tool_calls: false`` (LangChain's
``with_structured_output(method="function_calling")``), fields that ask for nothing (the
OpenAI Agents SDK's ``include: []``), ``models.retrieve`` and streamed tool-call arguments."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from alloy.testing.emulator import ReplyText, ReplyToolCall, ReplyToolCalls

from .conftest import Start

MESSAGES = [{"role": "user", "content": "Rate the film."}]
RATING_PARAMETERS = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "stars": {"type": "integer"}},
    "required": ["title", "stars"],
    "additionalProperties": False,
}
#: pydantic-ai ``Agent(output_type=Rating)``: its output tool, forced with "required".
PYDANTIC_AI = {
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "final_result",
                "description": "The final response which ends this conversation",
                "parameters": RATING_PARAMETERS,
                "strict": True,
            },
        }
    ],
    "tool_choice": "required",
}
#: instructor TOOLS mode (``response_model=Rating``): the model's tool, forced by name.
INSTRUCTOR = {
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "Rating",
                "description": "Correctly extracted `Rating` with all the required parameters "
                "with correct types",
                "parameters": RATING_PARAMETERS,
            },
        }
    ],
    "tool_choice": {"type": "function", "function": {"name": "Rating"}},
}
#: LangChain ``with_structured_output(Rating, method="function_calling")``.
LANGCHAIN = {
    "tools": [
        {
            "type": "function",
            "function": {"name": "Rating", "description": "", "parameters": RATING_PARAMETERS},
        }
    ],
    "tool_choice": {"type": "function", "function": {"name": "Rating"}},
    "parallel_tool_calls": False,
}
RESPONSES_TOOL = {
    "type": "function",
    "name": "Rating",
    "description": "A rating.",
    "parameters": RATING_PARAMETERS,
    "strict": True,
}


def client(url: str) -> Any:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)


def _streamed_calls(chunks: Any) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls of a chat stream, its argument deltas joined."""
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            call = calls.setdefault(delta.index, {"name": "", "arguments": ""})
            call["name"] += delta.function.name or ""
            call["arguments"] += delta.function.arguments or ""
    return [(c["name"], json.loads(c["arguments"])) for c in calls.values()]


@pytest.mark.parametrize("body", [PYDANTIC_AI, INSTRUCTOR], ids=["pydantic-ai", "instructor"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_forced_tool_use_reaches_the_model_and_comes_back(
    start: Start, on_emulator: Any, body: dict[str, Any], stream: bool
) -> None:
    api = client(start())
    name = body["tools"][0]["function"]["name"]
    if stream:
        calls = _streamed_calls(
            api.chat.completions.create(model="open", messages=MESSAGES, stream=True, **body)
        )
    else:
        message = api.chat.completions.create(model="open", messages=MESSAGES, **body)
        assert message.choices[0].finish_reason == "tool_calls"
        calls = [
            (c.function.name, json.loads(c.function.arguments))
            for c in message.choices[0].message.tool_calls
        ]
    assert [each[0] for each in calls] == [name]
    assert set(calls[0][1]) == {"title", "stars"}
    sent = on_emulator.last_request("openai").body["tool_choice"]
    assert sent == ("required" if body is PYDANTIC_AI else {"type": "function", "name": name})


@pytest.mark.parametrize(
    "choice", ["required", {"type": "function", "name": "Rating"}], ids=["required", "named"]
)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_responses_forced_tool_use_reaches_the_model_and_comes_back(
    start: Start, on_emulator: Any, choice: Any, stream: bool
) -> None:
    api = client(start())
    asked = dict(model="open", input="Rate the film.", tools=[RESPONSES_TOOL], tool_choice=choice)
    if stream:
        with api.responses.stream(**asked) as events:
            for _ in events:
                pass
            response = events.get_final_response()
    else:
        response = api.responses.create(**asked)
    calls = [item for item in response.output if item.type == "function_call"]
    assert [c.name for c in calls] == ["Rating"]
    assert set(json.loads(calls[0].arguments)) == {"title", "stars"}
    assert response.tool_choice == choice or response.tool_choice.model_dump() == choice
    assert on_emulator.last_request("openai").body["tool_choice"] == choice


def test_forcing_a_tool_on_a_model_that_cannot_is_a_400_naming_it(
    start: Start, on_emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALLOY_MODEL", "ollama:llama3.2")
    with pytest.raises(openai.BadRequestError) as caught:
        client(start()).chat.completions.create(model="open", messages=MESSAGES, **PYDANTIC_AI)
    assert caught.value.body["param"] == "tool_choice"
    assert "ollama:llama3.2" in caught.value.body["message"]
    assert on_emulator.requests == []


def test_a_forced_tool_must_be_one_offered(start: Start, on_emulator: Any) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client(start()).chat.completions.create(
            model="open",
            messages=MESSAGES,
            tools=PYDANTIC_AI["tools"],
            tool_choice={"type": "function", "function": {"name": "other"}},
        )
    assert caught.value.body["param"] == "tool_choice.function.name"
    assert on_emulator.requests == []


def test_without_parallel_tool_calls_one_call_comes_back_and_the_model_is_told(
    start: Start, on_emulator: Any
) -> None:
    api = client(start())
    two = ReplyToolCalls(
        ReplyToolCall("Rating", {"title": "A", "stars": 1}, id="call_a"),
        ReplyToolCall("Rating", {"title": "B", "stars": 2}, id="call_b"),
    )
    on_emulator.push("openai", two)
    message = api.chat.completions.create(model="open", messages=MESSAGES, **LANGCHAIN)
    calls = message.choices[0].message.tool_calls
    assert [(c.id, json.loads(c.function.arguments)) for c in calls] == [
        ("call_a", {"title": "A", "stars": 1})
    ]
    assert on_emulator.last_request("openai").body["parallel_tool_calls"] is False
    on_emulator.push("openai", two)
    response = api.responses.create(
        model="open", input="Rate it.", tools=[RESPONSES_TOOL], parallel_tool_calls=False
    )
    assert [i.call_id for i in response.output if i.type == "function_call"] == ["call_a"]
    assert response.parallel_tool_calls is False
    on_emulator.push("openai", two)
    streamed = api.chat.completions.create(
        model="open", messages=MESSAGES, stream=True, **LANGCHAIN
    )
    assert _streamed_calls(streamed) == [("Rating", {"title": "A", "stars": 1})]
    on_emulator.push("openai", ReplyText("fine"))
    api.chat.completions.create(model="open", messages=MESSAGES, tools=LANGCHAIN["tools"])
    assert "parallel_tool_calls" not in on_emulator.last_request("openai").body


@pytest.mark.parametrize(
    ("model", "provider", "sent"),
    [
        (
            "anthropic:claude-sonnet-4-6",
            "anthropic",
            lambda body: body["tool_choice"],
        ),
        (
            "gemini:gemini-2.5-flash",
            "gemini",
            lambda body: body["toolConfig"]["functionCallingConfig"],
        ),
    ],
    ids=["anthropic", "gemini"],
)
def test_each_provider_is_told_in_its_own_words(
    start: Start,
    on_emulator: Any,
    monkeypatch: pytest.MonkeyPatch,
    model: str,
    provider: str,
    sent: Any,
) -> None:
    monkeypatch.setenv("ALLOY_MODEL", model)
    api = client(start())
    message = api.chat.completions.create(model="open", messages=MESSAGES, **LANGCHAIN)
    assert [c.function.name for c in message.choices[0].message.tool_calls] == ["Rating"]
    expected = {
        "anthropic": {"type": "tool", "name": "Rating", "disable_parallel_tool_use": True},
        "gemini": {"mode": "ANY", "allowedFunctionNames": ["Rating"]},
    }[provider]
    assert sent(on_emulator.last_request(provider).body) == expected
    api.chat.completions.create(model="open", messages=MESSAGES, **PYDANTIC_AI)
    expected = {
        "anthropic": {"type": "any"},
        "gemini": {"mode": "ANY", "allowedFunctionNames": ["final_result"]},
    }[provider]
    assert sent(on_emulator.last_request(provider).body) == expected


@pytest.mark.parametrize(
    "extra",
    [
        {"include": []},
        {"metadata": {}},
        {"top_p": 1},
        {"store": False},
        {"truncation": "disabled"},
        {"text": {"verbosity": "medium"}},
    ],
    ids=["include", "metadata", "top_p", "store", "truncation", "verbosity"],
)
def test_responses_fields_that_ask_for_nothing_are_accepted(
    start: Start, on_emulator: Any, extra: dict[str, Any]
) -> None:
    on_emulator.push("openai", ReplyText("Hi."))
    response = client(start()).responses.create(model="open", input="Hello", **extra)
    assert response.output_text == "Hi."


def test_the_agents_sdk_request_is_answered(start: Start, on_emulator: Any) -> None:
    """The body the OpenAI Agents SDK's default Responses model sends for an agent with a
    tool: ``include: []`` and ``tools`` with ``strict``; ``tool_choice`` and the rest omitted."""
    on_emulator.push("openai", ReplyText("Done."))
    body = {
        "model": "open",
        "instructions": "You are helpful.",
        "input": [{"content": "Hello", "role": "user"}],
        "include": [],
        "tools": [RESPONSES_TOOL],
        "stream": False,
    }
    response = client(start()).post(
        "/responses", body=body, cast_to=openai.types.responses.Response
    )
    assert response.output_text == "Done."


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"include": ["reasoning.encrypted_content"]}, "include"),
        ({"top_p": 0.5}, "top_p"),
        ({"store": True}, "store"),
        ({"truncation": "auto"}, "truncation"),
        ({"metadata": {"a": "b"}}, "metadata"),
    ],
)
def test_fields_that_ask_for_something_are_still_refused(
    start: Start, on_emulator: Any, extra: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client(start()).responses.create(model="open", input="Hello", **extra)
    assert caught.value.body["param"] == param
    assert on_emulator.requests == []


def test_models_retrieve_answers_for_each_rail_config(start: Start, on_emulator: Any) -> None:
    api = client(start())
    names = [model.id for model in api.models.list()]
    assert names
    for name in names:
        model = api.models.retrieve(name)
        assert (model.id, model.object, model.owned_by) == (name, "model", "alloy")
    with pytest.raises(openai.NotFoundError) as caught:
        api.models.retrieve("gpt-4o")
    assert caught.value.status_code == 404
    assert "'gpt-4o' does not exist" in caught.value.body["message"]


def test_streamed_tool_call_arguments_arrive_as_deltas_on_both_apis(
    start: Start, on_emulator: Any
) -> None:
    """What instructor's ``create_partial`` (TOOLS mode) reads: many argument deltas, each
    a longer partial of the call, not the whole call in one chunk."""
    api = client(start())
    review = {"title": "A long and winding title for the film", "stars": 4}
    on_emulator.push("openai", ReplyToolCalls(ReplyToolCall("Rating", review, id="call_r")))
    chunks = list(
        api.chat.completions.create(model="open", messages=MESSAGES, stream=True, **INSTRUCTOR)
    )
    deltas = [call for c in chunks if c.choices for call in c.choices[0].delta.tool_calls or []]
    assert len([d for d in deltas if d.function.arguments]) > 1
    assert (deltas[0].id, deltas[0].function.name) == ("call_r", "Rating")
    assert _streamed_calls(chunks) == [("Rating", review)]
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"

    on_emulator.push("openai", ReplyToolCalls(ReplyToolCall("Rating", review, id="call_s")))
    with api.responses.stream(
        model="open", input="Rate it.", tools=[RESPONSES_TOOL], tool_choice="required"
    ) as events:
        kinds = [event.type for event in events]
        response = events.get_final_response()
    assert kinds.count("response.function_call_arguments.delta") > 1
    calls = [item for item in response.output if item.type == "function_call"]
    assert [(c.call_id, json.loads(c.arguments)) for c in calls] == [("call_s", review)]


def test_a_streamed_json_schema_answer_still_streams_as_text(
    start: Start, on_emulator: Any
) -> None:
    from alloy.testing.emulator import ReplyJson

    on_emulator.push("openai", ReplyJson({"title": "A long title for a film", "stars": 5}))
    rating = {"name": "Rating", "schema": RATING_PARAMETERS, "strict": True}
    chunks = list(
        client(start()).chat.completions.create(
            model="open",
            messages=MESSAGES,
            stream=True,
            response_format={"type": "json_schema", "json_schema": rating},
        )
    )
    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert len(pieces) > 1
    assert json.loads("".join(pieces))["stars"] == 5


def test_forcing_a_tool_on_claude_thinking_is_a_400_naming_the_model(
    start: Start, on_emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALLOY_MODEL", "anthropic:claude-sonnet-4-6")
    monkeypatch.setenv(
        "ALLOY_EXTRA_JSON", '{"thinking": {"type": "enabled", "budget_tokens": 1024}}'
    )
    with pytest.raises(openai.BadRequestError) as caught:
        client(start()).chat.completions.create(model="open", messages=MESSAGES, **INSTRUCTOR)
    assert "anthropic:claude-sonnet-4-6" in caught.value.body["message"]
    assert "thinking" in caught.value.body["message"]
    assert on_emulator.requests == []
