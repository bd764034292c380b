"""The stored probes are read once, not per call: ``load_probe`` keeps the store as last read,
trusted for ``RECHECK_SECONDS`` and then while its file's modification time is unchanged; a save
in this process replaces it at once (issue 30)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from alloy.providers import Profile, _profiles, load_probe, store_probe

URL = "http://gpu:8000/v1"


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(_profiles, "monotonic", clock)
    return clock


@pytest.fixture
def stats(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The store files looked at (``Path.stat``) during the test."""
    seen: list[Path] = []
    stat = Path.stat

    def counted(self: Path, *args: Any, **kwargs: Any) -> os.stat_result:
        if self.suffix == ".json":
            seen.append(self)
        return stat(self, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", counted)
    return seen


def test_many_loads_look_at_the_store_file_once_and_a_save_is_seen_at_once(
    tmp_path: Path, clock: Clock, stats: list[Path]
) -> None:
    store = tmp_path / "probes.json"
    store_probe(Profile(json_schema="no"), base_url=URL, model="qwen3", path=store)
    stats.clear()

    loaded = [load_probe(URL, "qwen3", path=store) for _ in range(50)]
    clock.now += 10 * _profiles.RECHECK_SECONDS
    loaded += [load_probe(URL, "qwen3", path=store) for _ in range(50)]

    assert all(p is not None and p.json_schema == "no" for p in loaded)
    assert len(stats) == 1  # once after the recheck time, not per load
    store_probe(Profile(strict_tools=True), base_url=URL, model="qwen3", path=store)
    latest = load_probe(URL, "qwen3", path=store)
    assert latest is not None and latest.json_schema == "strict" and latest.strict_tools


def test_another_processs_save_is_seen_once_the_recheck_time_has_passed(
    tmp_path: Path, clock: Clock
) -> None:
    store = tmp_path / "probes.json"
    assert load_probe(URL, "qwen3", path=store) is None  # no file yet
    entry = {"latest": "", "": {"json_schema": "no", "source": "probed"}}
    store.write_text(json.dumps({f"{URL} qwen3": entry}), encoding="utf-8")

    assert load_probe(URL, "qwen3", path=store) is None  # still the store as last read
    clock.now += _profiles.RECHECK_SECONDS

    seen = load_probe(URL, "qwen3", path=store)
    assert seen is not None and seen.json_schema == "no"
