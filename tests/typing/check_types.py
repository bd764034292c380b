"""Checked by mypy (not run): what a type checker infers for commands."""

from __future__ import annotations

from collections.abc import AsyncIterator, Coroutine, Iterator
from dataclasses import dataclass
from typing import Any

from typing_extensions import assert_type

from alloy import AsyncCommand, Command, command
from alloy.streaming import AsyncItemStream, ItemStream, Partial


@dataclass
class Invoice:
    vendor: str
    total: float


@command(output=Invoice)
def read_invoice(text: str, *, strict: bool = True) -> str:
    return text


@command
def summarize(text: str) -> str:
    return text


@command(output=float, temperature=0.0)
async def price(text: str) -> str:
    return text


@command(output=None)
def notify(who: str) -> str:
    return who


@command(output=list[Invoice])
def invoices(text: str) -> str:
    return text


assert isinstance(read_invoice, Command)
assert_type(read_invoice("x"), Invoice)
assert_type(summarize("x"), str)
assert isinstance(price, AsyncCommand)
pending = price("x")
assert_type(pending, Coroutine[Any, Any, float])  # type: ignore[unused-coroutine]
assert_type(notify("ops"), None)
assert_type(read_invoice.stream_partial("x"), Iterator[Partial[Invoice]])
assert_type(next(read_invoice.stream_partial("x")).value, Invoice)
assert_type(invoices.stream_items("x"), ItemStream[Invoice])
assert_type(invoices.astream_items("x"), AsyncItemStream[Invoice])
assert_type(read_invoice.astream_partial("x"), AsyncIterator[Partial[Invoice]])


async def main() -> None:
    assert_type(await read_invoice.acall("x", strict=False), Invoice)
    assert_type(await price("x"), float)
