"""The built-in schema dialects behind one signature, ``dialect(schema, model_id) -> schema``.

The provider descriptors name these as ``"alloy.providers._dialects:<name>"``. Each function
imports only its own adapter's module, when it is called: asking for one provider's dialect
does not load the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["anthropic", "bedrock", "gemini", "ollama", "openai"]


def openai(schema: Mapping[str, Any], model_id: str) -> dict[str, Any]:
    """OpenAI strict mode: every property required, no additional properties."""
    from ._openai_common import openai_strict_schema

    return openai_strict_schema(schema)


def anthropic(schema: Mapping[str, Any], model_id: str) -> dict[str, Any]:
    """Anthropic's keyword subset; other constraints move into descriptions."""
    from ._anthropic_dialect import anthropic_schema

    return anthropic_schema(schema)


def bedrock(schema: Mapping[str, Any], model_id: str) -> dict[str, Any]:
    """Bedrock Converse: Claude's keyword subset, which its structured outputs take too."""
    from .bedrock import dialect

    return dialect(schema, model_id)


def gemini(schema: Mapping[str, Any], model_id: str) -> dict[str, Any]:
    """Gemini's keyword subset, with ``propertyOrdering`` for models that need it (2.0, 1.x)."""
    from ._gemini_dialect import gemini_schema
    from .gemini import needs_property_ordering

    return gemini_schema(
        schema, property_ordering=bool(model_id) and needs_property_ordering(model_id)
    )


def ollama(schema: Mapping[str, Any], model_id: str) -> dict[str, Any]:
    """The canonical schema as it is (llama.cpp's grammar conversion takes it)."""
    from .ollama import ollama_schema

    return ollama_schema(schema)
