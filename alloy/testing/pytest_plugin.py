"""pytest fixtures for alloy's provider emulator (registered as the ``alloy`` pytest11 plugin).

* ``alloy_emulator``: the emulator, started once per session and reset (queues and request log
  emptied) before each test.  Script it with ``push()``, read ``requests`` back.
* ``alloy_emulator_env``: the same emulator, with every variable of every registered provider's
  families cleared (``OPENAI_*``, ``ANTHROPIC_*``, ``GOOGLE_*``, ``GEMINI_*``, ``OLLAMA_*``, and
  those of providers you registered) and each provider's base-URL and dummy-key variables
  pointing at it, so clients built with no arguments talk to it.
* ``alloy_emulator_session``: the session-wide server itself, without the per-test reset.
* ``--alloy-force-model=MODEL`` (or ``alloy_force_model = MODEL`` in the ini file): every
  command of the run uses MODEL, such as ``offline``, whatever the code names; it sets
  ``ALLOY_FORCE_MODEL`` for the run, so subprocesses the tests start use it too.
* ``alloy_loopback_only``: opt in to keep a test on this machine: any connect to an address
  other than 127.0.0.1 (where the emulator listens), or name lookup of any host, raises
  :class:`~alloy.testing.NetworkBlocked`, and the test fails even if an SDK swallowed that
  error. Make it ``autouse`` in your ``conftest.py`` to cover a whole suite.

The server is shared because starting one per test would cost a port and a thread each time;
the per-test reset keeps tests independent anyway.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Union

import pytest

from alloy._config import check_forced_model
from alloy.errors import ConfigurationError
from alloy.providers import env_prefixes
from alloy.testing import NetworkBlocked, loopback_only
from alloy.testing.emulator import Emulator

_FORCED = "ALLOY_FORCE_MODEL"
_before_run = pytest.StashKey[Union[str, None]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("alloy").addoption(
        "--alloy-force-model",
        metavar="MODEL",
        default=None,
        help="use MODEL (such as 'offline') for every alloy command, whatever the code names",
    )
    parser.addini("alloy_force_model", "model every alloy command uses (see --alloy-force-model)")


def pytest_configure(config: pytest.Config) -> None:
    model = config.getoption("--alloy-force-model") or config.getini("alloy_force_model")
    if not model:
        return
    try:
        check_forced_model(model, "--alloy-force-model")
    except ConfigurationError as error:
        raise pytest.UsageError(str(error)) from None
    config.stash[_before_run] = os.environ.get(_FORCED)
    os.environ[_FORCED] = model


def pytest_unconfigure(config: pytest.Config) -> None:
    if _before_run not in config.stash:
        return
    before = config.stash[_before_run]
    if before is None:
        os.environ.pop(_FORCED, None)
    else:
        os.environ[_FORCED] = before


@pytest.fixture(scope="session")
def alloy_emulator_session() -> Iterator[Emulator]:
    """One running emulator for the whole test session, stopped at the end."""
    with Emulator() as emulator:
        yield emulator


@pytest.fixture
def alloy_emulator(alloy_emulator_session: Emulator) -> Iterator[Emulator]:
    """The session emulator with an empty script and an empty request log."""
    alloy_emulator_session.reset()
    yield alloy_emulator_session
    alloy_emulator_session.reset()


@pytest.fixture
def alloy_emulator_env(alloy_emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> Emulator:
    """The emulator, with the SDKs' environment variables pointing at it (and nothing else).

    Variables such as ``GOOGLE_GENAI_USE_VERTEXAI`` or ``OPENAI_CUSTOM_HEADERS`` would change
    what the SDKs send, so every variable with a provider prefix is removed first.
    """
    prefixes = env_prefixes()
    for name in list(os.environ):
        if name.startswith(prefixes):
            monkeypatch.delenv(name, raising=False)
    for name, value in alloy_emulator.env().items():
        monkeypatch.setenv(name, value)
    return alloy_emulator


@pytest.fixture
def alloy_loopback_only() -> Iterator[list[NetworkBlocked]]:
    """Only loopback connects during the test; yields what was blocked.

    SDKs wrap connection failures in their own errors (and alloy drops their causes so that no
    key travels with them), so a blocked attempt also fails the test when it ends.
    """
    with loopback_only() as blocked:
        yield blocked
    if blocked:
        pytest.fail(f"{len(blocked)} blocked network attempt(s); first: {blocked[0]}")
