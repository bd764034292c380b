"""The Ollama adapter through the real ``ollama`` SDK against the emulator, sync and async, plus
its pure parts against the captured SDK requests and the recorded (documented) bodies."""

from __future__ import annotations

import asyncio
import base64
import json
import warnings
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from pydantic import BaseModel

from alloy import command
from alloy._types import (
    Media,
    ModelSettings,
    ModelTurn,
    OutputSpec,
    Request,
    Text,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserTurn,
)
from alloy.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    ProviderConnectionError,
    ProviderTimeoutError,
    SchemaRejectedError,
    ServerError,
    TruncatedOutputError,
)
from alloy.providers.ollama import (
    CAPABILITIES,
    OllamaModel,
    build,
    create,
    finish_reason,
    ollama_schema,
    parse_body,
)
from alloy.testing.emulator import (
    CutStream,
    Disconnect,
    Emulator,
    HttpError,
    Overloaded,
    RateLimited,
    ReplyEmpty,
    ReplyJson,
    ReplyMaxTokens,
    ReplyText,
    ReplyToolCalls,
    SchemaRejected,
    Slow,
    StreamError,
    Unauthorized,
)

from .output_types import City, Point, Trip

SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures"
CAPTURED = json.loads((SHARED / "sdk_captured" / "ollama.json").read_text())["cases"]
RECORDED = SHARED / "recorded" / "ollama"
MODEL = "llama3.2"


# -- helpers -------------------------------------------------------------------------------------


def opts(emu: Emulator, **extra: Any) -> dict[str, Any]:
    """Command options pointing the adapter at the emulator."""
    return {"model": f"ollama:{MODEL}", "base_url": emu.ollama_host, **extra}


def bodies(emu: Emulator) -> list[dict[str, Any]]:
    return [r.body for r in emu.requests_for("ollama")]


# -- typed outputs -------------------------------------------------------------------------------

OUTPUTS: list[tuple[Any, Any, Any]] = [
    (float, {"value": 21.5}, 21.5),
    (bool, {"value": False}, False),
    (Point, {"x": 1, "y": 2}, Point(1, 2)),
    (City, {"name": "Paris", "population": 2100000}, City(name="Paris", population=2100000)),
    (list[str], {"value": ["a", "b"]}, ["a", "b"]),
    (int | None, {"value": None}, None),
    (int | str, {"value": 3}, 3),
    (
        Trip,
        {"title": "t", "stops": [{"name": "Lyon", "population": 5}], "mode": "car", "note": "x"},
        Trip(title="t", stops=[City(name="Lyon", population=5)], mode="car", note="x"),
    ),
]


@pytest.mark.parametrize(("output", "reply", "expected"), OUTPUTS, ids=lambda v: str(v)[:30])
def test_typed_outputs_use_format(
    emu: Emulator, call: Any, output: Any, reply: Any, expected: Any
) -> None:
    emu.push("ollama", ReplyJson(reply))

    @command(output=output, **opts(emu))
    def ask(q: str) -> str:
        return q

    assert call(ask, "question") == expected
    body = emu.last_request("ollama").body
    assert body["format"] == ask.schema  # the ollama dialect sends the canonical schema
    assert body["stream"] is False
    assert body["model"] == MODEL


def test_default_answers_from_the_emulator_validate(emu: Emulator, call: Any) -> None:
    @command(output=Trip, **opts(emu))
    def plan(q: str) -> str:
        return q

    assert isinstance(call(plan, "a trip"), Trip)


def test_text_output_and_usage(emu: Emulator, run_result: Any) -> None:
    emu.push("ollama", ReplyText("Hello there"))

    @command(**opts(emu))
    def hello() -> str:
        return "Say hello"

    result = run_result(hello)
    assert result.value == "Hello there"
    assert result.usage.requests == 1
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    body = emu.last_request("ollama").body
    assert "format" not in body and "options" not in body


# -- tools ---------------------------------------------------------------------------------------


class Leg(BaseModel):
    origin: str
    destination: str
    seats: int


def book(trip: list[Leg], kind: Literal["economy", "business"] | None, note: str = "") -> str:
    """Book a trip (nested objects, a union and an optional parameter)."""
    return f"booked {len(trip)} legs"


def weather(city: str) -> dict[str, Any]:
    """Current weather in a city."""
    return {"city": city, "temp_c": 21.5}


