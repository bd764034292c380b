"""The server's own settings: who may call it, what it logs, what it serves besides commands.

They come from ``alloy serve``'s flags or from ``ALLOY_SERVE_*`` variables (the variables are
how ``--workers`` and ``--reload`` hand them to each worker process). API keys are kept only as
SHA-256 digests, so no key sits in memory where a repr, a log line or a crash report could show
it; a presented key is hashed the same way and compared with every stored digest in constant
time (:func:`hmac.compare_digest`).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..errors import ConfigurationError

#: Comma-separated bearer keys the server accepts; unset or empty means no auth.
API_KEYS_ENV = "ALLOY_SERVE_API_KEYS"
#: ``1`` lets a caller send its own provider key (``X-Alloy-Provider-Key``); off by default.
PASS_THROUGH_ENV = "ALLOY_SERVE_PASS_THROUGH_KEYS"
#: ``1`` puts request bodies into the access log (never keys or headers); off by default.
LOG_CONTENT_ENV = "ALLOY_SERVE_LOG_CONTENT"
#: ``0`` leaves the playground page out.
PLAYGROUND_ENV = "ALLOY_SERVE_PLAYGROUND"
#: ``1`` traces every request with OpenTelemetry (the process's tracer provider).
OTEL_ENV = "ALLOY_SERVE_OTEL"
#: Comma-separated names the ``Host`` header may give (``*`` for any); unset means loopback.
ALLOWED_HOSTS_ENV = "ALLOY_SERVE_ALLOWED_HOSTS"
#: The largest request body taken, in bytes; a larger one is a 413.
MAX_BODY_ENV = "ALLOY_SERVE_MAX_BODY_BYTES"
#: ``1`` serves the commands as MCP tools over Streamable HTTP at ``/mcp`` (``alloy[mcp]``).
MCP_ENV = "ALLOY_SERVE_MCP"

#: The names of this machine's loopback interface, the hosts a local server answers to.
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
#: 4 MiB: a long conversation or a full batch fits; a body meant to exhaust memory does not.
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024

#: The header a caller's own provider key arrives in, when pass-through is on.
PROVIDER_KEY_HEADER = "x-alloy-provider-key"


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


@dataclass(frozen=True)
class ServeConfig:
    """How the server behaves. Build it with :meth:`ServeConfig.create` (keys as text)."""

    #: SHA-256 digests of the accepted bearer keys; empty means every caller is let in.
    key_digests: tuple[bytes, ...] = field(default=(), repr=False)
    #: Whether a caller may send its own provider key in ``X-Alloy-Provider-Key``.
    pass_through_keys: bool = False
    #: Whether the access log carries request bodies (prompts and arguments).
    log_content: bool = False
    #: Whether ``/`` serves the playground page.
    playground: bool = True
    #: Whether each request is traced with OpenTelemetry.
    otel: bool = False
    #: The host names (lower case, no port) the ``Host`` header may give; ``*`` allows any.
    allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS
    #: The largest request body taken, in bytes.
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    #: Whether ``/mcp`` serves the commands as MCP tools (Streamable HTTP).
    mcp: bool = False

    @classmethod
    def create(
        cls,
        *,
        api_keys: Iterable[str] = (),
        pass_through_keys: bool = False,
        log_content: bool = False,
        playground: bool = True,
        otel: bool = False,
        allowed_hosts: Iterable[str] = LOOPBACK_HOSTS,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        mcp: bool = False,
    ) -> ServeConfig:
        """A config accepting ``api_keys`` (blank ones are refused: a blank key would let
        anyone in who sends ``Authorization: Bearer`` with nothing after it), requests whose
        ``Host`` is one of ``allowed_hosts``, and bodies of at most ``max_body_bytes``."""
        keys = list(api_keys)
        for index, key in enumerate(keys):
            if not isinstance(key, str) or not key.strip():
                raise ConfigurationError(
                    f"API key number {index + 1} is blank: give non-empty keys, or none to "
                    "serve without auth"
                )
        hosts = tuple(dict.fromkeys(host_name(host) for host in allowed_hosts))
        if not all(hosts):
            raise ConfigurationError("an allowed host is blank: give host names, or '*'")
        if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int):
            raise ConfigurationError(f"max_body_bytes={max_body_bytes!r}: expected an integer")
        if max_body_bytes < 1:
            raise ConfigurationError(f"max_body_bytes={max_body_bytes}: expected at least 1")
        return cls(
            key_digests=tuple(_digest(key.strip()) for key in keys),
            pass_through_keys=pass_through_keys,
            log_content=log_content,
            playground=playground,
            otel=otel,
            allowed_hosts=hosts,
            max_body_bytes=max_body_bytes,
            mcp=mcp,
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServeConfig:
        """The config the ``ALLOY_SERVE_*`` variables describe."""
        env = os.environ if environ is None else environ
        keys = [k for k in (env.get(API_KEYS_ENV) or "").split(",") if k.strip()]
        return cls.create(
            api_keys=keys,
            pass_through_keys=_flag(env, PASS_THROUGH_ENV, False),
            log_content=_flag(env, LOG_CONTENT_ENV, False),
            playground=_flag(env, PLAYGROUND_ENV, True),
            otel=_flag(env, OTEL_ENV, False),
            allowed_hosts=host_list(env.get(ALLOWED_HOSTS_ENV)) or LOOPBACK_HOSTS,
            max_body_bytes=max_body_from_env(env),
            mcp=_flag(env, MCP_ENV, False),
        )

    @property
    def auth(self) -> bool:
        """Whether callers must present a key."""
        return bool(self.key_digests)

    def accepts(self, key: str) -> bool:
        """Whether ``key`` is one of the configured keys, compared in constant time.

        Every stored digest is compared (no early exit), so the time taken says nothing about
        which key, or how much of one, matched.
        """
        presented = _digest(key)
        matched = False
        for digest in self.key_digests:
            matched |= hmac.compare_digest(presented, digest)
        return matched

    def serves_host(self, host: str | None) -> bool:
        """Whether a ``Host`` header names this server. A page on another site that had its
        name resolve to this machine (DNS rebinding) sends its own name, and is refused."""
        if "*" in self.allowed_hosts:
            return True
        return host is not None and host_name(host) in self.allowed_hosts


def host_name(host: str) -> str:
    """A ``Host`` header (or a name given as an allowed host) as a bare lower-case name: no
    port, no brackets around an IPv6 address, no final dot."""
    name = host.strip().lower()
    if name.startswith("["):
        name = name[1:].partition("]")[0]
    elif name.count(":") == 1:
        name = name.partition(":")[0]
    return name.rstrip(".")


def host_list(raw: str | None) -> tuple[str, ...]:
    """Comma-separated host names, blanks left out."""
    return tuple(part.strip() for part in (raw or "").split(",") if part.strip())


def max_body_from_env(environ: Mapping[str, str] | None = None) -> int:
    """The body limit ``ALLOY_SERVE_MAX_BODY_BYTES`` sets, or the default."""
    env = os.environ if environ is None else environ
    raw = (env.get(MAX_BODY_ENV) or "").strip()
    if not raw:
        return DEFAULT_MAX_BODY_BYTES
    try:
        value = int(raw)
    except ValueError:
        raise ConfigurationError(
            f"{MAX_BODY_ENV}={raw!r}: expected a whole number of bytes"
        ) from None
    if value < 1:
        raise ConfigurationError(f"{MAX_BODY_ENV}={raw!r}: expected at least 1 byte")
    return value


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = (env.get(name) or "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ConfigurationError(f"{name}={raw!r}: expected 1 or 0 (true/false, yes/no, on/off)")
