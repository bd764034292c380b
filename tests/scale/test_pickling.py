"""Commands pickle, so Dask, Spark UDFs, Ray and ProcessPoolExecutor can send them to workers:
by reference when their module and name find them, by value (function, options, tools, rails,
bound deps) otherwise, and never with this process's SDK clients or plan cache."""

from __future__ import annotations

import multiprocessing
import pickle
import subprocess
import sys
import textwrap
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Annotated, Literal

import cloudpickle
import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from alloy import command, tool
from alloy._call import Spec
from alloy.checks import Length
from alloy.formats import KeyValues, YesNo
from alloy.rails import output_rail
from alloy.testing.emulator import Emulator

from . import commands
from .commands import Ticket, classify, classify_offline, count, lookup, no_secrets

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
def test_module_level_commands_tools_and_rails_pickle_by_reference(dumps: object) -> None:
    for thing in (classify, classify_offline, lookup, no_secrets):
        assert pickle.loads(dumps(thing)) is thing  # type: ignore[operator]


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
def test_a_copy_pickles_by_value_with_its_options_tools_rails_and_deps(dumps: object) -> None:
    copy = classify.with_options(temperature=0.2, max_tokens=50).using(deps={"team": "billing"})
    again = pickle.loads(dumps(copy))  # type: ignore[operator]
    assert again is not copy and type(again) is type(copy)
    assert again.spec.fn is classify.spec.fn  # the function, found through the command at its name
    assert again._call_options == {"temperature": 0.2, "max_tokens": 50}
    assert again._bound == {"deps": {"team": "billing"}}
    assert again.tools == (lookup,) and again.rails == (no_secrets,)
    assert again.schema == classify.schema and again.name == "classify"


def test_what_belongs_to_this_process_stays_here(emu: Emulator) -> None:
    """After a call the command holds its plan and the SDK's client; neither travels."""
    copy = count.with_options(temperature=0.0)
    assert copy("apple") == copy("pear")  # the emulator's answer for the schema
    assert copy._prepared  # its Prepared call (see alloy._call), kept for the next one
    data = pickle.dumps(copy)
    assert b"httpx" not in data and b"Client" not in data and b"Plan" not in data
    again = pickle.loads(data)
    assert not again._prepared and again("plum") == copy("plum")


@dataclass
class Person:
    name: str
    age: int


class Invoice(BaseModel):
    vendor: str
    total: float


class Point(TypedDict):
    x: int
    y: int


@pytest.mark.parametrize(
    "output",
    [
        int,
        list[str],
        Literal["low", "high"],
        Person,
        Invoice,
        Point,
        Annotated[str, Length(max=20)],
        YesNo(),
        KeyValues(["name", "role"]),
    ],
    ids=lambda output: getattr(output, "__name__", type(output).__name__),
)
def test_every_kind_of_output_type_pickles(output: object) -> None:
    @command(output=output, model="offline")
    def describe(text: str) -> str:
        return f"Describe {text}"

    again = cloudpickle.loads(cloudpickle.dumps(describe))
    assert again.schema == describe.schema
    assert again.output_type.expected == describe.output_type.expected
    assert again("a red bicycle") == describe("a red bicycle")


def test_a_command_made_in_a_function_goes_by_value_through_cloudpickle() -> None:
    """pickle finds functions by name, so it refuses one made in a function; cloudpickle sends
    its code, with the local output type, tool and rail it uses."""

    @dataclass
    class Label:
        word: str
        score: int

    @tool(name="weight", timeout=5.0, cacheable=True)
    def weigh(word: str) -> int:
        """How heavy a word is."""
        return len(word)

    @output_rail
    def lower(value: Label) -> Label:
        return Label(value.word.lower(), value.score)

    @command(output=Label, model="offline", tools=[weigh], rails=[lower])
    def label(text: str) -> str:
        return f"Label {text}"

    with pytest.raises((pickle.PicklingError, AttributeError), match="local"):
        pickle.dumps(label)
    again = cloudpickle.loads(cloudpickle.dumps(label))
    assert again is not label and again.name.endswith("label")
    (weight,) = again.tools
    assert (weight.name, weight.description, weight.timeout, weight.cacheable) == (
        "weight",
        "How heavy a word is.",
        5.0,
        True,
    )
    assert weight("abc") == 3
    assert again("Some Text") == label("Some Text")
    assert again("Some Text").word == again("Some Text").word.lower()


