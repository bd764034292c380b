"""Configuration: every ALLOY_* variable takes effect, the precedence order holds, bad values are named."""

from __future__ import annotations

import json
from typing import Any

import pytest

import alloy
from alloy import ConfigurationError, command, configure, use_config
from alloy._config import check_options
from alloy._types import Request
from alloy.errors import ServerError
from alloy.providers import get_model
from alloy.testing import FunctionModel, json_reply, override_model, script, tool_call

from ..conftest import Call


@command(output=int)
def number() -> str:
    return "a number"


def one_request(
    monkeypatch: pytest.MonkeyPatch, call: Call, env: dict[str, str], *replies: Any
) -> list[Request]:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    model = script(*(replies or (json_reply(1, wrap=True),)))
    with override_model(model):
        call(number)
    return model.requests


@pytest.mark.parametrize(
    ("variable", "value", "check"),
    [
        ("ALLOY_TEMPERATURE", "0.3", lambda r: r.settings.temperature == 0.3),
        ("ALLOY_MAX_TOKENS", "123", lambda r: r.settings.max_tokens == 123),
        ("ALLOY_SYSTEM", "Be terse.", lambda r: r.system == "Be terse."),
        ("ALLOY_DEFAULT_SYSTEM", "Be kind.", lambda r: r.system == "Be kind."),
        ("ALLOY_TIMEOUT", "7.5", lambda r: r.settings.timeout == 7.5),
        ("ALLOY_EXTRA_JSON", '{"top_p": 0.5}', lambda r: r.settings.extra == {"top_p": 0.5}),
        (
            "ALLOY_OUTPUT_MODE",
            "prompt",
            lambda r: r.output.mode == "prompt" and "JSON Schema" in r.system,
        ),
    ],
)
def test_request_settings_from_env(
    monkeypatch: pytest.MonkeyPatch, call: Call, variable: str, value: str, check: Any
) -> None:
    requests = one_request(monkeypatch, call, {variable: value})
    assert check(requests[0])


def test_alloy_model_selects_the_model(monkeypatch: pytest.MonkeyPatch, run_result: Call) -> None:
    monkeypatch.setenv("ALLOY_MODEL", "offline")
    result = run_result(number)
    assert isinstance(result.value, int)
    assert result.model == "offline"
    assert result.transcript.attempts == 1


def test_alloy_retry_bounds_transient_retries(monkeypatch: pytest.MonkeyPatch, call: Call) -> None:
    monkeypatch.setenv("ALLOY_RETRY", "1")
    failure = ServerError("overloaded", provider="test", status_code=503, retry_after=0)
    model = script(failure, failure)
    with override_model(model), pytest.raises(ServerError) as info:
        call(number)
    assert len(model.requests) == 2
    assert info.value.attempts == 2


def test_alloy_max_tool_turns(monkeypatch: pytest.MonkeyPatch, call: Call) -> None:
    monkeypatch.setenv("ALLOY_MAX_TOOL_TURNS", "1")

    def ping() -> int:
        return 1

    @command(tools=[ping])
    def go() -> str:
        return "go"

    model = FunctionModel(lambda r: tool_call("ping"))
    with override_model(model), pytest.raises(alloy.ToolLoopLimitExceeded):
        call(go)
    assert len(model.requests) == 2


def test_alloy_max_reasks(monkeypatch: pytest.MonkeyPatch, call: Call) -> None:
    bad = '{"value": "x"}'
    requests = one_request(
        monkeypatch, call, {"ALLOY_MAX_REASKS": "2"}, bad, bad, json_reply(5, wrap=True)
    )
    assert len(requests) == 3


def test_alloy_tool_errors(monkeypatch: pytest.MonkeyPatch, call: Call) -> None:
    monkeypatch.setenv("ALLOY_TOOL_ERRORS", "raise")

    def explode() -> None:
        raise RuntimeError("x")

    @command(tools=[explode])
    def go() -> str:
        return "go"

    with override_model(script(tool_call("explode"))), pytest.raises(alloy.ToolError):
        call(go)


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("ALLOY_TEMPERATURE", "warm", "ALLOY_TEMPERATURE"),
        ("ALLOY_TEMPERATURE", "9", "between 0 and 2"),
        ("ALLOY_MAX_TOKENS", "lots", "ALLOY_MAX_TOKENS"),
        ("ALLOY_MAX_TOKENS", "0", "at least 1"),
        ("ALLOY_RETRY", "-1", "ALLOY_RETRY"),
        ("ALLOY_MAX_TOOL_TURNS", "ten", "ALLOY_MAX_TOOL_TURNS"),
        ("ALLOY_PARALLEL_TOOLS_MAX", "0", "ALLOY_PARALLEL_TOOLS_MAX"),
        ("ALLOY_AUTO_FINALIZE_MISSING_OUTPUT", "maybe", "ALLOY_AUTO_FINALIZE_MISSING_OUTPUT"),
        ("ALLOY_TIMEOUT", "soon", "ALLOY_TIMEOUT"),
        ("ALLOY_EXTRA_JSON", "{", "ALLOY_EXTRA_JSON is not valid JSON"),
        ("ALLOY_EXTRA_JSON", "[1]", "ALLOY_EXTRA_JSON must be a JSON object"),
        ("ALLOY_MAX_REASKS", "-2", "ALLOY_MAX_REASKS"),
        ("ALLOY_OUTPUT_MODE", "telepathy", "ALLOY_OUTPUT_MODE"),
        ("ALLOY_MODEL", "nonsense-model", "Cannot tell the provider"),
        ("ALLOY_MODEL", "acme:m1", "Unknown provider 'acme'"),
    ],
)
def test_bad_env_values_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, message: str
) -> None:
    monkeypatch.setenv(variable, value)
    monkeypatch.setenv("ALLOY_MODEL", "offline") if variable != "ALLOY_MODEL" else None
    with pytest.raises(ConfigurationError, match=message):
        number()


