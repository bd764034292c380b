"""A run's progress bar: rows done and failed, rate, ETA, tokens and cost so far.

It is tqdm's (``tqdm.auto``: a text bar in a terminal, a widget in a notebook), shown by default
when someone is watching (standard error is a terminal, or the code runs in a Jupyter kernel)
and never in logs or CI. ``progress=False`` turns it off, ``True`` forces it.
"""

from __future__ import annotations

import sys
from typing import Any


def watched() -> bool:
    """Whether a person is likely watching: a terminal on stderr, or a notebook kernel."""
    if "ipykernel" in sys.modules:
        return True
    stream = sys.stderr
    return bool(stream is not None and hasattr(stream, "isatty") and stream.isatty())


class Progress:
    """The bar of one run (nothing at all when not shown)."""

    def __init__(self, total: int | None, show: bool | None, label: str) -> None:
        self.bar: Any = None
        if show is None:
            show = watched()
        if show:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=label, unit="row", dynamic_ncols=True)

    def advance(self, failed: int, tokens: int, cost: float | None) -> None:
        """One more row done; the run so far has ``failed`` rows, ``tokens`` and ``cost``."""
        bar = self.bar
        if bar is None:
            return
        shown: dict[str, Any] = {"failed": failed, "tokens": tokens}
        if cost:
            shown["cost"] = f"${cost:.4f}"
        bar.set_postfix(shown, refresh=False)
        bar.update(1)

    def describe(self, text: str) -> None:
        """Show ``text`` before the bar (a batch run's job states, say)."""
        if self.bar is not None:
            self.bar.set_description(text, refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
