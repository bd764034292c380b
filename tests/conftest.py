"""Shared fixtures: a clean configuration per test, and one fixture that runs a call under both drivers."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import alloy
import alloy.providers as registry
from alloy.providers import clear_model_cache, env_prefixes


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


@pytest.fixture
def fuzz_scale(request: pytest.FixtureRequest) -> int:
    """How many times larger than the suite's own size a fuzz run should be (1 in `make test`)."""
    return int(request.config.getoption("--fuzz-scale"))
