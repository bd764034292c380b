"""Which capability profile a call runs by: resolved from the most specific source.

1. the user's override (the ``profile=`` option: a :class:`Profile`, or a mapping of the
   fields to change);
2. a stored probe of the endpoint (``store_probe`` / ``load_probe``, keyed by base URL, model
   and server version; ``alloy providers --probe`` writes them);
3. what this process observed (a 400 refusing ``response_format``, a schema answered with
   prose: see ``alloy._profile.observe``);
4. the endpoint's declaration (``Provider.profiles``, by model id prefix);
5. the model family (what the adapter declares in ``Model.capabilities`` from the model id).

Model ids are normalised before a family or declaration lookup (:func:`family_id`), so
Bedrock's ``us.anthropic.claude-sonnet-4-5-20250929-v1:0``, Vertex's
``claude-sonnet-4-5@20250929`` and OpenRouter's ``anthropic/claude-sonnet-4.5`` find Claude's
entries.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from time import monotonic
from typing import TYPE_CHECKING, Any

from .._profile import Profile, observed
from ..errors import ConfigurationError

if TYPE_CHECKING:
    from .._model import Model
    from ._descriptor import Provider

__all__ = [
    "PROFILE_STORE_ENV",
    "declared_in",
    "declared_profile",
    "endpoint_of",
    "family_id",
    "load_probe",
    "profile_from",
    "resolve_profile",
    "store_probe",
]

#: The file stored probes are kept in (JSON); default ``~/.cache/alloy/profiles.json``.
PROFILE_STORE_ENV = "ALLOY_PROFILE_STORE"

_BEDROCK_REGION = re.compile(r"^(?:us|eu|apac|jp|au|ca|us-gov|global)\.")
_BEDROCK_VENDOR = re.compile(
    r"^(?:anthropic|amazon|meta|mistral|cohere|ai21|deepseek|qwen|openai|writer|twelvelabs)\."
)
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")


def family_id(model_id: str) -> str:
    """A model id as its family knows it: lower case, without a router's vendor prefix
    (``anthropic/claude-sonnet-4.5``), a Vertex version (``claude-sonnet-4-5@20250929``), a
    Bedrock region, vendor and version (``us.anthropic.claude-...-v1:0``) or a variant tag
    (OpenRouter's ``:free``)."""
    name = model_id.strip().lower().rsplit("/", 1)[-1]
    name = name.split("@", 1)[0]
    name = _BEDROCK_REGION.sub("", name)
    name = _BEDROCK_VENDOR.sub("", name)
    name = _BEDROCK_VERSION.sub("", name)
    return name.split(":", 1)[0]


def endpoint_of(model: Model) -> str:
    """What a model's profile is keyed by besides its name: its base URL, else its provider."""
    base_url = getattr(model, "base_url", None)
    if isinstance(base_url, str) and base_url:
        return base_url.rstrip("/")
    return model.name.partition(":")[0]


def declared_profile(provider: Provider | None, model_id: str) -> Profile | None:
    """What ``provider``'s descriptor declares for ``model_id``, or None."""
    return declared_in(provider.profiles, model_id) if provider is not None else None


def declared_in(profiles: Mapping[str, Profile], model_id: str) -> Profile | None:
    """The profile of ``profiles``' longest prefix of ``model_id``, tried on the id as given
    and as its family knows it; a key ending in ``$`` matches a whole id only. None when no key
    matches."""
    best: tuple[str, Profile] | None = None
    for candidate in dict.fromkeys((model_id, family_id(model_id))):
        for prefix, profile in profiles.items():
            matches = (
                candidate == prefix[:-1] if prefix.endswith("$") else candidate.startswith(prefix)
            )
            if matches and (best is None or len(prefix) > len(best[0])):
                best = (prefix, profile)
    return best[1] if best is not None else None


def profile_from(base: Profile, override: Profile | Mapping[str, Any]) -> Profile:
    """``base`` with the user's override: a whole Profile, or the fields a mapping names."""
    if isinstance(override, Profile):
        return replace(override, source="user")
    try:
        return base.updated(dict(override), "user")
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"Invalid value for option 'profile': {exc}") from None


def resolve_profile(
    model: Model,
    provider: Provider | None,
    override: Profile | Mapping[str, Any] | None = None,
) -> Profile:
    """The profile ``model``'s calls run by, from the most specific source (module docstring)."""
    model_id = model.name.partition(":")[2]
    endpoint = endpoint_of(model)
    profile = observed(endpoint, model.name)
    if profile is None:
        profile = load_probe(endpoint, model_id)
    if profile is None:
        profile = declared_profile(provider, model_id) or model.capabilities
    if override is not None:
        profile = profile_from(profile, override)
    return profile