def forecast(city: str) -> list[int]:
    """Three-day forecast."""
    return [20, 21, 22]


def test_full_tool_schemas_reach_the_wire(emu: Emulator, call: Any) -> None:
    emu.push("ollama", ReplyText("ok"))

    @command(tools=[book], **opts(emu))
    def trip() -> str:
        return "Book me a trip"

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # a leaked serializer warning would raise
        call(trip)

    sent = emu.last_request("ollama").body["tools"][0]
    assert sent["type"] == "function"
    parameters = sent["function"]["parameters"]
    assert parameters == trip.tools[0].definition.parameters
    # What the SDK's Tool model would have dropped (providers.md 1.5) is all there:
    assert "$defs" in parameters and parameters["$defs"]["Leg"]["properties"]["seats"]
    assert parameters["properties"]["trip"]["items"] == {"$ref": "#/$defs/Leg"}
    assert "anyOf" in parameters["properties"]["kind"]
    assert parameters["additionalProperties"] is False


def test_sdk_alone_would_strip_the_schema() -> None:
    """The captured SDK request shows the loss that the adapter works around."""
    stripped = CAPTURED["tool_nested_schema_roundtrip"]["requests"]["body"]["tools"][0]
    assert stripped["function"]["parameters"]["properties"]["trip"] == {"type": "object"}
    assert stripped["function"]["parameters"]["properties"]["kind"] == {}


def test_format_is_sent_together_with_tools(emu: Emulator, call: Any) -> None:
    emu.push("ollama", ReplyToolCalls(("weather", {"city": "Paris"})), ReplyJson({"value": 21.5}))

    @command(output=float, tools=[weather], **opts(emu))
    def temp(city: str) -> str:
        return f"Temperature in {city}?"

    assert call(temp, "Paris") == 21.5
    for body in bodies(emu):
        assert body["format"] == temp.schema
        assert body["tools"][0]["function"]["name"] == "weather"


def test_tool_round_trip_with_generated_ids(emu: Emulator, run_result: Any) -> None:
    emu.push(
        "ollama",
        ReplyToolCalls(("weather", {"city": "Rome"}), ("forecast", {"city": "Rome"})),
        ReplyText("Warm."),
    )

    @command(tools=[weather, forecast], **opts(emu))
    def report(city: str) -> str:
        return f"Weather report for {city}"

    result = run_result(report, "Rome")
    assert result.value == "Warm."
    model_turn = result.transcript.messages[1]
    assert isinstance(model_turn, ModelTurn)
    assert [p.id for p in model_turn.parts if isinstance(p, ToolCall)] == ["call_0", "call_1"]
    second = bodies(emu)[1]
    assert second["messages"][1] == {
        "role": "assistant",
        "tool_calls": [
            {"function": {"name": "weather", "arguments": {"city": "Rome"}}},
            {"function": {"name": "forecast", "arguments": {"city": "Rome"}}},
        ],
    }
    assert second["messages"][2:] == [
        {"role": "tool", "content": '{"city":"Rome","temp_c":21.5}', "tool_name": "weather"},
        {"role": "tool", "content": "[20,21,22]", "tool_name": "forecast"},
    ]


def test_auto_finalize(emu: Emulator, call: Any) -> None:
    emu.push(
        "ollama",
        ReplyToolCalls(("weather", {"city": "Oslo"})),
        ReplyEmpty(),
        ReplyJson({"value": 3.0}),
    )

    @command(output=float, tools=[weather], **opts(emu))
    def temp(city: str) -> str:
        return f"Temperature in {city}?"

    assert call(temp, "Oslo") == 3.0
    third = bodies(emu)[2]
    assert third["tools"] == []
    assert third["format"] == temp.schema
    roles = [m["role"] for m in third["messages"]]
    assert roles == ["user", "assistant", "tool", "user"]  # the empty answer is not sent
    assert "final answer" in third["messages"][-1]["content"]


def test_forced_tool_mode_offers_the_output_tool(emu: Emulator, call: Any) -> None:
    emu.push("ollama", ReplyToolCalls(("City", {"name": "Lyon", "population": 5})))

    @command(output=City, output_mode="tool", **opts(emu))
    def biggest() -> str:
        return "Largest city?"

    assert call(biggest) == City(name="Lyon", population=5)
    body = emu.last_request("ollama").body
    assert "format" not in body
    assert body["tools"][0]["function"]["name"] == "City"


