"""alloy-ai's ``alloy.config`` module, kept so code written for it runs.

Every name here warns (DeprecationWarning) and names alloy's replacement: ``alloy.configure``,
``alloy.use_config(**options)`` with keyword options, and ``alloy.Config`` for resolved
settings. ``Config`` is alloy-ai's class, with its field names (``default_system``, ``retry``,
``extra``); ``use_config`` takes one in place of keyword options.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from typing import Any

from . import _config
from ._legacy import deprecated, translate_options


@dataclass
class _AlloyAiConfig:
    """alloy-ai's ``Config``: a partial set of options, ``None`` meaning unset."""

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    default_system: str | None = None
    retry: int | None = None
    retry_on: type[BaseException] | None = None
    max_tool_turns: int | None = 10
    auto_finalize_missing_output: bool | None = True
    parallel_tools_max: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def options(self) -> dict[str, Any]:
        """The options it sets, with alloy's names."""
        given = {f.name: getattr(self, f.name) for f in fields(self)}
        given = {name: value for name, value in given.items() if value is not None}
        if not given.get("extra"):
            given.pop("extra", None)
        return dict(translate_options(given, "alloy.config.Config", warn=False))

    def merged(self, other: _AlloyAiConfig | None) -> _AlloyAiConfig:
        """alloy-ai's merge: the fields ``other`` sets win, and ``extra`` is merged key by key."""
        if other is None:
            return self
        updates: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(other, f.name)
            if value is None:
                continue
            updates[f.name] = {**self.extra, **value} if f.name == "extra" else value
        return replace(self, **updates)


_AlloyAiConfig.__name__ = _AlloyAiConfig.__qualname__ = "Config"


@contextmanager
def _use_config(
    config: _AlloyAiConfig | None = None, /, **options: Any
) -> Iterator[_config.Config]:
    """alloy-ai's ``use_config``: like alloy-ai's, ``with ... as config`` gives the settings
    now in force (an ``alloy.Config``, with alloy's field names)."""
    given = {**(config.options() if config is not None else {}), **options}
    with _config.use_config(**given):
        yield _get_config()


def _get_config(overrides: Mapping[str, Any] | None = None) -> _config.Config:
    checked = _config.check_options(overrides or {}, source="get_config()")
    return _config.resolve({}, checked)


_REPLACEMENTS: dict[str, tuple[Any, str]] = {
    "Config": (
        _AlloyAiConfig,
        "pass keyword options instead: alloy.use_config(temperature=0.0) or alloy.configure(...)",
    ),
    "configure": (_config.configure, "import it from alloy: from alloy import configure"),
    "use_config": (
        _use_config,
        "use alloy.use_config with keyword options: with use_config(temperature=0.0): ...",
    ),
    "get_config": (
        _get_config,
        "it returns alloy.Config, the settings a call would resolve to now, whose fields have "
        "alloy's names (system, retries, extra_json); alloy has no public replacement",
    ),
    "log": (
        logging.getLogger("alloy"),
        "alloy logs through the 'alloy' logger and its children: logging.getLogger(\"alloy\")",
    ),
    "DEFAULT_PARALLEL_TOOLS_MAX": (
        _config.Config().parallel_tools_max,
        "read alloy.Config().parallel_tools_max",
    ),
}


def __getattr__(name: str) -> Any:
    if name not in _REPLACEMENTS:
        raise AttributeError(f"module 'alloy.config' has no attribute {name!r}")
    value, advice = _REPLACEMENTS[name]
    deprecated(f"alloy.config.{name} is alloy-ai's: {advice}")
    return value


def __dir__() -> list[str]:
    return sorted(_REPLACEMENTS)
