"""alloy-ai's option spellings: ``retry``, ``default_system`` and ``extra`` warn and apply as
alloy's ``retries``, ``system`` and ``extra_json``; ``retry_on`` and the provider keys alloy-ai
read out of ``extra`` are refused naming what replaces them, never as an unknown option (issue
21, item 4)."""

from __future__ import annotations

from typing import Any

import pytest

from alloy import ConfigurationError, ask, command, configure, use_config
from alloy.testing import FunctionModel, override_model


@pytest.mark.parametrize(
    ("where", "run"),
    [
        ("@command(...)", lambda **o: command(**o)(lambda: "x")()),
        ("configure()", lambda **o: (configure(**o), command(lambda: "x")())),
        ("use_config()", lambda **o: _in_use_config(o)),
        ("with_options()", lambda **o: command(lambda: "x").with_options(**o)()),
        ("ask()", lambda **o: ask("x", **o)),
    ],
)
def test_retry_default_system_and_extra_warn_and_apply(where: str, run: Any) -> None:
    fake = FunctionModel(lambda request: "ok")
    with override_model(fake), pytest.deprecated_call() as caught:
        run(retry=3, default_system="S", extra={"top_p": 0.5})
    messages = [str(w.message) for w in caught.list]
    assert any(
        "retry=" in m and "use retries=" in m and "retry=N is retries=N-1" in m for m in messages
    )
    assert any("default_system=" in m and "use system=" in m for m in messages)
    assert any("extra=" in m and "use extra_json=" in m for m in messages)
    assert all(f" in {where}" in m or f".{where}" in m for m in messages), messages
    assert all(w.filename == __file__ for w in caught.list), "warnings point at the caller"
    request = fake.requests[0]
    assert request.system == "S"
    assert request.settings.extra == {"top_p": 0.5}


def _in_use_config(options: dict[str, Any]) -> Any:
    with use_config(**options):
        return command(lambda: "x")()


def test_retry_counted_attempts_and_retries_counts_retries() -> None:
    with pytest.deprecated_call():
        cmd = command(retry=3)(lambda: "x")
    assert cmd.spec.options["retries"] == 2
    with pytest.deprecated_call():
        assert command(retry=1)(lambda: "x").spec.options["retries"] == 0
    with pytest.deprecated_call():
        assert "retries" not in command(retry=None)(lambda: "x").spec.options


def test_retry_that_is_not_a_number_of_attempts_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"'retry' in @command.*retries="):
        command(retry="3")(lambda: "x")


def test_both_spellings_at_once_are_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"both retry= and retries=.*keep only retries="):
        command(retry=3, retries=1)(lambda: "x")
    with pytest.raises(ConfigurationError, match="both default_system= and system="):
        configure(default_system="a", system="b")


def test_retry_on_is_refused_naming_what_replaces_it() -> None:
    with pytest.raises(ConfigurationError, match=r"retry_on=.*retries=.*max_reasks=") as caught:
        command(retry_on=ValueError)(lambda: "x")
    assert "Unknown option" not in str(caught.value)


def test_retry_on_none_only_warns() -> None:
    with pytest.deprecated_call(match="retry_on= .* does nothing"):
        command(retry_on=None)(lambda: "x")


@pytest.mark.parametrize(
    ("key", "replacement"),
    [
        ("openai_tool_choice", '"tool_choice"'),
        ("anthropic_tool_choice", '"tool_choice"'),
        ("anthropic_disable_parallel_tool_use", '"disable_parallel_tool_use": true'),
        ("gemini_tool_choice", '"functionCallingConfig"'),
        ("gemini_allowed_tools", '"allowedFunctionNames"'),
        ("ollama_api", "openai-chat:<model>"),
        ("ollama_tool_choice", "openai-chat:<model>"),
    ],
)
def test_alloy_ai_extra_keys_are_refused_naming_the_replacement(
    key: str, replacement: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigurationError, match=key) as caught:
        configure(extra_json={key: "auto"})
    assert replacement in str(caught.value)
    with pytest.deprecated_call(), pytest.raises(ConfigurationError, match=f"{key}.*extra="):
        configure(extra={key: "auto"})
    monkeypatch.setenv("ALLOY_EXTRA_JSON", f'{{"{key}": "auto"}}')
    with pytest.raises(ConfigurationError, match=f"{key}.*ALLOY_EXTRA_JSON"):
        command(lambda: "x", model="offline")()