# -- media ---------------------------------------------------------------------------------------


def test_images_go_as_base64(emu: Emulator, call: Any) -> None:
    emu.push("ollama", ReplyText("a cat"))
    png = base64.b64encode(b"\x89PNG fake image").decode()

    @command(**opts(emu))
    def describe() -> Any:
        return ["What is this?", Media("image", "image/png", data=png)]

    assert call(describe) == "a cat"
    message = emu.last_request("ollama").body["messages"][0]
    assert message == {"role": "user", "content": "What is this?", "images": [png]}


@pytest.mark.parametrize(
    "media",
    [
        Media("image", "image/png", url="https://example.com/a.png"),
        Media("pdf", "application/pdf", data="AA=="),
    ],
    ids=["url", "pdf"],
)
def test_unsupported_media_is_a_configuration_error(media: Media) -> None:
    request = Request(model="m", messages=(UserTurn((Text("x"), media)),))
    with pytest.raises(ConfigurationError, match="inline images"):
        build(request, MODEL)


# -- streaming -----------------------------------------------------------------------------------


def test_stream_text(emu: Emulator, stream: Any) -> None:
    emu.push("ollama", ReplyText("The quick brown fox jumps over the lazy dog."))

    @command(**opts(emu))
    def story() -> str:
        return "Tell me"

    chunks = stream(story)
    assert len(chunks) > 1
    assert "".join(chunks) == "The quick brown fox jumps over the lazy dog."
    assert emu.last_request("ollama").body["stream"] is True


def test_stream_with_tools(emu: Emulator, stream: Any) -> None:
    emu.push(
        "ollama",
        ReplyToolCalls(("weather", {"city": "Bern"})),
        ReplyText("It is 21.5 degrees in Bern."),
    )

    @command(tools=[weather], **opts(emu))
    def report(city: str) -> str:
        return f"Weather in {city}?"

    assert "".join(stream(report, "Bern")) == "It is 21.5 degrees in Bern."
    second = bodies(emu)[1]
    assert second["messages"][2]["role"] == "tool"


def test_cut_stream_is_a_connection_error(emu: Emulator, stream: Any) -> None:
    emu.push("ollama", CutStream(after=1, reply=ReplyText("a long answer that is cut off midway")))

    @command(retries=0, **opts(emu))
    def story() -> str:
        return "Tell me"

    with pytest.raises(ProviderConnectionError):
        stream(story)


def test_error_inside_stream_is_transient(emu: Emulator, stream: Any) -> None:
    emu.push("ollama", StreamError(after=1), ReplyText("Recovered fine."))

    @command(retries=1, **opts(emu))
    def story() -> str:
        return "Tell me"

    assert "".join(stream(story)).endswith("Recovered fine.")
    assert len(bodies(emu)) == 2


def test_error_inside_stream_without_retries(emu: Emulator, stream: Any) -> None:
    emu.push("ollama", StreamError(after=1))

    @command(retries=0, **opts(emu))
    def story() -> str:
        return "Tell me"

    with pytest.raises(ServerError) as info:
        stream(story)
    assert "in the stream" in str(info.value)


def test_stream_without_done_line_is_an_error() -> None:
    from alloy.providers.ollama import StreamState

    state = StreamState()
    with pytest.raises(ProviderConnectionError):
        state.response()


# -- faults --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault", [RateLimited(), Overloaded(), HttpError(500)], ids=["429", "503", "500"]
)
def test_transient_errors_are_retried(emu: Emulator, call: Any, fault: Any) -> None:
    emu.push("ollama", fault, ReplyJson({"value": 2.0}))

    @command(output=float, retries=1, **opts(emu))
    def two() -> str:
        return "two"

    assert call(two) == 2.0
    assert len(bodies(emu)) == 2


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (HttpError(400), BadRequestError),
        (HttpError(404, "model 'llama9' not found"), BadRequestError),
        (Unauthorized(), AuthenticationError),
        (SchemaRejected(), SchemaRejectedError),
    ],
    ids=["400", "404", "401", "schema"],
)
def test_client_errors_are_not_retried(emu: Emulator, call: Any, fault: Any, error: type) -> None:
    emu.push("ollama", fault, ReplyJson({"value": 2.0}))

    @command(output=float, retries=3, **opts(emu))
    def two() -> str:
        return "two"

    with pytest.raises(error) as info:
        call(two)
    assert len(bodies(emu)) == 1
    assert info.value.attempts == 1


