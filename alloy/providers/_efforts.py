"""Which ``reasoning_effort`` values each model takes: one table per provider, checked one way.

A table lists families of models, each matched on the model id, with what the family takes:
effort levels, and thinking budgets in tokens within bounds. ``0`` is "thinking off", the same as
``"none"``, and is taken exactly where ``"none"`` is. The first family that matches an id wins;
the last matches every id, the models alloy does not know (taken to be current ones, or another
server's, which then decides itself). A value the family does not take is a ConfigurationError
before anything is sent, naming the family and what it takes; the adapter turns a value that
passes into its own wire fields.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ConfigurationError
from ._settings import unsupported

#: Every level the option has, in order of effort.
LEVELS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")


def named(pattern: str) -> Callable[[str], bool]:
    """A family test: ``pattern`` found in the model id (lower case, no router prefix)."""
    compiled = re.compile(pattern)
    return lambda model: compiled.search(model) is not None


def every(model: str) -> bool:
    """The test of the last family of a table: any model id."""
    return True


@dataclass(frozen=True)
class Family:
    """A family of models and the ``reasoning_effort`` values they take.

    ``levels`` are the effort levels; ``budgets`` the bounds of a thinking budget in tokens
    (``None``: no budgets, only levels; ``(low, None)``: at least ``low``).
    """

    name: str
    matches: Callable[[str], bool]
    levels: tuple[str, ...] = ()
    budgets: tuple[int, int | None] | None = None

    def takes(self, effort: str | int) -> bool:
        if isinstance(effort, bool):
            return False
        if isinstance(effort, int):
            if effort == 0:
                return "none" in self.levels
            if self.budgets is None:
                return False
            low, high = self.budgets
            return effort >= low and (high is None or effort <= high)
        return effort in self.levels

    def accepted(self) -> str:
        """What the family takes, in words."""
        if not self.levels and self.budgets is None:
            return "no reasoning_effort (it has no effort to set)"
        said = []
        if self.levels:
            said.append(
                _one_of(self.levels)
                + (" (none or 0: thinking off)" if "none" in self.levels else "")
            )
        if self.budgets is not None:
            low, high = self.budgets
            said.append(
                f"a thinking budget of {low} to {high} tokens"
                if high is not None
                else f"a thinking budget of at least {low} tokens"
            )
        return ", or ".join(said)


@dataclass(frozen=True)
class Efforts:
    """One provider's families, most specific first; the last one matches every model."""

    provider: str
    families: tuple[Family, ...]

    def family(self, model_id: str) -> Family:
        model = model_id.lower().rsplit("/", 1)[-1]
        return next(f for f in self.families if f.matches(model))

    def check(self, model_id: str, effort: str | int) -> str | int:
        """``effort`` as the adapter maps it (``0`` is ``"none"``), when the model's family
        takes it; a ConfigurationError naming what the family takes otherwise."""
        family = self.family(model_id)
        if not family.takes(effort):
            raise self.refusal(model_id, effort, family)
        return "none" if effort == 0 and not isinstance(effort, bool) else effort

    def refusal(self, model_id: str, effort: object, family: Family) -> ConfigurationError:
        return unsupported(
            self.provider,
            "reasoning_effort",
            effort,
            f"{model_id} ({family.name}) takes {family.accepted()}",
        )


def _one_of(levels: tuple[str, ...]) -> str:
    return levels[0] if len(levels) == 1 else ", ".join(levels[:-1]) + " or " + levels[-1]


# -- the tables ---------------------------------------------------------------------------------

OPENAI = Efforts(
    "OpenAI",
    (
        Family(
            "a model without reasoning effort",
            named(r"^(gpt-3\.5|gpt-4|chatgpt-|o1-mini|o1-preview)|-chat"),
        ),
        Family("o-series", named(r"^o\d"), ("low", "medium", "high")),
        Family(
            "GPT-5",
            named(r"^gpt-5(-mini|-nano|-codex)?(-\d{4}-\d{2}-\d{2})?$"),
            ("minimal", "low", "medium", "high"),
        ),
        # Later GPT-5 releases, codex models and OpenAI-compatible servers: the server decides.
        Family("a later or other reasoning model", every, LEVELS),
    ),
)

_CLAUDE = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2})(?!\d))?")
_CLAUDE_LEGACY = re.compile(r"claude-(instant|2|3-(?!7))")


def _claude_before_thinking(model: str) -> bool:
    return bool(_CLAUDE_LEGACY.search(model)) and not _CLAUDE.search(model)


def _claude_thinking_only(model: str) -> bool:
    """Claude 3.7 and Claude 4 up to Sonnet and Haiku 4.5 (Opus 4.5 has effort levels)."""
    if "claude-3-7" in model:
        return True
    match = _CLAUDE.search(model)
    if match is None or int(match.group(2)) != 4:
        return False
    minor = int(match.group(3) or 0)
    return minor < 5 or (minor == 5 and match.group(1) != "opus")


ANTHROPIC = Efforts(
    "Anthropic",
    (
        Family("Claude 3.5 and older, which do not think", _claude_before_thinking),
        Family(
            "Claude 3.7 to Sonnet and Haiku 4.5: extended thinking, no effort levels",
            _claude_thinking_only,
            ("none",),
            (1024, None),
        ),
        Family(
            "Claude Opus 4.5, Claude 4.6 and later",
            every,
            ("none", "low", "medium", "high", "xhigh", "max"),
            (1024, None),
        ),
    ),
)

GEMINI = Efforts(
    "Gemini",
    (
        Family("Gemini 2.0 and older, which do not think", named(r"^gemini-(1|2\.0)(\.|-)")),
        Family(
            "Gemini 2.5 Pro, which always thinks",
            named(r"^gemini-2\.5-pro"),
            ("low", "medium", "high"),
            (128, 32768),
        ),
        Family(
            "Gemini 2.5 Flash-Lite",
            named(r"^gemini-2\.5-flash-lite"),
            ("none", "low", "medium", "high"),
            (512, 24576),
        ),
        Family(
            "Gemini 2.5",
            named(r"^gemini-2\.5"),
            ("none", "low", "medium", "high"),
            (1, 24576),
        ),
        Family(
            "Gemini 3 and later, which always think",
            every,
            ("minimal", "low", "medium", "high", "xhigh"),
            (1, None),
        ),
    ),
)

OLLAMA = Efforts(
    "Ollama",
    (Family("its think field, no budgets", every, ("none", "low", "medium", "high")),),
)

__all__ = ["ANTHROPIC", "GEMINI", "LEVELS", "OLLAMA", "OPENAI", "Efforts", "Family"]
