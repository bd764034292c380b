"""Seeded fuzzing of provider replies: whatever comes back, only alloy errors come out.

Each case renders a real answer (text, a JSON value, a tool call) in the provider's own wire
format, for a whole reply or a stream, and mangles it before sending: a field deleted, nulled,
given another type, a huge or deeply nested value, bytes cut, inserted or flipped, frames
dropped, repeated or reordered. The real SDKs read it and alloy's adapters parse it; the call
must end in a value or an ``AlloyError``, never in anything else, in every call form: call,
acall, stream, astream, and the typed streams (stream_partial, stream_items and their async
twins), whose answers sometimes hold a whole number longer than Python reads. Every case is
reproducible from its seed. ``make test`` runs 30 cases per call form on each adapter's
provider; ``make fuzz`` fifty times as many, on every provider.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Callable
from typing import Any

import pytest

from alloy import AlloyError, tool
from alloy.testing.emulator import Emulator, Item, Mutated, ReplyJson, ReplyText, ReplyToolCalls

from .conftest import (
    ASYNC_FORMS,
    FORMS,
    PROVIDERS,
    STREAMED,
    TYPED_STREAMS,
    per_adapter,
    run_form,
    weather_command,
)

CASES_PER_CELL = 30
ALL_FORMS = (*FORMS, *TYPED_STREAMS)
_DEEP_MARK = "\x00deep\x00"
_SSE_DATA = re.compile(rb"^data: ?(.*)$", re.MULTILINE)


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


# -- mutations --------------------------------------------------------------------------------


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside a JSON document (the root is the empty path)."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _odd_value(rng: random.Random) -> Any:
    return rng.choice(
        [
            None,
            True,
            0,
            -1,
            2**70,
            1.5e308,
            "",
            "x" * rng.choice([1, 1000, 20000]),
            [],
            {},
            [None],
            {"type": "unknown"},
            "\ud800".encode("utf-8", "surrogatepass").decode("utf-8", "replace"),
            _DEEP_MARK,
        ]
    )


def mutate_json(document: Any, rng: random.Random) -> bytes:
    """One structural change somewhere in a JSON document, serialized."""
    paths = _paths(document)
    path = rng.choice(paths)
    operation = rng.choice(["delete", "replace", "replace", "wrap", "retype"])
    if not path:
        document = _odd_value(rng)
    else:
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        if operation == "delete":
            del parent[last]
        elif operation == "wrap":
            parent[last] = [parent[last]]
        elif operation == "retype":
            current = parent[last]
            parent[last] = str(current) if not isinstance(current, str) else {"text": current}
        else:
            parent[last] = _odd_value(rng)
    text = json.dumps(document, ensure_ascii=False)
    deep = "[" * 3000 + "1" + "]" * 3000
    return text.replace(json.dumps(_DEEP_MARK), deep).encode("utf-8", "surrogatepass")


def mutate_frame(frame: bytes, rng: random.Random) -> bytes:
    """A structural change to the JSON a frame carries (whole body, SSE data or NDJSON)."""
    match = _SSE_DATA.search(frame)
    if match is not None:
        try:
            data = json.loads(match.group(1))
        except (ValueError, RecursionError):
            return frame
        new = mutate_json(data, rng)
        return frame[: match.start(1)] + new + frame[match.end(1) :]
    try:
        document = json.loads(frame)
    except (ValueError, RecursionError):
        return frame
    ending = b"\n" if frame.endswith(b"\n") else b""
    return mutate_json(document, rng) + ending


def mutate_bytes(frame: bytes, rng: random.Random) -> bytes:
    """A change at the byte level: cut, insert, flip, or delete a range."""
    if not frame:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    at = rng.randrange(len(frame))
    operation = rng.choice(["cut", "insert", "flip", "delete"])
    if operation == "cut":
        return frame[:at]
    if operation == "insert":
        junk = rng.choice([b"\xff\xfe", b"{", b"}", b'"', b"\n\n", b"data: ", b"\x00", b"]]"])
        return frame[:at] + junk + frame[at:]
    if operation == "flip":
        return frame[:at] + bytes([frame[at] ^ (1 << rng.randrange(8))]) + frame[at + 1 :]
    return frame[:at] + frame[at + rng.randint(1, 16) :]


def mutator(seed: int) -> Callable[[tuple[bytes, ...]], tuple[bytes, ...]]:
    """A seeded function that mangles a reply's frames in one to three ways."""

    def mutate(frames: tuple[bytes, ...]) -> tuple[bytes, ...]:
        rng = random.Random(seed)
        out = list(frames)
        for _ in range(rng.randint(1, 3)):
            if not out:
                out.append(b"")
            index = rng.randrange(len(out))
            kind = rng.choice(["json", "json", "json", "bytes", "frames"])
            if kind == "json":
                out[index] = mutate_frame(out[index], rng)
            elif kind == "bytes":
                out[index] = mutate_bytes(out[index], rng)
            else:
                operation = rng.choice(["drop", "repeat", "swap", "junk"])
                if operation == "drop":
                    del out[index]
                elif operation == "repeat":
                    out.insert(index, out[index])
                elif operation == "swap":
                    other = rng.randrange(len(out))
                    out[index], out[other] = out[other], out[index]
                else:
                    out.insert(index, rng.choice([b"data: {}\n\n", b"{}\n", b"event: ping\n\n"]))
        return tuple(out)

    return mutate


