"""alloy-ai's ``ask``: ``context=`` and ``tools=`` work as they did, ``default_system=`` and
``ask.stream_async`` warn and name alloy's spelling (issue 21, items 1 and 4)."""

from __future__ import annotations

import asyncio
import warnings

import pytest

from alloy import ConfigurationError, ask, tool
from alloy.testing import FunctionModel, override_model, script, tool_call, tool_results

from .conftest import collect, prompt_of


@pytest.mark.parametrize("spelling", ["call", "stream"])
def test_ask_puts_the_context_before_the_prompt_as_alloy_ai_did(
    model: FunctionModel, spelling: str
) -> None:
    context = {"text": "Python is readable.", "domain": "programming"}
    if spelling == "call":
        assert ask("Outline it", context=context) == "done"
    else:
        assert "".join(ask.stream("Outline it", context=context)) == "done"
    assert prompt_of(model) == f"Context: {context}\n\nTask: Outline it"


def test_ask_without_context_sends_the_prompt_alone(model: FunctionModel) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ask("Say hi", context=None, tools=None)
    assert prompt_of(model) == "Say hi"


@pytest.mark.parametrize("spelling", ["call", "acall", "stream", "astream"])
def test_ask_offers_tools_and_runs_them(spelling: str) -> None:
    @tool
    def list_languages(min_len: int = 4) -> list[str]:
        """Popular languages with at least min_len letters."""
        return [name for name in ("Go", "Rust", "Python") if len(name) >= min_len]

    fake = script(tool_call("list_languages", {"min_len": 4}, id="c1"), "Python")
    with override_model(fake):
        if spelling == "call":
            answer = ask("Pick one", tools=[list_languages])
        elif spelling == "acall":
            answer = asyncio.run(ask.acall("Pick one", tools=[list_languages]))
        else:
            answer = "".join(collect(getattr(ask, spelling)("Pick one", tools=[list_languages])))
    assert answer == "Python"
    assert [t.name for t in fake.requests[0].tools] == ["list_languages"]
    assert [r.content for r in tool_results(fake.requests[1])] == ['["Rust","Python"]']


def test_ask_takes_plain_functions_as_tools_and_refuses_duplicates(model: FunctionModel) -> None:
    def word_count(text: str) -> int:
        """Words in text."""
        return len(text.split())

    ask("Count", tools=[word_count])
    assert [t.name for t in model.requests[0].tools] == ["word_count"]
    with pytest.raises(ConfigurationError, match="Duplicate tool names"):
        ask("Count", tools=[word_count, word_count])


def test_ask_without_tools_offers_none(model: FunctionModel) -> None:
    ask("Say hi")
    assert model.requests[0].tools == ()


def test_ask_default_system_warns_and_sets_the_system_prompt(model: FunctionModel) -> None:
    with pytest.deprecated_call(match=r"default_system= in ask\(\) .* use system="):
        ask("Report", default_system="Be brief.")
    assert model.requests[0].system == "Be brief."


def test_ask_stream_async_warns_and_streams(model: FunctionModel) -> None:
    with pytest.deprecated_call(match=r"ask\.stream_async\(\) .* use ask\.astream\(\)"):
        chunks = ask.stream_async("Write", context={"k": 1})
    assert "".join(collect(chunks)) == "done"
    assert prompt_of(model) == "Context: {'k': 1}\n\nTask: Write"
