"""Requests cut off by a shutdown get the one JSON error shape, with status 503.

On SIGTERM uvicorn lets the requests in flight run for ``--graceful-timeout`` seconds, then
cancels them, and answered a request cancelled before its answer started with a plain-text 500.
:class:`CutOff` answers it instead with a 503 ``server_shutting_down`` body: the server went
away, the call did not fail, and the same request sent again (to a server that is up) may
succeed. A stream cut off after it started ends with its route's error event and ``[DONE]``
(see :mod:`alloy.serve._sse`).

A cancelled request is a shutdown's doing: uvicorn cancels request tasks only then, and the
cancellations inside the app (a client leaving a stream) end at their own cancel scopes.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ._errors import log, shutting_down
from ._sse import error_response


class CutOff:
    """ASGI middleware answering a request cancelled before its answer started with a 503."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_watched(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_watched)
        except asyncio.CancelledError:
            # The cancellation has done its work: the request ends here, answered, and is not
            # re-raised for uvicorn to log as an exception in the app.
            log.warning("cut off at shutdown: %s %s", scope["method"], scope["path"])
            if not started:  # a started stream has sent its error event already
                await error_response(shutting_down())(scope, receive, send)
