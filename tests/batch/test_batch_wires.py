"""A run finds its batch API through its provider's descriptor (``Provider.batch_wire``): the
wires live with their adapters, and ``alloy.batch`` names no provider."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from alloy import ConfigurationError, register_provider
from alloy.batch import Wire, wire_for
from alloy.providers import get_model, providers
from alloy.providers.anthropic_batch import AnthropicWire
from alloy.providers.gemini_batch import GeminiWire
from alloy.providers.openai_batch import OpenAIWire
from alloy.testing import FunctionModel


@pytest.mark.parametrize(
    ("model", "wire", "endpoint"),
    [
        ("openai:gpt-4o", OpenAIWire, "/v1/responses"),
        ("openai-chat:gpt-4o", OpenAIWire, "/v1/chat/completions"),
        ("anthropic:claude-sonnet-4-6", AnthropicWire, None),
        ("gemini:gemini-2.5-flash", GeminiWire, None),
    ],
)
def test_each_builtin_batch_api_is_named_by_its_descriptor(
    model: str, wire: type[Wire], endpoint: str | None
) -> None:
    found = wire_for(get_model(model, api_key="sk-test"))
    assert type(found) is wire
    assert getattr(found, "endpoint", None) == endpoint
    name = model.partition(":")[0]
    assert isinstance(providers()[name].batch_wire, str)  # "module:function", loaded on use


@pytest.mark.parametrize("model", ["ollama:llama3.2", "offline"])
def test_a_provider_whose_descriptor_names_no_batch_wire_has_no_batch_api(model: str) -> None:
    with pytest.raises(ConfigurationError, match="has no batch API") as raised:
        wire_for(get_model(model))
    assert "openai, openai-chat, anthropic and gemini have one" in str(raised.value)


def test_a_stand_in_named_after_a_provider_has_no_batch_api() -> None:
    """The wire batches its adapter's requests: a test double called ``openai:...`` is not one."""
    with pytest.raises(ConfigurationError, match="has no batch API"):
        wire_for(FunctionModel(lambda request: "hi", name="openai:gpt-4o"))


def test_a_registered_provider_brings_its_own_batch_wire() -> None:
    made: list[Any] = []

    class AcmeWire(Wire):
        name = "acme"

        def __init__(self, model: Any) -> None:  # any model: a test wire sends nothing
            made.append(model)
            self.model = model

    register_provider(
        "acme-batch",
        lambda model_id, **_: FunctionModel(lambda r: "hi", name=f"acme-batch:{model_id}"),
        batch_wire=AcmeWire,
    )
    model = get_model("acme-batch:m")
    assert isinstance(wire_for(model), AcmeWire) and made == [model]


def test_a_provider_borrowing_an_adapter_names_its_batch_wire_itself() -> None:
    """Whether an OpenAI-compatible server has the Batch API is a fact of that provider."""
    chat = providers()["openai-chat"]
    plain = dataclasses.replace(chat, name="acme", batch_wire=None, base_url_env=("ACME_URL",))
    register_provider(plain)
    model = get_model("acme:llama", api_key="k", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigurationError, match="acme:llama has no batch API"):
        wire_for(model)
    register_provider(dataclasses.replace(plain, batch_wire=chat.batch_wire))
    model = get_model("acme:llama", api_key="k", base_url="http://127.0.0.1:9/v1")
    found = wire_for(model)
    assert isinstance(found, OpenAIWire) and found.endpoint == "/v1/chat/completions"
