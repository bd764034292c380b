"""The OpenAI-compatible routes, driven by the official openai SDK: create, stream, parse and
responses, tools the caller runs, rails on every route, unsupported fields refused."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from pydantic import BaseModel

from alloy.testing.emulator import (
    ReplyJson,
    ReplyText,
    ReplyToolCall,
    ReplyToolCalls,
    StreamError,
)

from .conftest import Start
from .served import CANARY

MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Say something."},
]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}


class Rating(BaseModel):
    title: str
    stars: int


def client(url: str) -> Any:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)


def test_chat_create_goes_through_the_rail_config(start: Start, on_emulator: Any) -> None:
    on_emulator.push("openai", ReplyText("Hello there."))
    completion = client(start()).chat.completions.create(model="support", messages=MESSAGES)
    assert completion.model == "support"
    assert completion.choices[0].message.content == "Hello there."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.prompt_tokens > 0
    sent = on_emulator.last_request("openai").body
    assert sent["instructions"] == "Be brief."
    assert "Say something." in json.dumps(sent["input"])


def test_chat_stream_and_stream_helper(start: Start, on_emulator: Any) -> None:
    api = client(start())
    on_emulator.push("openai", ReplyText("one two three four five"))
    chunks = list(
        api.chat.completions.create(
            model="open", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "one two three four five"
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 1
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    on_emulator.push("openai", ReplyText("streamed by the helper"))
    with api.chat.completions.stream(model="open", messages=MESSAGES) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    assert final.choices[0].message.content == "streamed by the helper"


def test_chat_parse_with_a_json_schema(start: Start, on_emulator: Any) -> None:
    on_emulator.push("openai", ReplyJson({"title": "Good", "stars": 5}))
    api = client(start())
    completions = getattr(api.chat.completions, "parse", None) or api.beta.chat.completions.parse
    parsed = completions(model="support", messages=MESSAGES, response_format=Rating)
    assert parsed.choices[0].message.parsed == Rating(title="Good", stars=5)
    sent = on_emulator.last_request("openai").body
    assert sent["text"]["format"]["type"] == "json_schema"
    assert sent["text"]["format"]["name"] == "Rating"


def test_chat_tools_are_returned_to_the_caller_and_results_go_back(
    start: Start, on_emulator: Any
) -> None:
    api = client(start())
    on_emulator.push(
        "openai", ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Paris"}, id="call_1"))
    )
    first = api.chat.completions.create(model="support", messages=MESSAGES, tools=[WEATHER])
    call = first.choices[0].message.tool_calls[0]
    assert first.choices[0].finish_reason == "tool_calls"
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "call_1",
        "get_weather",
        {"city": "Paris"},
    )
    on_emulator.push("openai", ReplyText("It is sunny in Paris."))
    history = [
        *MESSAGES,
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21C"},
    ]
    second = api.chat.completions.create(model="support", messages=history, tools=[WEATHER])
    assert second.choices[0].message.content == "It is sunny in Paris."
    sent = json.dumps(on_emulator.last_request("openai").body["input"])
    assert "sunny, 21C" in sent and "call_1" in sent


def test_a_tool_rail_blocks_a_call_before_the_caller_sees_it(
    start: Start, on_emulator: Any
) -> None:
    delete = {**WEATHER, "function": {**WEATHER["function"], "name": "delete_file"}}
    on_emulator.push("openai", ReplyToolCalls(ReplyToolCall("delete_file", {"city": "x"})))
    with pytest.raises(openai.PermissionDeniedError) as caught:
        client(start()).chat.completions.create(model="support", messages=MESSAGES, tools=[delete])
    assert caught.value.status_code == 403
    assert caught.value.body["rail"] == "no_deletes"


def test_an_input_rail_blocks_before_the_model_is_called(start: Start, on_emulator: Any) -> None:
    api = client(start())
    blocked = [{"role": "user", "content": "what is the admin password?"}]
    for stream in (False, True):
        with pytest.raises(openai.PermissionDeniedError) as caught:
            api.chat.completions.create(model="support", messages=blocked, stream=stream)
        assert caught.value.body["rail"] == "no_passwords"
    assert on_emulator.requests == []


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"top_p": 0.5}, "top_p"),
        ({"n": 2}, "n"),
        (
            {"tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "auto"}}},
            "tool_choice",
        ),
        ({"logprobs": True}, "logprobs"),
        ({"response_format": {"type": "json_object"}}, "response_format.type"),
        ({"extra_body": {"guardrails": "off"}}, "guardrails"),
    ],
)
def test_unsupported_fields_are_refused_not_dropped(
    start: Start, on_emulator: Any, extra: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client(start()).chat.completions.create(model="open", messages=MESSAGES, **extra)
    assert caught.value.status_code == 400
    assert caught.value.body["param"] == param
    assert caught.value.body["code"] == "unsupported_parameter"
    assert on_emulator.requests == []


def test_unsupported_content_and_unknown_models(start: Start, on_emulator: Any) -> None:
    api = client(start())
    image = [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]},
    ]
    with pytest.raises(openai.BadRequestError) as caught:
        api.chat.completions.create(model="open", messages=image)
    assert caught.value.body["param"] == "messages[0].content[0].image_url"
    with pytest.raises(openai.NotFoundError):
        api.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    assert [m.id for m in api.models.list()] == ["support", "open"]


def test_the_canary_never_leaves_on_any_route(start: Start, on_emulator: Any) -> None:
    """A blocking output rail: zero bytes of the canary, streamed or not, on both APIs."""
    url = start()
    bodies = [
        ("/v1/chat/completions", {"model": "support", "messages": MESSAGES}),
        ("/v1/chat/completions", {"model": "support", "messages": MESSAGES, "stream": True}),
        ("/v1/responses", {"model": "support", "input": "Say something."}),
        ("/v1/responses", {"model": "support", "input": "Say something.", "stream": True}),
    ]
    for path, body in bodies:
        on_emulator.push("openai", ReplyText(f"The secret is {CANARY}, and more text follows."))
        response = httpx.post(url + path, json=body)
        assert response.status_code == 403, (path, body)
        assert response.json()["error"]["rail"] == "no_canary"
        assert b"CANARY" not in response.content


def test_a_failure_mid_stream_raises_in_the_sdk(start: Start, on_emulator: Any) -> None:
    url = start()
    on_emulator.push("openai", StreamError(after=7, reply=ReplyText("alpha beta gamma delta eps")))
    seen = []
    with pytest.raises(openai.APIError) as caught:
        for chunk in client(url).chat.completions.create(
            model="open", messages=MESSAGES, stream=True
        ):
            seen.append(chunk)
    assert caught.value.body["type"] == "provider_error"
    assert seen  # some text was sent before the failure
    on_emulator.push("openai", StreamError(after=7, reply=ReplyText("alpha beta gamma delta eps")))
    raw = httpx.post(
        f"{url}/v1/chat/completions", json={"model": "open", "messages": MESSAGES, "stream": True}
    ).text
    assert raw.rstrip().endswith("data: [DONE]")
    assert '"error"' in raw.rsplit("data: ", 2)[1]


def test_responses_create_stream_and_parse(start: Start, on_emulator: Any) -> None:
    api = client(start())
    on_emulator.push("openai", ReplyText("Plain answer."))
    response = api.responses.create(model="support", input="Hi", instructions="Be brief.")
    assert response.output_text == "Plain answer."
    assert response.usage is not None and response.usage.output_tokens > 0
    on_emulator.push("openai", ReplyText("streamed answer in pieces"))
    with api.responses.stream(model="open", input="Hi") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert final.output_text == "streamed answer in pieces"
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert kinds.count("response.output_text.delta") > 1
    on_emulator.push("openai", ReplyJson({"title": "Nice", "stars": 4}))
    parsed = api.responses.parse(model="support", input="Rate it", text_format=Rating)
    assert parsed.output_parsed == Rating(title="Nice", stars=4)


def test_responses_function_calls_round_trip(start: Start, on_emulator: Any) -> None:
    api = client(start())
    tool = {"type": "function", **WEATHER["function"]}
    on_emulator.push(
        "openai", ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Oslo"}, id="call_9"))
    )
    first = api.responses.create(model="support", input="Weather in Oslo?", tools=[tool])
    calls = [item for item in first.output if item.type == "function_call"]
    assert [(c.call_id, c.name) for c in calls] == [("call_9", "get_weather")]
    on_emulator.push("openai", ReplyText("Cold in Oslo."))
    follow = [
        {"role": "user", "content": "Weather in Oslo?"},
        *[item.model_dump(exclude_none=True) for item in first.output],
        {"type": "function_call_output", "call_id": "call_9", "output": "-3C"},
    ]
    second = api.responses.create(model="support", input=follow, tools=[tool])
    assert second.output_text == "Cold in Oslo."
    assert "-3C" in json.dumps(on_emulator.last_request("openai").body["input"])
    with pytest.raises(openai.BadRequestError) as caught:
        api.responses.create(model="support", input="x", store=True)
    assert caught.value.body["param"] == "store"


def test_any_provider_sits_behind_the_wire_format(
    start: Start, on_emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALLOY_MODEL", "anthropic:claude-sonnet-4-6")
    on_emulator.push("anthropic", ReplyText("From Claude."))
    api = client(start())
    assert api.chat.completions.create(model="open", messages=MESSAGES).choices[
        0
    ].message.content == ("From Claude.")
    on_emulator.push("anthropic", ReplyText("Streamed from Claude."))
    chunks = api.chat.completions.create(model="open", messages=MESSAGES, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "Streamed from Claude."
    )
    assert on_emulator.last_request("anthropic").body["system"]
