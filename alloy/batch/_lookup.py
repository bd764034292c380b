"""Which batch API a run uses: the one its model's provider names in its descriptor.

A provider with a batch API names it beside its factory and dialect (``Provider.batch_api``),
and it lives with its adapter in :mod:`alloy.providers`; this package only looks it up, so a
provider added with its own batch API needs nothing here.
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigurationError
from ..providers import provider_of, providers
from ..providers.batch_api import BATCH_PRICE, BatchAPI, JobStatus, Limits, Missed, Outcome


def batch_api_for(model: Any) -> BatchAPI:
    """The batch API of ``model``'s provider (the provider it is named after); a
    ConfigurationError naming why there is none."""
    name = getattr(model, "name", None)
    provider = provider_of(name) if isinstance(name, str) else None
    make = provider.load_batch_api() if provider is not None else None
    if make is not None:
        return make(model)
    having = [p.name for p in providers().values() if p.batch_api is not None]
    shown = name if isinstance(name, str) else type(model).__name__
    raise ConfigurationError(
        f"mode='batch': {shown} has no batch API (of the registered providers, "
        f"{_listed(having)} have one). Use mode='online' (or mode='auto', which runs such a "
        "model online)."
    )


def _listed(names: list[str]) -> str:
    if not names:
        return "none"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


__all__ = ["BATCH_PRICE", "BatchAPI", "JobStatus", "Limits", "Missed", "Outcome", "batch_api_for"]
