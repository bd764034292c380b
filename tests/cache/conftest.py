"""What the cache tests share: a store per test, and the stores opened by calls closed after."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from alloy.cache import _sqlite, _store, close_stores

from .redis_server import redis_server


@pytest.fixture(autouse=True)
def _close_stores() -> Iterator[None]:
    """Calls open each store once per process; a test's store goes with the test."""
    yield
    close_stores()


@pytest.fixture
def cache_file(tmp_path: Path) -> Path:
    return tmp_path / "replies.sqlite"


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server for the session (see ``redis_server``)."""
    with redis_server(str(tmp_path_factory.mktemp("redis"))) as url:
        yield url


class Clock:
    """A stand-in for the time module the stores read expiry from: tests move it on."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(_store, "time", fake)
    monkeypatch.setattr(_sqlite, "time", fake)
    return fake
