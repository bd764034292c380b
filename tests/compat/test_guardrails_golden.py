"""Guardrails' own RAIL specs, recorded model outputs and validated outputs, run through alloy.

The cases are data (``data/guardrails_golden.json``, each with its source in the Guardrails
repository); alloy must give the value Guardrails gives, refuse what Guardrails' schema
validation refuses, and re-ask on the validators Guardrails re-asks on.
"""

from __future__ import annotations

import datetime
import gc
import json
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from alloy import ConfigurationError, ParseError, command
from alloy._types import RetryPrompt
from alloy.compat import SpecWarning, load_rail
from alloy.testing import override_model, script

from ..conftest import Call

DATA = json.loads((Path(__file__).parent / "data" / "guardrails_golden.json").read_text())
CASES: list[dict[str, Any]] = DATA["cases"]


def as_json(value: Any) -> Any:
    """``value`` as Guardrails' golden files show it: dates and times as ISO text."""
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_json(v) for v in value]
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return value


def reasked(model: Any) -> list[list[str]]:
    """The validators each re-ask names, in order."""
    out = []
    for request in model.requests[1:]:
        part = request.messages[-1].parts[0]
        assert isinstance(part, RetryPrompt)
        out.append(re.findall(r"criterion ([\w-]+)\)", part.errors))
    return out


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_guardrails_golden_case(case: dict[str, Any], call: Call) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SpecWarning)
        output = load_rail(case["rail"])

    @command(output=output, max_reasks=case.get("max_reasks", 0))
    def guarded() -> str:
        return "Answer as the spec asks."

    with override_model(script(*case["replies"])) as model:
        if "refused" in case:
            with pytest.raises(ParseError) as info:
                call(guarded)
            assert case["refused"] in str(info.value)
            return
        value = call(guarded)
    assert as_json(value) == case["expected"]
    assert reasked(model) == case.get("reasked", [])


def test_every_case_names_its_source() -> None:
    assert DATA["licence"].startswith("Apache-2.0")
    for case in CASES:
        assert case["sources"], case["id"]
        for source in case["sources"]:
            assert source["repository"] == "guardrails-ai/guardrails"
            assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block: what it finalises is not the block's."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


SPECS = json.loads((Path(__file__).parent / "data" / "guardrails_specs.json").read_text())


@pytest.mark.parametrize("entry", SPECS["specs"], ids=[s["id"] for s in SPECS["specs"]])
def test_every_guardrails_spec_loads_or_is_refused_clearly(entry: dict[str, Any]) -> None:
    if "refused" in entry:
        with pytest.raises(ConfigurationError, match=entry["refused"]):
            load_rail(entry["spec"])
        return
    # The recorder is process-wide: an earlier test's garbage, collected meanwhile, warns in
    # the window. The collector is held off for it (collecting first cost a second a test in a
    # worker's full heap), and an unclosed socket freed by another thread is no warning of
    # load_rail's.
    with warnings.catch_warnings(record=True) as recorded, collector_paused():
        warnings.simplefilter("always")
        output = load_rail(entry["spec"])
    caught = [w for w in recorded if not issubclass(w.category, ResourceWarning)]
    messages = [str(w.message) for w in caught]
    assert all(issubclass(w.category, SpecWarning) for w in caught)
    unchecked = [m for m in messages if m.startswith("RAIL validators alloy does not implement")]
    if entry["unchecked"]:
        # One warning names every validator alloy does not check.
        assert unchecked == [
            f"RAIL validators alloy does not implement: {', '.join(entry['unchecked'])}; "
            "they are not checked"
        ]
    else:
        assert unchecked == []
    assert [m for m in messages if m not in unchecked] == entry["other_warnings"]
    schema = output.schema
    assert schema is None or schema["type"] == "object"
    if entry["unchecked"] and not entry["other_warnings"]:
        with pytest.raises(ConfigurationError, match="RAIL validators alloy does not implement"):
            load_rail(entry["spec"], strict=True)
