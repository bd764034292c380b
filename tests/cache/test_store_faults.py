"""A store that cannot serve is a miss with one WARNING, and the call goes to the provider; in
replay mode it is an error (issue 27, items 10 and 11). Real faults: a Redis address that
accepts connections and never answers, SQLite files that are garbage, cut short, on a folder
the process may not write, or turned to garbage while open."""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import alloy.cache as alloy_cache
from alloy import ConfigurationError, command, use_config

#: Long enough for any machine, however busy, to time a hung store out; a hang never ends.
HANG_GUARD_SECONDS = 120


@pytest.fixture
def stuck_redis() -> Iterator[str]:
    """A loopback TCP server that accepts every connection and never answers a byte."""
    pytest.importorskip("redis")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"redis://127.0.0.1:{server.getsockname()[1]}/0"
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    server.close()


def finishes(work: Callable[[], Any]) -> Any:
    """``work()``'s value, from a thread the test waits on: a hang fails the test instead of
    hanging the suite."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(("value", work()))
        except BaseException as error:  # handed to the test below
            outcome.append(("error", error))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_SECONDS)
    assert outcome, "the call hung on the store"
    kind, value = outcome[0]
    if kind == "error":
        raise value
    return value


def store_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name.startswith("alloy")
        and record.levelno == logging.WARNING
        and "failed" in record.getMessage()
    ]


@command(output=int, model="offline", temperature=0)
def number(question: str) -> str:
    return question


def test_a_hung_redis_times_out_and_every_call_is_a_miss_with_one_warning(
    stuck_redis: str, caplog: pytest.LogCaptureFixture
) -> None:
    def three_calls() -> list[Any]:
        with use_config(cache=stuck_redis):
            return [number.run("How many?") for _ in range(3)]

    results = finishes(three_calls)
    assert [result.cached for result in results] == [False, False, False]
    assert all(isinstance(result.value, int) for result in results)
    warned = store_warnings(caplog)
    assert len(warned) == 1 and stuck_redis in warned[0]


def test_a_hung_redis_in_replay_mode_is_an_error_not_a_hang(stuck_redis: str) -> None:
    def replay() -> Any:
        with use_config(cache=stuck_redis, cache_mode="replay"):
            return number("How many?")

    with pytest.raises(ConfigurationError, match="cannot be read") as failed:
        finishes(replay)
    assert "replay" in str(failed.value)


def test_a_redis_password_is_not_shown(stuck_redis: str, caplog: pytest.LogCaptureFixture) -> None:
    url = stuck_redis.replace("redis://", "redis://alloy:hunter2-secret@")

    def call() -> Any:
        with use_config(cache=url):
            return number("How many?")

    finishes(call)
    assert "hunter2-secret" not in caplog.text and store_warnings(caplog)


def _recorded(path: Path) -> None:
    """A cache file holding the reply to ``number("How many?")``, closed (its WAL folded in)."""
    with use_config(cache=str(path), cache_mode="record"):
        number("How many?")
    alloy_cache.close_stores()


def garbage(path: Path) -> None:
    path.write_bytes(b"this is no SQLite database\n" * 400)


def cut_in_its_header(path: Path) -> None:
    _recorded(path)
    path.write_bytes(path.read_bytes()[:60])


def cut_after_its_first_page(path: Path) -> None:
    _recorded(path)
    with path.open("r+b") as file:
        file.truncate(4096)


FAULTS_AT_OPEN = {
    "garbage": garbage,
    "cut-in-header": cut_in_its_header,
    "cut-after-page-1": cut_after_its_first_page,
}


@pytest.mark.parametrize("fault", sorted(FAULTS_AT_OPEN))
def test_a_sqlite_file_that_cannot_serve_is_a_miss_with_one_warning(
    fault: str, cache_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    FAULTS_AT_OPEN[fault](cache_file)
    alloy_cache.close_stores()  # the recording's store: the calls below open the broken file
    caplog.clear()
    with use_config(cache=str(cache_file)):
        results = [number.run("How many?") for _ in range(3)]
    assert [result.cached for result in results] == [False] * 3
    warned = store_warnings(caplog)
    assert len(warned) == 1 and str(cache_file) in warned[0]


@pytest.mark.parametrize("fault", sorted(FAULTS_AT_OPEN))
def test_in_replay_mode_a_sqlite_file_that_cannot_serve_is_an_error(
    fault: str, cache_file: Path
) -> None:
    FAULTS_AT_OPEN[fault](cache_file)
    alloy_cache.close_stores()
    replay = use_config(cache=str(cache_file), cache_mode="replay")
    with replay, pytest.raises(ConfigurationError, match="replay") as failed:
        number("How many?")
    assert str(cache_file) in str(failed.value)


def test_a_sqlite_file_broken_while_open_is_a_miss_with_one_warning(
    cache_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The store is open and serving; then its files turn to garbage. Threads that open their
    connection after that (a server's workers) find a file that cannot serve."""
    location = str(cache_file)

    def call() -> Any:
        with use_config(cache=location):
            return number.run("How many?")

    assert not call().cached and call().cached
    for path in cache_file.parent.iterdir():  # the database, its WAL and shared memory
        with path.open("r+b") as file:
            file.write(b"\xff" * max(path.stat().st_size, 8192))
    caplog.clear()
    results = [finishes(call) for _ in range(3)]  # each from a thread of its own
    assert [result.cached for result in results] == [False] * 3
    warned = store_warnings(caplog)
    assert len(warned) == 1 and location in warned[0]


