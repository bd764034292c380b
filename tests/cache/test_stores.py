"""The stores themselves: memory, one SQLite file (threads and processes at once), and a real
Redis server."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import alloy.cache
from alloy import ConfigurationError, command, use_config
from alloy.cache import MemoryStore, Store, _sqlite, new_store, open_store
from alloy.cache._redis import PREFIX, RedisStore
from alloy.cache._sqlite import SQLiteStore

from .conftest import Clock


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "memory":
        made: Store = MemoryStore()
    elif request.param == "sqlite":
        made = SQLiteStore(tmp_path / "replies.sqlite")
    else:
        made = RedisStore(request.getfixturevalue("redis_url"))
        made.clear()
    yield made
    made.close()


def test_a_store_keeps_replaces_and_clears_entries(store: Store) -> None:
    assert store.get("k1") is None
    store.put("k1", b"one", None)
    store.put("k2", b"\x00two\xff", None)
    store.put("k1", b"uno", None)
    assert (store.get("k1"), store.get("k2")) == (b"uno", b"\x00two\xff")
    stats = store.stats()
    assert (stats.entries, stats.bytes) == (2, len(b"uno") + len(b"\x00two\xff"))
    assert store.clear() == 2
    assert store.get("k1") is None and store.stats().entries == 0


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_entries_expire_and_prune_removes_them(kind: str, clock: Clock, tmp_path: Path) -> None:
    store = MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "r.sqlite")
    store.put("short", b"a", 10)
    store.put("long", b"b", 1000)
    store.put("forever", b"c", None)
    clock.now += 11
    assert store.get("short") is None and store.get("long") == b"b"
    assert (store.stats().entries, store.stats().expired) == (2, 1)
    assert store.prune() == 1
    assert store.stats().expired == 0
    store.close()


def test_redis_entries_expire_on_the_server(redis_url: str) -> None:
    store = RedisStore(redis_url)
    store.put("ttl", b"a", 30)
    import redis

    left = redis.Redis.from_url(redis_url).pttl(PREFIX + "ttl")
    assert 0 < left <= 30_000
    store.close()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_the_store_is_bounded_oldest_first(kind: str, clock: Clock, tmp_path: Path) -> None:
    store = MemoryStore(3) if kind == "memory" else SQLiteStore(tmp_path / "r.sqlite", 3)
    for number in range(5):
        clock.now += 1
        store.put(f"k{number}", str(number).encode(), None)
    assert [store.get(f"k{n}") for n in range(5)] == [None, None, b"2", b"3", b"4"]
    assert store.stats().entries == 3
    store.close()


def test_the_sqlite_file_is_in_wal_mode_with_a_busy_timeout(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.sqlite")
    store.put("k", b"v", None)
    connection = store._connection()
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("PRAGMA busy_timeout").fetchone()[0] == _sqlite.BUSY_TIMEOUT_MS
    store.close()


WRITES = 150


def _write_many(path: str, worker: int) -> None:
    store = SQLiteStore(path)
    for number in range(WRITES):
        key = f"w{worker}-{number}"
        store.put(key, key.encode() * 20, None)
        assert store.get(key) == key.encode() * 20
        store.get(f"w{(worker + 1) % 4}-{number}")  # reads of another writer's entries
    store.close()


def test_threads_and_processes_sharing_one_file_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    SQLiteStore(path).close()
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_write_many, args=(path, w)) for w in range(4)]
    threads = [threading.Thread(target=_write_many, args=(path, w)) for w in range(4, 8)]
    for worker in (*processes, *threads):
        worker.start()
    for worker in (*processes, *threads):
        worker.join(timeout=300)
    assert [p.exitcode for p in processes] == [0] * 4
    store = SQLiteStore(path)
    assert store.stats().entries == 8 * WRITES
    for worker in range(8):
        for number in range(WRITES):
            key = f"w{worker}-{number}"
            assert store.get(key) == key.encode() * 20
    store.close()
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_threads_share_one_store_of_a_shared_location(tmp_path: Path) -> None:
    location = f"sqlite:///{tmp_path / 'r.sqlite'}"
    stores = []
    errors: list[BaseException] = []

    def use(index: int) -> None:
        try:
            store = open_store(location)
            stores.append(store)
            for number in range(50):  # keyed by index: a finished thread's ident is reused
                store.put(f"{index}-{number}", b"x", None)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=use, args=(index,)) for index in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len({id(store) for store in stores}) == 1
    assert stores[0].stats().entries == 300


def test_a_location_names_its_store(tmp_path: Path) -> None:
    assert isinstance(new_store("memory"), MemoryStore)
    sqlite = new_store(f"sqlite:///{tmp_path / 'a.sqlite'}")
    assert isinstance(sqlite, SQLiteStore) and sqlite.path == tmp_path / "a.sqlite"
    plain = new_store(str(tmp_path / "deeper" / "b.sqlite"))
    assert isinstance(plain, SQLiteStore) and plain.path.parent.is_dir()
    sqlite.close()
    plain.close()


def test_a_cache_file_that_cannot_be_made_is_a_miss_and_in_replay_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")

    @command(output=int, model="offline", temperature=0)
    def number() -> str:
        return "a number"

    location = str(blocker / "r.sqlite")
    with use_config(cache=location):
        assert not number.run().cached and not number.run().cached
    assert caplog.text.count("WARNING") == 1 and "r.sqlite" in caplog.text
    with use_config(cache=location, cache_mode="replay"), pytest.raises(ConfigurationError) as bad:
        number()
    assert "r.sqlite" in str(bad.value) and "replay" in str(bad.value)


def test_a_failing_store_is_a_miss_not_a_failed_call(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Broken(MemoryStore):
        def get(self, key: str) -> bytes | None:
            raise OSError("disk gone")

        def put(self, key: str, value: bytes, ttl: float | None) -> None:
            raise OSError("disk gone")

    @command(output=int, model="offline", temperature=0)
    def number() -> str:
        return "a number"

    monkeypatch.setitem(alloy.cache._stores, ("broken", None), Broken())
    with use_config(cache="broken"):
        assert isinstance(number(), int)
    assert "disk gone" in caplog.text


def _steps_per_write(store: SQLiteStore, writes: int, start: int) -> float:
    """SQLite virtual-machine steps (in hundreds) per write: a count of work, not of time."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0  # go on

    connection = store._connection()
    connection.set_progress_handler(count, 100)
    for number in range(start, start + writes):
        store.put(f"k{number}", b"x", None)
    connection.set_progress_handler(None, 0)
    return steps / writes