def test_precedence_call_over_decorator_over_context_over_configure_over_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[float | None] = []

    def record(request: Request) -> str:
        seen.append(request.settings.temperature)
        return json_reply(1, wrap=True)

    model = FunctionModel(record)
    monkeypatch.setenv("ALLOY_TEMPERATURE", "0.1")

    @command(output=int)
    def plain() -> str:
        return "x"

    @command(output=int, temperature=0.4)
    def decorated() -> str:
        return "x"

    with override_model(model):
        plain()  # env
        configure(temperature=0.2)
        plain()  # configure() beats env
        with use_config(temperature=0.3):
            plain()  # use_config beats configure()
            decorated()  # decorator beats use_config
            decorated.with_options(temperature=0.5)()  # per call beats decorator
    assert seen == [0.1, 0.2, 0.3, 0.4, 0.5]


def test_defaults_apply_without_any_configuration() -> None:
    config = alloy.Config()
    assert (config.retries, config.max_tool_turns, config.max_reasks) == (2, 10, 1)
    assert config.auto_finalize_missing_output is True
    assert config.model is None


def test_dotenv_file_is_read(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".env").write_text("ALLOY_MODEL=offline\nALLOY_MAX_TOKENS=77\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ALLOY_NO_DOTENV")
    alloy.reset_configuration()
    try:
        assert isinstance(number(), int)
        from alloy._config import resolve

        assert resolve({}, {}).max_tokens == 77
    finally:
        import os

        os.environ.pop("ALLOY_MODEL", None)
        os.environ.pop("ALLOY_MAX_TOKENS", None)


def test_use_config_is_scoped(monkeypatch: pytest.MonkeyPatch) -> None:
    from alloy._config import resolve

    with use_config(max_tokens=5):
        assert resolve({}, {}).max_tokens == 5
    assert resolve({}, {}).max_tokens is None


def test_configure_validates_eagerly() -> None:
    with pytest.raises(ConfigurationError, match="configure"):
        configure(max_tokens="many")
    with pytest.raises(ConfigurationError, match="Unknown option"):
        configure(colour="blue")


def test_config_repr_hides_the_api_key() -> None:
    config = alloy.Config(api_key="sk-secret-value-123456")
    assert "sk-secret" not in repr(config)
    assert "***" in repr(config)
    assert config.api_key is not None
    assert config.api_key.get_secret_value() == "sk-secret-value-123456"


def test_no_object_alloy_keeps_shows_the_key_in_its_attributes(call: Call) -> None:
    """Debuggers and error reporters dump vars() and reprs of what is in scope."""
    key = "opaque-proxy-token-7f3a9c2e"
    checked = check_options({"api_key": key}, source="test")
    assert key not in repr(checked)

    @alloy.command(model="offline", api_key=key)
    def hello() -> str:
        return "hi"

    call(hello)
    for name in ("openai:gpt-5-mini", "anthropic:claude-sonnet-4-6", "gemini:gemini-2.5-flash"):
        model = get_model(name, api_key=key)
        assert key not in repr(vars(model))
    config = hello.prepare().plan.config
    assert key not in repr(vars(config))
    assert key not in repr(vars(hello)) and key not in repr(vars(hello.with_options()))


def test_extra_json_env_is_parsed(monkeypatch: pytest.MonkeyPatch, call: Call) -> None:
    extra = {"reasoning": {"effort": "low"}, "top_p": 1}
    requests = one_request(monkeypatch, call, {"ALLOY_EXTRA_JSON": json.dumps(extra)})
    assert requests[0].settings.extra == extra


# -- a command reuses its resolved settings only while nothing they came from changed --


def test_changes_between_calls_of_one_command_take_effect(
    monkeypatch: pytest.MonkeyPatch, call: Call
) -> None:
    model = script(*(json_reply(1, wrap=True) for _ in range(6)))
    configure(model=model)
    call(number)
    monkeypatch.setenv("ALLOY_TEMPERATURE", "0.4")
    call(number)
    configure(max_tokens=55)
    call(number)
    with use_config(system="Inside."):
        call(number)
    call(number)
    monkeypatch.delenv("ALLOY_TEMPERATURE")
    call(number)
    seen = [(r.settings.temperature, r.settings.max_tokens, r.system) for r in model.requests]
    assert seen == [
        (None, None, None),
        (0.4, None, None),
        (0.4, 55, None),
        (0.4, 55, "Inside."),
        (0.4, 55, None),
        (None, 55, None),
    ]


