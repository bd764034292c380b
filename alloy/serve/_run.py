"""Running the app with uvicorn, as ``alloy serve`` does.

One process serves the app it builds itself. With ``--workers N`` or ``--reload``, uvicorn
starts processes that each build their own app, so the targets and the settings travel to
them as ``ALLOY_SERVE_*`` variables and each one calls :func:`~alloy.serve.from_environment`.
uvicorn's graceful shutdown applies: on SIGTERM or Ctrl-C it stops accepting connections and
lets the requests in flight finish (up to ``graceful_timeout`` seconds).

A server without API keys runs every call for anyone who can reach it, so it binds only to a
loopback address unless ``insecure_no_auth`` says otherwise; and it answers only requests whose
``Host`` names it (see :mod:`alloy.serve._guard`).

uvicorn's own access log is off: ``alloy.serve.access`` writes the one line per request, and
the logging configuration handed to uvicorn (which each worker process applies) sends the
``alloy.serve`` loggers to stderr.
"""

from __future__ import annotations

import copy
import ipaddress
import json
import os
import socket
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigurationError
from ._app import TARGETS_ENV, create_app
from ._config import (
    ALLOWED_HOSTS_ENV,
    API_KEYS_ENV,
    LOG_CONTENT_ENV,
    LOOPBACK_HOSTS,
    MAX_BODY_ENV,
    MCP_ENV,
    OTEL_ENV,
    PASS_THROUGH_ENV,
    PLAYGROUND_ENV,
    ServeConfig,
    host_list,
    host_name,
    max_body_from_env,
)
from ._targets import load


def run(
    targets: Sequence[str],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int = 1,
    reload: bool = False,
    api_keys: Sequence[str] = (),
    pass_through_keys: bool = False,
    log_content: bool = False,
    playground: bool = True,
    otel: bool = False,
    mcp: bool = False,
    graceful_timeout: float = 30.0,
    log_level: str = "info",
    allowed_hosts: Sequence[str] = (),
    max_body_bytes: int | None = None,
    insecure_no_auth: bool = False,
) -> None:
    """Serve ``targets`` until stopped. Keys given here join those in ``ALLOY_SERVE_API_KEYS``,
    and hosts those in ``ALLOY_SERVE_ALLOWED_HOSTS`` and the names ``host`` is reached by."""
    import uvicorn

    keys = [*(k for k in (os.environ.get(API_KEYS_ENV) or "").split(",") if k.strip()), *api_keys]
    refuse_open_door(host, bool(keys), insecure_no_auth)
    hosts = [*served_hosts(host), *host_list(os.environ.get(ALLOWED_HOSTS_ENV)), *allowed_hosts]
    body_limit = max_body_bytes if max_body_bytes is not None else max_body_from_env()
    config = ServeConfig.create(
        api_keys=keys,
        pass_through_keys=pass_through_keys,
        log_content=log_content,
        playground=playground,
        otel=otel,
        mcp=mcp,
        allowed_hosts=hosts,
        max_body_bytes=body_limit,
    )
    served = load(targets)  # every mistake in the targets shows now, in this process
    common = {
        "host": host,
        "port": port,
        "access_log": False,  # alloy.serve.access writes one line per request, without content
        "log_config": log_config(),
        "log_level": log_level,
        "timeout_graceful_shutdown": graceful_timeout,
    }
    check_port(host, port)
    if workers > 1 or reload:
        os.environ[TARGETS_ENV] = json.dumps(list(targets))
        if keys:
            os.environ[API_KEYS_ENV] = ",".join(keys)
        os.environ[ALLOWED_HOSTS_ENV] = ",".join(config.allowed_hosts)
        os.environ[MAX_BODY_ENV] = str(config.max_body_bytes)
        for name, value in (
            (PASS_THROUGH_ENV, pass_through_keys),
            (LOG_CONTENT_ENV, log_content),
            (PLAYGROUND_ENV, playground),
            (OTEL_ENV, otel),
            (MCP_ENV, mcp),
        ):
            os.environ[name] = "1" if value else "0"
        uvicorn.run(
            "alloy.serve:from_environment",
            factory=True,
            workers=workers if not reload else None,
            reload=reload,
            **common,  # type: ignore[arg-type]
        )
        return
    uvicorn.run(create_app(served, config), **common)  # type: ignore[arg-type]


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine's loopback interface (``localhost``, 127.0.0.0/8,
    ``::1``): only this machine can reach a server bound there."""
    name = host_name(host)
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def served_hosts(host: str) -> tuple[str, ...]:
    """The names the ``Host`` header may give for a server bound to ``host``: the loopback
    names when it is a loopback or every address (``0.0.0.0``, ``::``), else ``host`` itself.
    Any other name a client uses is given with ``--allowed-host``."""
    name = host_name(host)
    try:
        everywhere = ipaddress.ip_address(name).is_unspecified
    except ValueError:
        everywhere = False
    if everywhere:
        return LOOPBACK_HOSTS
    if is_loopback(host):
        return tuple(dict.fromkeys((*LOOPBACK_HOSTS, name)))
    return (name,)


def refuse_open_door(host: str, has_keys: bool, insecure_no_auth: bool) -> None:
    """A ConfigurationError for a server without keys on an address other machines reach,
    unless ``insecure_no_auth`` says that is meant: anyone there could spend its provider key."""
    if has_keys or insecure_no_auth or is_loopback(host):
        return
    raise ConfigurationError(
        f"alloy serve without API keys on {host}, which other machines can reach, would run "
        "every call for anyone who can connect: set ALLOY_SERVE_API_KEYS or give --api-key, "
        "bind to 127.0.0.1, or pass --insecure-no-auth if an open server is what you mean"
    )


def check_port(host: str, port: int) -> None:
    """Raise OSError now if ``host:port`` cannot be bound (taken, or not an address of this
    machine): ``alloy serve`` then exits 2 with one line, where uvicorn would log a traceback
    and exit 3. The probe binds as uvicorn does (``SO_REUSEADDR``), so a port whose last
    connections linger in TIME_WAIT still counts as free."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))


def log_config() -> dict[str, Any]:
    """uvicorn's logging configuration, plus the ``alloy.serve`` loggers on stderr at INFO."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["formatters"]["alloy.serve"] = {
        "()": "uvicorn.logging.DefaultFormatter",
        "fmt": "%(levelprefix)s %(message)s",
        "use_colors": None,
    }
    config["handlers"]["alloy.serve"] = {
        "formatter": "alloy.serve",
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
    }
    config["loggers"]["alloy.serve"] = {
        "handlers": ["alloy.serve"],
        "level": "INFO",
        "propagate": False,
    }
    return config
