"""Azure OpenAI (``azure:`` Responses, ``azure-chat:`` Chat Completions), through the real
openai SDK (``AzureOpenAI`` for classic, ``OpenAI(base_url=.../openai/v1/)`` for v1) and the
emulator's Azure paths."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

import alloy
from alloy.errors import CommandError, ConfigurationError
from alloy.pricing import Price, price_for, set_price
from alloy.providers import azure, get_model
from alloy.testing.emulator import HttpError, ReplyJson, ReplyText, Unauthorized

from .cloud_fixtures import Capital, Tokens, capital_command, streamed, text_command

VERSION = "2024-10-21"
KEY = "azure-test-key-0123456789"


@pytest.fixture
def classic(emu: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The emulator as a classic Azure resource endpoint, with an API version and a key."""
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", emu.url)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_VERSION", VERSION)
    return emu


@pytest.fixture
def v1(emu: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The emulator as an Azure v1 endpoint (``.../openai/v1/``)."""
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", emu.url + "/openai/v1/")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    return emu


# -- classic: AzureOpenAI, api-key header, ?api-version= ------------------------------------------


def test_classic_chat_sends_the_deployment_path_version_and_api_key(classic: Any) -> None:
    classic.push("openai", ReplyJson({"city": "Paris", "country": "France"}))
    result = capital_command("azure-chat:my-gpt-4o").run("France")
    assert result.value == Capital("Paris", "France")
    assert result.model == "azure-chat:my-gpt-4o"
    request = classic.last_request("openai")
    assert request.path == "/openai/deployments/my-gpt-4o/chat/completions"
    assert request.query["api-version"] == [VERSION]
    assert request.header("api-key") == KEY
    assert request.header("authorization") is None
    assert request.body["response_format"]["type"] == "json_schema"


def test_classic_responses_sends_the_deployment_as_the_model(classic: Any) -> None:
    classic.push("openai", ReplyJson({"city": "Rome", "country": "Italy"}))
    assert capital_command("azure:my-gpt-4o")("Italy") == Capital("Rome", "Italy")
    request = classic.last_request("openai")
    assert request.path == "/openai/responses"
    assert request.query["api-version"] == [VERSION]
    assert request.body["model"] == "my-gpt-4o"
    assert request.body["text"]["format"]["type"] == "json_schema"


@pytest.mark.parametrize("model", ["azure:dep", "azure-chat:dep"])
def test_classic_stream_sync_and_async(classic: Any, model: str) -> None:
    streamed(model, classic, "openai", "Streaming from Azure works.")
    assert classic.last_request("openai").header("api-key") == KEY


def test_classic_async_typed_call(classic: Any) -> None:
    classic.push("openai", ReplyJson({"city": "Oslo", "country": "Norway"}))
    result = asyncio.run(capital_command("azure-chat:dep").arun("Norway"))
    assert result.value == Capital("Oslo", "Norway")


def test_api_version_option_wins_over_the_variable(classic: Any) -> None:
    classic.push("openai", ReplyJson({"city": "Paris", "country": "France"}))
    model = azure.create_chat("dep", api_key=KEY, base_url=classic.url, api_version="2025-01-01")
    capital_command(model)("France")
    assert classic.last_request("openai").query["api-version"] == ["2025-01-01"]


# -- v1: OpenAI(base_url=.../openai/v1/), Bearer ----------------------------------------------------


@pytest.mark.parametrize(
    ("model", "path"),
    [("azure:dep", "/openai/v1/responses"), ("azure-chat:dep", "/openai/v1/chat/completions")],
)
def test_v1_sends_a_bearer_key_and_no_version(v1: Any, model: str, path: str) -> None:
    v1.push("openai", ReplyJson({"city": "Paris", "country": "France"}))
    assert capital_command(model)("France") == Capital("Paris", "France")
    request = v1.last_request("openai")
    assert request.path == path
    assert "api-version" not in request.query
    assert request.header("authorization") == f"Bearer {KEY}"


def test_v1_stream_and_async(v1: Any) -> None:
    v1.push("openai", ReplyText("v1 streams."))
    assert "".join(text_command("azure:dep").stream("x")) == "v1 streams."
    v1.push("openai", ReplyJson({"city": "Bern", "country": "Switzerland"}))
    result = asyncio.run(capital_command("azure:dep").arun("Switzerland"))
    assert result.value == Capital("Bern", "Switzerland")


# -- Entra ID token providers ---------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ["classic", "v1"])
def test_a_token_provider_is_called_and_sent_as_a_bearer_token(emu: Any, endpoint: str) -> None:
    tokens = Tokens()
    base_url = emu.url if endpoint == "classic" else emu.url + "/openai/v1/"
    model = azure.create_chat("dep", api_key=tokens, base_url=base_url, api_version=VERSION)
    emu.push("openai", ReplyJson({"city": "Paris", "country": "France"}))
    capital_command(model)("France")
    assert tokens.issued
    assert emu.last_request("openai").header("authorization") == f"Bearer {tokens.issued[-1]}"


@pytest.mark.parametrize("endpoint", ["classic", "v1"])
def test_a_token_provider_works_with_the_async_client(emu: Any, endpoint: str) -> None:
    tokens = Tokens()
    base_url = emu.url if endpoint == "classic" else emu.url + "/openai/v1/"
    model = azure.create("dep", api_key=tokens, base_url=base_url, api_version=VERSION)
    emu.push("openai", ReplyJson({"city": "Paris", "country": "France"}))
    result = asyncio.run(capital_command(model).arun("France"))
    assert result.value == Capital("Paris", "France")
    assert emu.last_request("openai").header("authorization") == f"Bearer {tokens.issued[-1]}"


@pytest.mark.parametrize("endpoint", ["classic", "v1"])
def test_a_token_is_never_raised_or_logged(
    emu: Any, endpoint: str, caplog: pytest.LogCaptureFixture
) -> None:
    tokens = Tokens()
    base_url = emu.url if endpoint == "classic" else emu.url + "/openai/v1/"
    model = azure.create_chat("dep", api_key=tokens, base_url=base_url, api_version=VERSION)
    # Two: the first 401 is answered by asking the provider again, the second is the error.
    emu.push("openai", HttpError(401, echo_key=True), HttpError(401, echo_key=True))
    caplog.set_level(logging.DEBUG)
    with pytest.raises(CommandError) as caught:
        capital_command(model)("France")
    shown = [str(caught.value), repr(caught.value), caplog.text]
    shown += [str(link) for link in _chain(caught.value)]
    for text in shown:
        assert not any(token in text for token in tokens.issued), text[:300]


@pytest.mark.parametrize("form", ["sync", "async"])
@pytest.mark.parametrize(("endpoint", "factory"), [("classic", "create"), ("v1", "create_chat")])
def test_a_token_provider_is_asked_again_once_after_a_401(
    emu: Any, endpoint: str, factory: str, form: str
) -> None:
    tokens = Tokens()
    base_url = emu.url if endpoint == "classic" else emu.url + "/openai/v1/"
    model = getattr(azure, factory)(
        "dep", azure_ad_token_provider=tokens, base_url=base_url, api_version=VERSION
    )
    emu.push("openai", Unauthorized(), ReplyJson({"city": "Paris", "country": "France"}))
    cmd = capital_command(model)
    result = cmd.run("France") if form == "sync" else asyncio.run(cmd.arun("France"))
    assert result.value == Capital("Paris", "France")
    assert result.transcript.attempts == 1  # the resent request is not a retry
    sent = [r.header("authorization") for r in emu.requests_for("openai")]
    assert len(sent) == 2 and sent[0] != sent[1]
    assert all(header in {f"Bearer {token}" for token in tokens.issued} for header in sent)


def test_a_key_is_not_resent_after_a_401(classic: Any) -> None:
    classic.push("openai", Unauthorized(), ReplyJson({"city": "Paris", "country": "France"}))
    with pytest.raises(CommandError):
        capital_command("azure-chat:dep")("France")
    assert len(classic.requests_for("openai")) == 1


def _chain(error: BaseException) -> list[BaseException]:
    links: list[BaseException] = []
    seen: BaseException | None = error
    while seen is not None and seen not in links:
        links.append(seen)
        seen = seen.__cause__ or seen.__context__ or getattr(seen, "last_error", None)
    return links


# -- what Azure refuses, and configuration errors ------------------------------------------------


def test_the_emulator_refuses_a_classic_path_without_an_api_version(emu: Any) -> None:
    import openai

    client = openai.OpenAI(base_url=emu.url + "/openai/deployments/dep", api_key=KEY)
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="dep", messages=[{"role": "user", "content": "hi"}])


def test_the_emulator_refuses_a_classic_request_without_a_key(emu: Any) -> None:
    import httpx

    response = httpx.post(
        emu.url + "/openai/deployments/dep/chat/completions?api-version=" + VERSION,
        json={"model": "dep", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert response.status_code == 401


@pytest.mark.parametrize("model", ["azure:dep", "azure-chat:dep"])
def test_a_missing_endpoint_names_its_variable(
    emu: Any, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    with pytest.raises(ConfigurationError, match="AZURE_OPENAI_ENDPOINT"):
        capital_command(model)("France")


def test_a_missing_key_names_its_variable(emu: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", emu.url)
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "an-openai-key-never-sent-to-azure")
    with pytest.raises(ConfigurationError, match="AZURE_OPENAI_API_KEY"):
        capital_command("azure:dep")("France")


def test_a_missing_api_version_on_classic_names_its_variable(
    emu: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", emu.url)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_API_VERSION", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_VERSION"):
        capital_command("azure-chat:dep")("France")


def test_a_model_is_named_before_its_variables_are_set(
    emu: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    assert get_model("azure:dep").name == "azure:dep"


# -- prices ----------------------------------------------------------------------------------------


def test_a_deployment_has_no_price_until_one_is_set(classic: Any) -> None:
    classic.push("openai", ReplyJson({"city": "Paris", "country": "France"}))
    result = capital_command("azure:my-unpriced-deployment").run("France")
    assert result.cost is None
    with pytest.raises(ConfigurationError, match="set_price"), alloy.use_config(cost_budget=1.0):
        capital_command("azure:my-unpriced-deployment")("France")


def test_set_price_prices_a_deployment(classic: Any) -> None:
    set_price("azure:my-priced-deployment", Price(2.5, 10.0))
    classic.push("openai", ReplyJson({"city": "Paris", "country": "France"}))
    result = capital_command("azure:my-priced-deployment").run("France")
    assert result.cost is not None and result.cost > 0


# -- the model= hint ------------------------------------------------------------------------------


def test_a_model_hint_gives_a_deployment_that_models_capabilities(classic: Any) -> None:
    old = azure.create_chat("legacy", model="gpt-4-turbo")
    assert not old.capabilities.native_schema and old.capabilities.tools
    assert azure.create("current").capabilities.native_schema
    classic.push("openai", ReplyJson({"city": "Paris", "country": "France"}))
    assert capital_command(old)("France") == Capital("Paris", "France")
    body = classic.last_request("openai").body
    assert "response_format" not in body and body["tool_choice"]["type"] == "function"


def test_a_deployment_takes_an_openai_models_price(classic: Any) -> None:
    gpt_4o = price_for("openai:gpt-4o")
    assert gpt_4o is not None
    set_price("azure:my-gpt-4o-deployment", gpt_4o)
    assert price_for("azure:my-gpt-4o-deployment") == gpt_4o


# -- structured outputs by API version ------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "native"),
    [("2024-06-01", False), ("2024-07-01-preview", False), ("2024-08-01-preview", True)],
)
def test_classic_api_versions_before_2024_08_01_preview_declare_no_schema(
    classic: Any, monkeypatch: pytest.MonkeyPatch, version: str, native: bool
) -> None:
    monkeypatch.setenv("OPENAI_API_VERSION", version)
    profile = azure.create_chat("my-gpt-4o").capabilities
    assert (profile.native_schema, profile.strict_tools) == (native, native)
    assert azure.create_chat("my-gpt-4o", api_version=VERSION).capabilities.native_schema


def test_an_old_api_version_goes_straight_to_a_tool_call_without_a_400(classic: Any) -> None:
    classic.persona("azure-old-api")
    model = azure.create_chat("my-gpt-4o", api_version="2024-06-01")
    classic.push("openai", ReplyJson({"city": "Paris", "country": "France"}))
    result = capital_command(model).run("France")
    assert result.value == Capital("Paris", "France") and result.enforcement == "tool"
    assert len(classic.requests) == 1
    assert "response_format" not in classic.requests[0].body


def test_the_v1_api_has_no_version_and_declares_a_schema(
    v1: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-06-01")  # not read for v1
    assert azure.create_chat("my-gpt-4o").capabilities.native_schema
