"""The one base of model wrappers: what a wrapper does not override is the wrapped model's, and
``unwrapped`` reaches the provider's model beneath any stack of wrappers."""

from __future__ import annotations

import asyncio
import copy
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from alloy import command
from alloy._model import Model
from alloy._types import Done, Request, Response, StreamEvent, Text, TextDelta, UserTurn
from alloy._wrapper import WrapperModel, unwrapped
from alloy.cache import CachedModel, CachePolicy, MemoryStore
from alloy.rows import PacedModel, Pacer
from alloy.testing import FunctionModel, override_model

from .test_import_graph import graph, modules


def a_request() -> Request:
    return Request("m", (UserTurn(Text("hi")),))


class Counting(WrapperModel):
    """Overrides one call, as pydantic-ai's ``ConcurrencyLimitedModel`` does."""

    def __init__(self, wrapped: Any) -> None:
        super().__init__(wrapped)
        self.asked = 0

    def request(self, request: Request) -> Response:
        self.asked += 1
        return super().request(request)


async def collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in events]


def test_a_wrapper_forwards_the_four_calls_and_every_attribute_it_does_not_override() -> None:
    inner = FunctionModel(lambda request: "hello", name="fake:inner")
    wrapper = WrapperModel(inner)

    assert wrapper.name == "fake:inner"
    assert wrapper.capabilities is inner.capabilities
    assert wrapper.requests is inner.requests  # any attribute of the wrapped model
    assert isinstance(wrapper, Model)
    assert wrapper.request(a_request()).lone_text == "hello"
    assert asyncio.run(wrapper.arequest(a_request())).lone_text == "hello"
    streamed = list(wrapper.stream(a_request()))
    assert isinstance(streamed[-1], Done) and streamed[-1].response.lone_text == "hello"
    assert [type(e) for e in streamed] == [TextDelta, Done]
    astreamed = asyncio.run(collect(wrapper.astream(a_request())))
    assert [type(e) for e in astreamed] == [TextDelta, Done]
    assert len(inner.requests) == 4


def test_a_wrapper_overrides_only_what_it_changes() -> None:
    inner = FunctionModel(lambda request: "hello", name="fake:inner")
    counting = Counting(inner)

    counting.request(a_request())
    asyncio.run(counting.arequest(a_request()))  # not overridden: straight to the wrapped model
    assert counting.asked == 1
    assert len(inner.requests) == 2
    with pytest.raises(AttributeError):
        counting.nothing_like_this  # neither the wrapper's nor the wrapped's
    with pytest.raises(AttributeError):
        counting._private  # a private name is the wrapper's own, never forwarded


def test_unwrapped_reaches_the_provider_model_beneath_every_wrapper() -> None:
    inner = FunctionModel(lambda request: "hello", name="fake:inner")
    stacked = CachedModel(
        PacedModel(Counting(inner), Pacer(learn=False)), CachePolicy(MemoryStore())
    )

    assert stacked.unwrapped is inner
    assert unwrapped(stacked) is inner
    assert unwrapped(inner) is inner  # a model that wraps nothing is its own
    assert stacked.name == "fake:inner"
    assert stacked.provider_model is inner  # the cache keys by the provider's model


def test_a_copy_of_a_wrapper_is_a_wrapper_of_the_same_model() -> None:
    inner = FunctionModel(lambda request: "hello", name="fake:inner")
    copied = copy.copy(Counting(inner))

    assert copied.wrapped is inner and copied.name == "fake:inner"


def test_a_command_calls_through_a_wrapper() -> None:
    inner = FunctionModel(lambda request: "Paris", name="fake:inner")
    counting = Counting(inner)

    @command
    def capital(country: str) -> str:
        return f"The capital of {country}?"

    with override_model(counting):
        result = capital.run("France")

    assert result.value == "Paris"
    assert result.model == "fake:inner"
    assert counting.asked == 1


def test_the_wrappers_reach_the_provider_model_only_through_unwrapped() -> None:
    """The base stands on the core alone, and the packages that wrap models (the cache, rows)
    import no provider module: they find the provider's model with ``unwrapped``, never by
    probing for a ``.model`` attribute."""
    edges = graph()
    assert edges["alloy._wrapper"] <= {"alloy._model", "alloy._types"}
    wrapping = [name for name in edges if name.startswith(("alloy.cache", "alloy.rows"))]
    wrapping += ["alloy._cost_cap"]
    found = [
        f"{name} -> {target}"
        for name in wrapping
        for target in edges[name]
        if target == "alloy.providers" or target.startswith("alloy.providers.")
    ]
    assert not found, "wrappers importing provider modules:\n" + "\n".join(found)
    probes = re.compile(r"""hasattr\([^)]*,\s*["']model["']\)""")
    assert not [name for name, path in modules().items() if probes.search(path.read_text())]
