"""The typed routes of each command: ``POST /commands/{name}``, ``/stream`` and ``/batch``.

Each route takes the arguments as a JSON object checked against the prompt function's
signature, strictly, as tool arguments are (a bad body is a 422 with each field's error), and
calls the command through its async driver, so every call is its own: no state of one request
is kept on the shared command object. A command with output rails streams nothing before its answer has
passed them: the text (or partial values) is held back and the railed value is sent whole.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any, get_args

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python
from starlette.responses import JSONResponse, Response

from .._answer_shape import answer_shape
from .._command import Command
from .._output import OutputType
from .._tools import strict_arguments
from .._types import Result
from ..errors import ConfigurationError
from ..rows import Args
from ._config import PROVIDER_KEY_HEADER, ServeConfig
from ._errors import COMMAND_ERRORS, describe, invalid
from ._schemas import CommandModels, UsageBody, build_models
from ._sse import DONE, error_response, frame, stream_response


@dataclass(frozen=True)
class Endpoint:
    """One served command: its name, the command, its bodies and how it streams."""

    name: str
    command: Command[..., Any]
    models: CommandModels
    #: "text" (text chunks), "partial" (partial typed values) or None (no stream route).
    stream: str | None
    #: Whether output rails hold the stream back until the answer has passed them.
    hold: bool
    description: str

    def info(self) -> dict[str, Any]:
        """What the playground and ``GET /commands`` show of it."""
        return {
            "name": self.name,
            "description": self.description,
            "output": output_title(self.command.output_type),
            "stream": self.stream,
            "request_schema": self.models.request.model_json_schema(),
            "response_schema": self.models.response.model_json_schema(mode="serialization"),
        }


def output_title(output: OutputType) -> str:
    """The output type as ``GET /commands`` and the playground show it: each class by its own
    name, as ``list[Review]``, never ``list[myapp.models.Review]``."""
    title = output.expected
    for cls in _classes(output.value_type):
        title = title.replace(f"{cls.__module__}.{cls.__qualname__}", cls.__qualname__)
    return title


def _classes(tp: Any) -> Iterator[type]:
    if isinstance(tp, type):
        yield tp
    for arg in get_args(tp):
        yield from _classes(arg)


def endpoint_for(name: str, cmd: Command[..., Any]) -> Endpoint:
    """The endpoint of command ``name``; a ConfigurationError says why it cannot be served."""
    models = build_models(name, cmd)
    output = cmd.output_type
    stream: str | None
    if output.value_type is type(None):
        stream = None
    elif output.schema is None or output.value_type is str:
        stream = "text"
    else:
        try:
            answer_shape(output, cmd.name)
            stream = "partial"
        except ConfigurationError:
            stream = None
    hold = any(rail.kind == "output" for rail in cmd.rails)
    doc = inspect.getdoc(getattr(cmd, "__wrapped__", cmd)) or ""
    return Endpoint(name, cmd, models, stream, hold, doc.split("\n\n")[0].strip())


def result_body(result: Result[Any]) -> dict[str, Any]:
    """The response body of a finished call, JSON-ready."""
    return {
        "value": to_jsonable_python(result.value),
        "usage": UsageBody.of(result.usage).model_dump(),
        "model": result.model,
        "attempts": result.transcript.attempts,
    }


def for_request(cmd: Command[..., Any], request: Request, config: ServeConfig) -> Any:
    """The command for this request: with the caller's own provider key when it sent one and
    pass-through is on; a 400 when it sent one and pass-through is off (never ignored)."""
    key = request.headers.get(PROVIDER_KEY_HEADER)
    if key is None:
        return cmd
    if not config.pass_through_keys:
        raise invalid(
            f"this server does not take callers' provider keys ({PROVIDER_KEY_HEADER}): "
            "remove the header, or start the server with --pass-through-keys",
            PROVIDER_KEY_HEADER,
        )
    return cmd.with_options(api_key=key)


async def strict_body(request: Request, model: type[BaseModel]) -> Any:
    """The body validated again, strictly, as tool arguments are: FastAPI validates in
    pydantic's lax mode, where ``true`` passes as 1 and ``"5"`` as 5. A mismatch is the same
    422 FastAPI answers, with each field's error."""
    try:
        return strict_arguments(model, await request.body())
    except ValidationError as error:
        raise RequestValidationError(
            [{**e, "loc": ("body", *e["loc"])} for e in error.errors(include_url=False)]
        ) from None


def _stream_failed(error: BaseException) -> list[bytes]:
    _, body, _ = describe(error)
    return [frame(body, "error"), DONE]


def add_routes(app: FastAPI, endpoints: dict[str, Endpoint], config: ServeConfig) -> None:
    """Register every endpoint's routes and ``GET /commands``."""

    async def list_commands() -> JSONResponse:
        """The served commands with their request and response schemas."""
        return JSONResponse([endpoint.info() for endpoint in endpoints.values()])

    app.add_api_route(
        "/commands", list_commands, methods=["GET"], tags=["commands"], summary="List commands"
    )
    for endpoint in endpoints.values():
        _add_endpoint(app, endpoint, config)


