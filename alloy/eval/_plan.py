"""What an eval runs, worked out before anything is asked (:func:`alloy.eval._run.plan`),
and the records its runs leave (filled in by :mod:`alloy.eval._run`)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..events import CommandFailed, CommandFinished
from ._dataset import Ready, Skipped
from ._fields import Fields
from ._repeat import Repeat
from ._timings import Timings

Mode = Literal["online", "batch"]


@dataclass
class Plan:
    """What an eval runs, worked out before anything is asked."""

    command: Any
    ready: list[Ready]
    skipped: list[Skipped]
    models: dict[str, Any]  # display name -> Model
    model_ids: dict[str, str]
    repeats: int
    mode: Mode
    settings: Any
    cache: str | None
    checkpoint: Path | None
    fields: Fields
    seed: int
    dump: Any
    #: Per model, per repeat: one record per case (see :func:`_record`).
    records: dict[str, list[list[dict[str, Any]]]] = field(default_factory=dict)
    #: Per model: the seconds each call took (from the command's events).
    durations: dict[str, list[float]] = field(default_factory=dict)

    def runs(self) -> Iterable[tuple[str, int, Any, Any, Timings]]:
        """Each (model, repeat) with its command, its run settings, and the timings of its
        calls (the command, a copy made for the run, is subscribed to them)."""
        for name, model in self.models.items():
            for repeat in range(self.repeats):
                # the batch APIs read no response cache: a repeat is its own request anyway
                keyed_apart = repeat > 0 and self.mode == "online"
                asked = Repeat(model, repeat) if keyed_apart else model
                options: dict[str, Any] = {"model": asked}
                if self.cache is not None:
                    options.update(cache=self.cache, cache_all=True)
                settings = self.settings
                if self.checkpoint is not None:
                    path = self.checkpoint / f"{_safe(name)}.{repeat}.sqlite"
                    settings = dataclasses.replace(settings, checkpoint=path)
                command = self.command.with_options(**options)
                timings = Timings(self.durations.setdefault(name, []))
                command.subscribe(timings, CommandFinished, CommandFailed)
                yield name, repeat, command, settings, timings


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "model"
