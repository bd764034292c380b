"""Rail configurations for the OpenAI-compatible endpoints.

A :class:`RailConfig` is what NeMo Guardrails calls a config: a name the caller picks (here in
the request's ``model`` field, where every OpenAI client already puts a name), the rails to
run, and the call options (the model to forward to, its fallbacks, retries, deadline, cache…).
The rails are alloy's own (:mod:`alloy.rails`), run by the engine as in any command: input
rails see the new user turn's text, output rails the answer (its text, or the parsed JSON when
a JSON response format was asked for), tool rails each tool call the model makes before the
caller sees it and each tool result the caller sends back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._config import check_options, flatten_rails
from .._rail_types import Rail, RailKind
from ..errors import ConfigurationError

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .._command import Options

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")


class RailConfig:
    """Rails in front of a model, served under ``name`` by ``/v1/chat/completions`` and
    ``/v1/responses``.

    ``rails`` takes what ``@command(rails=...)`` takes: rails and the lists the built-ins
    return. The other keywords are ``@command``'s call options: ``model`` (the alloy model
    string to forward to; None uses the server's configured model, ``ALLOY_MODEL``),
    ``fallback``, ``retries``, ``deadline``, ``timeout``, ``cache``, ``system`` and the rest.
    A request's own ``temperature`` and token limit win over the config's.
    """

    __slots__ = ("name", "options", "rails")

    def __init__(self, name: str, rails: Sequence[Any] = (), **options: Unpack[Options]) -> None:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ConfigurationError(
                f"RailConfig name {name!r}: use 1-64 letters, digits, '.', '_', ':' or '-' "
                "(callers send it as the request's model)"
            )
        self.name = name
        self.rails: tuple[Rail, ...] = flatten_rails(list(rails))
        #: The call options, checked as ``@command`` checks its own.
        self.options: Mapping[str, Any] = check_options(options, source=f"RailConfig {name!r}")

    @property
    def model(self) -> Any:
        """The model option (None: the server's configured model)."""
        return self.options.get("model")

    def of_kind(self, kind: RailKind) -> tuple[Rail, ...]:
        """The rails of one kind, in the order given."""
        return tuple(rail for rail in self.rails if rail.kind == kind)

    def __repr__(self) -> str:
        options = "".join(
            f", {key}={value!r}" for key, value in self.options.items() if key != "api_key"
        )
        return f"RailConfig({self.name!r}, rails=[{len(self.rails)} rails]{options})"
