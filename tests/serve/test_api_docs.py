"""The API description: ``/openapi.json`` declares the bearer keys the server asks for."""

from __future__ import annotations

import re

import httpx
import pytest
from openapi_spec_validator import validate

from alloy.serve import ServeConfig, _docs

from .conftest import Start

KEY = "docs-key-1b9e"


def test_the_openapi_document_declares_the_bearer_keys(start: Start, offline: None) -> None:
    url = start(config=ServeConfig.create(api_keys=[KEY]))
    document = httpx.get(f"{url}/openapi.json").json()
    validate(document)
    assert document["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "One of the server's keys (ALLOY_SERVE_API_KEYS or --api-key)",
    }
    paths = document["paths"]
    for path, method in [
        ("/commands", "get"),
        ("/commands/review", "post"),
        ("/commands/review/stream", "post"),
        ("/commands/review/batch", "post"),
        ("/v1/chat/completions", "post"),
        ("/v1/responses", "post"),
        ("/v1/models", "get"),
    ]:
        operation = paths[path][method]
        assert operation["security"] == [{"bearerAuth": []}], path
        assert "401" in operation["responses"], path
        # What the document says is what the server does.
        assert httpx.request(method, url + path, json={}).status_code == 401, path
    assert "security" not in paths["/health"]["get"]
    assert httpx.get(f"{url}/health").status_code == 200
    assert httpx.get(f"{url}/openapi.json").json() == document  # declared once, not again


def test_without_keys_the_document_asks_for_none(start: Start, offline: None) -> None:
    url = start()
    document = httpx.get(f"{url}/openapi.json").json()
    validate(document)
    assert "securitySchemes" not in document["components"]
    assert not any("security" in op for item in document["paths"].values() for op in item.values())


def test_the_docs_page_loads_nothing_from_another_host(start: Start, offline: None) -> None:
    url = start(config=ServeConfig.create(api_keys=[KEY]))
    page = httpx.get(f"{url}/docs")  # open, like its assets: they call nothing
    assert page.status_code == 200
    assert "://" not in page.text  # no CDN, no validator, no icon from elsewhere
    loaded = re.findall(r"""(?:src|href)=["']([^"']+)""", page.text)
    assert sorted(loaded) == [
        "/docs/favicon.png",
        "/docs/swagger-ui-bundle.js",
        "/docs/swagger-ui.css",
    ]
    assert "url: '/openapi.json'" in page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]
    types = {}
    for path in loaded:
        asset = httpx.get(url + path)
        assert asset.status_code == 200, path
        assert len(asset.content) > 500, path
        types[path] = asset.headers["content-type"].split(";")[0]
    assert types == {
        "/docs/favicon.png": "image/png",
        "/docs/swagger-ui-bundle.js": "text/javascript",
        "/docs/swagger-ui.css": "text/css",
    }
    assert "SwaggerUIBundle" in httpx.get(f"{url}/docs/swagger-ui-bundle.js").text


def test_without_swagger_ui_the_docs_page_points_at_the_document(
    start: Start, offline: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_docs, "_asset", lambda name: None)  # as if the package were missing
    url = start()
    page = httpx.get(f"{url}/docs")
    assert page.status_code == 200
    assert "://" not in page.text
    assert "href='/openapi.json'" in page.text and "pip install 'alloy[serve]'" in page.text
    missing = httpx.get(f"{url}/docs/swagger-ui-bundle.js")
    assert missing.status_code == 404
    assert "pip install" in missing.json()["error"]["message"]
