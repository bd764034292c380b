"""Typed streaming through every real SDK against the emulator: OpenAI Responses and Chat,
Anthropic, Gemini and Ollama, in native, tool and prompt output mode, sync and async.

The answers hold nested objects, lists of objects, unions, enums, optionals and strings with
escapes, braces and unicode. The emulator cuts the answer one character per delta (so every
boundary between two characters is a boundary between two deltas) and at random chunkings;
the final value must equal the non-streamed result, no partial may show a value the answer does
not hold (a number cut short, a half string where none may grow), and list elements must
arrive once each, in order.
"""

from __future__ import annotations

import asyncio
import enum
import json
import random
from typing import Annotated, Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from alloy import ProviderConnectionError, TruncatedOutputError, command, streaming, tool
from alloy.testing.emulator import (
    CutStream,
    Emulator,
    ReplyJson,
    ReplyMaxTokens,
    ReplyText,
    ReplyToolCalls,
)

from ..hardening.conftest import PROVIDERS, per_adapter
from .helpers import Collect, check_partials


class Status(enum.Enum):
    OPEN = "open"
    SHIPPED = "shipped"


class Address(BaseModel):
    street: Annotated[str, streaming.grow]
    city: str


class Card(BaseModel):
    kind: Literal["card"]
    last4: str


class Transfer(BaseModel):
    kind: Literal["transfer"]
    iban: str


class Item(BaseModel):
    sku: str
    qty: int
    price: float
    note: str | None


class Order(BaseModel):
    id: int
    status: Status
    customer: Annotated[str, streaming.grow]
    address: Address
    payment: Card | Transfer
    items: list[Item]
    gift: bool
    memo: str | None


ORDER = {
    "id": 90210,
    "status": "shipped",
    "customer": 'Zoë "Z" O\'Brien {VIP} \\ 北京 😀',
    "address": {"street": "1 }{ Main St,\nApt ]", "city": "Montréal"},
    "payment": {"kind": "transfer", "iban": "DE89 3704 0044 0532 0130 00"},
    "items": [
        {"sku": "A-1", "qty": 12, "price": 1299.99, "note": None},
        {"sku": "B\u00e92", "qty": -3, "price": 0.5, "note": 'say "hi"'},
        {"sku": "C-3", "qty": 100000, "price": 2e-05, "note": "}]"},
    ],
    "gift": False,
    "memo": None,
}
ITEMS = ORDER["items"]
MODES = ("native", "tool", "prompt")


def order_command(model: str, mode: str, **options: Any) -> Any:
    @command(output=Order, model=model, output_mode=mode, **options)
    def order(text: str) -> str:
        return f"Read the order: {text}"

    return order


def items_command(model: str, mode: str) -> Any:
    @command(output=list[Item], model=model, output_mode=mode)
    def items(text: str) -> str:
        return f"List the items: {text}"

    return items


def reply(command: Any, mode: str, value: Any, *, ascii_only: bool = True) -> Any:
    """The emulator reply carrying ``value`` in ``mode``: a forced tool call in tool mode, JSON
    in a code fence after some prose in prompt mode, the bare JSON otherwise."""
    if mode == "tool":
        return ReplyToolCalls((command.output_type.name, value))
    text = json.dumps(value, ensure_ascii=ascii_only)
    if mode == "prompt":
        return ReplyText(f"Here is the order {{as asked}}:\n```json\n{text}\n```\nAnything else?")
    return ReplyText(text)


def random_split(seed: int) -> Any:
    rng = random.Random(seed)

    def split(text: str) -> list[str]:
        pieces, at = [], 0
        while at < len(text):
            size = rng.choice((1, 2, 3, 4, 7, 16))
            pieces.append(text[at : at + size])
            at += size
        return pieces

    return split


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("provider", per_adapter())
def test_partials_on_every_transport(
    provider: str, mode: str, emu: Emulator, partials: Collect
) -> None:
    model, queue, _ = PROVIDERS[provider]
    order = order_command(model, mode)
    emu.push(queue, reply(order, mode, ORDER))
    expected = order("x")

    emu.split_streams(1).push(queue, reply(order, mode, ORDER, ascii_only=False))
    got = partials(order, "x")
    check_partials(got, ORDER)
    assert got[-1].value == expected
    assert got[-1].data == ORDER
    if not (mode == "tool" and queue in ("gemini", "ollama")):  # their tool calls come whole
        assert len(got) > 20
        assert any(p.open_path == ("customer",) for p in got)  # a growing string

    emu.split_streams(random_split(len(provider))).push(queue, reply(order, mode, ORDER))
    again = partials(order, "x")
    check_partials(again, ORDER)
    assert again[-1].value == expected


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("provider", per_adapter())
def test_items_on_every_transport(provider: str, mode: str, emu: Emulator, items: Collect) -> None:
    model, queue, _ = PROVIDERS[provider]
    listing = items_command(model, mode)
    emu.split_streams(random_split(len(mode))).push(queue, reply(listing, mode, {"value": ITEMS}))
    assert items(listing, "x") == [Item(**item) for item in ITEMS]  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", per_adapter())
