"""The text formats on examples from the specs and parsers they follow (cases in ``data/``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from alloy._output import InvalidOutput
from alloy.formats import TaskList, YesNo, code_blocks

DATA = Path(__file__).parent / "data"
GFM = json.loads((DATA / "gfm_spec_examples.json").read_text())
YESNO = json.loads((DATA / "yesno_cases.json").read_text())


@pytest.mark.parametrize(
    "case", GFM["fenced_code"], ids=[str(c["example"]) for c in GFM["fenced_code"]]
)
def test_gfm_fenced_code_example(case: dict[str, Any]) -> None:
    blocks = [list(b) for b in code_blocks(case["markdown"])]
    assert blocks == case.get("alloy_blocks", case["blocks"])


@pytest.mark.parametrize(
    "case", GFM["task_lists"], ids=[str(c["example"]) for c in GFM["task_lists"]]
)
def test_gfm_task_list_example(case: dict[str, Any]) -> None:
    tasks = TaskList().parse(case["markdown"])
    assert [[t.text, t.done] for t in tasks] == case["tasks"]


@pytest.mark.parametrize("mark", [" ", "x", "X", "O", "o", "v", "-", "\u2713"])
def test_any_mark_is_a_task_and_only_a_blank_one_is_open(mark: str) -> None:
    # GFM: "If the character between the brackets is a whitespace character, the checkbox is
    # unchecked. Otherwise, the checkbox is checked." ragit's PDL reads any one character.
    (task,) = TaskList().parse(f"* [{mark}] Complete: do something")
    assert (task.text, task.done) == ("Complete: do something", mark != " ")


@pytest.mark.parametrize(
    "case", YESNO["cases"], ids=[f"{c['source']}:{c['reply']}" for c in YESNO["cases"]]
)
def test_yesno_case(case: dict[str, Any]) -> None:
    expected = case["alloy_value"] if "alloy_value" in case else case["value"]
    if expected is None:
        with pytest.raises(InvalidOutput):
            YesNo().parse(case["reply"])
    else:
        assert YesNo().parse(case["reply"]) is expected


def test_a_case_alloy_reads_differently_says_why() -> None:
    for case in YESNO["cases"]:
        assert ("alloy_value" in case) == bool(case.get("differs")), case


def test_the_data_names_its_sources() -> None:
    assert re.fullmatch(r"[0-9a-f]{40}", GFM["source"]["commit"])
    names = {s["name"] for s in YESNO["sources"]}
    assert {c["source"] for c in YESNO["cases"]} <= names
