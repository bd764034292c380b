"""How long each call of an eval's run took: read from the command's events, and matched to
the row whose answer (or error) the call gave."""

from __future__ import annotations

from typing import Any

from ..events import CommandFailed, CommandFinished, Event


class Timings:
    """The seconds each call of a run took, from the command's events, and which row's
    answer (or error) each call gave, by that object's identity: a row's ``value`` is the
    event's ``value``, its ``error`` the event's ``error``."""

    def __init__(self, durations: list[float]) -> None:
        self.durations = durations
        self._by_answer: dict[int, tuple[Any, float]] = {}

    def __call__(self, event: Event) -> None:
        if isinstance(event, (CommandFinished, CommandFailed)):
            self.durations.append(event.duration)
            answer = event.value if isinstance(event, CommandFinished) else event.error
            if not isinstance(answer, _SHARED):  # held, so its id stays its own
                self._by_answer[id(answer)] = (answer, event.duration)

    def of(self, row: Any) -> float | None:
        """The seconds the call of ``row`` took, when it is known."""
        answer = row.value if row.ok else row.error
        if isinstance(answer, _SHARED):
            return None
        found = self._by_answer.get(id(answer))
        return found[1] if found is not None and found[0] is answer else None


#: Values Python may share between calls (interned, cached): their identity names no call.
_SHARED = (int, float, str, bool, bytes, type(None), tuple, frozenset)
