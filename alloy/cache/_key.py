"""The cache key: a hash of the exact request the provider would receive.

For a provider adapter that is its wire body (``build()``: every field, temperature, seed,
tools, schema and options; never the API key or headers, which travel outside the body), with
the provider, the model and the output type's schema. A model without a wire body (the offline
model, a hand-written Model) is keyed by the whole normalized Request instead. Changing any one
field changes the key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from .._types import Request

#: Where a body keeps its sampling options: at the top (OpenAI, Anthropic) or further down
#: (Ollama's ``options``; Gemini's ``config``, and ``extra_json`` in its ``http_options``'s
#: ``extra_body``, written as the REST API's ``generationConfig``).
_OPTION_HOLDERS = (
    "options",
    "config",
    "generation_config",
    "generationConfig",
    "http_options",
    "extra_body",
)


class Unkeyable(Exception):
    """The request holds something that has no canonical JSON form; it is not cached."""


def wire_body(model: Any, request: Request, *, stream: bool) -> dict[str, Any] | None:
    """The body ``model`` would send for ``request``, or None for a model without one."""
    build = getattr(model, "build", None)
    if build is None:
        return None
    body: dict[str, Any] = build(request, stream=stream)
    return body


def request_key(
    model_name: str,
    request: Request,
    body: Mapping[str, Any] | None,
    *,
    stream: bool,
    schema: Any = None,
    schema_text: str | None = None,
) -> str:
    """The hex SHA-256 of the canonical request: provider and model, the wire body (or the
    normalized Request), whether it streams, and the output type's schema (or ``schema_text``,
    its canonical JSON made once beforehand)."""
    sent: Any = _without_timeout(body) if body is not None else _request_fields(request)
    if schema_text is None:
        schema_text = canonical(schema)
    head = canonical([model_name, stream])
    text = f"{head}\n{schema_text}\n{canonical(sent)}"
    return hashlib.sha256(text.encode()).hexdigest()


def _without_timeout(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """The body without the attempt's timeout: Gemini carries it in ``config.http_options``,
    and the engine shortens it to fit a deadline, which changes nothing the model sees."""
    config = body.get("config")
    if not isinstance(config, dict):
        return body
    options = config.get("http_options")
    if not (isinstance(options, dict) and "timeout" in options):
        return body
    trimmed = {name: value for name, value in options.items() if name != "timeout"}
    rest = {name: value for name, value in config.items() if name != "http_options"}
    return {**body, "config": {**rest, "http_options": trimmed} if trimmed else rest}


def canonical(value: Any) -> str:
    """``value`` as JSON with sorted keys and no spaces; raises Unkeyable for what has no JSON."""
    try:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_plain
        )
    except (TypeError, ValueError, RecursionError) as exc:
        raise Unkeyable(str(exc)) from None


def is_deterministic(request: Request, body: Mapping[str, Any] | None) -> bool:
    """Whether the request asks for a repeatable answer: temperature 0 or a seed.

    An omitted temperature is the provider's default (1 at most providers), not 0.
    """
    if body is None:
        settings = request.settings
        return settings.temperature == 0 or settings.extra.get("seed") is not None
    holders: list[Mapping[str, Any]] = [body]
    for holder in holders:  # grows as it goes: holders nested in holders
        holders.extend(
            holder[name] for name in _OPTION_HOLDERS if isinstance(holder.get(name), dict)
        )
    for holder in holders:
        temperature = holder.get("temperature")
        if _is_number(temperature) and temperature == 0:
            return True
        if _is_number(holder.get("seed")):
            return True
    return False


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _request_fields(request: Request) -> dict[str, Any]:
    """The Request as plain data, without the per-attempt timeout (the engine shortens it to
    fit a deadline, which changes nothing the model sees)."""
    fields = _shallow(request)
    fields["settings"] = _shallow(request.settings)
    del fields["settings"]["timeout"]
    return fields


def _plain(value: Any) -> Any:
    """JSON for what ``json`` does not know: tuples of dataclasses, SDK models, sets, bytes."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _shallow(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_none=True)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, (bytes, bytearray)):
        return {"__bytes__": bytes(value).hex()}
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} has no JSON form")


def _shallow(value: Any) -> dict[str, Any]:
    """A dataclass's fields, named with its type (json walks into the values itself)."""
    fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    return {"__type__": type(value).__name__, **fields}