# -- running cases ----------------------------------------------------------------------------


WEATHER = {"city": "Paris", "temp_c": 21.5}
#: An answer with a whole number longer than Python reads (4,300 digits): JSON, but out of range.
LONG_NUMBER = '{"city": "Paris", "temp_c": 1' + "0" * 5000 + "}"


def base_reply(rng: random.Random, form: str) -> Item:
    kind = rng.choice(["text", "json", "tool"])
    if kind == "tool":
        return ReplyToolCalls(
            ("lookup", {"city": "Paris"}), text=rng.choice([None, "Let me check."])
        )
    if kind == "json" and form not in STREAMED:
        if rng.random() < 0.2:
            long = LONG_NUMBER
            return ReplyText(f'{{"value": [{long}]}}' if form.endswith("_items") else long)
        return ReplyJson({"value": [WEATHER, WEATHER]} if form.endswith("_items") else WEATHER)
    return ReplyText("Sunny in Paris, 21.5 degrees, light wind from the west.")


def make_command(model: str, form: str) -> Any:
    return weather_command(
        form, model=model, retries=0, max_reasks=0, max_tool_turns=2, tools=[lookup]
    )


def judge(outcome: Any, seed: int, problems: list[str]) -> None:
    if isinstance(outcome, BaseException) and not isinstance(outcome, AlloyError):
        problems.append(f"seed {seed}: {type(outcome).__name__}: {str(outcome)[:300]}")


@pytest.mark.fuzz
@pytest.mark.parametrize("form", ALL_FORMS)
@pytest.mark.parametrize("provider", per_adapter())  # the clouds sharing one: make fuzz
def test_mangled_replies_end_in_a_value_or_an_alloy_error(
    provider: str,
    form: str,
    emu: Emulator,
    fuzz_scale: int,
) -> None:
    model, queue, _ = PROVIDERS[provider]
    cmd = make_command(model, form)
    base = sorted(PROVIDERS).index(provider) * 1_000_000 + ALL_FORMS.index(form) * 100_000
    seeds = range(base, base + CASES_PER_CELL * fuzz_scale)
    problems: list[str] = []

    def queue_case(seed: int) -> None:
        emu.reset()
        rng = random.Random(seed)
        emu.push(queue, Mutated(mutator(seed), base_reply(rng, form)))  # type: ignore[arg-type]

    if form not in ASYNC_FORMS:
        for seed in seeds:
            queue_case(seed)
            try:
                run_form(cmd, form, "Paris")
            except BaseException as error:  # the test judges what came out
                judge(error, seed, problems)
    else:

        async def run_all() -> None:
            for seed in seeds:
                queue_case(seed)
                try:
                    await run_form(cmd, form, "Paris")
                except BaseException as error:  # the test judges what came out
                    judge(error, seed, problems)

        asyncio.run(run_all())
    assert not problems, f"{len(problems)} of {len(seeds)} cases escaped:\n" + "\n".join(
        problems[:40]
    )
