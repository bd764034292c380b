r"""Strings for a JSON Schema ``pattern``: the part of regex syntax a stand-in value needs.

The writer reads the pattern text itself. It knows literals and escapes, classes (``[a-z0-9_]``,
``[^...]``, ``\d \w \s`` and their negations, ``.``), groups (plain, ``(?:...)``, named),
alternation, the quantifiers ``? * + {n} {n,} {n,m}`` (greedy or lazy), the anchors
``^ $ \b \B \A \Z`` and flags such as ``(?i)``. Every candidate is checked with ``re.search``,
which is how JSON Schema reads a pattern. For other syntax (lookarounds, backreferences,
``(?x)``) it tries a few plain strings, then raises a ConfigurationError naming the pattern.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...errors import ConfigurationError
from ._draws import Draws

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_DIGITS = "0123456789"
#: What ``.`` and a negated class choose from.
_POOL = _LETTERS + _DIGITS + "_-. "
_SHORTHANDS = {
    "d": _DIGITS,
    "w": _LETTERS + _DIGITS + "_",
    "s": " ",
    "D": _LETTERS,
    "W": "-",
    "S": _LETTERS + _DIGITS,
}
_CONTROLS = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "0": "\0"}
_ZERO_WIDTH = "bBAZ"
#: Tried when the pattern is outside the subset, or its strings miss the length bounds.
_PLAIN = ("", "0", "1", "a", "A", "value", "a-1")
#: How far past its minimum an open repeat (``*``, ``+``, ``{n,}``) goes, one spread per try.
_SPREADS = (3, 0, 1, 8, 24)


def sample_pattern(
    pattern: str, rng: Draws, min_length: int = 0, max_length: int | None = None
) -> str:
    """A string that ``re.search(pattern, ...)`` accepts, within the length bounds."""
    try:
        compiled: re.Pattern[str] | None = re.compile(pattern)
    except re.error:  # Python cannot read it (``\p{L}``, say), so nothing can be checked
        compiled = None
    longest = max_length if max_length is not None else float("inf")
    for text in (*_written(pattern, rng, min_length), *_PLAIN) if compiled else ():
        if min_length <= len(text) <= longest and compiled and compiled.search(text):
            return text
    bounds = f" in {min_length} to {max_length} characters" if max_length is not None else ""
    bounds = bounds or (f" of {min_length} characters or more" if min_length else "")
    raise ConfigurationError(
        f"The offline stand-in model cannot write a string matching the pattern '{pattern}'"
        f"{bounds}: it writes literals, classes, groups, alternation and quantifiers, not "
        "lookarounds or backreferences. Use a real model here, or script the reply with "
        "alloy.testing."
    )


def _written(pattern: str, rng: Draws, min_length: int) -> Iterator[str]:
    """Strings written from the pattern: short repeats first, then ones reaching the minimum."""
    for spread in (*_SPREADS, min_length, 2 * min_length):
        for _ in range(3):
            try:
                yield _Writer(pattern, rng, spread).whole()
            except _Unsupported:
                return


class _Unsupported(Exception):
    """Syntax outside the subset the writer knows."""


class _Writer:
    """Writes one string while reading the pattern (recursive descent); a repeated atom is read
    again for each repetition."""

    def __init__(self, text: str, rng: Draws, spread: int) -> None:
        self.text = text
        self.pos = 0
        self.rng = rng
        self.spread = spread

    def peek(self) -> str:
        return self.text[self.pos : self.pos + 1]

    def take(self) -> str:
        char = self.peek()
        if not char:
            raise _Unsupported("unexpected end")
        self.pos += 1
        return char

    def whole(self) -> str:
        written = self.alternation()
        if self.pos != len(self.text):
            raise _Unsupported("unbalanced ')'")
        return written

    def alternation(self) -> str:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence())
        return self.rng.choice(branches)

    def sequence(self) -> str:
        pieces: list[str] = []
        while self.peek() not in ("", "|", ")"):
            start = self.pos
            piece = self.atom()
            low, high = self.quantifier()
            top = low + self.spread if high is None else min(high, low + self.spread)
            count = self.rng.randint(low, max(low, top)) if (low, high) != (1, 1) else 1
            end = self.pos
            pieces.extend([piece] if count else [])
            for _ in range(count - 1):
                self.pos = start
                pieces.append(self.atom())
            self.pos = end
        return "".join(pieces)

    def atom(self) -> str:
        char = self.take()
        if char == "(":
            return self.group()
        if char == "[":
            return self.rng.choice(self.char_class())
        if char == ".":
            return self.rng.choice(_POOL)
        if char in "^$":
            return ""
        if char in "*+?":
            raise _Unsupported("nothing to repeat")
        if char == "\\":
            found = self.escape()
            return self.rng.choice(found) if len(found) > 1 else found
        return char

    def group(self) -> str:
        if self.text.startswith("?:", self.pos):
            self.pos += 2
        elif self.text.startswith(("?P<", "?<"), self.pos) and self.text[self.pos + 2] not in "=!":
            self.pos = self.text.index(">", self.pos) + 1
        elif flags := re.match(r"\?[aiLmsu]+\)", self.text[self.pos :]):  # (?i): write as is
            self.pos += flags.end()
            return ""
        elif self.peek() == "?":
            raise _Unsupported("lookaround or verbose flag")
        written = self.alternation()
        if self.take() != ")":
            raise _Unsupported("unclosed group")
        return written

    def escape(self) -> str:
        """What an escape stands for: one character (a literal), several (a shorthand class)
        or none (a zero-width assertion)."""
        char = self.take()
        if char in _SHORTHANDS:
            return _SHORTHANDS[char]
        if char in _ZERO_WIDTH:
            return ""
        if char in _CONTROLS:
            return _CONTROLS[char]
        if char in "xu":
            digits = self.text[self.pos : self.pos + (2 if char == "x" else 4)]
            self.pos += len(digits)
            return chr(int(digits, 16))
        if char.isalnum():
            raise _Unsupported(f"\\{char}")  # backreferences, \p{...}, \N{...}
        return char

    def char_class(self) -> str:
        """The characters a ``[...]`` class admits (from ``_POOL`` when negated)."""
        negate = self.peek() == "^"
        self.pos += negate
        members: list[str] = []
        while (char := self.take()) != "]" or not members:
            char = self.escape() if char == "\\" else char
            if (
                len(char) == 1
                and self.peek() == "-"
                and self.text[self.pos + 1 : self.pos + 2] != "]"
            ):
                self.pos += 1
                end = self.take()
                end = self.escape() if end == "\\" else end
                members.extend(map(chr, range(ord(char), min(ord(end), ord(char) + 255) + 1)))
            else:
                members.append(char)
        chosen = set("".join(members))
        pool = "".join(c for c in _POOL if c not in chosen) if negate else "".join(sorted(chosen))
        if not pool:
            raise _Unsupported("empty class")
        return pool

    def quantifier(self) -> tuple[int, int | None]:
        """The repeat after an atom as ``(fewest, most)``; ``(1, 1)`` when there is none."""
        char = self.peek()
        bound = re.match(r"\{(\d*)(,?)(\d*)\}", self.text[self.pos :]) if char == "{" else None
        if char in ("*", "+", "?"):
            self.pos += 1
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
        elif bound and (bound[1] or bound[3]):
            self.pos += bound.end()
            low = int(bound[1] or 0)
            high = int(bound[3]) if bound[3] else (None if bound[2] else low)
        else:
            return 1, 1
        if self.peek() in ("?", "+"):  # lazy or possessive: the same strings
            self.pos += 1
        return low, high
