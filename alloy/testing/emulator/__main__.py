"""``python -m alloy.testing.emulator [--host H] [--port N]``: serve until Ctrl-C."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ._emulator import serve_forever
from ._script import PROVIDERS, APIFamily


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
    parser.add_argument(
        "--rate-limit",
        action="append",
        default=[],
        metavar="FAMILY:RPM[:TPM]",
        help="keep an API family (openai, anthropic, gemini, ollama, bedrock) to requests and tokens per "
        "minute, e.g. openai:600:100000 (an empty RPM: tokens only); repeatable",
    )
    parser.add_argument(
        "--vary-answers",
        action="store_true",
        help="give each request its own default answer, drawn from its body",
    )
    args = parser.parse_args(argv)
    try:
        limits = rate_limits(args.rate_limit)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        serve_forever(
            args.host,
            args.port,
            seed=args.seed,
            strict_schemas=not args.no_strict_schemas,
            rate_limits=limits,
            vary_answers=args.vary_answers,
        )
    except OSError as exc:  # the port is taken, or the host is not an address of this machine
        print(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


def rate_limits(given: Sequence[str]) -> dict[APIFamily, tuple[float | None, float | None]]:
    """``FAMILY:RPM[:TPM]`` flags as a mapping; ValueError naming a bad one."""
    limits: dict[APIFamily, tuple[float | None, float | None]] = {}
    for flag in given:
        family, _, numbers = flag.partition(":")
        rpm_text, _, tpm_text = numbers.partition(":")
        if family not in PROVIDERS:
            raise ValueError(f"--rate-limit {flag!r}: the family is one of {', '.join(PROVIDERS)}")
        try:
            rpm = float(rpm_text) if rpm_text else None
            tpm = float(tpm_text) if tpm_text else None
        except ValueError:
            raise ValueError(f"--rate-limit {flag!r}: expected FAMILY:RPM[:TPM] numbers") from None
        if (rpm is None and tpm is None) or any(v is not None and not v > 0 for v in (rpm, tpm)):
            raise ValueError(f"--rate-limit {flag!r}: give RPM and/or TPM above 0")
        limits[family] = (rpm, tpm)
    return limits


if __name__ == "__main__":
    raise SystemExit(main())
