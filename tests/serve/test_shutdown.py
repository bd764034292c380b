"""A stream the server cuts off at its graceful timeout ends with an error event and [DONE]
(a request cut off before its answer started is in test_process.py: a JSON 503)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator

import httpx
import uvicorn
from fastapi import FastAPI
from starlette.responses import Response

from alloy.serve._observe import AccessLog
from alloy.serve._shutdown import CutOff
from alloy.serve._sse import DONE, frame, stream_response

from .conftest import free_port


def stalled_stream_app() -> FastAPI:
    """A stream that sends one frame, then waits longer than any test."""

    async def frames() -> AsyncIterator[bytes]:
        yield frame({"text": "first"}, "text")
        await asyncio.sleep(60)
        yield frame({"text": "never sent"}, "text")

    def ended(error: BaseException) -> list[bytes]:
        return [frame({"error": str(error)}, "error"), DONE]

    app = FastAPI()

    async def stream() -> Response:
        return await stream_response(frames(), ended)

    app.add_api_route("/stream", stream, methods=["POST"])
    app.add_middleware(CutOff)
    app.add_middleware(AccessLog)
    return app


def test_a_stream_cut_off_at_the_graceful_timeout_ends_with_an_error_event() -> None:
    port = free_port()
    config = uvicorn.Config(
        stalled_stream_app(),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=0.2,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(1000):
        if server.started:
            break
        time.sleep(0.02)
    with httpx.stream("POST", f"http://127.0.0.1:{port}/stream", timeout=30) as answer:
        chunks = answer.iter_raw()
        assert next(chunks) == frame({"text": "first"}, "text")
        server.should_exit = True  # as on SIGTERM: requests in flight get 0.2 s
        rest = b"".join(chunks)  # the stream ends whole: no incomplete chunked read
    thread.join(timeout=30)
    event, done = rest.split(b"\n\n")[:2]
    assert event.startswith(b"event: error\ndata: ")
    assert "shutting down" in json.loads(event.split(b"data: ", 1)[1])["error"]
    assert done + b"\n\n" == DONE
