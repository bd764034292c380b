"""What every verb of the ``alloy`` command shares: the usage error and the parser that raises
it, the exit statuses, loading a ``module:command`` target, and printing JSON."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, NoReturn, TypeAlias

from .. import Command, _importing
from .._importing import TargetNotFound
from ..errors import ConfigurationError

#: Exit status for usage and configuration mistakes (argparse's own convention).
EXIT_USAGE = 2
#: Exit status for a call that was made and failed.
EXIT_FAILED = 1


#: The call options ``alloy run`` and ``alloy map`` take, for ``cmd.with_options``:
#: (flag, option name, type).
RUN_OPTIONS: tuple[tuple[str, str, Callable[[str], Any]], ...] = (
    ("--model", "model", str),
    ("--temperature", "temperature", float),
    ("--max-tokens", "max_tokens", int),
)


class UsageError(Exception):
    """A mistake on the command line; reported in one line with exit status 2."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of printing usage and exiting, so main() decides."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


#: What a verb module's ``add_parser`` is handed: ``alloy``'s subparsers.
Verbs: TypeAlias = "argparse._SubParsersAction[Parser]"


def load_command(target: str) -> Command[..., Any]:
    """Import ``module:attr`` or ``path/to/file.py:attr`` and return the command it names."""
    try:
        command: Command[..., Any] = _importing.load_command(target)
    except TargetNotFound as exc:
        raise UsageError(str(exc)) from None
    except ConfigurationError:
        raise
    except Exception as exc:
        module_part = target.rpartition(":")[0]
        raise UsageError(f"importing {module_part!r} failed: {type(exc).__name__}: {exc}") from None
    return command


def function_of(cmd: Command[..., Any]) -> Callable[..., Any]:
    """The prompt function behind ``cmd``, whose signature gives the command's arguments."""
    fn: Callable[..., Any] = getattr(cmd, "__wrapped__", cmd)
    return fn


def print_json(value: Any) -> None:
    """Print ``value`` as JSON indented by two spaces (dataclasses and pydantic models too)."""
    from pydantic_core import to_json

    print(to_json(value, indent=2, serialize_unknown=True).decode())
