"""``alloy cache stats|clear|prune [--cache LOCATION]``: the response cache that ALLOY_CACHE
(or --cache) names: count its entries, remove them all, or remove the expired ones."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import ConfigurationError
from ._shared import UsageError, Verbs, print_json


def add_parser(verbs: Verbs) -> None:
    cache = verbs.add_parser(
        "cache",
        help="show, clear or prune the response cache",
        description="Manage the response cache that ALLOY_CACHE (or --cache) names: stats "
        "counts its entries, clear removes them all, prune removes the expired ones and the "
        "oldest beyond ALLOY_CACHE_MAX_ENTRIES.",
    )
    cache.add_argument("action", choices=("stats", "clear", "prune"))
    cache.add_argument(
        "--cache", help="the store: a file path, sqlite:///path or redis://host:port/db"
    )
    cache.add_argument("--json", action="store_true", help="print stats as JSON")
    cache.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from .._config import resolve
    from ..cache import describe, is_off, new_store, store_file

    config = resolve({}, {})
    location = args.cache or config.cache
    if is_off(location):
        raise UsageError("no response cache is set: set ALLOY_CACHE or pass --cache LOCATION")
    assert location is not None
    path = store_file(location)
    if path is not None and not path.is_file():  # never made here: a typo stays a typo
        raise UsageError(
            f"no response cache exists at {location}: {path} is not a file "
            "(a cached call makes it; check the path)"
        )
    store = new_store(location, config.cache_max_entries)
    try:
        _manage(args, store)
    except Exception as exc:  # a store that cannot serve: say which and why, in one line
        raise ConfigurationError(
            f"the response cache at {store.location} cannot be used: {describe(exc)}"
        ) from None
    finally:
        store.close()
    return 0


def _manage(args: argparse.Namespace, store: Any) -> None:
    """Carry out ``alloy cache stats|clear|prune`` on ``store``."""
    if args.action == "clear":
        print(f"removed {store.clear()} entries from {store.location}")
    elif args.action == "prune":
        print(f"removed {store.prune()} entries from {store.location}")
    else:
        stats = store.stats()
        if args.json:
            print_json(
                {
                    "location": stats.location,
                    "entries": stats.entries,
                    "expired": stats.expired,
                    "bytes": stats.bytes,
                }
            )
        else:
            print(f"{stats.location}: {stats.entries} entries, {stats.bytes} bytes", end="")
            print(f", {stats.expired} expired (alloy cache prune removes them)")
