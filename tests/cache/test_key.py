"""The cache key is the exact request: every field of real recorded requests, changed one at a
time, changes it; what is not part of the request (key order, the API key, the attempt's
timeout) does not."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from alloy._model import CacheKeyed, CacheKeyParts, CacheScope
from alloy._types import (
    ModelSettings,
    OutputSpec,
    Request,
    Text,
    ToolDefinition,
    UserTurn,
)
from alloy.cache._key import is_deterministic, request_key
from alloy.providers import get_model

FIXTURES = Path("/work/shared/fixtures")


def recorded_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Every JSON request body in the shared fixtures: real exchanges and SDK captures."""
    found: list[tuple[str, dict[str, Any]]] = []
    for path in sorted((FIXTURES / "recorded").rglob("*.json")):
        data = json.loads(path.read_text())
        for number, interaction in enumerate(data["interactions"]):
            body = interaction["request"].get("body")
            if isinstance(body, dict) and body:
                found.append((f"{path.parent.name}/{path.stem}#{number}", body))
    for path in sorted((FIXTURES / "sdk_captured").glob("*.json")):
        for name, case in json.loads(path.read_text())["cases"].items():
            requests = case["requests"]
            for number, sent in enumerate(requests if isinstance(requests, list) else [requests]):
                body = sent.get("body")
                if isinstance(body, dict) and body:
                    found.append((f"{path.stem}/{name}#{number}", body))
    return found


BODIES = recorded_bodies() if FIXTURES.is_dir() else []
needs_fixtures = pytest.mark.skipif(not BODIES, reason=f"no recorded requests in {FIXTURES}")


def paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path to every field, container or leaf, in a JSON value."""
    if at:
        yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*at, index))


def changed(value: Any) -> Any:
    """A value of the same kind that differs from ``value``."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "!"
    if isinstance(value, list):
        return [*value, None]
    if isinstance(value, dict):
        return {**value, "added": 1}
    return 0  # null


def mutated(body: dict[str, Any], path: tuple[Any, ...]) -> dict[str, Any]:
    copied = copy.deepcopy(body)
    holder: Any = copied
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = changed(holder[path[-1]])
    return copied


def parts_of(model: Any, request: Request) -> CacheKeyParts:
    """What the adapter declares keys ``request`` (its ``cache_key_parts``), sent whole."""
    assert isinstance(model, CacheKeyed)
    return model.cache_key_parts(request, stream=False)


def key_of(body: dict[str, Any], model: str = "openai:gpt-4o", schema: Any = None) -> str:
    request = Request(model, ())
    return request_key(model, request, body, stream=False, schema=schema)


@needs_fixtures
@pytest.mark.parametrize(("name", "body"), BODIES, ids=[name for name, _ in BODIES])
def test_changing_any_one_field_of_a_recorded_request_changes_the_key(
    name: str, body: dict[str, Any]
) -> None:
    original = key_of(body)
    keys = {original}
    fields = list(paths(body))
    for path in fields:
        key = key_of(mutated(body, path))
        assert key != original, f"{name}: changing {path} kept the key"
        keys.add(key)
    for path in (p for p in fields if len(p) == 1):  # removing a top-level field too
        without = {k: v for k, v in body.items() if k != path[0]}
        assert key_of(without) not in keys, f"{name}: dropping {path[0]} kept the key"
    assert len(keys) == len(fields) + 1


@needs_fixtures
def test_the_key_does_not_depend_on_the_order_of_fields() -> None:
    for _, body in BODIES:
        reordered = json.loads(json.dumps(body, sort_keys=True))
        reversed_ = dict(reversed(list(reordered.items())))
        assert key_of(reversed_) == key_of(body)


def test_provider_model_stream_and_schema_are_part_of_the_key() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}
    request = Request("m", ())
    keys = {
        request_key("openai:m", request, body, stream=False),
        request_key("openai-chat:m", request, body, stream=False),
        request_key("openai:m", request, body, stream=True),
        request_key("openai:m", request, body, stream=False, schema={"type": "integer"}),
        request_key("openai:m", request, body, stream=False, schema={"type": "number"}),
    }
    assert len(keys) == 5


ADAPTER_MODELS = [
    "openai:gpt-4.1-mini",
    "openai-chat:gpt-4.1-mini",
    "anthropic:claude-sonnet-4-6",
    "gemini:gemini-2.5-flash",
    "ollama:llama3.2",
]


def base_request(model: str) -> Request:
    return Request(
        model=model.split(":", 1)[1],
        messages=(UserTurn(Text("Weather in Paris?")),),
        system="Be brief.",
        tools=(ToolDefinition("look_up", "Looks up", {"type": "object", "properties": {}}),),
        output=OutputSpec("Weather", {"type": "object", "properties": {"c": {"type": "number"}}}),
        settings=ModelSettings(temperature=0, max_tokens=100),
    )


def variants(request: Request) -> dict[str, Request]:
    from dataclasses import replace

    settings = request.settings
    return {
        "temperature": replace(request, settings=replace(settings, temperature=0.5)),
        "max_tokens": replace(request, settings=replace(settings, max_tokens=101)),
        "seed": replace(request, settings=replace(settings, extra={"seed": 1})),
        "top_p": replace(request, settings=replace(settings, extra={"top_p": 0.9})),
        "system": replace(request, system="Be long."),
        "prompt": replace(request, messages=(UserTurn(Text("Weather in Rome?")),)),
        "tools": replace(request, tools=()),
        "tool description": replace(
            request, tools=(replace(request.tools[0], description="Finds"),)
        ),
        "schema": replace(
            request,
            output=OutputSpec(
                "Weather", {"type": "object", "properties": {"c": {"type": "integer"}}}
            ),
        ),
    }


