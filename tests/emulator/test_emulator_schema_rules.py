"""The per-provider strict-schema rules (providers.md section 4), checked directly.

The strongest checks here compare with the SDKs' own schema helpers: whatever
``openai.lib._pydantic.to_strict_json_schema`` or anthropic's ``transform_schema`` produce is,
by construction, what those services accept, so the emulator must not reject it.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest
from anthropic.lib._parse._transform import transform_schema
from openai.lib._pydantic import to_strict_json_schema
from pydantic import BaseModel, Field

from alloy.testing.emulator._schema_rules import (
    anthropic_problem,
    gemini_problem,
    openai_strict_problem,
)


class Address(BaseModel):
    street: str
    zip_code: str = Field(pattern=r"^\d{5}$")


class Person(BaseModel):
    name: str = Field(min_length=1, max_length=50)
    age: int = Field(ge=0, le=150)
    kind: Literal["a", "b"]
    nickname: str | None = None
    addresses: list[Address] = Field(min_length=1, max_length=3)


class Tree(BaseModel):
    label: str
    children: list[Tree]


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, **schema}


@pytest.mark.parametrize("model", [Address, Person, Tree])
def test_openai_accepts_its_sdk_strict_schemas(model: type[BaseModel]) -> None:
    assert openai_strict_problem(to_strict_json_schema(model)) is None


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            "'additionalProperties' is required to be supplied and to be false",
        ),
        (
            strict(
                {
                    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                    "required": ["a"],
                }
            ),
            "Missing 'b'",
        ),
        (
            {"anyOf": [{"type": "object"}, {"type": "null"}]},
            "schema must be a JSON Schema of 'type: \"object\"'",
        ),
        (
            {"type": "array", "items": {"type": "string"}},
            "schema must be a JSON Schema of 'type: \"object\"'",
        ),
        (
            strict(
                {
                    "properties": {"a": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
                    "required": ["a"],
                }
            ),
            "In context=('properties', 'a'), 'oneOf' is not permitted.",
        ),
        (
            strict(
                {
                    "properties": {"a": {"$ref": "#/$defs/X"}},
                    "required": ["a"],
                    "$defs": {"X": {"type": "object", "properties": {}}},
                }
            ),
            "In context=('$defs', 'X'), 'additionalProperties'",
        ),
        (
            strict(
                {
                    "properties": {
                        "a": {"type": "array", "items": {"type": "object", "properties": {}}}
                    },
                    "required": ["a"],
                }
            ),
            "('properties', 'a', 'items')",
        ),
    ],
)
def test_openai_rejections(schema: dict[str, Any], fragment: str) -> None:
    problem = openai_strict_problem(schema)
    assert problem is not None and fragment in problem


@pytest.mark.parametrize("model", [Address, Person])
def test_anthropic_accepts_its_sdk_transformed_schemas(model: type[BaseModel]) -> None:
    assert anthropic_problem(transform_schema(model)) is None


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        (
            strict({"properties": {"age": {"type": "integer", "minimum": 0}}}),
            "For 'integer' type, property 'minimum' is not supported",
        ),
        (
            {"type": "object", "properties": {}},
            "'additionalProperties' must be explicitly set to false",
        ),
        (
            {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}},
            "must be explicitly set to false",
        ),
        (
            strict(
                {"properties": {"a": {"type": "array", "minItems": 2, "items": {"type": "string"}}}}
            ),
            "'minItems' values other than 0 or 1",
        ),
        (
            strict({"properties": {"a": {"type": "string", "maxLength": 3}}}),
            "output_config.format.schema.properties.a: For 'string' type, property 'maxLength'",
        ),
        (strict({"properties": {"a": {"enum": [{"x": 1}]}}}), "Enum values"),
        (
            strict(
                {
                    "properties": {"t": {"$ref": "#/$defs/T"}},
                    "$defs": {"T": strict({"properties": {"c": {"$ref": "#/$defs/T"}}})},
                }
            ),
            "Recursive",
        ),
    ],
)
def test_anthropic_rejections(schema: dict[str, Any], fragment: str) -> None:
    problem = anthropic_problem(schema)
    assert problem is not None and fragment in problem


def test_anthropic_allows_small_min_items_and_patterns() -> None:
    schema = strict(
        {
            "properties": {
                "a": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                "b": {"type": "string", "pattern": "^x+$", "format": "date"},
            }
        }
    )
    assert anthropic_problem(schema) is None


def test_gemini_keyword_list() -> None:
    ok = {
        "type": "object",
        "title": "T",
        "propertyOrdering": ["default"],
        "properties": {
            "default": {
                "type": ["string", "null"],
                "format": "date",
            },  # a property name, not the keyword
            "n": {"type": "integer", "minimum": 0, "maximum": 9},
            "xs": {"type": "array", "items": {"$ref": "#/$defs/X"}, "minItems": 1},
        },
        "required": ["default"],
        "$defs": {"X": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "additionalProperties": False,
    }
    assert gemini_problem(ok) is None
    with_default = {"type": "object", "properties": {"n": {"type": "integer", "default": 0}}}
    assert 'Unknown name "default"' in (gemini_problem(with_default) or "")
    ref_sibling = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/X", "description": "d"}},
        "$defs": {"X": {"type": "string"}},
    }
    assert "$ref" in (gemini_problem(ref_sibling) or "")
