"""stream_partial / stream_items through a scripted model: what is shown, when, and how failures,
re-asks, tool rounds, checks and rails behave (the transports are in test_transports.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

from alloy import (
    Assistant,
    ConfigurationError,
    Context,
    ParseError,
    RailBlocked,
    TruncatedOutputError,
    User,
    command,
    streaming,
    tool,
)
from alloy._types import Request, Response, Text
from alloy.checks import UpperCase
from alloy.events import Event, OutputItem, PartialOutput, Reask
from alloy.rails import Block, output_rail
from alloy.streaming import Restart
from alloy.testing import FunctionModel, script

from .helpers import Collect, check_partials


@dataclass
class Line:
    sku: str
    qty: int


@dataclass
class Invoice:
    vendor: Annotated[str, streaming.grow]
    total: float
    lines: list[Line]


INVOICE = {
    "vendor": 'ACME "Widgets} & Co',
    "total": 1234.5,
    "lines": [{"sku": "A-1", "qty": 3}, {"sku": "B-2", "qty": 10}, {"sku": "C-3", "qty": 7}],
}


def answering(*replies: Any) -> FunctionModel:
    """A model answering with ``replies`` in order (JSON values are dumped)."""
    return script(
        *(r if isinstance(r, (str, Response)) or not r else json.dumps(r) for r in replies)
    )


def invoice_command(model: Any, **options: Any) -> Any:
    @command(output=Invoice, model=model, **options)
    def read(text: str) -> str:
        return f"Read: {text}"

    return read


def test_partials_end_with_the_value_a_call_returns(partials: Collect) -> None:
    got = partials(invoice_command(answering(INVOICE)), "x")
    check_partials(got, INVOICE)
    assert got[-1].value == invoice_command(answering(INVOICE))("x")
    assert got[-1].data == INVOICE
    # The vendor grows (it is marked so); the total and the lines' fields appear only whole.
    vendors = [p.get("vendor") for p in got if p.get("vendor") is not None]
    assert vendors[0] != INVOICE["vendor"] and vendors[-1] == INVOICE["vendor"]
    assert {p.get("total") for p in got} == {None, 1234.5}
    assert {p.get("lines", 0, "sku") for p in got} == {None, "A-1"}


def test_each_partial_says_what_is_complete() -> None:
    got = list(invoice_command(answering(INVOICE)).stream_partial("x"))
    growing = next(p for p in got if p.open_path == ("vendor",))
    assert not growing.is_complete("vendor") and not growing.is_complete()
    later = next(p for p in got if p.get("lines", 1) is not None and p.open_path[:1] == ("lines",))
    assert later.is_complete("vendor") and later.is_complete("total")
    assert later.is_complete("lines", 0) and not later.is_complete("lines")
    assert not later.is_complete("missing")
    assert got[-1].is_complete("lines") and got[-1].open_path == ()
    with pytest.raises(ValueError, match="not complete"):
        _ = later.value


@dataclass
class Scene:
    place: str
    mood: Annotated[str, streaming.grow]


@dataclass
class Story:
    title: Annotated[str, streaming.not_null]
    body: Annotated[str, streaming.grow]
    scenes: list[Annotated[Scene, streaming.done]]


STORY = {
    "body": "Once upon a time, there was a {brace}.",
    "title": "The Brace",
    "scenes": [{"place": "a hill", "mood": "bright and calm"}, {"place": "a cave", "mood": "dark"}],
}


def test_markers_hold_an_object_for_a_field_and_a_member_until_done(partials: Collect) -> None:
    @command(output=Story, model=answering(STORY))
    def story(topic: str) -> str:
        return topic

    got = partials(story, "braces")
    check_partials(got, STORY)
    shown = [p.data for p in got[:-1] if p.data is not None]
    # Nothing shows before the title: the story waits for it (body comes first in the JSON).
    assert all("title" in data for data in shown)
    assert shown[0]["body"] == STORY["body"]
    # A scene appears only whole, though its mood may grow.
    for data in shown:
        for scene in data.get("scenes", []):
            assert scene in STORY["scenes"]


def test_a_reask_streams_the_new_answer_as_a_new_attempt(partials: Collect) -> None:
    bad = {**INVOICE, "total": "a lot"}
    events: list[Event] = []
    read = invoice_command(answering(bad, INVOICE))
    read.subscribe(events.append, Reask)
    got = partials(read, "x")
    assert [p.attempt for p in got] == sorted(p.attempt for p in got)
    first_of_second = next(i for i, p in enumerate(got) if p.attempt == 2)
    assert got[first_of_second].data is None  # the consumer is told the data starts over
    assert any(p.get("vendor") == INVOICE["vendor"] for p in got[:first_of_second])
    check_partials(got[first_of_second:], INVOICE)
    assert got[-1].value.total == 1234.5 and got[-1].attempt == 2
    assert len(events) == 1


def test_truncation_raises_after_the_partials_that_arrived(partials: Collect) -> None:
    text = json.dumps(INVOICE)[:60]
    read = invoice_command(answering(Response((Text(text),), finish_reason="length")))
    seen: list[Any] = []
    with pytest.raises(TruncatedOutputError):
        partials(read, "x", into=seen)
    assert seen and seen[-1].get("vendor") == INVOICE["vendor"]
    assert not any(p.complete for p in seen)


def test_partials_start_after_the_tool_rounds() -> None:
    calls: list[str] = []

    @tool
    def lookup(vendor: str) -> str:
        """Look a vendor up."""
        calls.append(vendor)
        return "known"

    def reply(request: Request) -> Any:
        if len(request.messages) == 1:
            from alloy.testing import tool_call

            return tool_call("lookup", {"vendor": "ACME"})
        return json.dumps(INVOICE)

    read = invoice_command(FunctionModel(reply), tools=[lookup])
    stream = read.stream_partial("x")
    first = next(stream)
    assert calls == ["ACME"] and first.attempt == 1
    rest = [first, *stream]
    check_partials(rest, INVOICE)
    assert {p.attempt for p in rest} == {1}


@dataclass
class Shout:
    word: Annotated[str, UpperCase(on_fail="fix")]
    note: Annotated[str, streaming.grow]


def test_a_checked_field_is_never_shown_before_the_answer_passed(partials: Collect) -> None:
    answer = {"word": "quiet", "note": "a long note about it"}

    @command(output=Shout, model=answering(answer))
    def shout(text: str) -> str:
        return text

    got = partials(shout, "x")
    assert all("word" not in (p.data or {}) for p in got[:-1])
    assert any(p.get("note") for p in got[:-1])
    assert got[-1].value == Shout("QUIET", "a long note about it")
    assert got[-1].data == {"word": "QUIET", "note": "a long note about it"}


def test_output_rails_keep_everything_back_until_they_passed(partials: Collect) -> None:
    @output_rail
    def no_acme(value: Invoice) -> Any:
        return Block("ACME is not allowed") if "ACME" in value.vendor else None

    read = invoice_command(answering(INVOICE), rails=[no_acme])
    seen: list[Any] = []
    with pytest.raises(RailBlocked):
        partials(read, "x", into=seen)
    assert seen == []

    passing = invoice_command(answering({**INVOICE, "vendor": "Other"}), rails=[no_acme])
    got = partials(passing, "x")
    assert len(got) == 1 and got[0].complete and got[0].value.vendor == "Other"


def test_observers_see_each_partial() -> None:
    events: list[Event] = []
    read = invoice_command(answering(INVOICE))
    read.subscribe(events.append, PartialOutput)
    got = list(read.stream_partial("x"))
    assert [e.partial for e in events] == got  # type: ignore[attr-defined]
    assert {e.call_id for e in events} != {""}


# -- list elements ---------------------------------------------------------------------------


def lines_command(model: Any, **options: Any) -> Any:
    @command(output=list[Line], model=model, **options)
    def lines(text: str) -> str:
        return text

    return lines


LINES = INVOICE["lines"]


@pytest.mark.parametrize("envelope", [True, False], ids=["wrapped", "bare"])
def test_elements_arrive_once_each_in_order(items: Collect, envelope: bool) -> None:
    answer = {"value": LINES} if envelope else LINES
    got = items(lines_command(answering(answer)), "x")
    assert got == [Line(**line) for line in LINES]  # type: ignore[arg-type]


def test_each_element_is_yielded_as_soon_as_it_is_complete() -> None:
    """The stream hands out an element before the text after it has arrived."""
    text = json.dumps({"value": LINES})
    sent: list[str] = []

    class Dripping(FunctionModel):
        def stream(self, request: Request) -> Any:
            from alloy._types import Done, TextDelta

            for character in text:
                sent.append(character)
                yield TextDelta(character)
            yield Done(Response((Text(text),)))

    stream = lines_command(Dripping(lambda r: text)).stream_items("x")
    for index, line in enumerate(stream):
        end = text.index("}", text.index(LINES[index]["sku"])) + 1  # type: ignore[index]
        assert len(sent) == end  # nothing read past the element's closing brace
        assert line == Line(**LINES[index])  # type: ignore[arg-type]


def test_a_reask_yields_the_new_answers_elements_with_their_attempt() -> None:
    bad = [*LINES[:2], {"sku": "C-3", "qty": "many"}]
    model = answering({"value": bad}, {"value": LINES})
    stream = lines_command(model).stream_items("x")
    seen: list[Any] = []
    stream.on_restart(lambda restart: seen.append((restart, len(model.requests))))
    seen.extend((line, stream.attempt) for line in stream)
    # The invalid third element is never yielded; the stream is told it starts over as soon as
    # the re-ask is decided (before it is sent), then the second answer's all come.
    assert seen == [
        (Line("A-1", 3), 1),
        (Line("B-2", 10), 1),
        (Restart(attempt=2, discarded=2), 1),
        (Line("A-1", 3), 2),
        (Line("B-2", 10), 2),
        (Line("C-3", 7), 2),
    ]


def test_async_restart_handlers_may_be_coroutines() -> None:
    bad = [*LINES[:1], {"sku": "B-2", "qty": "many"}]

    async def main() -> list[Any]:
        told: list[Any] = []

        async def clear(restart: Restart) -> None:
            told.append(restart)

        stream = lines_command(answering({"value": bad}, {"value": LINES})).astream_items("x")
        got = [(line.sku, stream.attempt) async for line in stream.on_restart(clear)]
        return [*told, *got]

    assert asyncio.run(main()) == [
        Restart(attempt=2, discarded=1),
        ("A-1", 1),
        ("A-1", 2),
        ("B-2", 2),
        ("C-3", 2),
    ]


def test_async_items_carry_their_attempt() -> None:
    async def main() -> list[tuple[Line, int]]:
        stream = lines_command(answering({"value": LINES})).astream_items("x")
        return [(line, stream.attempt) async for line in stream]

    assert asyncio.run(main()) == [(Line(**line), 1) for line in LINES]  # type: ignore[arg-type]


def test_checked_elements_come_with_the_final_value(items: Collect) -> None:
    @dataclass
    class Tag:
        name: Annotated[str, UpperCase(on_fail="fix")]

    @command(output=list[Tag], model=answering({"value": [{"name": "a"}, {"name": "b"}]}))
    def tags(text: str) -> str:
        return text

    assert items(tags, "x") == [Tag("A"), Tag("B")]


def test_observers_see_each_element() -> None:
    events: list[Event] = []
    lines = lines_command(answering({"value": LINES}))
    lines.subscribe(events.append, OutputItem)
    got = list(lines.stream_items("x"))
    assert [e.item for e in events] == got  # type: ignore[attr-defined]


def test_iterable_outputs_are_read_whole_and_repaired_by_a_reask() -> None:
    model = answering({"value": [1, "two"]}, {"value": [1, 2]})

    @command(output=Iterable[int], model=model)
    def numbers(text: str) -> str:
        return text

    assert numbers("x") == [1, 2]
    assert len(model.requests) == 2
    with pytest.raises(ParseError):
        numbers.with_options(max_reasks=0, model=answering({"value": ["x"]}))("x")
    assert list(numbers.with_options(model=answering({"value": [4, 5]})).stream_items("x")) == [
        4,
        5,
    ]


# -- what cannot stream ----------------------------------------------------------------------


def test_what_cannot_stream_typed_values_says_why() -> None:
    model = answering("hi")

    @command(model=model)
    def text(x: str) -> str:
        return x

    @command(output=str, model=model)
    def plain(x: str) -> str:
        return x

    @command(output=Invoice, model=model)
    async def later(x: str) -> str:
        return x

    with pytest.raises(ConfigurationError, match="not JSON"):
        text.stream_partial("x")
    with pytest.raises(ConfigurationError, match="streams as text"):
        plain.stream_partial("x")
    with pytest.raises(ConfigurationError, match="list"):
        invoice_command(model).stream_items("x")
    with pytest.raises(ConfigurationError, match="astream_partial"):
        later.stream_partial("x")


@dataclass
class Folder:
    name: str
    children: list[Folder | File]


@dataclass
class File:
    name: str
    children: list[File]
    size: int


def test_recursive_types_and_unions_of_them_stream(partials: Collect) -> None:
    tree = {
        "name": "root",
        "children": [
            {"name": "docs", "children": [{"name": "a.md", "children": [], "size": 3}]},
            {"name": "b.txt", "children": [], "size": 5},
        ],
    }

    @command(output=Folder, model=answering(tree))
    def folders(path: str) -> str:
        return path

    got = partials(folders, "/")
    check_partials(got, tree)
    assert got[-1].value.children[1] == File("b.txt", [], 5)


@dataclass
class Left:
    next: list[Left]
    note: Annotated[str, streaming.grow]


@dataclass
class Right:
    next: list[Right]
    note: str


def test_a_union_of_recursive_types_gets_one_finite_shape() -> None:
    from alloy._answer_shape import answer_shape
    from alloy._command import output_type_for

    answer = answer_shape(output_type_for(Left | Right, has_output=True), "tree")
    value = answer.shape.field("value")
    assert value.field("next").items().field("next").items().field("note").grow is False
    assert answer.wrapped and answer.element is None


def test_criteria_on_a_whole_list_hold_its_elements_until_they_passed() -> None:
    from alloy.checks import Length, checked

    model = answering({"value": LINES[:1]}, {"value": LINES})
    lines = command(output=checked(list[Line], Length(min=2, on_fail="reask")), model=model)(
        lambda text: text
    )
    stream = lines.stream_items("x")
    restarts: list[Restart] = []
    stream.on_restart(restarts.append)
    # The first answer was re-asked (too short) before any element was shown: the elements are
    # the second answer's, and the stream says it started over.
    assert [(line, stream.attempt) for line in stream] == [
        (Line(**line), 2)  # type: ignore[arg-type]
        for line in LINES
    ]
    assert restarts == [Restart(attempt=2, discarded=0)]


@pytest.mark.parametrize(
    "first",
    [
        {"value": [{"sku": "A-1", "qty": "many"}]},  # its first element is invalid
        "Sorry, here is no JSON",  # nothing to read at all
    ],
    ids=["invalid-first-element", "not-json"],
)
def test_a_reask_before_anything_was_shown_is_a_new_attempt(first: Any) -> None:
    stream = lines_command(answering(first, {"value": LINES})).stream_items("x")
    seen: list[Any] = []
    stream.on_restart(seen.append)
    seen.extend((line.sku, stream.attempt) for line in stream)
    assert seen == [Restart(attempt=2, discarded=0), ("A-1", 2), ("B-2", 2), ("C-3", 2)]

    partials = list(invoice_command(answering("no JSON", INVOICE)).stream_partial("x"))
    assert partials[0].attempt == 2 and partials[0].data is None
    assert {p.attempt for p in partials} == {2} and partials[-1].data == INVOICE


def test_a_tool_round_is_not_a_new_attempt() -> None:
    from alloy.testing import tool_call

    @tool
    def stock(sku: str) -> int:
        """Units in stock."""
        return 3

    def reply(request: Request) -> Any:
        if len(request.messages) == 1:
            return tool_call("stock", {"sku": "A-1"})
        return json.dumps({"value": LINES})

    stream = lines_command(FunctionModel(reply), tools=[stock]).stream_items("x")
    restarts: list[Restart] = []
    stream.on_restart(restarts.append)
    assert [stream.attempt for _ in stream] == [1, 1, 1] and restarts == []


def test_history_and_deps_reach_a_streamed_call(partials: Collect) -> None:
    seen: list[Request] = []
    used: list[str] = []

    def reply(request: Request) -> Any:
        seen.append(request)
        if len(seen) == 1:
            from alloy.testing import tool_call

            return tool_call("vendor_of", {"sku": "A-1"})
        return json.dumps(INVOICE)

    @tool
    def vendor_of(sku: str, ctx: Context[str]) -> str:
        """Who sells a SKU."""
        used.append(ctx.deps)
        return "ACME"

    read = invoice_command(FunctionModel(reply), tools=[vendor_of])
    got = partials(read, "x", history=[User("earlier"), Assistant("noted")], deps="db")
    assert got[-1].value.total == 1234.5
    assert used == ["db"]
    assert len(seen[0].messages) == 3  # the two earlier turns, then the prompt


@dataclass
class Reading:
    meter: str
    value: float
    ok: bool
    count: int


def test_typed_reads_of_what_has_arrived() -> None:
    """get_as reads one value as a JSON type: a whole number is a float where one is asked
    for, a bool is never an int, and anything else (or nothing yet) is the default."""
    answer = {"meter": "M-1", "value": 12, "ok": True, "count": 3}

    @command(output=Reading, model=answering(answer))
    def read(text: str) -> str:
        return text

    shown = [p for p in read.stream_partial("x") if not p.complete]
    last = shown[-1]
    assert last.get_as(str, "meter") == "M-1" and last.get_as(int, "meter") is None
    value = last.get_as(float, "value")
    assert value == 12.0 and type(value) is float
    assert last.get_as(bool, "ok") is True and last.get_as(int, "ok") is None
    assert last.get_as(int, "count") == 3 and last.get_as(bool, "count") is None
    assert last.get_as(dict) == answer and last.get_as(list) is None
    assert shown[0].get_as(str, "meter", default="?") == "?"


class CutToolCall(FunctionModel):
    """Answers in tool mode with the output tool's arguments cut off at the token limit,
    streamed five characters at a time."""

    def __init__(self, args: str) -> None:
        super().__init__(lambda request: "")
        self.args = args

    def stream(self, request: Request) -> Any:
        from alloy._types import Done, ToolCall, ToolCallDelta

        assert request.output is not None and request.output.mode == "tool"
        name, args = request.output.name, self.args
        for at in range(0, len(args), 5):
            first = at == 0
            yield ToolCallDelta(
                0, "c1" if first else None, name if first else None, args[at : at + 5]
            )
        cut = ToolCall("c1", name, {}, raw_args=args)
        yield Done(Response((cut,), finish_reason="length"))

    async def astream(self, request: Request) -> Any:
        for event in self.stream(request):
            yield event


def test_tool_arguments_cut_off_raise_after_what_arrived(partials: Collect, items: Collect) -> None:
    text = json.dumps(INVOICE)
    read = invoice_command(CutToolCall(text[: text.index('"B-2"')]), output_mode="tool")
    seen: list[Any] = []
    with pytest.raises(TruncatedOutputError):
        partials(read, "x", into=seen)
    assert seen[-1].get("vendor") == INVOICE["vendor"] and seen[-1].get("lines", 0, "sku") == "A-1"
    check_partials([*seen, _Complete()], INVOICE)

    listing = json.dumps({"value": LINES})
    lines = lines_command(CutToolCall(listing[: listing.index('"C-3"')]), output_mode="tool")
    arrived: list[Any] = []
    with pytest.raises(TruncatedOutputError):
        items(lines, "x", into=arrived)
    assert arrived == [Line(**line) for line in LINES[:2]]  # type: ignore[arg-type]


class _Complete:
    """Stands for the last partial a cut-off stream never got, for check_partials."""

    complete = True
    attempt = 99
