"""The pytest fixtures: per-test reset, and SDK clients configured by environment alone."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import anthropic
import ollama
import openai
import pytest
from google import genai

from alloy.testing.emulator import DEFAULT_TEXT, Emulator, ReplyText

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def polluted_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Variables that would change what the SDKs send, set before the env fixture runs."""
    monkeypatch.setenv("OPENAI_CUSTOM_HEADERS", "x-leak: 1")
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GEMINI_API_KEY", "real-looking-key")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "t")
    monkeypatch.setenv("OLLAMA_API_KEY", "o")


def test_env_fixture_points_every_sdk_here(
    polluted_env: None, alloy_emulator_env: Emulator
) -> None:
    for name in (
        "OPENAI_CUSTOM_HEADERS",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GEMINI_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OLLAMA_API_KEY",
    ):
        assert name not in os.environ
    assert os.environ["OPENAI_BASE_URL"] == alloy_emulator_env.openai_base_url
    assert openai.OpenAI().responses.create(model="gpt-4o", input="x").output_text == DEFAULT_TEXT
    message = anthropic.Anthropic().messages.create(
        model="claude-haiku-4-5", max_tokens=5, messages=[{"role": "user", "content": "x"}]
    )
    assert message.content[0].text == DEFAULT_TEXT
    client = genai.Client()
    assert (
        client.models.generate_content(model="gemini-2.5-flash", contents="x").text == DEFAULT_TEXT
    )
    chat = ollama.Client().chat(model="llama3.2", messages=[{"role": "user", "content": "x"}])
    assert chat.message.content == DEFAULT_TEXT
    assert [r.provider for r in alloy_emulator_env.requests] == [
        "openai",
        "anthropic",
        "gemini",
        "ollama",
    ]
    sent_openai, _, _, sent_ollama = alloy_emulator_env.requests
    assert sent_openai.header("x-leak") is None  # OPENAI_CUSTOM_HEADERS was cleared
    assert sent_ollama.header("authorization") is None  # so was OLLAMA_API_KEY


def test_reset_between_tests_part_one(alloy_emulator: Emulator) -> None:
    alloy_emulator.push("openai", ReplyText("left over"))
    openai.OpenAI(base_url=alloy_emulator.openai_base_url, api_key="k").models.list()
    assert alloy_emulator.requests


def test_reset_between_tests_part_two(alloy_emulator: Emulator) -> None:
    assert alloy_emulator.requests == [] and alloy_emulator.pending("openai") == []


@pytest.mark.skipif(
    not any(ep.value == "alloy.testing.pytest_plugin" for ep in entry_points(group="pytest11")),
    reason="alloy is not installed, so its pytest11 entry point is not registered",
)
def test_plugin_is_available_through_its_entry_point(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(
        textwrap.dedent("""
        import openai
        from alloy.testing.emulator import ReplyJson

        def test_user_code(alloy_emulator):
            alloy_emulator.push("openai", ReplyJson({"ok": True}))
            client = openai.OpenAI(base_url=alloy_emulator.openai_base_url, api_key="k")
            assert client.responses.create(model="m", input="x").output_text == '{"ok": true}'
    """)
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Json", "ReplyJson"),
        ("Text", "ReplyText"),
        ("ToolResult", "ReceivedToolResult"),
        ("Provider", "APIFamily"),
        ("Wire", "APIFamily"),
    ],
)
def test_old_reply_names_still_import_with_a_warning(old: str, new: str) -> None:
    import alloy.testing.emulator as emulator

    with pytest.warns(DeprecationWarning, match=rf"emulator\.{old} is now {new}"):
        value = getattr(emulator, old)
    assert value is getattr(emulator, new)
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        emulator.Nope
