"""cProfile of the hot path: an offline-model call, and an OpenAI Responses call to the emulator.

The report shows where the CPU time of one call goes by package (alloy's core, alloy's
adapters, the SDK, the HTTP stack...) and alloy's heaviest functions, so a regression in
alloy's own share is visible next to the SDK's.
"""

from __future__ import annotations

import cProfile
import pstats
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._subjects import CASES, pointing_at


@dataclass
class Profile:
    title: str
    calls: int
    per_call_us: float
    functions_per_call: float
    shares: list[tuple[str, float]]
    top_alloy: list[tuple[str, float, float]]  # (function, own µs per call, cumulative µs)


def _group(filename: str) -> str:
    if "/site-packages/" in filename:
        return filename.split("/site-packages/")[1].split("/")[0].removesuffix(".py")
    if "/alloy/providers/offline/" in filename:
        return "alloy offline model (value generation)"
    if "/alloy/providers/" in filename:
        return "alloy adapters"
    if "/alloy/" in filename:
        return "alloy core"
    if filename == "~":
        return "builtins (incl. socket waits)"
    return "stdlib"


def profile(title: str, fn: Callable[[], Any], calls: int) -> Profile:
    for _ in range(max(10, calls // 10)):
        fn()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn()
    profiler.disable()
    stats = pstats.Stats(profiler)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(tt for (_, _, tt, _, _) in raw.values())
    shares: Counter[str] = Counter()
    top = []
    functions = 0
    for (filename, line, name), (_, ncalls, tt, ct, _) in raw.items():
        shares[_group(filename)] += tt
        functions += ncalls
        if "/alloy/" in filename and "/site-packages/" not in filename:
            where = filename.split("/alloy/", 1)[1]
            top.append((f"alloy/{where}:{line} {name}", tt / calls * 1e6, ct / calls * 1e6))
    top.sort(key=lambda row: row[1], reverse=True)
    return Profile(
        title=title,
        calls=calls,
        per_call_us=total / calls * 1e6,
        functions_per_call=functions / calls,
        shares=[
            (group, tt / total)
            for group, tt in shares.most_common()
            if group.startswith("alloy") or tt / total >= 0.01
        ],
        top_alloy=top[:8],
    )


def run(root: str, calls: int) -> list[Profile]:
    from dataclasses import dataclass as dc

    from alloy import command

    @dc
    class Person:
        name: str
        age: int
        email: str
        score: float
        active: bool

    @command(output=Person, model="offline")
    def offline(subject: str) -> str:
        return f"Describe {subject} as a person record."

    profiles = [profile("offline model, five-field dataclass", lambda: offline("Ada"), calls)]
    case = next(c for c in CASES if c.key == "openai")
    if case.available():
        with pointing_at(root):
            emulated = case.command()
            profiles.append(
                profile(
                    "OpenAI Responses over the emulator, sync",
                    lambda: emulated("Ada"),
                    max(10, calls // 4),
                )
            )
    return profiles
