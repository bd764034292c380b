"""The text formats and prompt mode's JSON reading on examples from the specs and from other
parsers' tests (cases in ``data/``, each file naming its sources: repository, path and commit).

A case holds the source's own reading (``value``; null: the source refuses the reply). Where alloy
deliberately reads a reply differently, by the rules its docs give, ``alloy_value`` holds alloy's
reading and ``differs`` says why; the tests check alloy against that, so a difference is always a
decision written down, never drift.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from alloy._extract import extract_json
from alloy._output import InvalidOutput
from alloy.formats import KeyValues, TaskList, YesNo, code_blocks

DATA = Path(__file__).parent / "data"
GFM = json.loads((DATA / "gfm_spec_examples.json").read_text())
YESNO = json.loads((DATA / "yesno_cases.json").read_text())
JSON_IN_PROSE = json.loads((DATA / "json_in_prose_cases.json").read_text(encoding="utf-8"))
KEY_VALUES = json.loads((DATA / "keyvalues_cases.json").read_text(encoding="utf-8"))
REACT = json.loads((DATA / "react_cases.json").read_text(encoding="utf-8"))
PEER_DATA = (YESNO, JSON_IN_PROSE, KEY_VALUES, REACT)


def expected(case: dict[str, Any]) -> Any:
    """What alloy reads: the source's reading, unless the case marks a deliberate difference."""
    return case["alloy_value"] if "alloy_value" in case else case["value"]


def ids(data: dict[str, Any]) -> list[str]:
    return [f"{c['source']}:{c.get('test', '')}:{c['reply'][:30]!r}" for c in data["cases"]]


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
    if expected(case) is None:
        with pytest.raises(InvalidOutput):
            YesNo().parse(case["reply"])
    else:
        assert YesNo().parse(case["reply"]) is expected(case)


@pytest.mark.parametrize("case", JSON_IN_PROSE["cases"], ids=ids(JSON_IN_PROSE))
def test_json_in_prose_case(case: dict[str, Any]) -> None:
    if expected(case) is None:
        with pytest.raises(InvalidOutput):
            extract_json(case["reply"])
    else:
        assert json.loads(extract_json(case["reply"])) == expected(case)


@pytest.mark.parametrize(
    "case", KEY_VALUES["cases"] + REACT["cases"], ids=ids(KEY_VALUES) + ids(REACT)
)
def test_key_value_case(case: dict[str, Any]) -> None:
    fmt = KeyValues(case["keys"])
    if expected(case) is None:
        with pytest.raises(InvalidOutput):
            fmt.parse(case["reply"])
    else:
        assert fmt.parse(case["reply"]) == expected(case)


@pytest.mark.parametrize("data", PEER_DATA, ids=lambda d: d["about"][:20])
def test_a_case_alloy_reads_differently_says_why(data: dict[str, Any]) -> None:
    for case in data["cases"]:
        assert ("alloy_value" in case) == bool(case.get("differs")), case
        if "alloy_value" in case:
            assert case["alloy_value"] != case["value"], case


@pytest.mark.parametrize("data", PEER_DATA, ids=lambda d: d["about"][:20])
def test_the_data_names_its_sources(data: dict[str, Any]) -> None:
    assert re.fullmatch(r"[0-9a-f]{40}", GFM["source"]["commit"])
    sources = {s["name"]: s for s in data["sources"]}
    assert {c["source"] for c in data["cases"]} <= set(sources)
    for source in sources.values():
        if "repository" in source:
            assert re.fullmatch(r"[0-9a-f]{40}", source["commit"]), source
            assert source["path"] and source["licence"], source
        else:  # a spec's documentation page, or alloy's own cases
            assert source.get("url") or source["name"] == "alloy", source