def _filled(path: Path, bound: int) -> SQLiteStore:
    store = SQLiteStore(path, bound)
    connection = store._connection()
    connection.execute("BEGIN")
    connection.executemany(  # the oldest first: created at 0, 1, 2... (puts are created now)
        "INSERT INTO replies (key, value, created, expires) VALUES (?, ?, ?, NULL)",
        ((f"k{number}", b"x", float(number)) for number in range(bound)),
    )
    connection.execute("COMMIT")
    return store


def test_a_bounded_sqlite_store_writes_in_steps_that_do_not_grow_with_its_size(
    tmp_path: Path,
) -> None:
    small = _filled(tmp_path / "small.sqlite", 200)
    large = _filled(tmp_path / "large.sqlite", 20_000)
    writes = 400
    per_write_small = _steps_per_write(small, writes, 200)
    per_write_large = _steps_per_write(large, writes, 20_000)
    # A B-tree lookup grows with log(entries); a scan past the bound grew a hundredfold here.
    assert per_write_large < 3 * per_write_small
    for store, bound in ((small, 200), (large, 20_000)):
        entries = store.stats().entries
        assert bound <= entries <= bound + _sqlite.slack(bound)
        assert store.get(f"k{bound + writes - 1}") == b"x"  # the newest stay
        assert store.get("k0") is None  # the oldest went first
        store.close()


def test_the_sqlite_bound_holds_across_writers_and_after_a_prune(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    one, two = SQLiteStore(path, 50), SQLiteStore(path, 50)
    for number in range(300):
        (one if number % 2 else two).put(f"k{number}", b"x", None)
        assert one.stats().entries <= 50 + _sqlite.slack(50)
    one.put("k0", b"again", None)  # replacing an entry adds none
    assert one.prune() >= 0 and one.stats().entries == 50
    assert one.get("k299") == b"x" and one.get("k0") == b"again"
    one.close()
    two.close()


def test_a_size_bound_on_a_redis_store_is_refused_not_ignored() -> None:
    with pytest.raises(ConfigurationError, match="maxmemory") as refused:
        new_store("redis://127.0.0.1:1/0", 100)
    assert "cache_max_entries=100" in str(refused.value)

    @command(output=int, model="offline", temperature=0)
    def number() -> str:
        return "a number"

    bounded = use_config(cache="redis://127.0.0.1:1/0", cache_max_entries=5)
    with bounded, pytest.raises(ConfigurationError, match="cache_max_entries"):
        number()


def _write_in_child(store: SQLiteStore) -> None:
    store.put("from-child", b"child", None)
    assert store.get("from-parent") == b"parent"


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="no fork on this platform"
)
def test_a_forked_child_uses_a_connection_of_its_own(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.sqlite")
    store.put("from-parent", b"parent", None)  # the parent's connection is open now
    child = multiprocessing.get_context("fork").Process(target=_write_in_child, args=(store,))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 0
    assert store.get("from-child") == b"child"
    store.close()
