"""Shared adapter helpers: schema memoization, error mapping by status, retry-after parsing."""

from __future__ import annotations

from typing import Any

import pytest

from alloy._schema import memoize_by_identity
from alloy.errors import (
    AuthenticationError,
    BadRequestError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
    SchemaRejectedError,
    ServerError,
)
from alloy.providers._base import error_for_status, retry_after_from


def test_memoize_by_identity_converts_each_schema_object_once() -> None:
    calls: list[Any] = []

    @memoize_by_identity
    def convert(schema: dict[str, Any]) -> dict[str, Any]:
        calls.append(schema)
        return {**schema, "converted": True}

    schema = {"type": "object"}
    first = convert(schema)
    assert convert(schema) is first
    equal_but_new = {"type": "object"}
    assert convert(equal_but_new) == first and convert(equal_but_new) is not first
    assert calls == [schema, equal_but_new]


@pytest.mark.parametrize(
    ("status", "message", "cls"),
    [
        (401, "bad key", AuthenticationError),
        (403, "forbidden", AuthenticationError),
        (429, "slow down", RateLimitError),
        (408, "timeout", ProviderTimeoutError),
        (500, "oops", ServerError),
        (529, "overloaded", ServerError),
        (400, "Invalid schema for response_format", SchemaRejectedError),
        (400, "max_tokens too large", BadRequestError),
        (None, "connection reset", ProviderConnectionError),
    ],
)
def test_error_for_status(status: int | None, message: str, cls: type) -> None:
    error = error_for_status("acme", status, message, retry_after=1.5)
    assert type(error) is cls
    assert error.provider == "acme" and error.status_code == status and error.retry_after == 1.5
    assert message in str(error)


def test_retry_after_from_headers() -> None:
    assert retry_after_from({"retry-after-ms": "250"}) == 0.25
    assert retry_after_from({"retry-after": "3"}) == 3.0
    assert retry_after_from({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after_from({"retry-after": "soon"}) is None
    assert retry_after_from({}) is None and retry_after_from(None) is None


def test_per_loop_values_are_built_once_per_event_loop_and_dropped_with_it() -> None:
    import asyncio
    import gc

    from alloy.providers._base import PerLoop

    per_loop: PerLoop[object] = PerLoop()
    built: list[object] = []

    def make() -> object:
        built.append(object())
        return built[-1]

    async def twice() -> tuple[object, object]:
        return per_loop.get(make), per_loop.get(make)

    first, again = asyncio.run(twice())
    assert first is again and len(built) == 1
    second, _ = asyncio.run(twice())
    assert second is not first and len(built) == 2
    gc.collect()
    assert len(per_loop._by_loop) == 0  # both loops are gone, and their entries with them
    with pytest.raises(RuntimeError):
        per_loop.get(make)  # outside a running loop
