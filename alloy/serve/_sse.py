"""Server-sent events: frames, and a response that reports failures as it should.

A stream's status is sent with its first byte. So the first frame is produced before the
response starts: a failure before any output (a rail blocking the input, an output rail
blocking a held-back answer, a bad argument) still gets its own status and JSON body. A
failure after output has been sent ends the stream with an ``error`` event and then
``[DONE]``, never with a silent cut; so does a stream the server cuts off at its graceful
timeout while stopping (``server_shutting_down``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.responses import JSONResponse, Response, StreamingResponse

from ._errors import describe, log, shutting_down

DONE = b"data: [DONE]\n\n"
_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def frame(data: Any, event: str | None = None) -> bytes:
    """One SSE frame of JSON ``data`` (compact, one line)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


def error_response(error: BaseException) -> JSONResponse:
    """The JSON error answer for ``error`` (see :mod:`alloy.serve._errors`)."""
    status, body, headers = describe(error)
    if status >= 500 and body["error"]["type"] == "internal_error":
        log.error("request failed: %s", type(error).__name__)
    return JSONResponse(body, status_code=status, headers=headers)


async def stream_response(
    frames: AsyncIterator[bytes],
    on_error: Callable[[BaseException], list[bytes]],
    close: Callable[[], Any] | None = None,
) -> Response:
    """A ``text/event-stream`` answer of ``frames``, whose first frame is awaited now.

    ``on_error`` gives the frames that end a stream failing after its start (an error event,
    then ``[DONE]``, in the route's own dialect). ``close`` is awaited when the stream ends
    or the client leaves.
    """
    try:
        first = await frames.__anext__()
    except StopAsyncIteration:
        first = None
    except Exception as error:
        await _close(close)
        return error_response(error)

    async def body() -> AsyncIterator[bytes]:
        try:
            if first is not None:
                yield first
            async for item in frames:
                yield item
        except Exception as error:
            status, _, _ = describe(error)
            log.warning("stream failed after its start: %s (%d)", type(error).__name__, status)
            for item in on_error(error):
                yield item
        except asyncio.CancelledError:
            # The server is stopping (or the client left, and these frames reach no one). The
            # stream ends here, whole: re-raised, the cancellation would cut its last chunk.
            for item in on_error(shutting_down()):
                yield item
        finally:
            await _close(close)

    return StreamingResponse(body(), media_type="text/event-stream", headers=_HEADERS)


async def _close(close: Callable[[], Any] | None) -> None:
    if close is None:
        return
    outcome = close()
    if outcome is not None:
        await outcome
