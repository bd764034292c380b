"""What the MCP tests share: the served commands, a model that answers from the prompt, and
schemas compared as canonical JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp")

from alloy._types import Request
from alloy.testing import FunctionModel, override_model

from . import served


def answer_from_prompt(request: Request) -> str:
    """Each command's answer, made from its prompt: distinct inputs get distinct answers."""
    prompt = request.messages[0].parts[0].text  # type: ignore[union-attr]
    if prompt.startswith("Review "):
        product = prompt.removeprefix("Review ").split(" (")[0]
        return json.dumps({"title": f"About {product}", "stars": 4, "mood": "calm"})
    if prompt.startswith("Count to "):
        n = int(prompt.removeprefix("Count to "))
        return json.dumps({"value": list(range(1, n + 1))})
    if prompt.startswith("Say exactly: "):
        return prompt.removeprefix("Say exactly: ")
    if prompt.startswith("Repeat: "):
        return prompt.removeprefix("Repeat: ")
    match = re.match(r"How many (.+)\?", prompt)
    if match:
        return json.dumps({"value": 3})
    raise AssertionError(f"no answer for {prompt!r}")


@pytest.fixture
def model() -> Iterator[FunctionModel]:
    """Every command answers from its prompt (FunctionModel)."""
    with override_model(FunctionModel(answer_from_prompt)) as fake:
        yield fake


def commands() -> dict[str, Any]:
    return {
        name: getattr(served, name) for name in ("review", "echo", "count", "in_stock", "guarded")
    }


def inline(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with every ``$ref`` replaced by what it names in ``defs`` (and no ``$defs``)."""
    if isinstance(node, dict):
        if "$ref" in node:
            target = defs[node["$ref"].rsplit("/", 1)[-1]]
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return inline({**target, **rest}, defs)
        return {k: inline(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [inline(item, defs) for item in node]
    return node


def canonical(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))
