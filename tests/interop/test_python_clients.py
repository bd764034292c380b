"""The Python clients people use, unchanged, against ``alloy serve`` as a real process with the
emulator upstream: each client in its default mode and its structured-output mode. Each test
is a row of ``clients.json`` (runner ``pytest``), the compatibility table in docs/serving.md.

The clients come from the ``interop`` extra; none reaches past 127.0.0.1 (the suite's
loopback guard fails a test that tries), and none sends telemetry: LangSmith is off unless
asked, litellm reads its bundled price map, the Agents SDK's tracing is turned off.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from alloy.testing.emulator import DEFAULT_TEXT, Emulator, ReplyText, ReplyToolCall, ReplyToolCalls

from .matrix import Row, rows

for _package in ("openai", "langchain_openai", "pydantic_ai", "litellm", "agents"):
    if importlib.util.find_spec(_package) is None:
        pytest.skip(f"{_package} is missing: install the interop extra", allow_module_level=True)


@pytest.fixture(scope="module", autouse=True)
def _clients() -> Iterator[None]:
    """The clients quiet and offline. They are imported where they are used, so only the xdist
    worker that runs these tests pays for the imports (seconds), not every worker that collects."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # read when litellm is imported
        env.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
        env.setenv("LANGSMITH_TRACING", "false")
        import agents
        import litellm

        agents.set_tracing_disabled(True)
        litellm.telemetry = False
        yield


#: litellm's pydantic types warn, on first use, that pydantic does not enforce ReadOnly.
pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

KEY = "a-caller-key"
PROMPT = "Rate the film Up."
MESSAGES = [{"role": "user", "content": PROMPT}]
WEATHER_TOOL = {
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
    },
}


class Rating(BaseModel):
    title: str
    stars: int


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}."


def weather_then_text(emu: Emulator, text: str = "It is sunny in Paris.") -> None:
    """The model calls get_weather for Paris, then answers once it has the result."""
    emu.push("openai", ReplyToolCalls(ReplyToolCall("get_weather", {"city": "Paris"})))
    emu.push("openai", ReplyText(text))


def sent_tool_result(emu: Emulator) -> str:
    """The tool result the last upstream request carried back to the model."""
    body = emu.last_request("openai").body
    outputs = [i["output"] for i in body["input"] if i.get("type") == "function_call_output"]
    assert outputs, body["input"]
    return str(outputs[-1])


Driver = Callable[[str, Emulator], None]
DRIVERS: dict[tuple[str, str], Driver] = {}


def drives(client: str, mode: str) -> Callable[[Driver], Driver]:
    def register(driver: Driver) -> Driver:
        DRIVERS[(client, mode)] = driver
        return driver

    return register


# -- openai-python ---------------------------------------------------------------------------


def sdk(base: str) -> Any:
    import openai

    return openai.OpenAI(base_url=base, api_key=KEY, max_retries=0)


@drives("openai-python", "chat.completions.create")
def _(base: str, emu: Emulator) -> None:
    reply = sdk(base).chat.completions.create(model="support", messages=MESSAGES)
    assert reply.choices[0].message.content == DEFAULT_TEXT
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage.total_tokens > 0


@drives("openai-python", "chat.completions.create(stream=True)")
def _(base: str, emu: Emulator) -> None:
    chunks = list(
        sdk(base).chat.completions.create(
            model="support", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == DEFAULT_TEXT
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0


@drives("openai-python", "chat.completions.parse")
def _(base: str, emu: Emulator) -> None:
    reply = sdk(base).chat.completions.parse(
        model="support", messages=MESSAGES, response_format=Rating
    )
    assert isinstance(reply.choices[0].message.parsed, Rating)


@drives("openai-python", "chat.completions.stream(response_format=Model)")
def _(base: str, emu: Emulator) -> None:
    with sdk(base).chat.completions.stream(
        model="open", messages=MESSAGES, response_format=Rating
    ) as stream:
        deltas = [e for e in stream if e.type == "content.delta"]
        final = stream.get_final_completion()
    assert len(deltas) > 1  # json_schema answers stream as text deltas
    assert isinstance(final.choices[0].message.parsed, Rating)


@drives("openai-python", "tools (a round trip)")
def _(base: str, emu: Emulator) -> None:
    weather_then_text(emu)
    client = sdk(base)
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.chat.completions.create(model="support", messages=messages, tools=[WEATHER_TOOL])
    (call,) = first.choices[0].message.tool_calls
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "get_weather",
        {"city": "Paris"},
    )
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": get_weather("Paris")},
    ]
    second = client.chat.completions.create(
        model="support", messages=messages, tools=[WEATHER_TOOL]
    )
    assert second.choices[0].message.content == "It is sunny in Paris."
    assert sent_tool_result(emu) == "Sunny in Paris."


