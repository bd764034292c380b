"""Checked by mypy (not run): what a type checker infers for commands."""

from __future__ import annotations

from collections.abc import Coroutine, Iterable
from dataclasses import dataclass
from typing import Any

from typing_extensions import assert_type

from alloy import Assistant, AsyncCommand, Command, Result, System, User, command
from alloy._types import Message
from alloy.streaming import (
    AsyncItemStream,
    AsyncStream,
    ItemStream,
    JsonValue,
    Partial,
    Restart,
    Stream,
)


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


@command(output=Iterable[int])
def numbers(text: str) -> str:
    return text


assert isinstance(read_invoice, Command)
assert_type(read_invoice("x"), Invoice)
assert_type(summarize("x"), str)
assert isinstance(price, AsyncCommand)
pending = price("x")
assert_type(pending, Coroutine[Any, Any, float])  # type: ignore[unused-coroutine]
assert_type(notify("ops"), None)
assert_type(read_invoice.stream_partial("x"), Stream[Partial[Invoice], Invoice])
assert_type(next(read_invoice.stream_partial("x")).value, Invoice)
assert_type(invoices.stream_items("x"), ItemStream[Invoice])
assert_type(invoices.astream_items("x"), AsyncItemStream[Invoice])
assert_type(read_invoice.astream_partial("x"), AsyncStream[Partial[Invoice], Invoice])
assert_type(numbers.stream_items("x"), ItemStream[int])
assert_type(numbers.astream_items("x"), AsyncItemStream[int])
assert_type(next(numbers.stream_items("x")), int)
assert_type(numbers.stream_items("x").on_restart(print), ItemStream[int])
assert_type(numbers.astream_items("x").on_restart(print), AsyncItemStream[int])

partial = next(read_invoice.stream_partial("x"))
# What a half-arrived Invoice holds has no Python type: data is Any, as json.loads returns;
# get_as reads one field typed.
assert_type(partial.data, Any)
assert_type(partial.get("vendor"), Any)
assert_type(partial.get_as(str, "vendor"), str | None)
assert_type(partial.get_as(float, "total", default=0.0), float)
assert_type(partial.get_as(list, "lines"), list[Any] | None)
assert_type(partial.attempt, int)
assert_type(partial.open_path, tuple[str | int, ...])
shown: JsonValue = partial.data


def clear(restart: Restart) -> None:
    assert_type(restart.attempt, int)
    assert_type(restart.discarded, int)


async def main() -> None:
    assert_type(await read_invoice.acall("x", strict=False), Invoice)
    assert_type(await price("x"), float)
    async for number in numbers.astream_items("x").on_restart(clear):
        assert_type(number, int)


# -- history= and deps= through using(): the call keeps the prompt function's parameters ------

first = read_invoice.run("x")
carried_on = read_invoice.using(history=first.messages, deps={"tenant": "acme"})
assert_type(carried_on("y", strict=False), Invoice)
assert_type(carried_on.run("y"), Result[Invoice])
assert_type(
    read_invoice.using(history=[{"role": "user", "content": "hi"}]).run("y"), Result[Invoice]
)
assert_type(summarize.using(history=[User("hi"), Assistant("hello")]).stream("y"), Stream[str, str])
assert_type(
    read_invoice.using(deps=object()).stream_partial("x"), Stream[Partial[Invoice], Invoice]
)
assert_type(invoices.using(deps=None).stream_items("x"), ItemStream[Invoice])
assert isinstance(price.using(deps=1), AsyncCommand)
assert_type(price.using(deps=1)("x"), Coroutine[Any, Any, float])  # type: ignore[unused-coroutine]
assert_type(price.using(history=[]).stream("x"), AsyncStream[str, float])
assert_type(summarize.using(history=[]).astream("x"), AsyncStream[str, str])
# The prompt function's own parameters are still checked:
carried_on.run(7)  # type: ignore[arg-type]
read_invoice.using(history="not a list of messages")  # type: ignore[arg-type]

# -- a streamed call's Result, once the stream has run to its end ------------------------------

text_stream = summarize.stream("x")
assert_type(text_stream.result, Result[str])
assert_type(read_invoice.stream_partial("x").result.value, Invoice)
assert_type(invoices.stream_items("x").result, Result[list[Invoice]])
assert_type(invoices.astream_items("x").result, Result[list[Invoice]])


async def carry_on() -> None:
    assert_type(await read_invoice.using(deps=object()).acall("x"), Invoice)
    assert_type(await read_invoice.using(history=[]).arun("x"), Result[Invoice])
    chunks = summarize.astream("x")
    async for chunk in chunks:
        assert_type(chunk, str)
    assert_type(chunks.result.messages, tuple[System | Message, ...])
    partials = read_invoice.using(deps=1).astream_partial("x")
    assert_type(partials, AsyncStream[Partial[Invoice], Invoice])
