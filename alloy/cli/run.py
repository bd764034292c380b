"""``alloy run module:command --arg value ...``: call a command, print its result as JSON.

The command's own options are built from its signature and type hints in a second parse, once
the target is imported; each value is validated against its parameter's type.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import inspect
import typing
from collections.abc import Callable
from typing import Any

from .. import AsyncCommand, Command
from ._shared import (
    RUN_OPTIONS,
    Parser,
    UsageError,
    Verbs,
    function_of,
    load_command,
    print_json,
)


def add_parser(verbs: Verbs) -> None:
    run = verbs.add_parser(
        "run",
        help="call a command and print its result as JSON",
        description="Call a command with arguments parsed from its signature; print the "
        "result as JSON. `alloy run module:command --help` lists the command's arguments.",
    )
    run.add_argument("target", help="module:command or path/to/file.py:command")
    run.add_argument("--model", help="model for this call, e.g. openai:gpt-5-mini or offline")
    run.add_argument("--temperature", type=float, help="sampling temperature (0-2)")
    run.add_argument("--max-tokens", type=int, dest="max_tokens", help="output token limit")
    run.add_argument("args", nargs=argparse.REMAINDER, help="the command's arguments")
    run.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    cmd = load_command(args.target)
    params = _command_params(cmd)
    parser = _command_parser(cmd, args.target, params)
    values = parser.parse_args(args.args)
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    for param in params:
        raw = getattr(values, param.name)
        if raw is None:
            continue  # not given and optional: the function's default applies
        value = convert_value(raw, param.annotation, param.flag)
        if param.positional_only:
            positional.append(value)
        else:
            keywords[param.name] = value
    options: dict[str, Any] = {}
    for _, option, _ in RUN_OPTIONS:
        value = getattr(values, f"alloy_{option}", None)
        if value is None:
            value = getattr(args, option)
        if value is not None:
            options[option] = value
    if options:
        cmd = cmd.with_options(**options)
    if isinstance(cmd, AsyncCommand) or inspect.iscoroutinefunction(function_of(cmd)):
        result = asyncio.run(cmd.acall(*positional, **keywords))
    else:
        result = cmd(*positional, **keywords)
    print_json(result)
    return 0


@dataclasses.dataclass(frozen=True)
class _Param:
    name: str
    flag: str
    annotation: Any
    required: bool
    positional_only: bool


def _command_params(cmd: Command[..., Any]) -> list[_Param]:
    fn = function_of(cmd)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise UsageError(f"cannot read the type hints of {cmd.name}: {exc}") from None
    params = []
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise UsageError(
                f"{cmd.name} takes *{param.name}, which cannot be given on the command line"
            )
        params.append(
            _Param(
                name=param.name,
                flag="--" + param.name.replace("_", "-"),
                annotation=hints.get(param.name, str),
                required=param.default is param.empty,
                positional_only=param.kind is param.POSITIONAL_ONLY,
            )
        )
    return params


def _type_label(annotation: Any) -> str:
    from .._output import type_name

    return type_name(annotation)


def _is_bool(annotation: Any) -> bool:
    """``bool`` or ``bool | None``: such parameters also work as bare flags."""
    return annotation is bool or set(typing.get_args(annotation)) == {bool, type(None)}


def _command_parser(cmd: Command[..., Any], target: str, params: list[_Param]) -> Parser:
    fn = function_of(cmd)
    from .._tools import parse_docstring

    summary, param_docs = parse_docstring(inspect.getdoc(fn) or "")
    parser = Parser(
        prog=f"alloy run {target}",
        description=summary.split("\n\n")[0] or None,
        epilog="Values are validated against the parameter types: lists, dicts, dataclasses "
        "and pydantic models are given as JSON.",
    )
    taken = {p.flag for p in params}
    for param in params:
        label = _type_label(param.annotation)
        doc = param_docs.get(param.name, "")
        detail = "required" if param.required else f"default: {_default_of(fn, param.name)!r}"
        help_text = f"{doc} ({label}, {detail})".strip()
        if _is_bool(param.annotation):
            parser.add_argument(
                param.flag,
                dest=param.name,
                nargs="?",
                const="true",
                metavar="BOOL",
                required=param.required,
                help=help_text,
            )
            negative = "--no-" + param.flag[2:]
            if negative not in taken:
                parser.add_argument(
                    negative,
                    dest=param.name,
                    action="store_const",
                    const="false",
                    help=argparse.SUPPRESS,
                )
        else:
            parser.add_argument(
                param.flag,
                dest=param.name,
                metavar=label.upper() if label.isidentifier() else "VALUE",
                required=param.required,
                help=help_text,
            )
    # The run options, unless the command has a parameter of the same name: then they can
    # still be given before the target (`alloy run --model M module:cmd --model value`).
    for flag, option, convert in RUN_OPTIONS:
        if flag not in taken:
            parser.add_argument(flag, dest=f"alloy_{option}", type=convert, help=argparse.SUPPRESS)
    return parser


def _default_of(fn: Callable[..., Any], name: str) -> Any:
    return inspect.signature(fn).parameters[name].default


def convert_value(raw: str, annotation: Any, flag: str) -> Any:
    """Validate a command-line string as ``annotation``: as text first, then as JSON.

    Text covers numbers, booleans (``true``/``false``/``yes``/``no``/``1``/``0``), enums, dates
    and UUIDs; JSON covers lists, objects, dataclasses, pydantic models and ``null``.
    """
    if annotation is str or annotation is Any:
        return raw
    from pydantic import TypeAdapter, ValidationError
    from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
        raise UsageError(
            f"argument {flag}: type {_type_label(annotation)} cannot be given on the command "
            f"line ({type(exc).__name__})"
        ) from None
    try:
        return adapter.validate_python(raw)
    except ValidationError as as_text:
        try:
            return adapter.validate_json(raw)
        except ValidationError as as_json:
            looks_json = raw.strip()[:1] in ("[", "{", '"') or raw.strip() == "null"
            error = (as_json if looks_json else as_text).errors(include_url=False)[0]
            where = ".".join(str(p) for p in error["loc"])
            detail = f"{where}: {error['msg']}" if where else error["msg"]
            raise UsageError(
                f"argument {flag}: expected {_type_label(annotation)}, got {raw!r} ({detail})"
            ) from None