@drives("openai-python", "responses.create")
def _(base: str, emu: Emulator) -> None:
    answer = sdk(base).responses.create(model="support", input=PROMPT, instructions="Be brief.")
    assert answer.output_text == DEFAULT_TEXT
    assert answer.status == "completed"


@drives("openai-python", "responses.create(stream=True)")
def _(base: str, emu: Emulator) -> None:
    events = list(sdk(base).responses.create(model="support", input=PROMPT, stream=True))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == DEFAULT_TEXT
    assert events[-1].type == "response.completed"


@drives("openai-python", "responses.parse")
def _(base: str, emu: Emulator) -> None:
    answer = sdk(base).responses.parse(model="support", input=PROMPT, text_format=Rating)
    assert isinstance(answer.output_parsed, Rating)


@drives("openai-python", "models.list, models.retrieve")
def _(base: str, emu: Emulator) -> None:
    import openai

    client = sdk(base)
    assert sorted(m.id for m in client.models.list()) == ["open", "support"]
    model = client.models.retrieve("support")
    assert (model.id, model.object) == ("support", "model")
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("gpt-5")


@drives("openai-python", "error classes")
def _(base: str, emu: Emulator) -> None:
    import openai

    client = sdk(base)
    with pytest.raises(openai.PermissionDeniedError, match="no_passwords"):
        client.chat.completions.create(
            model="support", messages=[{"role": "user", "content": "my password is hunter2"}]
        )
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model="support", messages=MESSAGES, top_p=0.5)
    assert refused.value.param == "top_p"
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-5", messages=MESSAGES)


# -- LangChain ChatOpenAI ---------------------------------------------------------------------


def chat_openai(base: str, **options: Any) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model="support", base_url=base, api_key=KEY, max_retries=0, **options)


@drives("LangChain ChatOpenAI", "invoke")
def _(base: str, emu: Emulator) -> None:
    assert chat_openai(base).invoke(PROMPT).content == DEFAULT_TEXT


@drives("LangChain ChatOpenAI", "stream")
def _(base: str, emu: Emulator) -> None:
    chunks = list(chat_openai(base).stream(PROMPT))
    assert len(chunks) > 1
    assert "".join(str(c.content) for c in chunks) == DEFAULT_TEXT


@drives("LangChain ChatOpenAI", 'with_structured_output(method="json_schema")')
def _(base: str, emu: Emulator) -> None:
    runnable = chat_openai(base).with_structured_output(Rating, method="json_schema")
    assert isinstance(runnable.invoke(PROMPT), Rating)


@drives("LangChain ChatOpenAI", 'with_structured_output(method="function_calling")')
def _(base: str, emu: Emulator) -> None:
    runnable = chat_openai(base).with_structured_output(Rating, method="function_calling")
    assert isinstance(runnable.invoke(PROMPT), Rating)
    sent = emu.last_request("openai").body
    assert sent["tool_choice"] == {"type": "function", "name": "Rating"}
    assert sent["parallel_tool_calls"] is False


@drives("LangChain ChatOpenAI", 'with_structured_output(method="json_mode")')
def _(base: str, emu: Emulator) -> None:
    chat_openai(base).with_structured_output(Rating, method="json_mode").invoke(PROMPT + " JSON")


@drives("LangChain ChatOpenAI", "bind_tools")
def _(base: str, emu: Emulator) -> None:
    weather_then_text(emu)
    reply = chat_openai(base).bind_tools([get_weather]).invoke("Weather in Paris?")
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]


@drives("LangChain ChatOpenAI", "invoke (use_responses_api=True)")
def _(base: str, emu: Emulator) -> None:
    reply = chat_openai(base, use_responses_api=True).invoke(PROMPT)
    assert reply.text == DEFAULT_TEXT


# -- pydantic-ai ------------------------------------------------------------------------------


def pydantic_model(base: str) -> Any:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    return OpenAIChatModel("support", provider=OpenAIProvider(base_url=base, api_key=KEY))


@drives("pydantic-ai", "Agent(output_type=Model) (tool output)")
def _(base: str, emu: Emulator) -> None:
    from pydantic_ai import Agent

    agent = Agent(pydantic_model(base), output_type=Rating)
    assert isinstance(agent.run_sync(PROMPT).output, Rating)
    assert emu.last_request("openai").body["tool_choice"] == "required"


@drives("pydantic-ai", "Agent(output_type=NativeOutput(Model))")
def _(base: str, emu: Emulator) -> None:
    from pydantic_ai import Agent, NativeOutput

    agent = Agent(pydantic_model(base), output_type=NativeOutput(Rating))
    assert isinstance(agent.run_sync(PROMPT).output, Rating)
    assert emu.last_request("openai").body["text"]["format"]["type"] == "json_schema"


