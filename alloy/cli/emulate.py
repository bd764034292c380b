"""``alloy emulate [--host H] [--port N] [--persona NAME]``: serve the provider emulator of ``alloy.testing``
in the foreground, for SDKs and tests to talk to instead of the real providers."""

from __future__ import annotations

import argparse

from ._shared import UsageError, Verbs


def add_parser(verbs: Verbs) -> None:
    emulate = verbs.add_parser(
        "emulate",
        help="serve the provider emulator on 127.0.0.1",
        description="Serve the OpenAI, Anthropic, Gemini and Ollama wire APIs locally until "
        "Ctrl-C; point an SDK at it with the printed environment variables.",
    )
    emulate.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    emulate.add_argument(
        "--port", type=int, default=8765, help="port; 0 picks a free one (default 8765)"
    )
    emulate.add_argument("--seed", type=int, default=0, help="seed for generated answers")
    emulate.add_argument(
        "--no-strict-schemas",
        action="store_true",
        help="accept schemas the real providers would reject",
    )
    emulate.add_argument(
        "--persona",
        metavar="NAME",
        help="play an endpoint with its quirks: deepseek, lmstudio, vllm-bare, llamacpp, groq, "
        "bedrock-silent, vertex-claude-policy or azure-old-api",
    )
    emulate.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    try:
        from ..testing.emulator import serve_forever
    except ImportError as exc:
        raise UsageError(f"the emulator is not available: {exc}") from None
    try:
        serve_forever(
            args.host,
            args.port,
            seed=args.seed,
            strict_schemas=not args.no_strict_schemas,
            persona=args.persona,
        )
    except ValueError as exc:  # an unknown persona
        raise UsageError(str(exc)) from None
    except OSError as exc:  # the port is taken, or the host is not an address of this machine
        raise UsageError(
            f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}"
        ) from None
    return 0