@pytest.mark.parametrize("model_name", ADAPTER_MODELS)
def test_every_setting_an_adapter_sends_changes_the_key(model_name: str) -> None:
    model = get_model(model_name, api_key="sk-test-key-1")
    request = base_request(model_name)
    body = parts_of(model, request).body
    original = request_key(model.name, request, body, stream=False)
    keys = {"original": original}
    for what, variant in variants(request).items():
        keys[what] = request_key(model.name, variant, parts_of(model, variant).body, stream=False)
    assert len(set(keys.values())) == len(keys), keys


@pytest.mark.parametrize("model_name", ADAPTER_MODELS)
def test_the_api_key_and_timeout_are_not_part_of_the_key(model_name: str) -> None:
    from dataclasses import replace

    request = base_request(model_name)
    one = get_model(model_name, api_key="sk-test-key-1")
    two = get_model(model_name, api_key="sk-test-key-2")
    timed = replace(request, settings=replace(request.settings, timeout=3.0))
    body_one = parts_of(one, request).body
    body_two = parts_of(two, timed).body
    assert request_key(one.name, request, body_one, stream=False) == request_key(
        two.name, timed, body_two, stream=False
    )
    assert "sk-test-key" not in json.dumps(body_one)


@pytest.mark.parametrize("model_name", ADAPTER_MODELS)
def test_repeatable_means_temperature_zero_or_a_seed_on_the_wire(model_name: str) -> None:
    from dataclasses import replace

    model = get_model(model_name, api_key="sk-test-key-1")
    request = base_request(model_name)

    def repeatable(settings: ModelSettings) -> bool:
        changed_request = replace(request, settings=settings)
        return is_deterministic(changed_request, parts_of(model, changed_request).sampling)

    assert repeatable(request.settings)
    assert not repeatable(replace(request.settings, temperature=None))  # the provider's default
    assert not repeatable(replace(request.settings, temperature=0.7))
    seeded = {"options": {"seed": 3}} if model_name.startswith("ollama") else {"seed": 3}
    if model_name.startswith("gemini"):
        seeded = {"generationConfig": {"seed": 3}}
    assert repeatable(replace(request.settings, temperature=None, extra=seeded))


def test_a_model_without_a_wire_body_is_keyed_by_the_whole_request() -> None:
    from dataclasses import replace

    request = base_request("offline:x")
    key = request_key("offline", request, None, stream=False)
    timed = replace(request, settings=replace(request.settings, timeout=9.0))
    assert request_key("offline", timed, None, stream=False) == key
    for variant in variants(request).values():
        assert request_key("offline", variant, None, stream=False) != key
    assert is_deterministic(request, None)
    assert not is_deterministic(replace(request, settings=ModelSettings()), None)


def test_the_endpoint_is_part_of_the_key() -> None:
    """Two OpenAI-compatible servers may serve different models under one name."""
    from alloy.cache import CachedModel, CachePolicy, MemoryStore

    def key(base_url: str | None) -> str:
        model = get_model("openai-chat:same-name", api_key="sk-test", base_url=base_url)
        cached = CachedModel(model, CachePolicy(MemoryStore()))
        return cached.key(base_request("openai-chat:same-name"), stream=False)

    here, there = key("http://127.0.0.1:9001/v1"), key("http://127.0.0.1:9002/v1")
    assert len({here, there, key(None)}) == 3
    assert key("http://127.0.0.1:9001/v1/") == here  # a trailing slash is the same endpoint
    model = get_model("openai-chat:same-name", api_key="sk-test")
    assert isinstance(model, CacheKeyed) and model.cache_scope().endpoint == "default"
    assert not isinstance(get_model("offline"), CacheKeyed)  # keyed by the Request, no endpoint


def test_a_model_is_keyed_by_what_it_declares_not_by_probing() -> None:
    """The cache calls the declared ``cache_key_parts`` and ``cache_scope``
    (``alloy._model.CacheKeyed``); a ``build`` or ``base_url`` that a model happens to have is
    not looked for, so where a provider keeps its options is its adapter's to say."""
    from alloy.cache import CachedModel, CachePolicy, MemoryStore
    from alloy.testing import FunctionModel

    class Probed(FunctionModel):
        base_url = "http://elsewhere"

        def build(self, request: Request, *, stream: bool) -> dict[str, Any]:
            raise AssertionError("build is not the cache's to call")

    class Declared(FunctionModel):
        def __init__(self, endpoint: str) -> None:
            super().__init__(lambda request: "hi", name="acme:m")
            self.endpoint = endpoint

        def cache_scope(self) -> CacheScope:
            return CacheScope(self.endpoint)

        def cache_key_parts(self, request: Request, *, stream: bool) -> CacheKeyParts:
            return CacheKeyParts({"asked": request.messages[0].parts[0].text}, {"seed": 1})

    request = base_request("acme:m")
    probed = CachedModel(Probed(lambda r: "hi", name="acme:m"), CachePolicy(MemoryStore()))
    assert probed.endpoint is None  # keyed by the Request: no endpoint, no body
    assert probed.key(request, stream=False) == request_key("acme:m", request, None, stream=False)

    here = CachedModel(Declared("http://here"), CachePolicy(MemoryStore()))
    there = CachedModel(Declared("http://there"), CachePolicy(MemoryStore()))
    assert here.endpoint == "http://here"
    assert here.key(request, stream=False) != there.key(request, stream=False)
    unseeded = replace(request, settings=ModelSettings())  # what the Request says is not read
    assert here.key(unseeded, stream=False) == here.key(request, stream=False)
    assert here.request(unseeded).cache == "miss"  # repeatable: the declared sampling has a seed
    assert probed.request(unseeded).cache == "skipped: not repeatable"  # the Request's settings
