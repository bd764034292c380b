"""A real redis-server for the shared budget's tests (started once, as the cache's tests do)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..cache.redis_server import redis_server


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(str(tmp_path_factory.mktemp("redis"))) as url:
        yield url
