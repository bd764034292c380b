"""``python -m alloy.testing.emulator [--host H] [--port N]``: serve until Ctrl-C."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ._emulator import serve_forever


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and serve in the foreground; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m alloy.testing.emulator",
        description="Serve the OpenAI, Anthropic, Gemini and Ollama wire APIs locally for tests.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=8765, help="port to bind; 0 picks a free one (default 8765)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for generated default answers")
    parser.add_argument(
        "--no-strict-schemas",
        action="store_true",
        help="accept schemas the real providers would reject",
    )
    args = parser.parse_args(argv)
    try:
        serve_forever(
            args.host, args.port, seed=args.seed, strict_schemas=not args.no_strict_schemas
        )
    except OSError as exc:  # the port is taken, or the host is not an address of this machine
        print(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