def test_a_script_command_travels_by_value_through_cloudpickle(tmp_path: Path) -> None:
    """A command written in a script (``__main__``) reaches a process running another script,
    as a Ray or Dask worker is: cloudpickle sends ``__main__`` by value, and so does alloy,
    the script's dataclass output type included."""
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            from dataclasses import dataclass

            import cloudpickle
            from alloy import command

            @dataclass
            class Count:
                word: str
                letters: int

            @command(output=Count, model="offline")
            def letters(word: str) -> str:
                return f"How many letters in {word}?"

            sys.stdout.buffer.write(cloudpickle.dumps((letters, letters("kiwi"))))
            """
        )
    )
    sent = subprocess.run(
        [sys.executable, str(script)], capture_output=True, check=True, cwd=ROOT, timeout=60
    ).stdout
    received = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, cloudpickle; cmd, value = cloudpickle.loads(sys.stdin.buffer.read()); "
            "print(cmd.name, cmd('kiwi') == value)",
        ],
        input=sent,
        capture_output=True,
        check=True,
        cwd=ROOT,
        timeout=60,
    )
    assert received.stdout.decode().split() == ["letters", "True"]


def _pool() -> ProcessPoolExecutor:
    """Two fresh interpreters (spawn, as on macOS and Windows): nothing is inherited but what
    is pickled and the environment."""
    return ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))


def test_a_process_pool_runs_commands_against_the_emulator(emu: Emulator) -> None:
    """The workers inherit the variables pointing the SDKs at the emulator; the commands
    (one by reference, one copy by value) travel pickled, their answers come back."""
    words = ["apple", "fig", "banana", "kiwi"]
    copy = classify.with_options(temperature=0.1)
    with _pool() as pool:
        counted = list(pool.map(count, words))
        tickets = list(pool.map(copy, words))
    assert counted == [count(word) for word in words]
    assert tickets == [copy(word) for word in words]
    assert all(isinstance(ticket, Ticket) for ticket in tickets)
    sent = emu.requests_for("openai")
    assert len(sent) == 2 * 2 * len(words)
    assert sum(r.body.get("temperature") == 0.1 for r in sent) == 2 * len(words)


def test_a_process_pool_runs_commands_on_the_offline_model() -> None:
    texts = [f"ticket {n}: the printer is on fire" for n in range(6)]
    with _pool() as pool:
        remote = list(pool.map(classify_offline, texts))
        mapped = list(pool.map(commands.classify_offline.with_options(temperature=0.5), texts))
    assert remote == [classify_offline(text) for text in texts] == mapped
    assert len({ticket.category for ticket in remote}) > 1  # each row its own answer


#: What a command or tool makes for itself, or keeps of this process, and so does not travel.
MADE_HERE = {
    "_prepared",
    "_handlers",
    "_answer",
    "_validate_element",
    "_example_turns",
    "_not_cached",
}


def test_a_copy_by_value_keeps_every_attribute_but_what_is_made_here() -> None:
    """Guards the lists in ``__reduce__`` against a constructor argument added later."""

    @tool(name="weight", timeout=5.0, cacheable=True)
    def weigh(word: str) -> int:
        """How heavy a word is."""
        return len(word)

    copy = classify.with_options(temperature=0.2).using(deps={"team": "billing"})
    for original in (copy, weigh):
        again = cloudpickle.loads(cloudpickle.dumps(original))
        skip = MADE_HERE | {"_validator", "fn", "__wrapped__", "_fn", "__signature__", "signature"}
        kept = {k: comparable(v) for k, v in vars(original).items() if k not in skip}
        assert {k: comparable(v) for k, v in vars(again).items() if k not in skip} == kept


def comparable(value: object) -> object:
    """An output type as what it sends and reads (it has no ``==`` of its own); a command's
    spec as what it is made of, its function aside (found by name, not copied)."""
    if isinstance(value, Spec):
        made_of = [f.name for f in fields(value) if f.name not in ("fn", "_example_turns")]
        return tuple(comparable(getattr(value, name)) for name in made_of)
    schema = getattr(value, "schema", False)
    if schema is not False and hasattr(value, "expected"):
        return (type(value), schema, value.expected)  # type: ignore[attr-defined]
    return value


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
def test_a_pickled_command_carries_no_api_key(
    dumps: object, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = "sk-canary-0123456789abcdefghij"

    @command(output=int, model="openai:gpt-5-mini", api_key=canary)
    def made_here(text: str) -> str:
        return f"Count {text}"

    copies = [count.with_options(api_key=canary, temperature=0.0)]
    if dumps is cloudpickle.dumps:  # pickle finds functions by name: none made in a function
        copies.append(made_here)
    for copy in copies:
        data = dumps(copy)  # type: ignore[operator]
        assert canary.encode() not in data and b"canary" not in data
        again = cloudpickle.loads(data)
        assert "api_key" not in again.spec.options and "api_key" not in again._call_options
        # The copy runs with the key of the process it lands in (here the emulator's).
        assert isinstance(again("apple"), int)
        assert emu.last_request().headers["authorization"] != f"Bearer {canary}"