@drives("pydantic-ai", "Agent(output_type=PromptedOutput(Model))")
def _(base: str, emu: Emulator) -> None:
    from pydantic_ai import Agent, PromptedOutput

    Agent(pydantic_model(base), output_type=PromptedOutput(Rating)).run_sync(PROMPT)


@drives("pydantic-ai", "Agent with a tool")
def _(base: str, emu: Emulator) -> None:
    from pydantic_ai import Agent

    weather_then_text(emu)
    agent = Agent(pydantic_model(base), tools=[get_weather])
    assert agent.run_sync("Weather in Paris?").output == "It is sunny in Paris."
    assert sent_tool_result(emu) == "Sunny in Paris."


@drives("pydantic-ai", "run_stream")
def _(base: str, emu: Emulator) -> None:
    from pydantic_ai import Agent

    agent = Agent(pydantic_model(base))

    async def streamed() -> list[str]:
        async with agent.run_stream(PROMPT) as run:
            return [text async for text in run.stream_text(delta=True)]

    pieces = asyncio.run(streamed())
    assert "".join(pieces) == DEFAULT_TEXT


# -- litellm ----------------------------------------------------------------------------------


@drives("litellm", "completion")
def _(base: str, emu: Emulator) -> None:
    import litellm

    reply = litellm.completion(
        model="openai/support", api_base=base, api_key=KEY, messages=MESSAGES, num_retries=0
    )
    assert reply.choices[0].message.content == DEFAULT_TEXT


@drives("litellm", "completion(stream=True)")
def _(base: str, emu: Emulator) -> None:
    import litellm

    chunks = litellm.completion(
        model="openai/support", api_base=base, api_key=KEY, messages=MESSAGES, stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == DEFAULT_TEXT


# -- the OpenAI Agents SDK ----------------------------------------------------------------------


def agents_model(base: str, name: str = "support") -> Any:
    """The SDK's default model class, OpenAIResponsesModel, on its own client."""
    import agents
    import openai

    client = openai.AsyncOpenAI(base_url=base, api_key=KEY, max_retries=0)
    return agents.OpenAIResponsesModel(name, client)


@drives("OpenAI Agents SDK", "Agent (text)")
def _(base: str, emu: Emulator) -> None:
    import agents

    agent = agents.Agent("helper", instructions="Be brief.", model=agents_model(base))
    assert agents.Runner.run_sync(agent, PROMPT).final_output == DEFAULT_TEXT
    assert emu.last_request("openai").body["instructions"] == "Be brief."


@drives("OpenAI Agents SDK", "Agent(output_type=Model)")
def _(base: str, emu: Emulator) -> None:
    import agents

    agent = agents.Agent("rater", model=agents_model(base), output_type=Rating)
    assert isinstance(agents.Runner.run_sync(agent, PROMPT).final_output, Rating)


@drives("OpenAI Agents SDK", "Agent with a tool")
def _(base: str, emu: Emulator) -> None:
    import agents

    weather_then_text(emu)
    agent = agents.Agent(
        "forecaster", model=agents_model(base), tools=[agents.function_tool(get_weather)]
    )
    assert agents.Runner.run_sync(agent, "Weather in Paris?").final_output == (
        "It is sunny in Paris."
    )
    assert sent_tool_result(emu) == "Sunny in Paris."


@drives("OpenAI Agents SDK", "Runner.run_streamed")
def _(base: str, emu: Emulator) -> None:
    import agents

    agent = agents.Agent("helper", model=agents_model(base, "open"))  # no output rails

    async def streamed() -> tuple[list[str], Any]:
        run = agents.Runner.run_streamed(agent, PROMPT)
        deltas = [
            e.data.delta
            async for e in run.stream_events()
            if e.type == "raw_response_event" and e.data.type == "response.output_text.delta"
        ]
        return deltas, run.final_output

    deltas, final = asyncio.run(streamed())
    assert len(deltas) > 1 and "".join(deltas) == final == DEFAULT_TEXT


# -- the rows ---------------------------------------------------------------------------------


def test_every_row_has_a_driver_and_every_driver_a_row() -> None:
    assert {(r.client, r.mode) for r in rows("pytest")} == set(DRIVERS)


@pytest.mark.parametrize("row", rows("pytest"), ids=lambda row: row.name)
def test_the_client_works_as_the_table_says(alloy_serve: str, emu: Emulator, row: Row) -> None:
    driver = DRIVERS[(row.client, row.mode)]
    if row.refused:
        with pytest.raises(Exception, match=row.error):
            driver(alloy_serve, emu)
    else:
        driver(alloy_serve, emu)
