"""Helpers shared by the OpenAI adapter tests (imported by those modules).

The emulator and the recorded waits come from ``tests/conftest.py`` (``emu``, ``sleeps``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pytest
from pydantic import BaseModel

from alloy import command

SHARED = Path(__file__).resolve().parents[3] / "shared"
RECORDED = SHARED / "fixtures" / "recorded"
CAPTURED = SHARED / "fixtures" / "sdk_captured"
#: Looks like a real key, so a test given it (``emu`` parametrized) can check it never shows.
TEST_KEY = "sk-test-emulator-0123456789abcdef"


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
