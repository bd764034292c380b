"""The OpenAI-compatible routes: ``/v1/chat/completions``, ``/v1/responses``, ``/v1/models``.

Bodies are read by hand rather than by a pydantic model, so that every mistake is the 400 in
OpenAI's own error shape (with ``param``) that OpenAI clients expect, not FastAPI's 422.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Mapping
from enum import Enum
from typing import Any

from fastapi import FastAPI, Request
from fastapi.routing import APIRoute
from starlette.responses import JSONResponse, Response

from . import _chat, _responses
from ._config import PROVIDER_KEY_HEADER, ServeConfig
from ._errors import ErrorBody, invalid
from ._proxy import Proxy
from ._rails import RailConfig
from ._sse import error_response, stream_response
from ._wire import rail_config, read_body

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in (
        (400, "An invalid or unsupported field (named in error.param)"),
        (401, "No valid bearer key (when keys are configured)"),
        (403, "A rail blocked the request or the answer"),
        (404, "No rail config of that name"),
        (429, "The provider's rate limit"),
        (502, "The provider failed"),
        (504, "The provider timed out"),
    )
}
_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}


async def _body(request: Request) -> Any:
    return read_body(await request.body())


def _api_key(request: Request, config: ServeConfig) -> str | None:
    key = request.headers.get(PROVIDER_KEY_HEADER)
    if key is not None and not config.pass_through_keys:
        raise invalid(
            f"this server does not take callers' provider keys ({PROVIDER_KEY_HEADER})",
            PROVIDER_KEY_HEADER,
        )
    return key


def _closer(*generators: AsyncGenerator[Any, None]) -> Callable[[], Awaitable[None]]:
    """Closes a stream's generators, outermost first (the model's stream is closed too when
    the client leaves early)."""

    async def close() -> None:
        for generator in generators:
            await generator.aclose()

    return close


class _OwnRoute(APIRoute):
    """A route whose endpoint reads the Request and answers a Response itself: FastAPI
    describes it (OpenAPI) and runs it with no dependency solving or response checks, as
    FastAPI's custom route classes may (``get_route_handler``)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        endpoint: Callable[[Request], Coroutine[Any, Any, Response]] = self.endpoint
        return endpoint


def _model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "alloy"}


def add_routes(
    app: FastAPI, configs: Mapping[str, RailConfig], config: ServeConfig, proxy: Proxy
) -> None:
    """Register the /v1 routes for ``configs``."""

    async def chat_completions(request: Request) -> Response:
        try:
            call, include_usage = _chat.read(
                await _body(request), configs, _api_key(request, config)
            )
            if not call.stream:
                answer = await proxy.complete(call)
                return JSONResponse(_chat.completion(answer, call.config.name))
        except Exception as error:
            return error_response(error)
        pieces = proxy.stream(call)
        frames = _chat.chunks(pieces, call.config.name, include_usage)
        return await stream_response(frames, _chat.stream_failed, _closer(frames, pieces))

    async def responses(request: Request) -> Response:
        try:
            call = _responses.read(await _body(request), configs, _api_key(request, config))
            if not call.stream:
                answer = await proxy.complete(call)
                return JSONResponse(_responses.response(answer, call))
        except Exception as error:
            return error_response(error)
        pieces = proxy.stream(call)
        frames = _responses.events(pieces, call)
        return await stream_response(frames, _responses.stream_failed, _closer(frames, pieces))

    async def models() -> JSONResponse:
        """The rail configs, as OpenAI's model list: a caller picks one as its ``model``."""
        return JSONResponse({"object": "list", "data": [_model(name) for name in configs]})

    async def model(model_id: str) -> Response:
        """One rail config, as OpenAI's model object; 404 for a name no rail config has."""
        try:
            return JSONResponse(_model(rail_config({"model": model_id}, configs).name))
        except Exception as error:
            return error_response(error)

    tags: list[str | Enum] = ["openai-compatible"]
    for path, endpoint, api in (
        ("/v1/chat/completions", chat_completions, "Chat Completions"),
        ("/v1/responses", responses, "Responses"),
    ):
        app.router.add_api_route(
            path,
            endpoint,
            methods=["POST"],
            tags=tags,
            summary=f"{api}, with the rail config named by model",
            responses=_ERRORS,
            openapi_extra=_BODY,
            route_class_override=_OwnRoute,
        )
    app.add_api_route("/v1/models", models, methods=["GET"], tags=tags, summary="Rail configs")
    app.add_api_route(
        "/v1/models/{model_id:path}",
        model,
        methods=["GET"],
        tags=tags,
        summary="One rail config",
        responses={404: _ERRORS[404]},
    )