def test_timeout(emu: Emulator, call: Any) -> None:
    emu.push("ollama", Slow(1.0))

    @command(output=float, retries=0, timeout=0.2, **opts(emu))
    def slow() -> str:
        return "slow"

    with pytest.raises(ProviderTimeoutError):
        call(slow)


def test_dropped_connection(emu: Emulator, call: Any) -> None:
    emu.push("ollama", Disconnect(), ReplyJson({"value": 5.0}))

    @command(output=float, retries=0, **opts(emu))
    def dropped() -> str:
        return "dropped"

    with pytest.raises(ProviderConnectionError):
        call(dropped)
    assert call(dropped) == 5.0  # the connection pool recovers


def test_refused_connection(call: Any) -> None:
    @command(output=float, retries=0, model=f"ollama:{MODEL}", base_url="http://127.0.0.1:9")
    def nowhere() -> str:
        return "x"

    with pytest.raises(ProviderConnectionError):
        call(nowhere)


def test_truncation(emu: Emulator, call: Any) -> None:
    emu.push("ollama", ReplyMaxTokens('{"value": '))

    @command(output=float, **opts(emu))
    def one() -> str:
        return "one"

    with pytest.raises(TruncatedOutputError):
        call(one)


@pytest.mark.parametrize(
    ("exc", "error"),
    [
        (httpx.ConnectError("refused"), ProviderConnectionError),
        (httpx.RemoteProtocolError("incomplete"), ProviderConnectionError),
        (httpx.ReadTimeout("slow"), ProviderTimeoutError),
        (ConnectionError("Failed to connect to Ollama"), ProviderConnectionError),
        (json.JSONDecodeError("x", "{", 1), ProviderConnectionError),
    ],
    ids=str,
)
def test_transport_errors(exc: Exception, error: type) -> None:
    mapped = create(MODEL).map_error(exc)
    assert isinstance(mapped, error) and mapped.transient
    assert create(MODEL).map_error(ValueError("not ours")) is None


@pytest.mark.parametrize(
    ("raw", "expected"), [("stop", "stop"), ("length", "length"), (None, "stop")]
)
def test_finish_reasons(raw: str | None, expected: str) -> None:
    assert finish_reason(raw) == expected


# -- settings, host, clients ---------------------------------------------------------------------


def test_settings_reach_the_wire(emu: Emulator, call: Any) -> None:
    emu.push("ollama", ReplyJson({"value": 1.0}))

    @command(
        output=float,
        temperature=0.3,
        max_tokens=77,
        system="Be brief.",
        extra_json={"options": {"seed": 7}, "top_k": 5, "keep_alive": "5m", "think": False},
        **opts(emu),
    )
    def one() -> str:
        return "one"

    call(one)
    body = emu.last_request("ollama").body
    # Model options go into options; other keys are merged into the body, as for every provider.
    assert body["options"] == {"temperature": 0.3, "num_predict": 77, "seed": 7, "top_k": 5}
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["keep_alive"] == "5m" and body["think"] is False


def test_each_request_gets_its_own_timeout_through_one_client(emu: Emulator, call: Any) -> None:
    """The SDK takes a timeout only per client; alloy's transport gives each request its own."""
    emu.push("ollama", Slow(0.05, ReplyJson({"value": 1.0})), Slow(1.0, ReplyJson({"value": 2.0})))

    @command(output=float, retries=0, timeout=5, **opts(emu))
    def patient() -> str:
        return "one"

    assert call(patient) == 1.0
    with pytest.raises(ProviderTimeoutError):
        call(patient.with_options(timeout=0.2))
    model = create(MODEL, base_url=emu.ollama_host)
    assert model.client() is model.client()


def test_async_clients_are_reused_per_loop(emu: Emulator) -> None:
    model = create(MODEL, base_url=emu.ollama_host)
    request = Request(model="m", messages=(UserTurn((Text("hi"),)),))

    async def twice() -> None:
        first = model.aclient()
        await model.arequest(request)
        await model.arequest(request)
        assert model.aclient() is first

    asyncio.run(twice())


