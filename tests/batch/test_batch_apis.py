"""A run finds its batch API through its provider's descriptor (``Provider.batch_api``): the
batch APIs live with their adapters, and ``alloy.batch`` names no provider."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from alloy import ConfigurationError, register_provider
from alloy.batch import BatchAPI, RecordedJob, batch_api_for
from alloy.providers import get_model, providers
from alloy.providers.anthropic_batch import AnthropicBatchAPI
from alloy.providers.gemini_batch import GeminiBatchAPI
from alloy.providers.openai_batch import OpenAIBatchAPI
from alloy.testing import FunctionModel


@pytest.mark.parametrize(
    ("model", "api", "endpoint"),
    [
        ("openai:gpt-4o", OpenAIBatchAPI, "/v1/responses"),
        ("openai-chat:gpt-4o", OpenAIBatchAPI, "/v1/chat/completions"),
        ("anthropic:claude-sonnet-4-6", AnthropicBatchAPI, None),
        ("gemini:gemini-2.5-flash", GeminiBatchAPI, None),
    ],
)
def test_each_builtin_batch_api_is_named_by_its_descriptor(
    model: str, api: type[BatchAPI], endpoint: str | None
) -> None:
    found = batch_api_for(get_model(model, api_key="sk-test"))
    assert type(found) is api
    assert getattr(found, "endpoint", None) == endpoint
    name = model.partition(":")[0]
    assert isinstance(providers()[name].batch_api, str)  # "module:function", loaded on use


@pytest.mark.parametrize("model", ["ollama:llama3.2", "offline"])
def test_a_provider_whose_descriptor_names_no_batch_api_has_no_batch_api(model: str) -> None:
    with pytest.raises(ConfigurationError, match="has no batch API") as raised:
        batch_api_for(get_model(model))
    assert "openai, openai-chat, anthropic and gemini have one" in str(raised.value)


def test_a_stand_in_named_after_a_provider_has_no_batch_api() -> None:
    """A batch API batches its adapter's requests: a test double called ``openai:...`` is not one."""
    with pytest.raises(ConfigurationError, match="has no batch API"):
        batch_api_for(FunctionModel(lambda request: "hi", name="openai:gpt-4o"))


def test_a_registered_provider_brings_its_own_batch_api() -> None:
    made: list[Any] = []

    class AcmeBatchAPI(BatchAPI):
        name = "acme"

        def __init__(self, model: Any) -> None:  # any model: a test batch API sends nothing
            made.append(model)
            self.model = model

    register_provider(
        "acme-batch",
        lambda model_id, **_: FunctionModel(lambda r: "hi", name=f"acme-batch:{model_id}"),
        batch_api=AcmeBatchAPI,
    )
    model = get_model("acme-batch:m")
    assert isinstance(batch_api_for(model), AcmeBatchAPI) and made == [model]


def test_a_provider_borrowing_an_adapter_names_its_batch_api_itself() -> None:
    """Whether an OpenAI-compatible server has the Batch API is a fact of that provider."""
    chat = providers()["openai-chat"]
    plain = dataclasses.replace(chat, name="acme", batch_api=None, base_url_env=("ACME_URL",))
    register_provider(plain)
    model = get_model("acme:llama", api_key="k", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigurationError, match="acme:llama has no batch API"):
        batch_api_for(model)
    register_provider(dataclasses.replace(plain, batch_api=chat.batch_api))
    model = get_model("acme:llama", api_key="k", base_url="http://127.0.0.1:9/v1")
    found = batch_api_for(model)
    assert isinstance(found, OpenAIBatchAPI) and found.endpoint == "/v1/chat/completions"


def test_the_names_wire_had_still_work_with_a_warning() -> None:
    """``wire`` meant five things; each now has its own name, and each old spelling warns."""
    import importlib
    import sys

    import alloy.batch
    import alloy.providers.openai_batch

    with pytest.warns(DeprecationWarning, match=r"alloy\.batch\.Wire is now BatchAPI"):
        assert alloy.batch.Wire is BatchAPI
    with pytest.warns(DeprecationWarning, match="wire_for is now batch_api_for"):
        assert alloy.batch.wire_for is batch_api_for
    with pytest.warns(DeprecationWarning, match="OpenAIWire is now OpenAIBatchAPI"):
        assert alloy.providers.openai_batch.OpenAIWire is OpenAIBatchAPI
    sys.modules.pop("alloy.providers.batch_wire", None)
    with pytest.warns(DeprecationWarning, match="batch_wire is now alloy.providers.batch_api"):
        old = importlib.import_module("alloy.providers.batch_wire")
    assert old.Wire is BatchAPI

    factory = "alloy.providers.openai_chat:create"
    with pytest.warns(DeprecationWarning, match=r"register_provider\(wire=\.\.\.\) is now") as seen:
        provider = register_provider("acme-old", factory, wire="openai", batch_wire=None)
    assert provider.api_family == "openai" and provider.batch_api is None
    assert seen[0].filename == __file__  # the caller's line, which default filters show
    with (
        pytest.raises(TypeError, match="takes no other arguments, not api_family"),
        pytest.warns(DeprecationWarning),
    ):
        register_provider(provider, wire="openai")
    with pytest.warns(DeprecationWarning, match="BatchWireFactory is now BatchAPIFactory"):
        from alloy.providers import BatchWireFactory  # noqa: F401
    with pytest.warns(DeprecationWarning, match=r"Provider\.batch_wire is now"):
        assert provider.batch_wire is None
    with pytest.warns(DeprecationWarning, match=r"Provider\.wire is now"):
        assert provider.wire == "openai"
    replaced = dataclasses.replace(provider, name="acme-new")  # no warning: not an old name
    assert replaced.api_family == "openai"
    job = RecordedJob("tag", "openai", "openai:gpt-4o", None, "intended", 1, 0.0)
    with pytest.warns(DeprecationWarning, match=r"RecordedJob\.wire is now RecordedJob\.batch_api"):
        assert job.wire == job.batch_api == "openai"
