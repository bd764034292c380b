"""``alloy serve``: commands as typed HTTP endpoints, and rails in front of a model in the
OpenAI wire format (install ``alloy[serve]``).

::

    from alloy.serve import RailConfig, create_app

    app = create_app([summarize, RailConfig("support", rails=[no_secrets])])

``create_app`` gives a FastAPI app: ``POST /commands/{name}`` (and ``/stream``, ``/batch``) per
command, ``/v1/chat/completions``, ``/v1/responses`` and ``/v1/models`` for the rail configs,
``/health``, ``/openapi.json``, ``/docs`` and a playground page at ``/``. ``run`` (``alloy
serve module``) serves one with uvicorn. See the "Serving commands and rails" page of the docs.

Nothing here is imported by ``import alloy``: FastAPI and uvicorn load only when serving.
"""

from __future__ import annotations

try:
    import fastapi  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from ..errors import ConfigurationError

    raise ConfigurationError(
        "alloy serve needs FastAPI and uvicorn: pip install 'alloy[serve]'"
    ) from exc

from ._app import create_app, from_environment
from ._config import ServeConfig
from ._rails import RailConfig
from ._run import run
from ._targets import Served

__all__ = ["RailConfig", "ServeConfig", "Served", "create_app", "from_environment", "run"]
