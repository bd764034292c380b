"""Rail configurations for the OpenAI-compatible endpoints, and how their rails are run.

A :class:`RailConfig` is what NeMo Guardrails calls a config: a name the caller picks (here in
the request's ``model`` field, where every OpenAI client already puts a name), the rails to
run, and the model to forward to. The rails are alloy's own (:mod:`alloy.rails`): input rails
see the last user message's text, output rails the answer (its text, or the parsed JSON when a
JSON response format was asked for), tool rails each tool call the model makes before the
caller sees it and each tool result the caller sends back.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread

from .._command import _flatten_rails
from .._rail import Block, Rail, RailKind, Subject
from ..errors import ConfigurationError, RailBlocked

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")


@dataclass(frozen=True)
class RailConfig:
    """Rails in front of a model, served under ``name`` by ``/v1/chat/completions`` and
    ``/v1/responses``.

    ``model`` is the alloy model string to forward to (``openai:gpt-5-mini``, ``anthropic:...``,
    ``offline``); None uses the server's configured model (``ALLOY_MODEL``). ``rails`` takes
    what ``@command(rails=...)`` takes: rails and the lists the built-ins return.
    """

    name: str
    rails: Sequence[Any] = ()
    model: str | None = None
    _by_kind: Mapping[RailKind, tuple[Rail, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigurationError(
                f"RailConfig name {self.name!r}: use 1-64 letters, digits, '.', '_', ':' or '-' "
                "(callers send it as the request's model)"
            )
        flat = _flatten_rails(list(self.rails))
        object.__setattr__(self, "rails", flat)
        kinds: dict[RailKind, tuple[Rail, ...]] = {
            kind: tuple(r for r in flat if r.kind == kind) for kind in ("input", "output", "tool")
        }
        object.__setattr__(self, "_by_kind", kinds)

    def of_kind(self, kind: RailKind) -> tuple[Rail, ...]:
        """The rails of one kind, in the order given."""
        return self._by_kind.get(kind, ())


async def run_rails(rails: tuple[Rail, ...], subject: Subject, where: str) -> Subject:
    """Run ``rails`` in order over ``subject``; the subject they let through, or RailBlocked.

    A rail written as a plain function runs in a worker thread (it may call a model or a
    service), an ``async`` one on the loop. Rails fail closed: one that raises blocks, as it
    does in a command.
    """
    for rail in rails:
        try:
            if rail.afn is None and not inspect.iscoroutinefunction(rail.fn):
                outcome = await anyio.to_thread.run_sync(rail.apply, subject)
            else:
                outcome = await rail.aapply(subject)
        except Exception as error:
            reason = f"rail raised {type(error).__name__}: {error}"
            raise RailBlocked(
                f"Blocked by rail {rail.name!r}: {reason}",
                rail=rail.name,
                reason=reason,
                command=where,
            ) from None
        if isinstance(outcome, Block):
            raise RailBlocked(
                f"Blocked by rail {rail.name!r}: {outcome.reason}",
                rail=rail.name,
                reason=outcome.reason,
                command=where,
            )
        subject = outcome
    return subject