def test_partials_start_after_the_tool_rounds(
    provider: str, emu: Emulator, partials: Collect
) -> None:
    model, queue, _ = PROVIDERS[provider]
    looked_up: list[str] = []

    @tool
    def customer_since(name: str) -> str:
        """The year a customer first ordered."""
        looked_up.append(name)
        return "2019"

    order = order_command(model, "native", tools=[customer_since])
    emu.split_streams(3).push(
        queue,
        ReplyToolCalls(("customer_since", {"name": "Zoë"}), text="Let me check."),
        ReplyJson(ORDER),
    )
    got = partials(order, "x")
    assert looked_up == ["Zoë"]
    check_partials(got, ORDER)
    assert {p.attempt for p in got} == {1}
    assert got[-1].value.customer == ORDER["customer"]


@pytest.mark.parametrize("provider", per_adapter())
def test_a_cut_connection_raises_what_a_call_raises_or_streams_again(
    provider: str, emu: Emulator, partials: Collect
) -> None:
    model, queue, _ = PROVIDERS[provider]
    order = order_command(model, "native", retries=0)
    emu.split_streams(5)
    emu.push(queue, CutStream(after=12, reply=ReplyJson(ORDER)))
    with pytest.raises(ProviderConnectionError):
        order("x")
    emu.push(queue, CutStream(after=12, reply=ReplyJson(ORDER)))
    seen: list[Any] = []
    with pytest.raises(ProviderConnectionError):
        partials(order, "x", into=seen)
    assert seen and not seen[-1].complete

    emu.push(queue, CutStream(after=12, reply=ReplyJson(ORDER)), ReplyJson(ORDER))
    got = partials(order.with_options(retries=1), "x")
    assert got[-1].attempt == 2 and got[-1].data == ORDER
    check_partials([p for p in got if p.attempt == 2], ORDER)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("provider", per_adapter())
def test_truncation_raises_on_every_transport(
    provider: str, mode: str, emu: Emulator, partials: Collect, items: Collect
) -> None:
    """An answer cut off at the token limit raises TruncatedOutputError after what arrived,
    in every output mode (in tool mode the emulator cuts the answer as text)."""
    model, queue, _ = PROVIDERS[provider]
    order = order_command(model, mode)
    text = json.dumps(ORDER)
    if mode == "prompt":
        text = f"Here it is:\n```json\n{text}"
    emu.split_streams(4).push(queue, ReplyMaxTokens(text[: text.index('"items"') + 40]))
    seen: list[Any] = []
    with pytest.raises(TruncatedOutputError):
        partials(order, "x", into=seen)
    assert any(p.get("address", "city") == ORDER["address"]["city"] for p in seen)  # type: ignore[index]
    check_partials([*seen, _Final()], ORDER)

    listing = items_command(model, mode)
    text = json.dumps({"value": ITEMS})
    if mode == "prompt":
        text = f"Here it is:\n```json\n{text}"
    emu.push(queue, ReplyMaxTokens(text[: text.index('"C-3"')]))
    arrived: list[Any] = []
    with pytest.raises(TruncatedOutputError):
        items(listing, "x", into=arrived)
    assert arrived == [Item(**item) for item in ITEMS[:2]]  # type: ignore[arg-type]


class _Final:
    """Stands for the last partial a truncated stream never got, for check_partials."""

    complete = True
    attempt = 99