def test_a_command_resolves_once_while_nothing_changes() -> None:
    configure(model="offline")
    first = number.prepare()
    assert number.prepare() is first
    assert number.prepare().plan is first.plan
    assert number.prepare(stream=True).plan is not first.plan
    configure(temperature=0.1)
    assert number.prepare().plan.config.temperature == 0.1


def test_dropping_cached_models_reaches_a_command_that_already_ran() -> None:
    from alloy.providers import clear_model_cache, register_provider

    built: list[str] = []

    def factory(model_id: str, **_: Any) -> Any:
        built.append(model_id)
        return FunctionModel(lambda request: json_reply(len(built), wrap=True))

    register_provider("counting", factory)
    configure(model="counting:m")
    assert number() == 1
    assert number() == 1
    clear_model_cache()
    assert number() == 2
    assert built == ["m", "m"]


def test_a_handler_subscribed_after_a_call_sees_the_next_call() -> None:
    from alloy.events import CommandFinished, subscribe

    configure(model="offline")
    number()
    seen: list[Any] = []
    unsubscribe = subscribe(seen.append, CommandFinished)
    try:
        number()
    finally:
        unsubscribe()
    assert len(seen) == 1 and seen[0].call_id


def test_every_way_of_changing_the_environment_reaches_the_next_call(
    monkeypatch: pytest.MonkeyPatch, call: Call
) -> None:
    import os
    from unittest import mock

    model = script(*(json_reply(1, wrap=True) for _ in range(8)))
    configure(model=model)
    monkeypatch.delenv("ALLOY_TEMPERATURE", raising=False)
    call(number)
    os.environ["ALLOY_TEMPERATURE"] = "0.1"
    call(number)
    os.environ.update(ALLOY_TEMPERATURE="0.2")
    call(number)
    os.environ.pop("ALLOY_TEMPERATURE")
    call(number)
    os.environ.setdefault("ALLOY_TEMPERATURE", "0.3")
    call(number)
    del os.environ["ALLOY_TEMPERATURE"]
    call(number)
    with mock.patch.dict(os.environ, {"ALLOY_TEMPERATURE": "0.5"}):
        call(number)
    call(number)  # patch.dict put the environment back as it was
    seen = [request.settings.temperature for request in model.requests]
    assert seen == [None, 0.1, 0.2, None, 0.3, None, 0.5, None]


def test_the_environment_layer_holds_until_a_variable_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every call reads the layers: they compare equal while nothing changed, and a change
    shows at the next read."""
    from alloy._config import layers_key

    first = layers_key()
    for _ in range(20):
        assert layers_key() == first
    monkeypatch.setenv("ALLOY_MAX_TOKENS", "77")
    assert layers_key() != first
    assert layers_key()[0]["ALLOY_MAX_TOKENS"] == "77"


def test_a_variable_set_in_another_thread_reaches_the_next_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os
    import threading

    from alloy._config import layers_key

    names = [f"ALLOY_{name}" for name in ("TEMPERATURE", "MAX_TOKENS", "SYSTEM", "TIMEOUT")]
    for name in names:
        monkeypatch.delenv(name, raising=False)

    def set_one(name: str) -> None:
        for number_ in range(200):
            os.environ[name] = str(number_ + 1)

    threads = [threading.Thread(target=set_one, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {name: layers_key()[0].get(name) for name in names} == dict.fromkeys(names, "200")
    for name in names:
        del os.environ[name]
    assert not set(names) & set(layers_key()[0])


def test_a_model_object_missing_part_of_the_protocol_is_named_at_decoration() -> None:
    class WholeCallsOnly:
        name = "mine"

        def request(self, request: object) -> object:
            raise AssertionError("never called")

    with pytest.raises(ConfigurationError) as caught:

        @command(output=str, model=WholeCallsOnly())
        def ask(text: str) -> str:
            return text

    message = str(caught.value)
    assert "got WholeCallsOnly" in message
    assert "missing capabilities, arequest, stream, astream" in message
    with pytest.raises(ConfigurationError) as plain:
        command(output=str, model=42)
    assert "missing" not in str(plain.value)


def test_variables_are_read_from_a_plain_mapping_put_in_place_of_os_environ(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The environment is read through ``os.environ``'s own dict when it is the process's;
    a mapping a program or test puts in its place is read as a mapping."""
    import os

    from alloy._config import layers_key

    monkeypatch.setattr(os, "environ", {**os.environ, "ALLOY_MAX_TOKENS": "55"})
    assert layers_key()[0]["ALLOY_MAX_TOKENS"] == "55"
    os.environ["ALLOY_MAX_TOKENS"] = "56"
    assert layers_key()[0]["ALLOY_MAX_TOKENS"] == "56"