# -- stored probes -----------------------------------------------------------------------------

_LOCK = threading.Lock()
#: How long the store as last read is trusted before its file is looked at again (seconds):
#: calls resolve a profile each, and a ``stat`` per call is not free. A save in this process
#: replaces what is kept at once; another process's save is seen within this time.
RECHECK_SECONDS = 1.0


@dataclass
class _Store:
    """The store file as last read: its modification time (None: no file), when it was last
    looked at, its entries, and the profiles already parsed from them."""

    mtime: int | None
    checked: float
    entries: dict[str, Any]
    parsed: dict[tuple[str, str | None], Profile | None] = field(default_factory=dict)


_STORES: dict[str, _Store] = {}


def _store_path(path: str | os.PathLike[str] | None) -> Path:
    if path is not None:
        return Path(path)
    configured = os.environ.get(PROFILE_STORE_ENV)
    if configured:
        return Path(configured)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "alloy" / "profiles.json"


def _key(base_url: str, model: str) -> str:
    return f"{base_url.rstrip('/')} {model}"


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def _read(path: Path) -> dict[str, Any]:
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return entries if isinstance(entries, dict) else {}


def _store(path: Path) -> _Store:
    """The store at ``path``: as last read while that is recent, or while the file has not
    changed since; read again otherwise."""
    now = monotonic()
    with _LOCK:
        kept = _STORES.get(str(path))
        if kept is not None and now - kept.checked < RECHECK_SECONDS:
            return kept
    mtime = _mtime(path)
    if kept is not None and kept.mtime == mtime:
        kept.checked = now
        return kept
    store = _Store(mtime, now, _read(path) if mtime is not None else {})
    with _LOCK:
        _STORES[str(path)] = store
    return store


def _to_json(profile: Profile) -> dict[str, Any]:
    data = asdict(profile)
    for name, value in data.items():
        if isinstance(value, frozenset):
            data[name] = sorted(value)
    return data


def _from_json(data: Mapping[str, Any]) -> Profile | None:
    known = {f.name for f in fields(Profile)}
    try:
        return Profile(**{k: v for k, v in data.items() if k in known})
    except (TypeError, ValueError):
        return None


def store_probe(
    profile: Profile,
    *,
    base_url: str,
    model: str,
    server_version: str | None = None,
    path: str | os.PathLike[str] | None = None,
) -> Path:
    """Keep a probed ``profile`` of ``model`` at ``base_url`` (as the server reported its
    ``server_version``, when it did), in ``path`` (else ``ALLOY_PROFILE_STORE``, else
    ``~/.cache/alloy/profiles.json``). The newest probe of a (base URL, model) is what calls
    use. Returns the file written."""
    target = _store_path(path)
    entries = _read(target)  # as on disk now: another process may have saved since
    key = _key(base_url, model)
    versions = dict(entries.get(key) or {})
    versions[server_version or ""] = _to_json(replace(profile, source="probed"))
    versions["latest"] = server_version or ""
    entries[key] = versions
    target.parent.mkdir(parents=True, exist_ok=True)
    # A temporary file of this process's own, whose time the replaced file keeps: read after
    # the replace, another process's save in between would be taken for this one.
    temporary = target.with_suffix(f"{target.suffix}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(entries, indent=2, sort_keys=True), encoding="utf-8")
    written = _mtime(temporary)
    temporary.replace(target)
    with _LOCK:
        _STORES[str(target)] = _Store(written, monotonic(), entries)
    return target


def load_probe(
    base_url: str,
    model: str,
    server_version: str | None = None,
    *,
    path: str | os.PathLike[str] | None = None,
) -> Profile | None:
    """The stored probe of ``model`` at ``base_url`` for ``server_version`` (None: the newest
    probe), or None when there is none (or the server has changed version since)."""
    store = _store(_store_path(path))
    key = _key(base_url, model)
    with _LOCK:
        if (key, server_version) in store.parsed:
            return store.parsed[key, server_version]
    versions = store.entries.get(key)
    profile = None
    if isinstance(versions, dict):
        version = versions.get("latest", "") if server_version is None else server_version
        data = versions.get(version)
        profile = _from_json(data) if isinstance(data, dict) else None
    with _LOCK:
        store.parsed[key, server_version] = profile
    return profile
