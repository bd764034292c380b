"""What the first call of a command builds (issue 33 item 1): only what it uses.

A cold start pays for every schema and validator built before the first typed result, so each
is built once, and not at all where nothing needs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pydantic
import pytest

from alloy import _config
from alloy._output import JsonOutput
from alloy.errors import ConfigurationError


@dataclass
class Person:
    name: str
    age: int


def _count_adapters(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    built: list[Any] = []
    real = pydantic.TypeAdapter

    def counting(tp: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(tp)
        return real(tp, *args, **kwargs)

    monkeypatch.setattr(pydantic, "TypeAdapter", counting)
    return built


def test_an_object_output_builds_one_type_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    built = _count_adapters(monkeypatch)
    output = JsonOutput(Person)
    assert built == [Person]  # the adapter that made the schema validates too
    assert output.parse('{"name": "Ada", "age": 36}') == Person("Ada", 36)
    assert output.schema["required"] == ["name", "age"]


def test_a_wrapped_output_builds_its_envelope_too(monkeypatch: pytest.MonkeyPatch) -> None:
    built = _count_adapters(monkeypatch)
    output = JsonOutput(list[int])
    assert len(built) == 2  # the type's schema, then the {"value": ...} envelope that validates
    assert output.parse('{"value": [1, 2]}') == [1, 2]


def _no_options_model(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> Any:
        raise AssertionError("the options model was built")

    monkeypatch.setattr(_config, "_validator", refuse)


def test_a_model_option_alone_builds_no_options_model(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_options_model(monkeypatch)
    assert _config.check_options({"model": "openai:gpt-4o-mini"}, source="test") == {
        "model": "openai:gpt-4o-mini"
    }
    assert _config.check_options(
        {"model": "openai:gpt-4o-mini", "fallback": ["anthropic:claude-sonnet-4-5"]},
        source="test",
    ) == {"model": "openai:gpt-4o-mini", "fallback": ("anthropic:claude-sonnet-4-5",)}
    assert _config.check_options({}, source="test") == {}


def test_the_model_option_alone_is_still_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_options_model(monkeypatch)
    with pytest.raises(ConfigurationError, match="Invalid value for option 'model'"):
        _config.check_options({"model": 3}, source="test")
    with pytest.raises(ConfigurationError, match="not valid UTF-8"):
        _config.check_options({"model": "openai:\ud800"}, source="test")


def test_other_options_are_still_coerced() -> None:
    assert _config.check_options({"model": "m", "temperature": 1}, source="test") == {
        "model": "m",
        "temperature": 1.0,
    }
    with pytest.raises(ConfigurationError, match="Invalid value for option 'retries'"):
        _config.check_options({"model": "m", "retries": "many"}, source="test")
