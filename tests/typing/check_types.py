"""Checked by mypy (not run): what a type checker infers for commands."""

from __future__ import annotations

from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from typing_extensions import assert_type

from alloy import AsyncCommand, Command, command


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


assert isinstance(read_invoice, Command)
assert_type(read_invoice("x"), Invoice)
assert_type(summarize("x"), str)
assert isinstance(price, AsyncCommand)
pending = price("x")
assert_type(pending, Coroutine[Any, Any, float])  # type: ignore[unused-coroutine]
assert_type(notify("ops"), None)


async def main() -> None:
    assert_type(await read_invoice.acall("x", strict=False), Invoice)
    assert_type(await price("x"), float)
