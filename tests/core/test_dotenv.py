"""The ``.env`` file: read once into the environment, and any file it cannot use is named.

A broken ``.env`` is a ConfigurationError naming the file and the line, never a raw decoding
error, and never one that shows a value from the file: it may hold a provider key.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import alloy
from alloy import ConfigurationError, command
from alloy._config import resolve

SECRET = "sk-do-not-show-1234"


@command(output=int)
def number() -> str:
    return "a number"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working directory whose ``.env`` alloy reads; what it puts in os.environ is removed after."""
    monkeypatch.delenv("ALLOY_NO_DOTENV")
    monkeypatch.chdir(tmp_path)
    before = set(os.environ)
    alloy.reset_configuration()
    yield tmp_path
    for name in set(os.environ) - before:
        del os.environ[name]


def write_env(directory: Path, content: bytes) -> Path:
    path = directory / ".env"
    path.write_bytes(content)
    return path


def refusal(*, match: str | None = None) -> Any:
    return pytest.raises(ConfigurationError, match=match)


def assert_names_line_without_values(error: BaseException, line: int) -> None:
    message = str(error)
    assert ".env" in message
    assert f"line {line}" in message
    assert SECRET not in message and "sk-" not in message


def test_a_file_that_is_not_utf8_names_the_file_and_the_line(workdir: Path) -> None:
    write_env(workdir, b"ALLOY_MODEL=offline\nOPENAI_API_KEY=" + SECRET.encode() + b"\xff\xfe\n")
    with refusal() as info:
        number()
    assert_names_line_without_values(info.value, 2)
    assert "UTF-8" in str(info.value)


def test_a_utf16_file_is_refused_at_its_first_line(workdir: Path) -> None:
    write_env(workdir, "ALLOY_MODEL=offline\n".encode("utf-16"))
    with refusal() as info:
        number()
    assert_names_line_without_values(info.value, 1)


def test_a_nul_byte_names_the_file_and_the_line(workdir: Path) -> None:
    write_env(workdir, b"ALLOY_MODEL=offline\n\nOPENAI_API_KEY=" + SECRET.encode() + b"\x00x\n")
    with refusal() as info:
        number()
    assert_names_line_without_values(info.value, 3)
    assert "NUL" in str(info.value)


def test_a_value_that_decodes_to_nul_names_the_variable_and_the_line(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dotenv

    write_env(workdir, b"ALLOY_MODEL=offline\nexport OPENAI_API_KEY='x'\n")

    def parsed_with_nul(**_: Any) -> dict[str, str | None]:
        return {"ALLOY_MODEL": "offline", "OPENAI_API_KEY": SECRET + "\x00"}

    monkeypatch.setattr(dotenv, "dotenv_values", parsed_with_nul)
    with refusal() as info:
        number()
    assert_names_line_without_values(info.value, 2)
    assert "OPENAI_API_KEY" in str(info.value)
    assert "OPENAI_API_KEY" not in os.environ


def test_an_escaped_nul_never_reaches_the_environment_raw(workdir: Path) -> None:
    write_env(workdir, b'ALLOY_MODEL=offline\nALLOY_SYSTEM="a\\x00b"\n')
    try:
        number()
    except ConfigurationError as error:
        assert "ALLOY_SYSTEM" in str(error) and "line 2" in str(error)
    else:
        assert "\x00" not in os.environ.get("ALLOY_SYSTEM", "")


def test_a_name_the_environment_cannot_hold_is_refused_with_its_line(workdir: Path) -> None:
    write_env(workdir, b"ALLOY_MODEL=offline\n'A=B'=" + SECRET.encode() + b"\n")
    with refusal() as info:
        number()
    assert_names_line_without_values(info.value, 2)


def test_a_directory_named_dotenv_is_not_a_dotenv_file(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workdir / ".env").mkdir()  # a virtualenv made with `python -m venv .env`, say
    monkeypatch.setenv("ALLOY_MODEL", "offline")
    assert isinstance(number(), int)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_a_file_without_read_permission_is_refused(workdir: Path) -> None:
    path = write_env(workdir, b"ALLOY_MODEL=offline\n")
    path.chmod(0)
    try:
        with refusal(match=r"\.env"):
            number()
    finally:
        path.chmod(0o600)


def test_a_broken_file_fails_every_call_until_it_is_fixed(workdir: Path) -> None:
    path = write_env(workdir, b"ALLOY_MODEL=offline\nX=\xff\n")
    for _ in range(2):
        with refusal(match=r"\.env"):
            number()
    path.write_bytes(b"ALLOY_MODEL=offline\n")
    assert isinstance(number(), int)


def test_variables_already_set_win_over_the_file(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALLOY_MAX_TOKENS", "5")
    write_env(workdir, b"ALLOY_MODEL=offline\nALLOY_MAX_TOKENS=77\n")
    assert isinstance(number(), int)
    assert resolve({}, {}).max_tokens == 5
    assert os.environ["ALLOY_MODEL"] == "offline"


def test_utf8_text_and_a_byte_order_mark_are_read(workdir: Path) -> None:
    content = "ALLOY_MAX_TOKENS=77\nALLOY_SYSTEM=Réponds en français.\nALLOY_MODEL=offline\n"
    write_env(workdir, content.encode("utf-8-sig"))
    assert isinstance(number(), int)
    config = resolve({}, {})
    assert (config.max_tokens, config.system) == (77, "Réponds en français.")


def test_alloy_no_dotenv_skips_even_a_broken_file(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_env(workdir, b"\xff\x00")
    monkeypatch.setenv("ALLOY_NO_DOTENV", "1")
    monkeypatch.setenv("ALLOY_MODEL", "offline")
    assert isinstance(number(), int)


def test_no_file_is_no_error(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOY_MODEL", "offline")
    assert isinstance(number(), int)


def test_a_bad_value_in_the_file_names_its_variable(workdir: Path) -> None:
    write_env(workdir, b"ALLOY_MODEL=offline\nALLOY_TIMEOUT=nan\n")
    with refusal(match="ALLOY_TIMEOUT"):
        number()


@pytest.mark.parametrize(
    ("flag", "reads"), [("0", True), ("false", True), ("", True), ("1", False), ("yes", False)]
)
def test_alloy_no_dotenv_is_a_flag(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, flag: str, reads: bool
) -> None:
    write_env(workdir, b"ALLOY_MAX_TOKENS=77\n")
    monkeypatch.setenv("ALLOY_NO_DOTENV", flag)
    monkeypatch.setenv("ALLOY_MODEL", "offline")
    assert isinstance(number(), int)
    assert (os.environ.get("ALLOY_MAX_TOKENS") == "77") is reads


def test_alloy_no_dotenv_that_is_no_flag_is_refused(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALLOY_NO_DOTENV", "sometimes")
    with refusal(match="ALLOY_NO_DOTENV must be true or false"):
        number()
