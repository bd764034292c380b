"""Ready means able to serve: the models a server serves are built before ``/health`` says ok.

An adapter imports its provider's SDK and builds its client on first use, which the first
request would otherwise pay for (the SDK's import alone takes hundreds of milliseconds). The
app's startup resolves every served command's model and fallbacks and every RailConfig's, as
their calls will, and builds their async clients on the server's event loop, the loop requests
run on. A model whose SDK is missing, or that cannot be resolved, fails startup with its
ConfigurationError, so the server never reports healthy when it cannot answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._call import Spec, prepare
from .._model import Connects, Model
from .._output import TextOutput
from .._wrapper import unwrapped
from ..errors import ConfigurationError
from ._targets import Served


def make_ready(served: Served, *, pass_through_keys: bool = False) -> None:
    """Import the SDK of every served model and build its async client.

    With ``pass_through_keys`` a server may hold no key of its own (callers bring theirs): a
    client that cannot be built for want of a key is then left to the first request, once its
    SDK is imported.
    """
    for model in dict.fromkeys(_served_models(served)):
        if not isinstance(model, Connects):
            continue  # a model of the caller's own (a test model, say) has no client to build
        try:
            model.connect()
        except ConfigurationError:
            if not pass_through_keys:
                raise


def _served_models(served: Served) -> Iterator[Model]:
    """The provider's models beneath each served call: each command's and each RailConfig's,
    fallbacks included, resolved as their calls resolve them."""
    prepared = [cmd.prepare() for cmd in served.commands.values()]
    prepared += [
        prepare(_forwarding(rail.name, rail.options), None) for rail in served.rail_configs.values()
    ]
    for one in prepared:
        for model in (one.runtime.model, *one.runtime.fallbacks):
            yield unwrapped(model)


def _forwarding(name: str, options: Any) -> Spec:
    """A RailConfig's calls as the proxy prepares them (text answers; rails need no models)."""

    def conversation(turns: list[Any]) -> list[Any]:
        return turns

    conversation.__name__ = conversation.__qualname__ = name
    return Spec(conversation, TextOutput(), options)
