"""``alloy serve module[:name ...]``: serve commands and rail configs over HTTP with uvicorn
(install ``alloy[serve]``)."""

from __future__ import annotations

import argparse

from ._shared import UsageError, Verbs


def add_parser(verbs: Verbs) -> None:
    serve = verbs.add_parser(
        "serve",
        help="serve commands (and rail configs) over HTTP",
        description="Serve every command and alloy.serve.RailConfig of a module (or those "
        "named as module:name) with uvicorn: POST /commands/{name} (/stream, /batch), the "
        "OpenAI-compatible /v1/chat/completions and /v1/responses, /health, /docs and a "
        "playground at /. Bearer keys come from ALLOY_SERVE_API_KEYS or --api-key.",
    )
    serve.add_argument("targets", nargs="+", help="module, module:name or path/to/file.py[:name]")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    serve.add_argument(
        "--reload", action="store_true", help="restart on code changes (development)"
    )
    serve.add_argument(
        "--api-key", action="append", help="a bearer key callers must send (repeatable)"
    )
    serve.add_argument(
        "--pass-through-keys",
        action="store_true",
        help="let callers send their own provider key in X-Alloy-Provider-Key",
    )
    serve.add_argument(
        "--log-content", action="store_true", help="log request bodies (prompts) too"
    )
    serve.add_argument(
        "--allowed-host",
        action="append",
        metavar="NAME",
        help="a name clients reach the server by, besides the bound host (repeatable; '*' "
        "for any, behind a proxy that checks Host)",
    )
    serve.add_argument(
        "--max-body-bytes",
        type=int,
        metavar="N",
        help="largest request body taken, in bytes (default 4194304; larger is a 413)",
    )
    serve.add_argument(
        "--insecure-no-auth",
        action="store_true",
        help="serve without API keys on an address other machines reach",
    )
    serve.add_argument("--no-playground", action="store_true", help="serve no page at /")
    serve.add_argument("--otel", action="store_true", help="trace requests with OpenTelemetry")
    serve.add_argument(
        "--mcp",
        action="store_true",
        help="also serve the commands as MCP tools over Streamable HTTP at /mcp (alloy[mcp])",
    )
    serve.add_argument(
        "--graceful-timeout",
        type=float,
        default=30.0,
        help="seconds to let requests in flight finish on shutdown (default 30)",
    )
    serve.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    try:
        from ..serve import run
    except ImportError as exc:
        raise UsageError(
            f"alloy serve needs its extra: pip install 'alloy[serve]' ({exc})"
        ) from None
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    try:
        run(
            args.targets,
            host=args.host,
            port=args.port,
            workers=args.workers,
            reload=args.reload,
            api_keys=args.api_key or (),
            pass_through_keys=args.pass_through_keys,
            log_content=args.log_content,
            playground=not args.no_playground,
            otel=args.otel,
            mcp=args.mcp,
            graceful_timeout=args.graceful_timeout,
            allowed_hosts=args.allowed_host or (),
            max_body_bytes=args.max_body_bytes,
            insecure_no_auth=args.insecure_no_auth,
        )
    except OSError as exc:  # the port is taken, or the host is not an address of this machine
        raise UsageError(
            f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}"
        ) from None
    return 0
