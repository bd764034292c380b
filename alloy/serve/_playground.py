"""The playground page at ``/``: a form per command, generated from its request schema.

The page is one static file (``playground.html``, no build step, no CDN): it reads
``GET /commands``, builds each command's form from the JSON Schema of its request body, and
shows the typed result of ``POST /commands/{name}`` and the events of ``/stream`` as they
arrive.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from fastapi import FastAPI
from starlette.responses import HTMLResponse


@cache
def page() -> str:
    return files(__package__ or "alloy.serve").joinpath("playground.html").read_text("utf-8")


def add_routes(app: FastAPI) -> None:
    async def playground() -> HTMLResponse:
        return HTMLResponse(page())

    app.add_api_route("/", playground, methods=["GET"], include_in_schema=False)
