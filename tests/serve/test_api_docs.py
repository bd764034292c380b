"""The API description: ``/openapi.json`` declares the bearer keys the server asks for."""

from __future__ import annotations

import httpx
from openapi_spec_validator import validate

from alloy.serve import ServeConfig

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
