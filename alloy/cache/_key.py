"""The cache key: a hash of the exact request the provider would receive.

For a provider adapter that is its wire body, as the adapter declares it
(``cache_key_parts``, see ``alloy._model.CacheKeyed``: every field, temperature, seed, tools,
schema and options; never the API key or headers, which travel outside the body, nor the
attempt's timeout), with the provider, the model, the endpoint it is sent to (the adapter's
``cache_scope``: two OpenAI-compatible servers may serve different models under one name) and
the output type's schema. A model that declares no key parts (the offline model, a hand-written
Model) is keyed by the whole normalized Request instead. Changing any one field changes the key.
The cache knows no provider: where a body keeps its options is the adapter's to say.

A request sent with an explicit key (the ``api_key`` option: ``with_options(api_key=...)``,
``alloy serve --pass-through-keys``) is keyed by a salted digest of that key too (see
:func:`caller_digest`), so an answer one caller paid for is only ever given to a caller sending
the same key: a caller whose key the provider never accepted misses, and the provider refuses
it. Requests sent with the provider's variable (``OPENAI_API_KEY``) share entries as before.

What stays the same for every request of a cached model (provider, model, endpoint, whether it
streams, the schema) is hashed once, as a :func:`key_head`; each request hashes only its body
on top of a copy of it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._model import CacheKeyed, CacheKeyParts, CacheScope
from .._types import Request

if TYPE_CHECKING:
    from hashlib import _Hash


#: What the caller-key digest is salted with: it is alloy's alone, so the digest matches no
#: other hash of the key (a leaked store is no lookup table for keys), and neither the key
#: nor the digest is written anywhere: only the request key it is hashed into.
_CALLER_SALT = b"alloy response cache: the caller's own provider key, v1"


class Unkeyable(Exception):
    """The request holds something that has no canonical JSON form; it is not cached."""


def key_parts(model: Any, request: Request, *, stream: bool) -> CacheKeyParts | None:
    """What keys ``request`` sent by ``model``, as the model declares it, or None for a model
    that declares nothing (it is keyed by the normalized Request)."""
    return model.cache_key_parts(request, stream=stream) if isinstance(model, CacheKeyed) else None


def scope_of(model: Any) -> CacheScope | None:
    """What every request of ``model`` shares in its key (endpoint, the caller's own key), or
    None for a model that declares no key parts."""
    return model.cache_scope() if isinstance(model, CacheKeyed) else None


def caller_digest(api_key: str | None) -> str | None:
    """The salted digest of the explicit key a model sends with (its ``api_key`` option), or
    None when it sends the key its SDK reads from the provider's variable."""
    if not isinstance(api_key, str) or not api_key:
        return None
    return hmac.new(_CALLER_SALT, api_key.encode(), hashlib.sha256).hexdigest()


def key_head(
    model_name: str,
    *,
    stream: bool,
    schema_text: str,
    endpoint: str | None = None,
    caller: str | None = None,
) -> _Hash:
    """The hash of what a key shares with every request of one model: the provider and model,
    the endpoint, whether it streams, the output schema's canonical JSON, and the digest of
    the caller's own key when it sends one (see :func:`caller_digest`)."""
    fields: list[Any] = [model_name, endpoint, stream]
    if caller is not None:  # without one, keys stay what they were: committed caches still hit
        fields.append(caller)
    return hashlib.sha256(f"{canonical(fields)}\n{schema_text}\n".encode())


def finish_key(head: _Hash, request: Request, body: Mapping[str, Any] | None) -> str:
    """The hex SHA-256 of ``head`` followed by the request: its wire body (as the adapter
    declares it: ``CacheKeyParts.body``), or the normalized Request for a model without one."""
    sent: Any = body if body is not None else _request_fields(request)
    digest = head.copy()
    digest.update(canonical(sent).encode())
    return digest.hexdigest()


def request_key(
    model_name: str,
    request: Request,
    body: Mapping[str, Any] | None,
    *,
    stream: bool,
    schema: Any = None,
    schema_text: str | None = None,
    endpoint: str | None = None,
    caller: str | None = None,
) -> str:
    """The hex SHA-256 of the canonical request: provider and model, the endpoint (see
    ``CacheScope``), the wire body (or the normalized Request), whether it streams, and
    the output type's schema (or ``schema_text``, its canonical JSON made once beforehand),
    and ``caller``, the digest of the caller's own key (see :func:`caller_digest`)."""
    if schema_text is None:
        schema_text = canonical(schema)
    head = key_head(
        model_name, stream=stream, schema_text=schema_text, endpoint=endpoint, caller=caller
    )
    return finish_key(head, request, body)


def canonical(value: Any) -> str:
    """``value`` as JSON with sorted keys and no spaces; raises Unkeyable for what has no JSON
    (a value that holds itself too: it recurses until RecursionError)."""
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise Unkeyable(str(exc)) from None


def is_deterministic(request: Request, sampling: Mapping[str, Any] | None) -> bool:
    """Whether the request asks for a repeatable answer: temperature 0 or a seed, in the
    sampling options as sent (``CacheKeyParts.sampling``), or in the Request's settings for a
    model that declares no key parts.

    An omitted temperature is the provider's default (1 at most providers), not 0.
    """
    if sampling is None:
        settings = request.settings
        return settings.temperature == 0 or settings.extra.get("seed") is not None
    temperature = sampling.get("temperature")
    return (_is_number(temperature) and temperature == 0) or _is_number(sampling.get("seed"))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _request_fields(request: Request) -> dict[str, Any]:
    """The Request as plain data, without the per-attempt timeout (the engine shortens it to
    fit a deadline, which changes nothing the model sees)."""
    fields = _shallow(request)
    fields["settings"] = _shallow(request.settings)
    del fields["settings"]["timeout"]
    # Left out at their defaults, so the keys of requests that force nothing stay as they were.
    if request.tool_choice is None:
        del fields["tool_choice"]
    if request.parallel_tool_calls:
        del fields["parallel_tool_calls"]
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


#: Made once (``json.dumps`` with options builds an encoder per call). Without the circular
#: check, which is a third of the work on a request body; a value holding itself ends in
#: RecursionError instead, which :func:`canonical` turns into Unkeyable as well.
_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, check_circular=False, default=_plain
)