def test_host_from_env(emu: Emulator, call: Any) -> None:
    emu.push("ollama", ReplyJson({"value": 4.0}))

    @command(output=float, model=f"ollama:{MODEL}")
    def four() -> str:
        return "four"

    assert call(four) == 4.0
    assert emu.last_request("ollama").header("authorization") is None


def test_api_key_goes_as_bearer(emu: Emulator, call: Any) -> None:
    emu.push("ollama", ReplyJson({"value": 4.0}))

    @command(output=float, api_key="cloud-key", **opts(emu))
    def four() -> str:
        return "four"

    call(four)
    assert emu.last_request("ollama").header("authorization") == "Bearer cloud-key"


def test_capabilities_and_factory() -> None:
    assert CAPABILITIES.native_schema and CAPABILITIES.tools and not CAPABILITIES.strict_tools
    assert isinstance(create(MODEL), OllamaModel)
    with pytest.raises(ConfigurationError):
        create("")


def test_dialect_is_the_canonical_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
    }
    sent = ollama_schema(schema)
    assert sent == schema and sent is not schema


# -- recorded exchanges --------------------------------------------------------------------------


def recorded(name: str) -> list[dict[str, Any]]:
    interactions: list[dict[str, Any]] = json.loads((RECORDED / name).read_text())["interactions"]
    return interactions


class Availability(BaseModel):
    age: int
    available: bool


def get_weather(city: str) -> str:
    """Get the weather in a given city."""
    return "11 degrees celsius"


def test_recorded_structured_output(emu: Emulator, call: Any) -> None:
    emu.replay(RECORDED / "chat_structured_output.json")

    @command(output=Availability, **opts(emu))
    def who() -> str:
        return "Ollama is 22 years old and busy saving the world."

    assert call(who) == Availability(age=22, available=False)
    body = recorded("chat_structured_output.json")[0]["response"]["body"]
    parsed = parse_body(body)
    assert Availability.model_validate_json(parsed.text) == Availability(age=22, available=False)
    assert (parsed.usage.input_tokens, parsed.usage.output_tokens) == (34, 12)


def test_recorded_tool_call_then_final_answer(emu: Emulator, call: Any) -> None:
    emu.replay(RECORDED / "chat_tool_call.json")
    emu.replay(RECORDED / "chat_tool_result_final.json")

    @command(tools=[get_weather], **opts(emu))
    def weather_in(city: str) -> str:
        return f"what is the weather in {city}?"

    assert call(weather_in, "tokyo") == "The current temperature in Toronto is 11°C."
    second = bodies(emu)[1]
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}}],
        },
        {"role": "tool", "content": "11 degrees celsius", "tool_name": "get_weather"},
    ]
    first = parse_body(recorded("chat_tool_call.json")[0]["response"]["body"])
    assert first.tool_calls == (ToolCall("call_0", "get_weather", {"city": "Tokyo"}),)
    assert first.finish_reason == "tool_calls"
    final = parse_body(recorded("chat_tool_result_final.json")[0]["response"]["body"])
    assert final.text == "The current temperature in Toronto is 11°C."


def test_recorded_stream_tool_call(emu: Emulator, stream: Any) -> None:
    emu.replay(RECORDED / "chat_stream_tool_call.json")
    emu.push("ollama", ReplyText("Sunny in Tokyo."))

    @command(tools=[get_weather], **opts(emu))
    def weather_in(city: str) -> str:
        return f"what is the weather in {city}?"

    assert "".join(stream(weather_in, "tokyo")) == "Sunny in Tokyo."
    second = bodies(emu)[1]
    assert second["messages"][1]["tool_calls"][0]["function"]["arguments"] == {"city": "Tokyo"}


def test_recorded_stream_lines_parse() -> None:
    import ollama

    from alloy.providers.ollama import StreamState

    state = StreamState()
    for line in recorded("chat_stream_tool_call.json")[0]["response"]["ndjson"]:
        state.feed(ollama.ChatResponse.model_validate(line))
    response = state.response()
    assert response.tool_calls == (ToolCall("call_0", "get_weather", {"city": "Tokyo"}),)
    assert (response.usage.input_tokens, response.usage.output_tokens) == (169, 15)


