"""Fixtures and helpers shared by the OpenAI adapter tests (imported by those modules).

The fixture functions are named ``*_fixture`` and registered under short names (``emu``,
``emulator``, ``sleeps``), so importing them does not shadow the test arguments.

One emulator serves a whole test module; each test starts from an empty script and points the
SDK at it through ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, the variables the SDK reads itself.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Optional

import pytest
from pydantic import BaseModel

from alloy import _drivers, command
from alloy.providers import clear_model_cache
from alloy.testing.emulator import Emulator

SHARED = Path(__file__).resolve().parents[3] / "shared"
RECORDED = SHARED / "fixtures" / "recorded"
CAPTURED = SHARED / "fixtures" / "sdk_captured"
#: Looks like a real key, so a test can check it never shows up in an error.
TEST_KEY = "sk-test-emulator-0123456789abcdef"


@pytest.fixture(scope="module", name="emulator")
def emulator_fixture() -> Iterator[Emulator]:
    with Emulator() as emu:
        yield emu


@pytest.fixture(name="emu")
def emu_fixture(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    """The module's emulator, reset, with the OpenAI SDK pointed at it through its env vars."""
    emulator.reset()
    monkeypatch.setenv("OPENAI_BASE_URL", emulator.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    clear_model_cache()
    yield emulator
    clear_model_cache()


@pytest.fixture(name="sleeps")
def sleeps_fixture(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Backoff waits of the sync driver, recorded instead of slept (tests stay fast)."""
    waited: list[float] = []
    real = {name: getattr(time, name) for name in dir(time) if not name.startswith("_")}
    monkeypatch.setattr(_drivers, "time", SimpleNamespace(**{**real, "sleep": waited.append}))
    return waited


def recording(relative: str) -> dict[str, Any]:
    path = RECORDED / relative
    if not path.exists():
        pytest.skip(f"recorded fixture {relative} is not available")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def captured(case: str) -> dict[str, Any]:
    """The body the real SDK sent for ``case`` (e.g. ``"responses.tool_final"``)."""
    path = CAPTURED / "openai.json"
    if not path.exists():
        pytest.skip("sdk_captured/openai.json is not available")
    cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
    requests = cases[case]["requests"]
    first = requests[0] if isinstance(requests, list) else requests
    body: dict[str, Any] = first["body"]
    return body


def structure(value: Any) -> Any:
    """Keys and nesting of a JSON value, with leaves reduced to their type (order ignored)."""
    if isinstance(value, dict):
        return {key: structure(sub) for key, sub in value.items()}
    if isinstance(value, list):
        return [structure(sub) for sub in value]
    return type(value).__name__


WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "temperature_c": {"type": "number", "description": "Temperature in Celsius"},
        "conditions": {"type": "string", "enum": ["sunny", "cloudy", "rain"]},
        "humidity": {"type": ["integer", "null"]},
    },
    "required": ["city", "temperature_c", "conditions", "humidity"],
    "additionalProperties": False,
}
GET_WEATHER_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["c", "f"]},
    },
    "required": ["city", "unit"],
    "additionalProperties": False,
}


# -- output types and helpers both OpenAI test modules use -----------------------------------


@dataclass
class Point:
    x: float
    y: float


class Address(BaseModel):
    street: str
    city: str


class Person(BaseModel):
    name: str
    address: Address
    tags: list[str]
    nickname: Optional[str]


class CityLocation(BaseModel):
    city: str
    country: str


def make_typed(output: Any, model: str, **options: Any) -> Any:
    """A command returning ``output`` on ``model`` (test modules bind their model)."""

    @command(output=output, model=model, **options)
    def ask(question: str) -> str:
        return question

    return ask


def make_text_command(model: str, **options: Any) -> Any:
    """A text command on ``model``."""

    @command(model=model, **options)
    def talk(question: str) -> str:
        return question

    return talk


WEATHER_CALLS: list[str] = []


def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    WEATHER_CALLS.append(city)
    return {"city": city, "temp_c": 21.5}


@pytest.fixture(name="forget_weather_calls", autouse=True)
def forget_weather_calls_fixture() -> None:
    WEATHER_CALLS.clear()