#: Run by a process of its own: on a folder mounted read-only in a mount namespace of its own
#: when the tests run as root (root writes any file whatever its mode), and with a file size
#: limit of 0 for a disk that is full.
CHILD = """
import json, logging, resource, signal, sys
from alloy import command, use_config

@command(output=int, model="offline", temperature=0)
def number(question: str) -> str:
    return question

location, mode, full = sys.argv[1:4]

def fill_the_disk():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

questions = ["How many?"] * 3
if full == "at-open":
    fill_the_disk()
elif full == "after-open":  # one reply stored, then every write fails; reads still serve
    with use_config(cache=location, cache_mode=mode):
        number("How many?")
    fill_the_disk()
    questions = ["How many cats?", "How many dogs?", "How many?"]
warned = []
handler = logging.Handler(logging.WARNING)
handler.emit = lambda record: warned.append(record.getMessage())
logging.getLogger("alloy").addHandler(handler)
try:
    with use_config(cache=location, cache_mode=mode):
        runs = [number.run(question) for question in questions]
    print(json.dumps({"values": [r.value for r in runs], "cached": [r.cached for r in runs],
                      "warned": [w for w in warned if "failed" in w]}))
except Exception as error:
    print(json.dumps({"error": type(error).__name__, "message": str(error)}))
"""


def run_child(location: Path, mode: str, *, read_only: bool = False, full: str = "-") -> Any:
    """What the child reports after three calls of ``number`` with the cache at ``location``;
    ``full`` is when the disk fills up: ``at-open``, ``after-open`` or ``-`` (never)."""
    command = [sys.executable, "-c", CHILD, str(location), mode, full]
    folder = location.parent
    if read_only:
        for path in folder.iterdir():
            path.chmod(0o444)
        folder.chmod(0o555)
        if os.geteuid() == 0:
            if shutil.which("unshare") is None:
                pytest.skip("as root, a read-only folder needs unshare (util-linux) to mount it")
            mount = 'mount --bind -o ro "$0" "$0" && exec "$@"'
            command = ["unshare", "--mount", "sh", "-c", mount, str(folder), *command]
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(folder), "ALLOY_NO_DOTENV": "1"}
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=env,
            cwd=folder,
            timeout=HANG_GUARD_SECONDS,
            check=False,
        )
    finally:
        folder.chmod(0o755)
        for path in folder.iterdir():
            path.chmod(0o644)
    if done.returncode != 0 and command[0] == "unshare" and "Traceback" not in done.stderr:
        pytest.skip(f"cannot mount a read-only folder here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_committed_replay_cache_in_a_read_only_checkout_is_read(cache_file: Path) -> None:
    _recorded(cache_file)
    expected = number("How many?")
    replayed = run_child(cache_file, "replay", read_only=True)
    assert replayed.get("error") is None, replayed
    assert replayed["values"] == [expected] * 3 and replayed["cached"] == [True] * 3
    assert replayed["warned"] == []
    read = run_child(cache_file, "readwrite", read_only=True)  # hits: nothing to write
    assert read["cached"] == [True] * 3 and read["warned"] == []


def test_a_cache_in_a_read_only_folder_that_holds_none_is_a_miss(cache_file: Path) -> None:
    found = run_child(cache_file, "readwrite", read_only=True)
    assert found["cached"] == [False] * 3 and len(found["warned"]) == 1, found
    assert not cache_file.exists()
    assert run_child(cache_file, "replay", read_only=True)["error"] == "ConfigurationError"


def test_a_full_disk_at_open_is_a_miss_with_one_warning(cache_file: Path) -> None:
    path = cache_file
    found = run_child(path, "readwrite", full="at-open")
    assert found["cached"] == [False] * 3 and len(found["warned"]) == 1, found
    assert run_child(path, "replay", full="at-open")["error"] == "ConfigurationError"


def test_a_disk_that_fills_up_after_open_stores_nothing_more_and_still_serves_hits(
    cache_file: Path,
) -> None:
    found = run_child(cache_file, "readwrite", full="after-open")
    assert found["cached"] == [False, False, True], found
    assert len(found["warned"]) == 1 and "writing" in found["warned"][0]
