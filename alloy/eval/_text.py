"""How two strings are compared: normalised (NFC, runs of whitespace as one space, trimmed),
and their edit similarity, 1 - Levenshtein distance / the longer length."""

from __future__ import annotations

import unicodedata


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


def similarity(a: str, b: str) -> float:
    """1.0 for equal strings, 0.0 for strings with nothing in common, normalised first."""
    return similarity_of_normalised(normalise(a), normalise(b))


def similarity_of_normalised(a: str, b: str) -> float:
    """:func:`similarity` of strings already normalised."""
    if a == b:
        return 1.0
    longest = max(len(a), len(b))
    return 1.0 - edit_distance(a, b) / longest


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insert, delete, substitute), two rows of the table at a time,
    after the common prefix and suffix (which cost nothing) are set aside."""
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    a, b = a[start:], b[start:]
    while a and b and a[-1] == b[-1]:
        a, b = a[:-1], b[:-1]
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]
