"""The ``fallback`` option as models: which models may take a call over, and with whose key.

The engine decides when a call moves to its next model (``_engine._Run.answer``); this module
only finds the models, once, when a command plans its calls, so a bad entry is a
ConfigurationError before any request is sent.
"""

from __future__ import annotations

from dataclasses import replace

from ._config import Config
from ._engine import Plan
from ._model import Model, StandIn
from ._output import OutputType
from .errors import ConfigurationError
from .providers import (
    declares_profiles,
    dialect_for,
    endpoint_of,
    get_model,
    profile_for,
    providers,
    split_model,
)


def fallback_models(config: Config, output: OutputType) -> tuple[Model, ...]:
    """The models of ``config.fallback``, in order, bound to ``output`` when they stand in.

    The ``api_key`` and ``base_url`` options belong to the primary model: a fallback whose
    provider reads the same key (``openai`` and ``openai-chat``) uses them too; any other
    reads its own variables, so a key is never sent to a provider it was not meant for.
    """
    if not config.fallback:
        return ()
    primary = _credentials(config.model)
    models = []
    for index, entry in enumerate(config.fallback, 1):
        same = primary is not None and _credentials(entry) == primary
        try:
            model = get_model(
                entry,
                api_key=config.api_key if same else None,
                base_url=config.base_url if same else None,
            )
        except ConfigurationError as error:
            raise ConfigurationError(
                f"Invalid value for option 'fallback' (model {index}, {entry!r}): {error}"
            ) from None
        models.append(model.for_output(output) if isinstance(model, StandIn) else model)
    return tuple(models)


def _credentials(model: object) -> tuple[str, ...] | None:
    """Whose key a model string's provider reads: its key variables, or its name when it
    reads none; None for a Model object or a string no provider serves."""
    if not isinstance(model, str):
        return None
    try:
        name = split_model(model)[0]
    except ConfigurationError:
        return None
    return providers()[name].key_env or (name,)


def with_fallbacks(plan: Plan, models: tuple[Model, ...]) -> Plan:
    """``plan`` with a plan of its own for each fallback model: the output mode, schema dialect
    and system prompt derived for that model's capabilities. They are derived now, so a
    fallback that cannot honour the options (``output_mode="native"`` on a model without
    native structured output) is a ConfigurationError before any request is sent."""
    if not models:
        return plan
    plans = tuple(
        replace(
            plan,
            model=m.name,
            profile=profile_for(m),
            endpoint=endpoint_of(m),
            watch_drops=declares_profiles(m.name),
            dialect=dialect_for(m.name),
        )
        for m in models
    )
    for fallback in plans:
        fallback.request_parts  # noqa: B018  (derived for its errors; cached on the plan)
    return replace(plan, fallbacks=plans)
