"""The ``/docs`` page: Swagger UI served by this server, with nothing loaded from another host.

FastAPI's own page fetches Swagger UI from a CDN, so opening ``/docs`` told a third party who
looks at the API and failed offline. Here the script, the style sheet and the icon come from
the ``swagger-ui-bundle-v2`` package (part of the ``serve`` extra) under ``/docs/``, and a
Content-Security-Policy keeps the page to this server. Without that package, ``/docs`` is a
short page pointing at ``/openapi.json`` and saying what to install.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from functools import cache
from html import escape

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

#: Each asset's URL, with its file in the Swagger UI bundle and its media type.
ASSETS = {
    "/docs/swagger-ui-bundle.js": ("swagger-ui-bundle.js", "text/javascript; charset=utf-8"),
    "/docs/swagger-ui.css": ("swagger-ui.css", "text/css; charset=utf-8"),
    "/docs/favicon.png": ("favicon-32x32.png", "image/png"),
}

#: The page's paths, all open: they call no model and show no data.
DOCS_PATHS = frozenset({"/docs", *ASSETS})

#: Everything the page loads comes from this server (Swagger UI styles itself inline and
#: draws its icons as data: URLs).
_POLICY = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'self'"
)


@cache
def _asset(name: str) -> bytes | None:
    """The bundled file ``name``, or None when Swagger UI is not installed."""
    try:
        bundle = importlib.import_module("swagger_ui_bundle")  # ships no type information
    except ImportError:
        return None
    return bytes(bundle.swagger_ui_path.joinpath(name).read_bytes())


def add_routes(app: FastAPI, title: str) -> None:
    async def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "").rstrip("/")
        if _asset("swagger-ui-bundle.js") is None:
            page = _without_swagger_ui(root + "/openapi.json", title)
        else:
            page = get_swagger_ui_html(
                openapi_url=root + "/openapi.json",
                title=f"{title} - API docs",
                swagger_js_url=root + "/docs/swagger-ui-bundle.js",
                swagger_css_url=root + "/docs/swagger-ui.css",
                swagger_favicon_url=root + "/docs/favicon.png",
                swagger_ui_parameters={"validatorUrl": None},  # no spec sent to a validator
            )
        page.headers["content-security-policy"] = _POLICY
        return page

    app.add_api_route("/docs", docs, methods=["GET"], include_in_schema=False)
    for path, (name, media_type) in ASSETS.items():
        app.add_api_route(
            path, _serve_asset(name, media_type), methods=["GET"], include_in_schema=False
        )


def _serve_asset(name: str, media_type: str) -> Callable[[], Awaitable[Response]]:
    async def asset() -> Response:
        content = _asset(name)
        if content is None:
            raise HTTPException(404, "Swagger UI is not installed: pip install 'alloy[serve]'")
        return Response(
            content, media_type=media_type, headers={"cache-control": "public, max-age=86400"}
        )

    return asset


def _without_swagger_ui(openapi_url: str, title: str) -> HTMLResponse:
    url = escape(openapi_url)
    return HTMLResponse(
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{escape(title)} - API docs</title></head><body>"
        f"<h1>{escape(title)}</h1><p>The API description is at <a href='{url}'>{url}</a>. "
        "For the interactive page, install Swagger UI: "
        "<code>pip install 'alloy[serve]'</code>.</p></body></html>"
    )
