"""The ``alloy`` command: each subcommand in-process through ``main([...])``, a few as a real process.

Every error path must end in exactly one line on stderr, a non-zero status (2 for usage and
configuration mistakes, 1 for failed calls) and no traceback.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from alloy import ParseError
from alloy._types import Request, Text, UserTurn
from alloy.cli import (
    PROVIDER_ENV,
    capability_matrix,
    load_command,
    main,
    provider_status,
)
from alloy.providers import providers
from alloy.testing import FunctionModel, override_model, script

from . import commands_for_cli as cmds

ROOT = Path(__file__).resolve().parents[2]
MODULE = "tests.cli.commands_for_cli"
FILE = str(Path(__file__).with_name("commands_for_cli.py"))
CANARY = "sk-canary-0123456789abcdefCANARY"


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOY_MODEL", "offline")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def assert_one_line_error(err: str) -> None:
    assert err.startswith("alloy: error: "), err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err


def prompt_of(request: Request) -> str:
    first = request.messages[0]
    assert isinstance(first, UserTurn)
    return "".join(p.text for p in first.parts if isinstance(p, Text))


def echo_model() -> FunctionModel:
    """Answers with the prompt it received, so tests can read the converted arguments."""
    return FunctionModel(prompt_of)


# -- alloy run ----------------------------------------------------------------------------------


def test_run_prints_the_typed_result_as_json(capsys: Any, offline: None) -> None:
    status, out, err = run_cli(capsys, "run", f"{MODULE}:summarize", "--text", "a long text")
    assert status == 0, err
    value = json.loads(out)
    assert set(value) == {"title", "words", "tags"}
    assert isinstance(value["words"], int)
    assert out.startswith("{\n  "), "indented by 2"


def test_run_primitive_and_text_results_are_json(capsys: Any, offline: None) -> None:
    status, out, _ = run_cli(capsys, "run", f"{MODULE}:add", "--a", "1", "--b", "2")
    assert status == 0
    assert isinstance(json.loads(out), int)
    status, out, _ = run_cli(capsys, "run", f"{MODULE}:echo", "--text", "hi")
    assert status == 0
    assert isinstance(json.loads(out), str)


def test_run_converts_each_argument_by_its_type(capsys: Any) -> None:
    with override_model(echo_model()):
        status, out, err = run_cli(
            capsys,
            "run",
            f"{MODULE}:echo",
            "--text",
            "hello there",
            "--times",
            "3",
            "--loud",
            "--color",
            "green",
            "--ratio",
            "0.25",
            "--tags",
            '["a", "b"]',
            "--point",
            '{"x": 1, "y": 2}',
        )
    assert status == 0, err
    assert json.loads(out) == (
        "text=hello there times=3 loud=True color=green ratio=0.25 tags=['a', 'b'] "
        "point=Point(x=1, y=2)"
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), "loud=False"),
        (("--loud",), "loud=True"),
        (("--loud", "false"), "loud=False"),
        (("--loud", "yes"), "loud=True"),
        (("--no-loud",), "loud=False"),
    ],
)
def test_run_bool_flags(capsys: Any, args: tuple[str, ...], expected: str) -> None:
    with override_model(echo_model()):
        status, out, _ = run_cli(capsys, "run", f"{MODULE}:echo", "--text", "x", *args)
    assert status == 0
    assert expected in json.loads(out)


def test_run_optional_json_null(capsys: Any) -> None:
    with override_model(echo_model()):
        status, out, _ = run_cli(capsys, "run", f"{MODULE}:echo", "--text", "x", "--tags", "null")
    assert status == 0
    assert "tags=None" in json.loads(out)


def test_run_async_command(capsys: Any, offline: None) -> None:
    status, out, _ = run_cli(capsys, "run", f"{MODULE}:is_long", "--text", "abc")
    assert status == 0
    assert isinstance(json.loads(out), bool)


def test_run_from_a_file_path(capsys: Any, offline: None) -> None:
    status, out, err = run_cli(capsys, "run", f"{FILE}:add", "--a", "1", "--b", "2")
    assert status == 0, err
    assert isinstance(json.loads(out), int)


def test_run_options_reach_the_request(capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    model = FunctionModel(lambda request: '{"value": 3}')
    with override_model(model):
        status, _, err = run_cli(
            capsys,
            "run",
            f"{MODULE}:add",
            "--a",
            "1",
            "--b",
            "2",
            "--temperature",
            "0.3",
            "--max-tokens",
            "77",
        )
    assert status == 0, err
    settings = model.requests[0].settings
    assert (settings.temperature, settings.max_tokens) == (0.3, 77)


def test_run_model_option_before_or_after_the_target(capsys: Any) -> None:
    for argv in (
        ("run", "--model", "offline", f"{MODULE}:add", "--a", "1", "--b", "2"),
        ("run", f"{MODULE}:add", "--a", "1", "--b", "2", "--model", "offline"),
    ):
        status, out, err = run_cli(capsys, *argv)
        assert status == 0, err
        assert isinstance(json.loads(out), int)


def test_run_help_lists_the_command_arguments(capsys: Any) -> None:
    status, out, _ = run_cli(capsys, "run", f"{MODULE}:summarize", "--help")
    assert status == 0
    assert "--text" in out and "--max-words" in out
    assert "The text to summarize." in out
    assert "default: 50" in out


# -- error paths --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (("run", "tests.cli.no_such_module:add"), "cannot import 'tests.cli.no_such_module'"),
        (("run", f"{MODULE}:no_such_attr"), "has no attribute 'no_such_attr'"),
        (("run", f"{MODULE}:not_a_command"), "is not an alloy command"),
        (("run", "no_colon_here"), "expected module:command"),
        (("run", "tests/cli/missing_file.py:add"), "no such file"),
        (("run", f"{MODULE}:add", "--a", "1", "--b", "two"), "argument --b: expected int"),
        (("run", f"{MODULE}:add", "--a", "1.5", "--b", "2"), "argument --a: expected int"),
        (("run", f"{MODULE}:echo", "--text", "x", "--color", "blue"), "argument --color"),
        (("run", f"{MODULE}:echo", "--text", "x", "--point", '{"x": 1}'), "point"),
        (("run", f"{MODULE}:add", "--a", "1"), "required: --b"),
        (("run", f"{MODULE}:add", "--a", "1", "--b", "2", "--c", "3"), "unrecognized"),
        (("run", f"{MODULE}:add", "--a", "1", "--b", "2", "--temperature", "9"), "temperature"),
        (("schema", f"{MODULE}:echo"), "has no output schema"),
        (("schema", f"{MODULE}:add", "--provider", "nobody"), "unknown provider 'nobody'"),
        (("frobnicate",), "invalid choice"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    capsys: Any, offline: None, argv: tuple[str, ...], fragment: str
) -> None:
    status, out, err = run_cli(capsys, *argv)
    assert status == 2
    assert out == ""
    assert_one_line_error(err)
    assert fragment in err


def test_missing_model_configuration_exits_2(capsys: Any) -> None:
    status, _, err = run_cli(capsys, "run", f"{MODULE}:add", "--a", "1", "--b", "2")
    assert status == 2
    assert_one_line_error(err)
    assert "ConfigurationError" in err and "ALLOY_MODEL" in err


def test_missing_key_exits_2_naming_the_variable(capsys: Any) -> None:
    status, _, err = run_cli(
        capsys, "run", "--model", "openai:gpt-5-mini", f"{MODULE}:add", "--a", "1", "--b", "2"
    )
    assert status == 2
    assert_one_line_error(err)
    assert "OPENAI_API_KEY" in err


def test_bad_environment_value_exits_2(capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOY_MODEL", "offline")
    monkeypatch.setenv("ALLOY_TEMPERATURE", "hot")
    status, _, err = run_cli(capsys, "run", f"{MODULE}:add", "--a", "1", "--b", "2")
    assert status == 2
    assert_one_line_error(err)
    assert "ALLOY_TEMPERATURE" in err


def test_failed_call_exits_1(capsys: Any) -> None:
    never_a_number = script('{"value": "no idea"}', '{"value": "still no idea"}')
    with override_model(never_a_number):
        status, out, err = run_cli(capsys, "run", f"{MODULE}:add", "--a", "1", "--b", "2")
    assert status == 1
    assert out == ""
    assert_one_line_error(err)
    assert ParseError.__name__ in err and "'add'" in err


def test_failing_prompt_function_exits_1(capsys: Any, offline: None) -> None:
    status, _, err = run_cli(capsys, "run", f"{MODULE}:broken", "--text", "x")
    assert status == 1
    assert_one_line_error(err)
    assert "ValueError: the prompt function failed" in err


def test_provider_failure_never_shows_the_key(capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    emulator = pytest.importorskip("alloy.testing.emulator")
    with emulator.Emulator() as emu:
        for name, value in emu.env(api_key=CANARY).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("ALLOY_RETRY", "0")
        emu.push("openai", emulator.Unauthorized())
        status, out, err = run_cli(
            capsys, "run", "--model", "openai:gpt-5-mini", f"{MODULE}:add", "--a", "1", "--b", "2"
        )
        assert emu.requests, "the call reached the emulator"
    assert status == 1
    assert_one_line_error(err)
    assert "AuthenticationError" in err
    assert CANARY not in out + err


# -- alloy schema -------------------------------------------------------------------------------


def test_schema_is_the_canonical_schema_by_default(capsys: Any) -> None:
    status, out, _ = run_cli(capsys, "schema", f"{MODULE}:summarize")
    assert status == 0
    assert json.loads(out) == cmds.summarize.schema


def test_schema_wraps_primitives(capsys: Any) -> None:
    status, out, _ = run_cli(capsys, "schema", f"{FILE}:add")
    assert status == 0
    assert json.loads(out)["properties"] == {"value": {"type": "integer"}}


@pytest.mark.parametrize("provider", sorted(providers()))
def test_schema_per_provider_is_the_dialect_functions_output(capsys: Any, provider: str) -> None:
    status, out, err = run_cli(capsys, "schema", f"{MODULE}:summarize", "--provider", provider)
    schema = cmds.summarize.schema
    try:
        dialect = providers()[provider].load_dialect()
        expected = schema if dialect is None else dialect(schema, "")
    except ImportError:  # the adapter module holding the dialect is missing
        assert status == 2
        assert_one_line_error(err)
        assert "not available" in err
        return
    assert status == 0, err
    assert json.loads(out) == expected


def test_schema_for_a_specific_model(capsys: Any) -> None:
    gemini = pytest.importorskip("alloy.providers.gemini")
    status, out, _ = run_cli(
        capsys, "schema", f"{MODULE}:summarize", "--provider", "gemini:gemini-2.0-flash"
    )
    assert status == 0
    schema = json.loads(out)
    assert gemini.needs_property_ordering("gemini-2.0-flash")
    assert schema["propertyOrdering"] == ["title", "words", "tags"]


def test_the_old_provider_env_table_reads_the_descriptors() -> None:
    assert {name: p.key_env + p.base_url_env for name, p in providers().items()} == PROVIDER_ENV
    assert PROVIDER_ENV["gemini"] == ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL")


# -- alloy providers ----------------------------------------------------------------------------


def test_providers_reports_keys_as_set_without_printing_them(
    capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variables in PROVIDER_ENV.values():
        for name in variables:
            monkeypatch.setenv(name, CANARY)
    status, out, err = run_cli(capsys, "providers")
    assert status == 0, err
    assert CANARY not in out + err
    assert "OPENAI_API_KEY set" in out and "ANTHROPIC_API_KEY set" in out
    for name in providers():
        assert name in out


def test_providers_reports_unset_keys(capsys: Any) -> None:
    status, out, _ = run_cli(capsys, "providers")
    assert status == 0
    assert "OPENAI_API_KEY not set" in out
    assert "no model configured" in out


def test_providers_json(capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", CANARY)
    monkeypatch.setenv("ALLOY_MODEL", "offline")
    status, out, _ = run_cli(capsys, "providers", "--json")
    assert status == 0
    assert CANARY not in out
    data = json.loads(out)
    assert data["model"] == "ALLOY_MODEL=offline"
    rows = {row["provider"]: row for row in data["providers"]}
    assert rows["gemini"]["env"] == {
        "GEMINI_API_KEY": True,
        "GOOGLE_API_KEY": False,
        "GOOGLE_GEMINI_BASE_URL": False,
    }
    assert rows["offline"]["sdk"] is None and rows["offline"]["adapter"] is True
    assert rows == {row["provider"]: row for row in provider_status()}


def test_providers_imports_no_sdk() -> None:
    code = (
        "import sys; from alloy.cli import main; main(['providers']); "
        "loaded = [m for m in ('openai', 'anthropic', 'google.genai', 'ollama') if m in sys.modules]; "
        "print(loaded)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_providers_capabilities_prints_the_matrix(capsys: Any) -> None:
    status, out, _ = run_cli(capsys, "providers", "--capabilities")
    assert status == 0
    assert out.strip() == capability_matrix()
    assert "| `offline` |" in out


def test_load_command_returns_the_command() -> None:
    assert load_command(f"{MODULE}:summarize") is cmds.summarize


def test_version_and_help(capsys: Any) -> None:
    status, out, _ = run_cli(capsys, "--version")
    assert status == 0 and out.startswith("alloy ")
    status, out, _ = run_cli(capsys, "--help")
    assert status == 0
    for sub in ("run", "schema", "providers", "emulate"):
        assert sub in out


# -- as a real process ---------------------------------------------------------------------------


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ALLOY_", "OPENAI_"))}
    env.update({"ALLOY_NO_DOTENV": "1", "PYTHONPATH": str(ROOT)}, **extra)
    return env


def _alloy(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "alloy", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_env(**env),
        timeout=120,
    )


def test_python_m_alloy_run() -> None:
    done = _alloy("run", f"{MODULE}:summarize", "--text", "hello", ALLOY_MODEL="offline")
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout)) == {"title", "words", "tags"}


def test_python_m_alloy_errors_without_traceback() -> None:
    done = _alloy("run", "tests.cli.no_such_module:add")
    assert done.returncode == 2
    assert_one_line_error(done.stderr)
    done = _alloy("run", f"{MODULE}:add", "--a", "1", "--b", "2")
    assert done.returncode == 2
    assert_one_line_error(done.stderr)
    assert "ALLOY_MODEL" in done.stderr


def test_python_m_alloy_version() -> None:
    done = _alloy("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("alloy ")


def test_alloy_emulate_serves_until_terminated() -> None:
    pytest.importorskip("alloy.testing.emulator")
    process = subprocess.Popen(
        [sys.executable, "-m", "alloy", "emulate", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=_env(),
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert banner.startswith("alloy emulator listening on http://127.0.0.1:")
        url = banner.split()[-1]
        import urllib.request

        with urllib.request.urlopen(f"{url}/api/tags", timeout=10) as response:
            assert response.status == 200
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "Traceback" not in err
