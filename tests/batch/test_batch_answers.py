"""Batch answers alloy cannot read cost only their own row a call online: a 200 answer with
nothing in it, and a line of a results file that does not parse."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from alloy import command
from alloy.batch import Missed
from alloy.providers.batch_api import json_lines
from alloy.providers.gemini_batch import GeminiBatchAPI
from alloy.testing.emulator import Emulator, HttpError, ReplyAuto, ReplyRaw

MODELS = {
    "openai-chat": ("openai", "openai-chat:gpt-4o-mini"),
    "openai": ("openai", "openai:gpt-4o-mini"),
    "anthropic": ("anthropic", "anthropic:claude-sonnet-4-6"),
    "gemini": ("gemini", "gemini:gemini-2.5-flash"),
}

#: A 200 answer with no output in it: no ``choices``, ``output``, ``content`` or ``candidates``.
EMPTY = {
    "openai-chat": {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini"},
    "openai": {"id": "resp_1", "object": "response", "model": "gpt-4o-mini", "status": "completed"},
    "anthropic": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
    },
    "gemini": {"modelVersion": "gemini-2.5-flash", "responseId": "r1"},
}


@dataclass
class City:
    name: str
    country: str


def capital_on(model: str) -> Any:
    @command(output=City, model=model)
    def capital(country: str) -> str:
        return f"What is the capital of {country}?"

    return capital


def batch(cmd: Any, rows: Any, **options: Any) -> list[Any]:
    return list(cmd.map(rows, mode="batch", poll_interval=0, progress=False, **options))


def online_calls(emu: Emulator, wire: str) -> int:
    return len([r for r in emu.requests_for(wire) if r.api and "batch" not in r.api])


@pytest.mark.parametrize("provider", MODELS)
def test_an_answer_with_no_output_is_asked_online(provider: str, emu: Emulator) -> None:
    wire, model = MODELS[provider]
    emu.push(wire, ReplyRaw.json(EMPTY[provider]))
    found = batch(capital_on(model), ["France", "Peru"])
    assert all(row.ok for row in found), [row.error for row in found if not row.ok]
    assert online_calls(emu, wire) == 1  # only the row whose answer was empty


@pytest.mark.parametrize("provider", MODELS)
def test_a_line_of_the_results_that_does_not_parse_costs_only_its_own_row(
    provider: str, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One line of the results file cut off halfway: the other 19 rows read their answers
    from the batch, and that one row alone is asked online."""
    wire, model = MODELS[provider]
    monkeypatch.setattr(GeminiBatchAPI, "inline_bytes", 10)  # Gemini answers in a file too
    emu.vary_answers()
    countries = [f"country {i}" for i in range(20)]
    online = list(capital_on(model).map(countries, progress=False))
    emu.reset()
    emu.vary_answers().batch_options(malformed=1, seed=3)
    found = batch(capital_on(model), countries)
    assert [row.value for row in found] == [row.value for row in online]
    (job,) = emu.batches.jobs.values()
    assert len(job.malformed) == 1
    assert online_calls(emu, wire) == 1


@pytest.mark.parametrize("provider", MODELS)
def test_a_malformed_line_fails_its_row_when_the_online_call_fails(
    provider: str, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch answers (its line garbled), then the online call is refused: the row fails
    with the online call's error, and the run ends normally."""
    wire, model = MODELS[provider]
    monkeypatch.setattr(GeminiBatchAPI, "inline_bytes", 10)
    emu.batch_options(malformed=1)
    emu.push(wire, ReplyAuto(), HttpError(400, "bad request"))
    (row,) = batch(capital_on(model), ["France"])
    assert not row.ok and "bad request" in str(row.error)


def test_lines_that_name_no_row_are_left_out() -> None:
    text = '{"custom_id": "a", "x": 1}\n\n[1, 2]\n{"custom_id": "b", "x": \nnot json at all\n'
    found = list(json_lines(text, "custom_id"))
    assert found[0] == ("a", {"custom_id": "a", "x": 1})
    assert found[1] == ("b", Missed("failed", "line 4 of the results is not JSON"))
    assert len(found) == 2
