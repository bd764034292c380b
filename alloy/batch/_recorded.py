"""A batch run as its checkpoint recorded it, read from any process (``alloy batch``).

The checkpoint of a batch run names each job it submitted, with the batch API and model,
and the command that made the run, so the jobs can be looked at, waited for and cancelled, and
the answers of ended jobs read in, without the run that submitted them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..rows._checkpoint import Checkpoint


@dataclasses.dataclass(frozen=True)
class RecordedJob:
    """One provider batch job as the run recorded it."""

    tag: str
    #: The batch API the job went through (``openai``, ``anthropic``, ``gemini``...).
    batch_api: str
    model: str
    #: The provider's job id; None when the run died before recording it (the provider may
    #: have it: ``BatchAPI.find`` looks for it by ``tag``).
    job: str | None
    state: str
    requests: int
    #: When the run meant to submit it (seconds since the epoch).
    intended: float

    @property
    def wire(self) -> str:
        """Deprecated: :attr:`batch_api`."""
        warnings.warn("RecordedJob.wire is now RecordedJob.batch_api", DeprecationWarning, 2)
        return self.batch_api


class RecordedRun:
    """The checkpoint of a batch run, open to read its jobs and rows; close it (or use
    ``with``). Raises ConfigurationError when there is no checkpoint at ``path``."""

    def __init__(self, path: str | Path) -> None:
        if not Path(path).is_file():
            raise ConfigurationError(f"no checkpoint at {str(path)!r}")
        self.path = str(path)
        self._checkpoint = Checkpoint(path)

    def close(self) -> None:
        self._checkpoint.close()

    def __enter__(self) -> RecordedRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def jobs(self) -> list[RecordedJob]:
        """Every job of the run, in the order the run meant to submit them."""
        return [RecordedJob(*batch) for batch in self._checkpoint.batches()]

    def counts(self) -> tuple[int, int]:
        """Rows finished well and rows failed."""
        return self._checkpoint.counts()

    def records(self) -> Iterator[dict[str, Any]]:
        """Every finished row as a JSON record, in input order: ``{"index", "key", "ok",
        "value" | "error": {"type", "message"}}``, the value as the command validated it."""
        for key, position, ok, value, error_type, error in self._checkpoint.finished():
            record: dict[str, Any] = {"index": position, "key": key, "ok": bool(ok)}
            if ok:
                record["value"] = json.loads(value) if value is not None else None
            else:
                record["error"] = {"type": error_type, "message": error}
            yield record

    def read_ended(self, load: Callable[[str], Any]) -> Counter[str]:
        """Read the answers of the ended jobs into the checkpoint, calling no model; why rows
        were left, counted. The run's command is ``load(target)``, the ``module:name`` the run
        noted (``alloy batch`` loads it as ``alloy run`` does)."""
        checkpoint = self._checkpoint
        if not any(checkpoint.unfinished(tag) for tag, *_ in checkpoint.batches()):
            return Counter()
        notes = checkpoint.notes()
        target, model = notes.get("target"), notes.get("model")
        if not isinstance(target, str) or not isinstance(model, str):
            raise ConfigurationError(
                f"{self.path} does not say which command made it (an older alloy wrote it): run "
                "the map again with this checkpoint to read its batch answers"
            )
        from ..rows import Settings
        from ._run import BatchRun

        try:
            command = load(target)
        except Exception as exc:  # not found, or its module failed as it ran
            raise ConfigurationError(
                f"cannot load the run's command {target} to read its batch answers ({exc}); run "
                "alloy batch results where the run's module imports, or run the map again"
            ) from None
        options = {k: v for k, v in (notes.get("options") or {}).items() if v is not None}
        command = command.with_options(**{**options, "model": model})
        settings = Settings(checkpoint=self.path, progress=False, mode="batch")
        return asyncio.run(BatchRun(command.prepare(), [], settings).read_ended())
