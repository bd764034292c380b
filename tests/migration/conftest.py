"""Shared by the alloy-ai migration tests: a model that answers every request, and readers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from alloy._types import Text
from alloy.testing import FunctionModel, override_model


@pytest.fixture
def model() -> Iterator[FunctionModel]:
    """A model that answers "done" to every request, used by every command in the test."""
    with override_model(FunctionModel(lambda request: "done")) as fake:
        yield fake


def prompt_of(model: FunctionModel, index: int = 0) -> str:
    first = model.requests[index].messages[0].parts[0]
    assert isinstance(first, Text)
    return first.text


def collect(chunks: Any) -> list[str]:
    """Chunks of a sync or async iterator of text."""
    if hasattr(chunks, "__aiter__"):

        async def drain() -> list[str]:
            return [chunk async for chunk in chunks]

        return asyncio.run(drain())
    return list(chunks)
