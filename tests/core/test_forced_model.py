"""A model forced on every command from outside the code: ``ALLOY_FORCE_MODEL``, alloy-ai's
``ALLOY_BACKEND=fake``, and the pytest plugin's ``--alloy-force-model``.

Examples, docs and test suites that name a model in code must run offline in CI unedited, so the
forced model wins over every layer that code can set; only ``override_model()`` (a test's own,
narrower choice) wins over it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from alloy import ConfigurationError, command, configure, use_config
from alloy.testing import override_model, script

ROOT = Path(__file__).resolve().parents[2]


@command(output=int, model="anthropic:claude-sonnet-4-5", api_key="k", base_url="http://x")
def count(text: str) -> str:
    return f"Count the words in {text!r}"


def test_the_forced_model_wins_over_every_layer_code_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOY_MODEL", "openai:gpt-5-mini")
    monkeypatch.setenv("ALLOY_FORCE_MODEL", "offline")
    configure(model="gemini:gemini-2.5-flash")
    with use_config(model="ollama:llama3.2"):
        assert count.run("a b").model == "offline"
        assert count.with_options(model="openai:gpt-4.1").run("a b").model == "offline"


def test_override_model_wins_over_the_forced_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOY_FORCE_MODEL", "offline")
    with override_model(script('{"value": 2}')):
        assert count("a b") == 2


def test_setting_and_clearing_the_variable_takes_effect_on_the_next_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @command(model="offline:first")
    def hello() -> str:
        return "Say hello"

    assert hello.run().model == "offline:first"
    monkeypatch.setenv("ALLOY_FORCE_MODEL", "offline:second")
    assert hello.run().model == "offline:second"
    monkeypatch.setenv("ALLOY_FORCE_MODEL", " ")
    assert hello.run().model == "offline:first"


def test_a_bad_forced_model_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOY_FORCE_MODEL", "nosuchprovider:model")
    with pytest.raises(ConfigurationError, match="ALLOY_FORCE_MODEL"):
        count("a b")


def test_alloy_ai_backend_fake_forces_the_offline_model_with_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ALLOY_BACKEND", "fake")
    with pytest.deprecated_call(match="ALLOY_BACKEND=fake.*use ALLOY_FORCE_MODEL=offline"):
        assert count.run("a b").model == "offline"


def test_alloy_force_model_wins_over_alloy_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOY_BACKEND", "fake")
    monkeypatch.setenv("ALLOY_FORCE_MODEL", "offline:chosen")
    assert count.run("a b").model == "offline:chosen"


def test_another_alloy_backend_is_refused_naming_the_replacement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ALLOY_BACKEND", "openai")
    with pytest.raises(
        ConfigurationError, match=r"ALLOY_BACKEND='openai'.*ALLOY_MODEL.*FORCE_MODEL"
    ):
        count("a b")


# -- the pytest plugin ------------------------------------------------------------------------------

SUITE = """
from alloy import command


@command(output=int, model="openai:gpt-5-mini")
def count(text: str) -> str:
    return f"Count the words in {text!r}"


def test_runs_offline():
    assert count.run("a b").model == "offline"
"""


def run_pytest(tmp_path: Path, *args: str, ini: str = "") -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_suite.py").write_text(textwrap.dedent(SUITE))
    (tmp_path / "pytest.ini").write_text(f"[pytest]\n{ini}\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "ALLOY_NO_DOTENV": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_plugin_option_forces_a_model_for_the_whole_run(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, "--alloy-force-model=offline")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_ini_option_forces_a_model_for_the_whole_run(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, ini="alloy_force_model = offline")
    assert done.returncode == 0, done.stdout + done.stderr


def test_without_the_option_the_model_in_the_code_is_used(tmp_path: Path) -> None:
    done = run_pytest(tmp_path)
    assert done.returncode == 1
    assert "OpenAI API key" in done.stdout


def test_a_bad_plugin_option_is_a_usage_error(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, "--alloy-force-model=nosuchprovider:model")
    assert done.returncode == 4  # pytest's usage error
    assert "--alloy-force-model" in done.stderr
