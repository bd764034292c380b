"""The floor for a Python proxy: a bare FastAPI app that forwards ``POST /v1/chat/completions``
to the upstream as it came, with one shared httpx client, and answers what the upstream said.
No validation, no rails, no retries. ``UPSTREAM`` is the upstream's ``/v1`` base URL.

Run as ``uvicorn benchmarks.proxy_forwarder:app``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI, Request, Response

UPSTREAM = os.environ.get("UPSTREAM", "http://127.0.0.1:8765/v1")
KEY = os.environ.get("OPENAI_API_KEY", "")


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    async with httpx.AsyncClient(base_url=UPSTREAM, timeout=60) as client:
        app.state.client = client
        yield


app = FastAPI(lifespan=lifespan)


@app.post("/v1/chat/completions")
async def chat(request: Request) -> Response:
    upstream = await request.app.state.client.post(
        "/chat/completions",
        content=await request.body(),
        headers={"content-type": "application/json", "authorization": f"Bearer {KEY}"},
    )
    return Response(upstream.content, upstream.status_code, media_type="application/json")
