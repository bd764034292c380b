"""ragit's own PDL schema tests and prompts, run through alloy (cases in ``data/``, with sources).

Each schema is loaded with :func:`load_pdl` and answered in prompt mode, since a PDL schema is a
prompt enhancement: the model writes freely and the answer is read out of the reply.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from alloy import ConfigurationError, ParseError, command
from alloy._types import Capabilities
from alloy.compat import load_pdl, read_pdl
from alloy.formats import Task
from alloy.testing import FunctionModel, override_model

DATA = Path(__file__).parent / "data"
SCHEMAS = json.loads((DATA / "ragit_pdl.json").read_text())
PROMPTS = json.loads((DATA / "ragit_prompts.json").read_text())


def answer(schema: str, reply: str) -> Any:
    plain = Capabilities(native_schema=False, tools=False)

    @command(output=load_pdl(schema), output_mode="prompt", max_reasks=0)
    def ask() -> str:
        return "Answer."

    with override_model(FunctionModel(lambda request: reply, capabilities=plain)):
        return ask()


@pytest.mark.parametrize(
    "case",
    SCHEMAS["validate"],
    ids=[f"{c['schema']} <- {c['reply'][:30]!r}" for c in SCHEMAS["validate"]],
)
def test_ragit_schema_case(case: dict[str, Any]) -> None:
    if case["ragit_error"] is not None:
        with pytest.raises(ParseError):
            answer(case["schema"], case["reply"])
        return
    value = answer(case["schema"], case["reply"])
    if "alloy_value" in case:
        assert [[t.text, t.done] for t in value] == case["alloy_value"]
        assert all(isinstance(t, Task) for t in value)
    else:
        assert value == case["ragit_value"]


@pytest.mark.parametrize("case", SCHEMAS["parse"], ids=[c["schema"] for c in SCHEMAS["parse"]])
def test_ragit_schema_parse_case(case: dict[str, Any]) -> None:
    accepted = case.get("alloy_accepts", case["ragit_accepts"])
    if accepted:
        load_pdl(case["schema"])
    else:
        with pytest.raises(ConfigurationError):
            load_pdl(case["schema"])


_ROLES = {"System": "S", "UserTurn": "U", "ModelTurn": "A"}


@pytest.mark.parametrize("prompt", PROMPTS["prompts"], ids=[p["name"] for p in PROMPTS["prompts"]])
def test_ragit_prompt_documents_read_whole(prompt: dict[str, Any]) -> None:
    if "refused" in prompt:
        with pytest.raises(ConfigurationError, match=prompt["refused"]):
            read_pdl(prompt["text"], prompt["context"])
        return
    doc = read_pdl(prompt["text"], prompt["context"])
    assert doc.output.expected == prompt["expected_output"]
    assert "".join(_ROLES[type(m).__name__] for m in doc.messages) == prompt["expected_roles"]
    assert load_pdl(prompt["text"], context=prompt["context"]).expected == doc.output.expected


def test_every_case_names_its_source() -> None:
    for data in (SCHEMAS, PROMPTS):
        assert data["licence"].startswith("MIT")
        assert data["source"]["repository"] == "baehyunsol/ragit"
        assert re.fullmatch(r"[0-9a-f]{40}", data["source"]["commit"])
