"""``alloy cache stats|clear|prune`` on the store ALLOY_CACHE (or --cache) names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alloy.cache._redis import RedisStore
from alloy.cache._sqlite import SQLiteStore
from alloy.cli import EXIT_USAGE, main

from .conftest import Clock


def filled(path: Path) -> SQLiteStore:
    store = SQLiteStore(path)
    store.put("live", b"12345", None)
    store.put("gone", b"123", 10)
    store.put("later", b"1", 3600)
    return store


def test_stats_counts_entries_and_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.sqlite"
    filled(path).close()
    assert main(["cache", "stats", "--cache", str(path), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["location"] == f"sqlite:///{path}"
    assert (stats["entries"], stats["expired"]) == (3, 0)
    assert stats["bytes"] == 9


def test_prune_removes_expired_entries_and_clear_removes_all(
    clock: Clock,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "r.sqlite"
    store = filled(path)
    clock.now += 11  # "gone" has expired
    monkeypatch.setenv("ALLOY_CACHE", f"sqlite:///{path}")
    assert main(["cache", "prune"]) == 0
    assert "removed 1 entries" in capsys.readouterr().out
    assert main(["cache", "stats"]) == 0
    assert "2 entries" in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0
    assert "removed 2 entries" in capsys.readouterr().out
    assert store.stats().entries == 0
    store.close()


def test_prune_keeps_the_newest_within_the_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.sqlite"
    store = SQLiteStore(path)
    for number in range(5):
        store.put(f"k{number}", b"x", None)
    monkeypatch.setenv("ALLOY_CACHE_MAX_ENTRIES", "2")
    assert main(["cache", "prune", "--cache", str(path)]) == 0
    assert "removed 3 entries" in capsys.readouterr().out
    assert store.stats().entries == 2
    store.close()


def test_the_redis_store_is_managed_the_same_way(
    redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = RedisStore(redis_url)
    store.clear()
    store.put("a", b"12", None)
    store.put("b", b"345", None)
    assert main(["cache", "stats", "--cache", redis_url, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert (stats["entries"], stats["bytes"]) == (2, 5)
    assert main(["cache", "clear", "--cache", redis_url]) == 0
    assert store.get("a") is None
    store.close()


def test_without_a_cache_the_command_says_how_to_name_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["cache", "stats"]) == EXIT_USAGE
    assert "ALLOY_CACHE" in capsys.readouterr().err


@pytest.mark.parametrize("action", ["stats", "clear", "prune"])
def test_a_cache_that_does_not_exist_is_reported_and_not_made(
    action: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["cache", action, "--cache", "typo.sqlite"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "no response cache exists at typo.sqlite" in err
    assert not (tmp_path / "typo.sqlite").exists() and list(tmp_path.iterdir()) == []


def test_a_cache_file_that_cannot_serve_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.sqlite"
    path.write_bytes(b"no database here\n" * 100)
    assert main(["cache", "stats", "--cache", str(path)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"the response cache at sqlite:///{path} cannot be used" in err
    assert "Traceback" not in err and err.count("\n") == 1
    assert path.read_bytes() == b"no database here\n" * 100
