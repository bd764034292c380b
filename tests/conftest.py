"""Shared fixtures: a clean configuration and loopback-only network per test, the emulator
(``emu``), recorded retry waits (``sleeps``), and fixtures that run a call under both drivers.
"""

from __future__ import annotations

import asyncio
import os
import signal
import ssl
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import alloy
import alloy.providers as registry
from alloy.providers import clear_model_cache, env_prefixes
from alloy.testing import NetworkBlocked, recorded_waits
from alloy.testing.emulator import Emulator


def pytest_configure(config: pytest.Config) -> None:
    """The plugin's fixtures, also when alloy is not installed through its pytest11 entry point."""
    if not config.pluginmanager.has_plugin("alloy"):
        config.pluginmanager.import_plugin("alloy.testing.pytest_plugin")
    _load_certificates_when_first_used()


_DEFERRED = "_tests_deferred_verify_locations"
_load_verify_locations = ssl.SSLContext.load_verify_locations


def _load_certificates_when_first_used() -> None:
    """Every SDK client builds a TLS context and loads the public CA bundle into it (certifi's
    ~150 certificates, 40-80 ms a client): the suite builds thousands of clients that only ever
    speak plain HTTP to the emulator on 127.0.0.1, and this was a fifth of the key-leak
    matrix's time. A context loads its certificates when it is first used for TLS instead, so a
    test that does use TLS sees them as before."""

    def deferred(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        self.__dict__.setdefault(_DEFERRED, []).append((args, kwargs))

    def load_first(method: Callable[..., Any]) -> Callable[..., Any]:
        def loaded(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> Any:
            for pending_args, pending_kwargs in self.__dict__.pop(_DEFERRED, ()):
                _load_verify_locations(self, *pending_args, **pending_kwargs)
            return method(self, *args, **kwargs)

        return loaded

    ssl.SSLContext.load_verify_locations = deferred  # type: ignore[method-assign]
    for name in ("wrap_socket", "wrap_bio", "get_ca_certs", "cert_store_stats"):
        setattr(ssl.SSLContext, name, load_first(getattr(ssl.SSLContext, name)))


@pytest.fixture(autouse=True)
def _clean_configuration(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No ALLOY_*/provider variable, configure() state, cached client or registered provider leaks."""
    prefixes = ("ALLOY_", *env_prefixes())  # every registered provider's variable families
    for name in list(os.environ):
        if name.startswith(prefixes):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ALLOY_NO_DOTENV", "1")
    # Providers a test registers are gone after it.
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    alloy.reset_configuration()
    clear_model_cache()
    yield
    alloy.reset_configuration()
    clear_model_cache()


@pytest.fixture(autouse=True)
def _sigint_reaches_children() -> None:
    """Each test starts with SIGINT unblocked and handled by Python. A library a test drives
    may leave it ignored or blocked below Python (Ray's core worker, once initialised), which
    ``signal.getsignal`` does not show, and a child inherits both: a later test's Ctrl-C to its
    subprocess (``alloy map``, the emulator's command line) would then do nothing."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.fixture(autouse=True)
def _loopback_only(alloy_loopback_only: list[NetworkBlocked]) -> None:
    """No test reaches past 127.0.0.1: a real provider is never called, nor its name resolved."""


@pytest.fixture
def emu(
    request: pytest.FixtureRequest, alloy_emulator_env: Emulator, monkeypatch: pytest.MonkeyPatch
) -> Emulator:
    """The session's emulator, reset for the test, with every provider's SDK pointed at it.

    A test that needs other variables (another key, or none) parametrizes this fixture with
    them, ``None`` removing one: ``@pytest.mark.parametrize("emu", [{"OPENAI_API_KEY": None}],
    indirect=True)``.
    """
    variables: dict[str, str | None] = getattr(request, "param", {})
    for name, value in variables.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    return alloy_emulator_env


@pytest.fixture
def sleeps() -> Iterator[list[float]]:
    """The waits before retries, in seconds, recorded instead of slept (both drivers)."""
    with recorded_waits() as waits:
        yield waits


Call = Callable[..., Any]


@pytest.fixture(params=["sync", "async"])
def call(request: pytest.FixtureRequest) -> Call:
    """``call(cmd, *args)`` runs the command through the sync or the async driver."""

    def run(cmd: Any, *args: Any, **kwargs: Any) -> Any:
        if request.param == "sync":
            return cmd(*args, **kwargs)
        return asyncio.run(cmd.acall(*args, **kwargs))

    run.mode = request.param  # type: ignore[attr-defined]
    return run


@pytest.fixture(params=["sync", "async"])
def run_result(request: pytest.FixtureRequest) -> Call:
    """``run_result(cmd, *args)`` returns the full Result, through either driver."""

    def run(cmd: Any, *args: Any, **kwargs: Any) -> Any:
        if request.param == "sync":
            return cmd.run(*args, **kwargs)
        return asyncio.run(cmd.arun(*args, **kwargs))

    return run


@pytest.fixture(params=["sync", "async"])
def stream(request: pytest.FixtureRequest) -> Call:
    """``stream(cmd, *args)`` collects a command's text chunks through ``stream`` or ``astream``."""

    def collect(cmd: Any, *args: Any, **kwargs: Any) -> list[str]:
        if request.param == "sync":
            return list(cmd.stream(*args, **kwargs))

        async def gather() -> list[str]:
            return [chunk async for chunk in cmd.astream(*args, **kwargs)]

        return asyncio.run(gather())

    return collect


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fuzz-scale",
        type=int,
        default=1,
        help="multiplier for the size of @pytest.mark.fuzz runs (make fuzz uses 50)",
    )


#: Files handed out once the files holding half the suite's tests are out. The Makefile runs
#: xdist with ``--dist loadfile --no-loadscope-reorder``, so it hands files out in the order
#: :func:`order_files` gives: its own order (the files with the most tests first), but for
#: these. tests/scale/test_ray.py has four tests and a minute of Ray processes: in xdist's
#: order it came last and ran alone while three workers waited; first, it started beside the
#: heaviest files, and on a busy machine one of its tests hit its timeout.
MIDWAY_FILES = ("tests/scale/test_ray.py",)


def order_files(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` file by file, the files with the most tests first (ties in collection order),
    and :data:`MIDWAY_FILES` where half of the tests come before them."""
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.partition("::")[0], []).append(item)
    midway = [tests for path, tests in files.items() if path in MIDWAY_FILES]
    order = sorted(
        (tests for path, tests in files.items() if path not in MIDWAY_FILES),
        key=len,
        reverse=True,
    )
    ordered: list[pytest.Item] = []
    for tests in order:
        if midway and len(ordered) >= len(items) / 2:
            ordered += [item for each in midway for item in each]
            midway = []
        ordered += tests
    return ordered + [item for each in midway for item in each]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Cells marked ``cross`` (a matrix run again on a provider sharing another's adapter, or a
    large count) run only under ``make fuzz`` (``--fuzz-scale`` above 1): the suite keeps the
    one cell per adapter, or the small honest count, that proves the same claim. Then the files
    are put in the order xdist hands them out (:func:`order_files`)."""
    if int(config.getoption("--fuzz-scale")) <= 1:
        crossed = [item for item in items if item.get_closest_marker("cross")]
        if crossed:
            config.hook.pytest_deselected(items=crossed)
            items[:] = [item for item in items if not item.get_closest_marker("cross")]
    items[:] = order_files(items)


@pytest.fixture
def fuzz_scale(request: pytest.FixtureRequest) -> int:
    """How many times larger than the suite's own size a fuzz run should be (1 in `make test`)."""
    return int(request.config.getoption("--fuzz-scale"))