@pytest.mark.fuzz
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("provider", per_adapter())
def test_every_split_point_on_every_transport(
    provider: str, mode: str, emu: Emulator, items: Collect, fuzz_scale: int
) -> None:
    """The answer cut in two at each boundary (every 11th in the suite; all under make fuzz):
    the elements arrive once each, in order, through either driver in every output mode."""
    if mode == "tool" and provider in ("gemini", "ollama"):
        pytest.skip("their tool calls come whole: there is no boundary to cut at")
    model, queue, _ = PROVIDERS[provider]
    value = {"value": ITEMS[1:]}
    listing = items_command(model, mode)
    emu.push(queue, reply(listing, mode, value))
    expected = listing("x")
    sent = reply(listing, mode, value)
    text = sent.text if isinstance(sent, ReplyText) else json.dumps(value, separators=(",", ":"))
    step = 1 if fuzz_scale > 1 else 11
    for cut in range(0, len(text) + 1, step):
        emu.split_streams(lambda t, k=cut: [t[:k], t[k:]]).push(queue, sent)
        assert items(listing, "x") == expected, cut
        if mode == "native":
            emu.push(queue, sent)
            got = list(listing.stream_partial("x"))
            check_partials(got, ITEMS[1:])
            assert got[-1].value == expected, cut


# -- prompt mode: only the answer the call returns is shown -----------------------------------

OTHER = {"sku": "Z-9", "qty": 1, "price": 9.5, "note": None}
#: Replies whose prose holds JSON that is not the answer: (text, how many times the stream
#: starts over). The answer is where the engine finds it in the whole reply.
PROSE = {
    "a citation, then a fence": ("See note [7] below.\n```json\n{bare}\n```\nDone.", 0),
    "empty braces and a citation, then a fence": (
        "Use {{}} for none, [1] for notes:\n```json\n{envelope}\n```",
        0,
    ),
    "a citation, then the envelope": ("See [7]: {envelope}", 0),
    "an answer in prose, then a fence": (
        'I first wrote {{"value": [{other}]}}.\n```json\n{envelope}\n```',
        1,
    ),
    "JSON in reasoning, then the envelope": (
        '<think>maybe {{"value": [{other}, {other}]}}</think>\nHere: {envelope}',
        1,
    ),
}


def prose_reply(case: str) -> tuple[ReplyText, int]:
    template, restarts = PROSE[case]
    text = template.format(
        bare=json.dumps(ITEMS),
        envelope=json.dumps({"value": ITEMS}),
        other=json.dumps(OTHER),
    )
    return ReplyText(text), restarts


def items_and_restarts(driver: str, listing: Any) -> tuple[list[tuple[int, Item]], list[Any]]:
    """(attempt, element) pairs and the Restart signals of a stream_items call."""
    restarts: list[Any] = []
    if driver == "sync":
        stream = listing.stream_items("x").on_restart(restarts.append)
        return [(stream.attempt, item) for item in stream], restarts

    async def gather() -> list[tuple[int, Item]]:
        async def told(restart: Any) -> None:
            restarts.append(restart)

        stream = listing.astream_items("x").on_restart(told)
        return [(stream.attempt, item) async for item in stream]

    return asyncio.run(gather()), restarts


@pytest.mark.parametrize("driver", ["sync", "async"])
@pytest.mark.parametrize("case", PROSE)
@pytest.mark.parametrize("provider", per_adapter())
def test_prompt_mode_shows_only_the_answer_the_call_returns(
    provider: str, case: str, driver: str, emu: Emulator
) -> None:
    """JSON in the prose is never taken for the answer when it can be told apart; when it
    cannot (an answer given up for a later one), the stream starts over and says so, and then
    shows only the final answer: no element is yielded wrongly or lost."""
    model, queue, _ = PROVIDERS[provider]
    listing = items_command(model, "prompt")
    sent, restarts = prose_reply(case)
    emu.push(queue, sent)
    expected = listing("x")
    assert expected == [Item(**item) for item in ITEMS]  # type: ignore[arg-type]

    emu.split_streams(random_split(len(case))).push(queue, sent)
    pairs, told = items_and_restarts(driver, listing)
    last = 1 + restarts
    assert [item for attempt, item in pairs if attempt == last] == expected
    assert [(r.attempt, r.discarded) for r in told] == [
        (n + 2, sum(1 for a, _ in pairs if a == n + 1)) for n in range(restarts)
    ]
    assert all(item not in expected for attempt, item in pairs if attempt < last)

    emu.split_streams(1).push(queue, sent)
    got = partials_through(driver, listing)
    assert got[-1].attempt == last and got[-1].value == expected
    final = [p for p in got if p.attempt == last]
    check_partials(final, ITEMS)
    if restarts:
        assert final[0].data is None  # the partial that tells the display to start over