def _signature(body_type: type[BaseModel]) -> inspect.Signature:
    """What FastAPI reads to validate the body: ``(request, body: <model>)``."""
    return inspect.Signature(
        [
            inspect.Parameter(
                "request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request
            ),
            inspect.Parameter(
                "body", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=body_type
            ),
        ]
    )


def _add_endpoint(app: FastAPI, endpoint: Endpoint, config: ServeConfig) -> None:
    name, models = endpoint.name, endpoint.models
    tags: list[str | Enum] = ["commands"]

    async def call(request: Request, body: Any) -> Response:
        body = await strict_body(request, models.request)
        try:
            cmd = for_request(endpoint.command, request, config)
            args, kwargs = models.arguments(body)
            result = await cmd.arun(*args, **kwargs)
        except Exception as error:
            return error_response(error)
        return JSONResponse(result_body(result))

    call.__signature__ = _signature(models.request)  # type: ignore[attr-defined]
    app.add_api_route(
        f"/commands/{name}",
        call,
        methods=["POST"],
        name=f"call_{name}",
        summary=f"Call {name}",
        description=endpoint.description or None,
        tags=tags,
        responses={200: {"model": models.response}, **COMMAND_ERRORS},
        response_class=JSONResponse,
    )

    async def batch(request: Request, body: Any) -> Response:
        body = await strict_body(request, models.batch)
        try:
            cmd = for_request(endpoint.command, request, config)
            rows = []
            for item in body.inputs:
                args, kwargs = models.arguments(item)
                rows.append(Args(*args, **kwargs))
            records = await cmd.amap(rows, concurrency=body.concurrency, progress=False)
        except Exception as error:
            return error_response(error)
        results = []
        for record in records:
            if record.ok:
                results.append(
                    {
                        "ok": True,
                        "value": to_jsonable_python(record.value),
                        "usage": UsageBody.of(record.usage).model_dump(),
                    }
                )
            else:
                _, error_body, _ = describe(record.error)
                results.append({"ok": False, "error": error_body["error"]})
        ok = sum(1 for r in results if r["ok"])
        return JSONResponse({"results": results, "ok": ok, "failed": len(results) - ok})

    batch.__signature__ = _signature(models.batch)  # type: ignore[attr-defined]
    app.add_api_route(
        f"/commands/{name}/batch",
        batch,
        methods=["POST"],
        name=f"batch_{name}",
        summary=f"Call {name} once per input",
        description="One record per input, in input order: a failed input is a record with "
        "its error, and does not fail the others.",
        tags=tags,
        responses={200: {"model": models.batch_response}, **COMMAND_ERRORS},
        response_class=JSONResponse,
    )
    if endpoint.stream is None:
        return

    async def stream(request: Request, body: Any) -> Response:
        body = await strict_body(request, models.request)
        try:
            cmd = for_request(endpoint.command, request, config)
            args, kwargs = models.arguments(body)
            if endpoint.stream == "text":
                running = cmd.astream(*args, **kwargs)
            else:
                running = cmd.astream_partial(*args, **kwargs)
        except Exception as error:
            return error_response(error)
        return await stream_response(_frames(running, endpoint), _stream_failed, running.aclose)

    stream.__signature__ = _signature(models.request)  # type: ignore[attr-defined]
    what = "text" if endpoint.stream == "text" else "partial values"
    app.add_api_route(
        f"/commands/{name}/stream",
        stream,
        methods=["POST"],
        name=f"stream_{name}",
        summary=f"Stream {name}",
        description=f"Server-sent events: `{'text' if endpoint.stream == 'text' else 'partial'}` "
        f"events of {what} as they arrive, then one `result` event (the response body of "
        "the call route), then `data: [DONE]`. A failure after the stream started is an "
        "`error` event (the error body) before `[DONE]`; one before it is a plain error answer.",
        tags=tags,
        responses={
            200: {"content": {"text/event-stream": {"schema": {"type": "string"}}}},
            **COMMAND_ERRORS,
        },
        response_class=Response,
    )


async def _frames(running: Any, endpoint: Endpoint) -> AsyncIterator[bytes]:
    """The stream's frames; held back to the end when output rails must see the answer."""
    text = endpoint.stream == "text"
    async for item in running:
        if endpoint.hold:
            continue  # an output rail may still block or rewrite it: nothing leaves yet
        if text:
            yield frame({"text": item}, "text")
        else:
            yield frame({"data": to_jsonable_python(item.data), "attempt": item.attempt}, "partial")
    result = running.result
    if endpoint.hold and text:
        yield frame({"text": str(result.value)}, "text")
    yield frame(result_body(result), "result")
    yield DONE
