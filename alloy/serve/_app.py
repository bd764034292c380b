"""The app factory: commands and rail configs in, a FastAPI app out."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager, nullcontext
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from .. import __version__
from ..errors import ConfigurationError
from . import _commands, _docs, _openai, _playground
from ._auth import BearerAuth, declare_bearer_auth
from ._config import ServeConfig
from ._guard import RequestGuard
from ._observe import AccessLog, Tracing
from ._proxy import Proxy
from ._ready import make_ready
from ._shutdown import CutOff
from ._targets import Served, collect, load

#: Where ``alloy serve`` hands its targets to the worker processes (a JSON list).
TARGETS_ENV = "ALLOY_SERVE_TARGETS"


def create_app(
    served: Served | Mapping[str, Any] | Iterable[Any],
    config: ServeConfig | None = None,
    *,
    tracer_provider: Any = None,
) -> FastAPI:
    """A FastAPI app serving ``served``: commands (``{url name: command}``, or commands named
    by their functions) and :class:`~alloy.serve.RailConfig` objects.

    ``config`` defaults to the ``ALLOY_SERVE_*`` variables. ``tracer_provider`` turns tracing
    on with that OpenTelemetry provider (``config.otel`` turns it on with the global one). A
    command or rail config that cannot be served is a ConfigurationError now, not a 500 later.
    """
    if not isinstance(served, Served):
        served = collect(served)
    config = config if config is not None else ServeConfig.from_env()
    endpoints = {name: _commands.endpoint_for(name, cmd) for name, cmd in served.commands.items()}
    mcp = _mcp_endpoint(served) if config.mcp else None
    tracing = tracer_provider is not None or config.otel
    tracer = None
    if tracing:
        try:
            from opentelemetry import trace
        except ImportError:
            raise ConfigurationError(
                "Tracing needs OpenTelemetry: pip install 'alloy[otel]'"
            ) from None
        tracer = trace.get_tracer("alloy.serve", tracer_provider=tracer_provider)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stop = None
        if tracing:
            from ..otel import instrument

            stop = instrument(tracer_provider)
        try:
            make_ready(served, pass_through_keys=config.pass_through_keys)
            async with mcp.running() if mcp is not None else nullcontext():
                yield
        finally:
            if stop is not None:
                stop()

    app = FastAPI(
        title="alloy",
        version=__version__,
        description="Typed commands and rails over HTTP: `POST /commands/{name}` calls a "
        "command with its arguments as JSON; `/v1/chat/completions` and `/v1/responses` put "
        "a rail config in front of a model in the OpenAI wire format.",
        lifespan=lifespan,
        docs_url=None,  # FastAPI's page loads Swagger UI from a CDN: _docs serves its own
        redoc_url=None,
    )
    app.state.served = served

    async def health() -> JSONResponse:
        """Whether the server is up, with what it serves."""
        return JSONResponse(
            {
                "status": "ok",
                "commands": sorted(endpoints),
                "rail_configs": sorted(served.rail_configs),
            }
        )

    app.add_api_route("/health", health, methods=["GET"], tags=["server"], summary="Health")

    async def invalid_body(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        return JSONResponse({"detail": _jsonable(error.errors())}, status_code=422)

    async def http_error(request: Request, error: Exception) -> JSONResponse:
        """Starlette's own answers (an unknown path, a wrong method) in the one error shape."""
        assert isinstance(error, StarletteHTTPException)
        kind = "not_found" if error.status_code == 404 else "http_error"
        body = {"error": {"type": kind, "code": kind, "message": str(error.detail), "param": None}}
        return JSONResponse(body, status_code=error.status_code, headers=error.headers)

    app.add_exception_handler(RequestValidationError, invalid_body)
    app.add_exception_handler(StarletteHTTPException, http_error)
    _commands.add_routes(app, endpoints, config)
    _openai.add_routes(app, served.rail_configs, config, Proxy())
    _docs.add_routes(app, app.title)
    if mcp is not None:
        app.add_route(mcp.path, mcp.app, methods=["GET", "POST", "DELETE"], include_in_schema=False)
    if config.playground:
        _playground.add_routes(app)
    if config.auth:
        describe_routes = app.openapi  # FastAPI's: made on first use, then kept
        app.openapi = lambda: declare_bearer_auth(describe_routes())  # type: ignore[method-assign]
    # Outermost first: the access log sees every answer (401s too), the trace every request.
    app.add_middleware(BearerAuth, config=config)
    app.add_middleware(RequestGuard, config=config)  # a wrong host, not JSON, too big
    if tracer is not None:
        app.add_middleware(Tracing, tracer=tracer)
    app.add_middleware(CutOff)  # a request cut off by shutdown: a JSON 503
    app.add_middleware(AccessLog, log_content=config.log_content)
    return app


def _mcp_endpoint(served: Served) -> Any:
    """The commands as MCP tools over Streamable HTTP (``--mcp``), behind the same middleware
    as every route: auth, host check, body limit, access log."""
    from ..mcp import mcp_server, streamable_http  # a ConfigurationError without alloy[mcp]

    return streamable_http(mcp_server(served.commands))


def _jsonable(errors: Any) -> Any:
    """Validation errors as JSON: the input that failed is left out (it may be a prompt)."""
    cleaned = []
    for error in errors:
        item = {k: v for k, v in error.items() if k not in ("input", "ctx", "url")}
        if "ctx" in error:
            item["ctx"] = {k: str(v) for k, v in error["ctx"].items()}
        cleaned.append(item)
    return json.loads(json.dumps(cleaned, default=str))


def from_environment() -> FastAPI:
    """The app ``alloy serve`` runs in each worker: targets from ``ALLOY_SERVE_TARGETS``."""
    raw = os.environ.get(TARGETS_ENV)
    if not raw:
        raise ConfigurationError(f"{TARGETS_ENV} is not set: start the server with alloy serve")
    targets = json.loads(raw)
    return create_app(load(targets), ServeConfig.from_env())