def partials_through(driver: str, cmd: Any) -> list[Any]:
    if driver == "sync":
        return list(cmd.stream_partial("x"))

    async def gather() -> list[Any]:
        return [partial async for partial in cmd.astream_partial("x")]

    return asyncio.run(gather())


# -- unions without a discriminator -----------------------------------------------------------


class Email(BaseModel):
    address: str
    verified: bool


class Phone(BaseModel):
    number: Annotated[str, streaming.grow]
    country: int


class Contact(BaseModel):
    name: str
    reach: list[Email | Phone]
    primary: Email | Phone | None
    code: int | str
    tag: Literal["vip", "new"] | None


CONTACT = {
    "name": "Ada",
    "reach": [
        {"number": "+44 20 {7946} 0958", "country": 44},
        {"address": "ada@example.org", "verified": True},
    ],
    "primary": {"address": "a@b.c", "verified": False},
    "code": "A-7",
    "tag": None,
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("provider", per_adapter())
def test_unions_without_a_discriminator_stream(
    provider: str, mode: str, emu: Emulator, partials: Collect, items: Collect
) -> None:
    model, queue, _ = PROVIDERS[provider]

    @command(output=Contact, model=model, output_mode=mode)
    def contact(text: str) -> str:
        return text

    emu.push(queue, reply(contact, mode, CONTACT))
    expected = contact("x")
    emu.split_streams(random_split(len(provider) + len(mode))).push(
        queue, reply(contact, mode, CONTACT)
    )
    got = partials(contact, "x")
    check_partials(got, CONTACT)
    assert got[-1].value == expected
    assert isinstance(expected.reach[0], Phone) and isinstance(expected.reach[1], Email)

    @command(output=list[Email | Phone | int], model=model, output_mode=mode)
    def reach(text: str) -> str:
        return text

    value = {"value": [*CONTACT["reach"], 7]}  # type: ignore[list-item]
    emu.split_streams(3).push(queue, reply(reach, mode, value))
    assert items(reach, "x") == [Phone(**CONTACT["reach"][0]), Email(**CONTACT["reach"][1]), 7]  # type: ignore[index]


# -- random chunkings of a few output types ----------------------------------------------------

SHAPES: dict[str, tuple[Any, Any]] = {
    "nested object": (Order, ORDER),
    "list of objects": (list[Item], {"value": ITEMS}),
    "unions": (Contact, CONTACT),
}


@pytest.mark.fuzz
def test_random_chunkings_on_every_transport(emu: Emulator, fuzz_scale: int) -> None:
    """Hypothesis picks the transport, the output mode, the type and how the answer is cut:
    the last partial has the value a call returns, and every partial before it only values
    the answer holds. A few examples in the suite, many more under make fuzz."""

    @settings(
        max_examples=6 * fuzz_scale,
        deadline=None,
        database=None,
        derandomize=fuzz_scale == 1,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        provider=st.sampled_from(sorted(PROVIDERS)),
        mode=st.sampled_from(MODES),
        shape=st.sampled_from(sorted(SHAPES)),
        seed=st.integers(0, 2**16),
        sizes=st.lists(st.integers(1, 40), min_size=1, max_size=6),
    )
    def check(provider: str, mode: str, shape: str, seed: int, sizes: list[int]) -> None:
        model, queue, _ = PROVIDERS[provider]
        output, value = SHAPES[shape]

        @command(output=output, model=model, output_mode=mode)
        def answer(text: str) -> str:
            return text

        emu.reset()
        emu.push(queue, reply(answer, mode, value))
        expected = answer("x")
        rng = random.Random(seed)

        def split(text: str) -> list[str]:
            pieces, at = [], 0
            while at < len(text):
                size = rng.choice(sizes)
                pieces.append(text[at : at + size])
                at += size
            return pieces

        emu.split_streams(split).push(queue, reply(answer, mode, value, ascii_only=seed % 2 == 0))
        got = list(answer.stream_partial("x"))
        unwrapped = value["value"] if shape == "list of objects" else value
        check_partials(got, unwrapped)
        assert got[-1].value == expected

    check()