_CALL = {"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}}


@pytest.mark.parametrize(
    "body",
    [
        {
            "message": {"role": "assistant", "content": "Hi."},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 3,
            "eval_count": 2,
        },
        {
            "message": {"role": "assistant", "content": "", "tool_calls": [_CALL, _CALL]},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 9,
            "eval_count": 4,
        },
        {
            "message": {"role": "assistant", "content": "Let me look.", "tool_calls": [_CALL]},
            "done": True,
        },
        {
            "message": {"role": "assistant", "content": "cut of"},
            "done": True,
            "done_reason": "length",
            "eval_count": 7,
        },
        {"message": {"role": "assistant", "content": "partial"}, "done": False},
        {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"},
    ],
)
def test_a_whole_reply_parses_as_its_stream_does(body: dict[str, Any]) -> None:
    import ollama

    from alloy.providers.ollama import StreamState, parse

    reply = ollama.ChatResponse.model_validate({"model": "llama3.2", **body})
    state = StreamState()
    state.feed(reply)
    assert parse(reply) == state.response(require_done=False)


# -- what is sent matches what the SDK sends for the same case -----------------------------------

SCHEMA_KEYS = {"format", "parameters"}


def shape(value: Any) -> Any:
    """Keys and nesting; schemas are compared separately (the adapter sends them in full)."""
    if isinstance(value, dict):
        return {k: ("<schema>" if k in SCHEMA_KEYS else shape(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(v) for v in value]
    return type(value).__name__


def captured(case: str) -> dict[str, Any]:
    body: dict[str, Any] = CAPTURED[case]["requests"]["body"]
    return body


WEATHER_SCHEMA = captured("structured_schema")["format"]
TOOL = captured("tool")["tools"][0]["function"]
TOOL_DEF = ToolDefinition(TOOL["name"], TOOL["description"], TOOL["parameters"])


def user(text: str) -> UserTurn:
    return UserTurn((Text(text),))


CASES = [
    ("text", Request(model="m", messages=(user("Say hello"),)), False),
    (
        "structured_schema",
        Request(model="m", messages=(user("Weather?"),), output=OutputSpec("w", WEATHER_SCHEMA)),
        False,
    ),
    ("tool", Request(model="m", messages=(user("Weather in Paris?"),), tools=(TOOL_DEF,)), False),
    (
        "tool_final",
        Request(
            model="m",
            messages=(
                user("Weather in Paris?"),
                ModelTurn((ToolCall("call_0", "get_weather", {"city": "Paris", "unit": "c"}),)),
                UserTurn((ToolResult("call_0", "get_weather", '{"temp_c": 21.5}'),)),
            ),
            tools=(TOOL_DEF,),
        ),
        False,
    ),
    ("stream", Request(model="m", messages=(user("Say hello"),)), True),
    ("stream_tool", Request(model="m", messages=(user("Say hello"),), tools=(TOOL_DEF,)), True),
    (
        "structured_pydantic",
        Request(
            model="m",
            messages=(user("Weather?"),),
            output=OutputSpec("w", WEATHER_SCHEMA),
            settings=ModelSettings(temperature=0),
        ),
        False,
    ),
]


@pytest.mark.parametrize(("case", "request_", "streamed"), CASES, ids=[c[0] for c in CASES])
def test_sent_body_matches_captured_sdk_request(
    emu: Emulator, case: str, request_: Request, streamed: bool
) -> None:
    model = create(MODEL, base_url=emu.ollama_host)
    if streamed:
        list(model.stream(request_))
    else:
        model.request(request_)
    body = emu.last_request("ollama").body
    expected = captured(case)
    assert shape(body) == shape(expected)
    if "format" in expected and case == "structured_schema":
        assert body["format"] == expected["format"]
    if expected.get("tools"):
        assert body["tools"][0]["function"]["parameters"] == TOOL["parameters"]


@pytest.mark.parametrize("key", ["ollama", "test", "e"])
def test_a_placeholder_key_does_not_garble_the_error(emu: Emulator, key: str) -> None:
    message = "model 'llama3.2' not found, try pulling it first with: ollama pull llama3.2"
    emu.push("ollama", HttpError(404, message))

    @command(output=float, retries=0, api_key=key, **opts(emu))
    def two() -> str:
        return "two"

    with pytest.raises(BadRequestError) as info:
        two()
    assert message in str(info.value)
