"""The incremental JSON parser behind stream_partial(): whatever the chunking, what it shows is
only ever complete values (and growing strings where asked), and it ends with the whole value.

Each property is checked by splitting the text at every character boundary, by feeding it one
character at a time, and at random chunkings (hypothesis).
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alloy._partial_json import JsonStream, Live, Shape, growing_text, materialize, open_path
from alloy.streaming import Partial

GROW = Shape(grow=True)


def grow_everywhere() -> Shape:
    """A shape that lets every string grow, at any depth (keys unknown: every field)."""

    class Everywhere(Shape):
        def field(self, key: str) -> Shape:
            return self

        def items(self) -> Shape:
            return self

    return Everywhere(grow=True)


def consistent(shown: Any, final: Any, path: tuple[Any, ...], opened: tuple[Any, ...]) -> None:
    """``shown`` is what a snapshot holds at ``path``; off the open path it must be exactly the
    final value, on it a beginning of it."""
    on_open_path = path == opened[: len(path)]
    if not on_open_path:
        assert shown == final, (path, shown, final)
        assert type(shown) is type(final), (path, shown, final)
        return
    if isinstance(final, dict):
        assert isinstance(shown, dict), (path, shown)
        assert set(shown) <= set(final), (path, shown)
        for key, value in shown.items():
            consistent(value, final[key], (*path, key), opened)
    elif isinstance(final, list):
        assert isinstance(shown, list), (path, shown)
        assert len(shown) <= len(final), (path, shown)
        for index, value in enumerate(shown):
            consistent(value, final[index], (*path, index), opened)
    elif isinstance(final, str):
        assert isinstance(shown, str) and final.startswith(shown), (path, shown, final)
    else:  # a number, boolean or null is never shown cut off
        assert shown == final and type(shown) is type(final), (path, shown, final)


def check_stream(text: str, chunks: list[str], shape: Shape) -> int:
    """Feed ``chunks``; every snapshot is consistent with the final value. Returns how many
    snapshots changed."""
    final = json.loads(text)
    parser = JsonStream(shape)
    changes = 0
    for chunk in chunks:
        if parser.feed(chunk):
            changes += 1
            snapshot = parser.snapshot()
            shown = materialize(snapshot)
            if shown is not None:
                consistent(shown, final, (), open_path(snapshot))
    assert parser.done, parser.error
    assert parser.root == final
    assert type(parser.root) is dict
    return changes


def every_split(text: str) -> list[list[str]]:
    return [[text[:k], text[k:]] for k in range(len(text) + 1)]


SAMPLE = {
    "title": 'He said "}{" and left\\ \n\t \u00e9\u4e2d\U0001f600',
    "count": -123,
    "ratio": 6.02e23,
    "small": -0.5e-7,
    "flags": [True, False, None],
    "nested": {"deep": [{"a": 1}, {"b": [2, 3, {"c": "x]y"}]}], "empty": {}, "none": []},
    'key with \\"quote\\"': "v",
    "\u00e9": 0,
}


@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("shape", [Shape(), grow_everywhere()], ids=["whole", "growing"])
def test_every_split_point(ensure_ascii: bool, indent: int | None, shape: Shape) -> None:
    text = json.dumps(SAMPLE, ensure_ascii=ensure_ascii, indent=indent)
    for chunks in every_split(text):
        check_stream(text, chunks, shape)


@pytest.mark.parametrize("shape", [Shape(), grow_everywhere()], ids=["whole", "growing"])
def test_one_character_at_a_time(shape: Shape) -> None:
    text = json.dumps(SAMPLE, ensure_ascii=True)
    assert check_stream(text, list(text), shape) > 10


def test_a_number_is_shown_only_once_the_character_after_it_arrives() -> None:
    parser = JsonStream(Shape())
    assert parser.feed('{"n": 12')
    assert materialize(parser.snapshot()) == {}
    assert parser.feed("3,")
    assert materialize(parser.snapshot()) == {"n": 123}


def test_a_word_is_shown_once_whole() -> None:
    parser = JsonStream(Shape())
    parser.feed('{"a": tr')
    assert materialize(parser.snapshot()) == {}
    assert parser.feed("ue")
    assert materialize(parser.snapshot()) == {"a": True}


def test_a_string_grows_only_where_its_shape_says() -> None:
    shape = Shape(fields={"body": GROW})
    parser = JsonStream(shape)
    assert parser.feed("{")  # the object is shown, empty
    assert not parser.feed('"title": "Hel')
    assert materialize(parser.snapshot()) == {}
    parser.feed('lo", "body": "Once upon')
    snapshot = parser.snapshot()
    assert materialize(snapshot) == {"title": "Hello", "body": "Once upon"}
    assert open_path(snapshot) == ("body",)


def test_an_escape_cut_in_half_is_never_shown() -> None:
    assert growing_text(["ab\\"], 1) == "ab"
    assert growing_text(["ab\\u00"], 1) == "ab"
    assert growing_text(["ab\\ud83d"], 1) == "ab"  # the high half of a surrogate pair
    assert growing_text(["ab\\ud83d\\ude00"], 1) == "ab\U0001f600"
    assert growing_text(["a", '\\"b'], 2) == 'a"b'


def test_held_and_hidden_positions() -> None:
    shape = Shape(
        fields={
            "address": Shape(hold=True, fields={"city": GROW}),
            "secret": Shape(hide=True),
            "items": Shape(item=Shape(hold=True)),
        }
    )
    parser = JsonStream(shape)
    parser.feed('{"address": {"city": "Pa')
    assert materialize(parser.snapshot()) == {}
    parser.feed('ris"}, "secret": "s3cr3t", "items": [{"a": 1}, {"a"')
    assert materialize(parser.snapshot()) == {"address": {"city": "Paris"}, "items": [{"a": 1}]}
    parser.feed(": 2}]}")
    assert parser.root == {"address": {"city": "Paris"}, "items": [{"a": 1}, {"a": 2}]}


def test_an_object_waits_for_the_fields_it_needs() -> None:
    shape = Shape(fields={"story": Shape(needs=frozenset({"title"}), fields={"body": GROW})})
    parser = JsonStream(shape)
    parser.feed('{"story": {"body": "Once upon a time", "title": "Tal')
    assert materialize(parser.snapshot()) == {}
    assert parser.feed('e"')
    assert materialize(parser.snapshot()) == {
        "story": {"body": "Once upon a time", "title": "Tale"}
    }


def test_prose_and_fences_around_the_object_are_passed_over() -> None:
    text = 'Sure {here it is}: ```json\n{"a": {"b": [1]}}\n``` and {"later": 1}'
    parser = JsonStream(Shape())
    for character in text:
        parser.feed(character)
    assert parser.done and parser.root == {"a": {"b": [1]}}


def test_text_that_is_not_json_stops_the_parser() -> None:
    parser = JsonStream(Shape(), lenient=False)
    parser.feed('{"a": 1, "b": nope}')
    assert parser.failed and parser.root is None
    assert not parser.feed('{"c": 1}')


def test_a_bare_list_is_read_as_its_envelope() -> None:
    text = ' [1, {"a": "]"}, [2]] and more [3]'
    spans: list[tuple[int, int]] = []
    parser = JsonStream(Shape(), bare_list=True, on_item=lambda s, e: spans.append((s, e)))
    for character in text:
        parser.feed(character)
    assert parser.done and parser.root == {"value": [1, {"a": "]"}, [2]]}
    assert [json.loads(text[s:e]) for s, e in spans] == [1, {"a": "]"}, [2]]


def feed_all(parser: JsonStream, text: str) -> JsonStream:
    for character in text:
        parser.feed(character)
    return parser


@pytest.mark.parametrize(
    ("text", "root"),
    [
        ("See note [7] below, the answer is [5, 6]", None),  # a citation is not the answer
        ("See [7].\n```json\n[5, 6]\n```\n", {"value": [5, 6]}),
        ('Note [7]. {"value": [5, 6]}', {"value": [5, 6]}),
        ('Use {} for none, {"note": 1} for notes: {"value": [5]}', {"value": [5]}),
        ("```python\nx = [1]\n```\n~~~\n[2]\n~~~", {"value": [2]}),
        ("``` [1] ```\n[2]", None),  # inline code, then a list in prose
        ("  ```JSON\n  [3]\n  ```", {"value": [3]}),
    ],
)
def test_a_list_answer_in_prose_is_looked_for_in_fences_and_envelopes(text: str, root: Any) -> None:
    parser = feed_all(JsonStream(Shape(), bare_list=True), text)
    assert parser.root == root
    assert parser.restarts == 0


def test_an_answer_in_prose_gives_way_to_a_json_fence_after_it() -> None:
    text = 'The format is {"x": 1}. Here:\n```json\n{"x": 2}\n```\nand {"x": 3}'
    parser = feed_all(JsonStream(Shape()), text)
    assert parser.done and parser.root == {"x": 2} and parser.restarts == 1
    fenced_first = feed_all(JsonStream(Shape()), '```json\n{"x": 2}\n```\n{"x": 3}')
    assert fenced_first.root == {"x": 2} and fenced_first.restarts == 0


def test_an_empty_object_in_prose_is_passed_over() -> None:
    parser = JsonStream(Shape())
    assert parser.feed("Use {} when there is nothing; ")
    assert materialize(parser.snapshot()) is None
    parser.feed('here it is: {"a": 1}')
    assert parser.root == {"a": 1}
    assert feed_all(JsonStream(Shape()), "{}").root == {}  # the whole reply: the answer


def test_list_members_are_reported_with_their_offsets_once_complete() -> None:
    text = '{"value": [1, {"x": "a}b"}, [2, 3], "s", true, null, -0.5]}'
    spans: list[tuple[int, int]] = []
    parser = JsonStream(Shape(), on_item=lambda start, end: spans.append((start, end)))
    for character in text:
        parser.feed(character)
    assert [json.loads(text[s:e]) for s, e in spans] == json.loads(text)["value"]


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.sampled_from('ab}{][",:\\ \n\u00e9\U0001f600\u2028'), max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)
objects = st.dictionaries(st.text(max_size=5), json_values, max_size=5)


@settings(max_examples=150, deadline=None)
@given(value=objects, seed=st.integers(0, 2**32), ascii_only=st.booleans())
def test_random_values_at_random_chunkings(
    value: dict[str, Any], seed: int, ascii_only: bool
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    rng = random.Random(seed)
    chunks = []
    at = 0
    while at < len(text):
        size = rng.choice((1, 1, 2, 3, 5, 8, 40))
        chunks.append(text[at : at + size])
        at += size
    check_stream(text, chunks, grow_everywhere())
    check_stream(text, chunks, Shape())


# -- showing every snapshot: Live ------------------------------------------------------------


def snapshots(text: str, chunks: list[str], shape: Shape) -> list[Any]:
    """The snapshots of a stream, one per change."""
    parser = JsonStream(shape)
    return [parser.snapshot() for chunk in chunks if parser.feed(chunk)]


def partials_of(shots: list[Any]) -> list[Partial[Any]]:
    live = Live()
    return [
        Partial(shot, attempt=1, wrapped=False, live=live, position=n)
        for n, shot in enumerate(shots, 1)
    ]


def test_live_values_equal_fresh_ones_read_as_they_come() -> None:
    text = json.dumps(SAMPLE, ensure_ascii=True)
    shots = snapshots(text, list(text), grow_everywhere())
    live = Live()
    for position, shot in enumerate(shots, 1):
        expected = materialize(shot)
        holder = Partial(shot, attempt=1, wrapped=False)  # stands for the partial shown
        assert live.show(shot, position, holder) == expected
        del holder  # dropped, as a loop over the stream drops each partial


@settings(max_examples=80, deadline=None)
@given(
    value=objects,
    seed=st.integers(0, 2**32),
    keep=st.booleans(),
    every=st.integers(1, 4),
)
def test_partials_show_what_a_fresh_build_shows_however_they_are_read(
    value: dict[str, Any], seed: int, keep: bool, every: int
) -> None:
    """Read every ``every``-th partial as it comes, keeping them all or dropping each: each one
    read shows what a fresh build of its snapshot shows; the ones kept still do at the end, and
    so do the ones read only then."""
    text = json.dumps(value)
    rng = random.Random(seed)
    chunks, at = [], 0
    while at < len(text):
        size = rng.choice((1, 2, 3, 7))
        chunks.append(text[at : at + size])
        at += size
    shots = snapshots(text, chunks, grow_everywhere())
    live = Live()
    kept: list[Partial[Any]] = []
    for position, shot in enumerate(shots, 1):
        partial = Partial(shot, attempt=1, wrapped=False, live=live, position=position)
        if position % every == 0:
            assert partial.data == materialize(shot)
        if keep:
            kept.append(partial)
    for partial, shot in zip(kept, shots, strict=False):
        assert partial.data == materialize(shot)


def test_a_kept_partial_keeps_its_data_and_data_kept_alone_grows() -> None:
    parser = JsonStream(Shape())
    live = Live()
    parser.feed('{"a": [1, ')
    first_shot = parser.snapshot()
    first = Partial(first_shot, attempt=1, wrapped=False, live=live, position=1)
    kept_data = first.data
    parser.feed("2, ")
    second = Partial(parser.snapshot(), attempt=1, wrapped=False, live=live, position=2)
    assert second.data == {"a": [1, 2]}
    assert first.data == {"a": [1]} and kept_data == {"a": [1]}  # its partial is alive
    del first
    parser.feed("3]")
    third = Partial(parser.snapshot(), attempt=1, wrapped=False, live=live, position=3)
    second_data = second.data
    del second
    assert third.data == {"a": [1, 2, 3]}
    assert second_data is third.data  # without its partial, the value was carried forward
    again = Partial(first_shot, attempt=1, wrapped=False, live=live, position=1)
    assert again.data == {"a": [1]}  # earlier than the last shown: built afresh


def shots_of(text: str) -> list[Any]:
    return snapshots(text, list(text), Shape())


def test_a_key_given_twice_shows_its_last_value() -> None:
    text = '{"a": 1, "b": {"c": 2}, "a": 3, "d": "x"}'
    shots = shots_of(text)
    for partial, shot in zip(partials_of(shots), shots, strict=True):
        assert partial.data == materialize(shot)
    assert partials_of(shots)[-1].data == {"a": 3, "b": {"c": 2}, "d": "x"}
