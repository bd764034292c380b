"""The ``alloy`` command: run a command from the shell, show its schema, check the set-up.

::

    alloy run module:command --arg value ...   call a command, print the result as JSON
    alloy map module:command --input rows.jsonl --output out.jsonl
                                               call it once per row of a JSONL or CSV file
    alloy batch list|status|wait|cancel|results CHECKPOINT
                                               the provider batch jobs of a batch run
    alloy schema module:command [--provider P] the exact output schema a provider receives
    alloy eval module:command --data cases.jsonl -m MODEL
                                               measure it field by field, compare models
    alloy providers                            SDKs installed and keys set (never the keys)
    alloy emulate [--host H] [--port N]        serve the provider emulator for tests
    alloy cache stats|clear|prune              manage the response cache
    alloy serve module[:name ...] [--port N]   serve commands over HTTP (and rails, OpenAI-style)
    alloy mcp module[:command]                 serve commands as MCP tools over stdio

Each verb is a module of this package holding its flags (``add_parser``) and its handler
(``handle``); :func:`build_parser` asks each in turn. Every failure the user can fix ends in one
line on stderr and a non-zero exit status, never a traceback: 2 for usage and configuration
mistakes (a bad path, a bad argument, no model, no key), 1 for a call that failed (any
:class:`~alloy.errors.CommandError`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from .. import __version__
from ..errors import CommandError, ConfigurationError
from . import batch, cache, emulate, mcp, providers, run, schema, serve
from . import eval as evaluate
from . import map as map_rows
from ._shared import EXIT_FAILED, EXIT_USAGE, RUN_OPTIONS, Parser, UsageError, load_command
from .providers import capability_matrix, provider_status
from .run import convert_value
from .schema import provider_schema

__all__ = [
    "EXIT_FAILED",
    "EXIT_USAGE",
    "PROVIDER_ENV",  # served by __getattr__, from the provider descriptors
    "RUN_OPTIONS",
    "UsageError",
    "build_parser",
    "capability_matrix",
    "convert_value",
    "load_command",
    "main",
    "provider_schema",
    "provider_status",
]

#: The verbs in the order ``alloy --help`` lists them; each module adds its own subparser.
VERBS = (run, map_rows, batch, schema, evaluate, providers, emulate, cache, serve, mcp)


def __getattr__(name: str) -> Any:
    """``PROVIDER_ENV`` (provider -> its variables), now read from the provider descriptors."""
    if name == "PROVIDER_ENV":
        from ..providers import providers

        return {provider.name: provider.env for provider in providers().values()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser; ``alloy run`` parses the command's own arguments in a second step."""
    parser = Parser(prog="alloy", description="Typed AI functions from the shell.")
    parser.add_argument("--version", action="version", version=f"alloy {__version__}")
    verbs = parser.add_subparsers(dest="subcommand", metavar="COMMAND", parser_class=Parser)
    verbs.required = True
    for verb in VERBS:
        verb.add_parser(verbs)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``alloy`` command; returns the exit status instead of raising it."""
    try:
        args = build_parser().parse_args(argv)
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except UsageError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except ConfigurationError as exc:
        return _fail(f"ConfigurationError: {exc}", EXIT_USAGE)
    except CommandError as exc:
        return _fail(f"{type(exc).__name__}: {exc}", EXIT_FAILED)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `alloy ... | head`: the reader left; say nothing more
        _silence_stdout()
        return 1
    except Exception as exc:  # the user's own code failed (a prompt function, say)
        return _fail(f"{type(exc).__name__}: {exc}", EXIT_FAILED)


def _silence_stdout() -> None:
    # Python would report the broken pipe again when it flushes stdout at exit.
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (captured in tests)
        pass
    finally:
        os.close(devnull)


def _fail(message: str, status: int) -> int:
    print(f"alloy: error: {' '.join(message.split())}", file=sys.stderr)
    return status
