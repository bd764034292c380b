"""What the streaming tests share: collecting partials and items through either driver, and the
check that a partial shows only what the final answer holds."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from alloy.streaming import Partial

Collect = Callable[..., list[Any]]


def collector(mode: str, method: str) -> Collect:
    """``collect(cmd, *args, into=None, **kwargs)``: what ``cmd.<method>`` (or its async twin)
    yields, through the sync or the async driver. ``into`` keeps what arrived before a raise."""

    def collect(cmd: Any, *args: Any, into: list[Any] | None = None, **kwargs: Any) -> list[Any]:
        out = [] if into is None else into
        if mode == "sync":
            out.extend(getattr(cmd, method)(*args, **kwargs))
            return out

        async def gather() -> None:
            async for item in getattr(cmd, "a" + method)(*args, **kwargs):
                out.append(item)

        asyncio.run(gather())
        return out

    return collect


def consistent(shown: Any, final: Any, path: tuple[Any, ...], opened: tuple[Any, ...]) -> None:
    """``shown`` is what a partial holds at ``path``; off its open path it must be exactly the
    final JSON value there, on it a beginning of it (a string cut short, a list or object with
    fewer members). So no number, boolean or null is ever shown cut off or wrong."""
    on_open_path = path == opened[: len(path)]
    if not on_open_path:
        assert shown == final and type(shown) is type(final), (path, shown, final)
        return
    if isinstance(final, dict):
        assert isinstance(shown, dict) and set(shown) <= set(final), (path, shown)
        for key, value in shown.items():
            consistent(value, final[key], (*path, key), opened)
    elif isinstance(final, list):
        assert isinstance(shown, list) and len(shown) <= len(final), (path, shown)
        for index, value in enumerate(shown):
            consistent(value, final[index], (*path, index), opened)
    elif isinstance(final, str):
        assert isinstance(shown, str) and final.startswith(shown), (path, shown, final)
    else:
        assert shown == final and type(shown) is type(final), (path, shown, final)


def check_partials(partials: list[Partial[Any]], final_json: Any) -> None:
    """Every partial but the last is consistent with ``final_json`` (the answer's JSON, unwrapped);
    the last is complete; attempts never go down."""
    assert partials and partials[-1].complete
    assert all(not p.complete for p in partials[:-1])
    attempts = [p.attempt for p in partials]
    assert attempts == sorted(attempts)
    for partial in partials[:-1]:
        if partial.data is not None:
            consistent(partial.data, final_json, (), partial.open_path)
