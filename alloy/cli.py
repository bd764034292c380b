"""The ``alloy`` command: run a command from the shell, show its schema, check the set-up.

::

    alloy run module:command --arg value ...   call a command, print the result as JSON
    alloy map module:command --input rows.jsonl --output out.jsonl
                                               call it once per row of a JSONL or CSV file
    alloy schema module:command [--provider P] the exact output schema a provider receives
    alloy providers                            SDKs installed and keys set (never the keys)
    alloy emulate [--host H] [--port N]        serve the provider emulator for tests
    alloy serve module[:name ...] [--port N]   serve commands over HTTP (and rails, OpenAI-style)

Every failure the user can fix ends in one line on stderr and a non-zero exit status, never a
traceback: 2 for usage and configuration mistakes (a bad path, a bad argument, no model, no
key), 1 for a call that failed (any :class:`~alloy.errors.CommandError`).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib
import importlib.util
import inspect
import json
import os
import sys
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

from . import __version__, _importing
from ._command import AsyncCommand, Command
from ._importing import TargetNotFound
from .errors import CommandError, ConfigurationError

__all__ = [
    "PROVIDER_ENV",  # noqa: F822 -- served by __getattr__, from the provider descriptors
    "UsageError",
    "capability_matrix",
    "convert_value",
    "load_command",
    "main",
    "provider_schema",
    "provider_status",
]

#: Exit status for usage and configuration mistakes (argparse's own convention).
EXIT_USAGE = 2
#: Exit status for a call that was made and failed.
EXIT_FAILED = 1


def __getattr__(name: str) -> Any:
    """``PROVIDER_ENV`` (provider -> its variables), now read from the provider descriptors."""
    if name == "PROVIDER_ENV":
        from .providers import providers

        return {provider.name: provider.env for provider in providers().values()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class UsageError(Exception):
    """A mistake on the command line; reported in one line with exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of printing usage and exiting, so main() decides."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


# -- loading a command --------------------------------------------------------------------------


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


# -- alloy run ----------------------------------------------------------------------------------

#: ``alloy run`` options that map to ``cmd.with_options``: (flag, option name, type).
RUN_OPTIONS: tuple[tuple[str, str, Callable[[str], Any]], ...] = (
    ("--model", "model", str),
    ("--temperature", "temperature", float),
    ("--max-tokens", "max_tokens", int),
)


@dataclasses.dataclass(frozen=True)
class _Param:
    name: str
    flag: str
    annotation: Any
    required: bool
    positional_only: bool


def _command_params(cmd: Command[..., Any]) -> list[_Param]:
    fn = getattr(cmd, "__wrapped__", cmd)
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
    from ._output import type_name

    return type_name(annotation)


def _is_bool(annotation: Any) -> bool:
    """``bool`` or ``bool | None``: such parameters also work as bare flags."""
    return annotation is bool or set(typing.get_args(annotation)) == {bool, type(None)}


def _command_parser(cmd: Command[..., Any], target: str, params: list[_Param]) -> _Parser:
    fn = getattr(cmd, "__wrapped__", cmd)
    from ._tools import _parse_docstring

    summary, param_docs = _parse_docstring(inspect.getdoc(fn) or "")
    parser = _Parser(
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


def _run(args: argparse.Namespace) -> int:
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
    if isinstance(cmd, AsyncCommand) or inspect.iscoroutinefunction(
        getattr(cmd, "__wrapped__", None)
    ):
        result = asyncio.run(cmd.acall(*positional, **keywords))
    else:
        result = cmd(*positional, **keywords)
    _print_json(result)
    return 0


def _print_json(value: Any) -> None:
    from pydantic_core import to_json

    print(to_json(value, indent=2, serialize_unknown=True).decode())


# -- alloy map ----------------------------------------------------------------------------------


def _map(args: argparse.Namespace) -> int:
    """Run a command over the rows of a file; records to --output, a summary to stderr.

    Exit status 0 when every row succeeded, 1 when some failed (their records say why), 2 for a
    usage or configuration mistake. The output is replaced only when the run reaches its end
    (``OutputFile``). With --checkpoint, running the same map again rewrites the output, taking
    the rows finished before from the checkpoint.
    """
    from .rows import BadRow
    from .rows._files import FileRow, is_csv, read_rows, record_of

    cmd = load_command(args.target)
    options = {
        option: getattr(args, option)
        for _, option, _ in RUN_OPTIONS
        if getattr(args, option) is not None
    }
    if options:
        cmd = cmd.with_options(**options)
    target = _output(args.output)  # nothing is written to it until the run has ended
    source = _input(args.input)
    failed = 0
    try:
        rows = cmd.map(
            read_rows(source, cmd._fn, csv_format=args.csv or is_csv(args.input)),
            concurrency=args.concurrency,
            rpm=args.rpm,
            tpm=args.tpm,
            as_completed=args.as_completed,
            errors=args.errors,
            progress=args.progress,
            checkpoint=args.checkpoint,
            retry_failed=not args.keep_failed,
            mode=args.mode,
            poll_interval=args.poll_interval,
            batch_retry=args.batch_retry,
            cost_budget=args.cost_budget,
        )
        with rows:
            for row in rows:
                line = (
                    row.input.line
                    if isinstance(row.input, FileRow)
                    else getattr(row.input, "line", None)
                )
                if not row.ok:
                    failed += 1
                    where = f" (line {line})" if line and not isinstance(row.input, BadRow) else ""
                    error = row.error
                    print(
                        f"alloy: row {row.index}{where}: {type(error).__name__}: {error}",
                        file=sys.stderr,
                    )
                target.write(record_of(row, line))
        summary = rows.summary
    except BaseException:
        kept = target.abandon()
        if kept is not None:
            print(
                f"alloy: the run stopped before its end: {args.output} is left as it was, and "
                f"the {target.written} records written are in {kept}",
                file=sys.stderr,
            )
        raise
    else:
        target.finish()
    finally:
        if source is not sys.stdin:
            source.close()
    if summary is not None:
        print(_describe(summary), file=sys.stderr)
    return EXIT_FAILED if failed else 0


def _input(path: str) -> Any:
    from .rows._files import open_input

    try:
        return open_input(path)
    except OSError as exc:
        raise UsageError(f"cannot open {path!r}: {exc.strerror or exc}") from None


def _output(path: str) -> Any:
    from .rows._output_file import OutputFile

    try:
        return OutputFile(path)
    except OSError as exc:
        raise UsageError(f"cannot write {path!r}: {exc.strerror or exc}") from None


def _describe(summary: Any) -> str:
    cost = f", ${summary.cost:.4f}" if summary.cost else ""
    invalid = summary.invalidated
    rerun = f"; {invalid} stored rows no longer valid, run again" if invalid else ""
    return (
        f"alloy: {summary.rows} rows: {summary.ok} ok, {summary.failed} failed "
        f"({summary.resumed} from the checkpoint{rerun}); {summary.usage.total_tokens} tokens"
        f"{cost}; {summary.seconds:.1f} s ({summary.rows_per_second:.1f} rows/s)"
    )


def _batch(args: argparse.Namespace) -> int:
    from .batch._cli import run

    return run(
        args.action,
        args.checkpoint,
        poll_interval=args.poll_interval,
        as_json=args.json,
        output=args.output,
    )


# -- alloy schema -------------------------------------------------------------------------------


def provider_schema(cmd: Command[..., Any], provider: str | None) -> dict[str, Any]:
    """The output schema as ``provider`` (``name`` or ``name:model``) receives it.

    Without a provider, the canonical schema (what alloy validates against). With one, the
    schema after the dialect its descriptor names, as sent in native structured-output mode.
    """
    schema = cmd.schema
    if schema is None:
        raise UsageError(
            f"{cmd.name} returns {cmd.output_type.expected}, not JSON: it has no output schema"
        )
    if provider is None:
        return schema
    from .providers import providers

    name, _, model_id = provider.partition(":")
    descriptor = providers().get(name)
    if descriptor is None:
        raise UsageError(
            f"unknown provider {name!r}; known providers: {', '.join(sorted(providers()))}"
        )
    try:
        dialect = descriptor.load_dialect()
        return schema if dialect is None else dialect(schema, model_id)
    except ImportError as exc:
        raise UsageError(
            f"the {name} schema dialect is not available ({descriptor.dialect}: {exc})"
        ) from None


def _schema(args: argparse.Namespace) -> int:
    cmd = load_command(args.target)
    print(json.dumps(provider_schema(cmd, args.provider), indent=2, ensure_ascii=False))
    return 0


# -- alloy providers ----------------------------------------------------------------------------


def provider_status() -> list[dict[str, Any]]:
    """Per registered provider: adapter present, SDK installed, which variables are set.

    Nothing is imported (``importlib.util.find_spec`` only) and no value is read out: a
    variable is reported as set or not set.
    """
    from .providers import providers

    rows = []
    for name, provider in providers().items():
        factory_module = (
            provider.factory.partition(":")[0] if isinstance(provider.factory, str) else None
        )
        rows.append(
            {
                "provider": name,
                "adapter": factory_module is None or _module_exists(factory_module),
                "sdk": provider.sdk_module,
                "sdk_installed": provider.sdk_module is None or _module_exists(provider.sdk_module),
                "extra": provider.extra,
                "env": {var: bool(os.environ.get(var)) for var in provider.env},
            }
        )
    return rows


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a missing parent package
        return False


def _configured_model() -> str:
    from ._config import resolve

    try:
        model = resolve({}, {}).model
    except ConfigurationError as exc:
        return f"configuration error: {exc}"
    if model is None:
        return "no model configured (set ALLOY_MODEL, e.g. 'openai:gpt-5-mini' or 'offline')"
    return f"ALLOY_MODEL={model}"


def _providers(args: argparse.Namespace) -> int:
    if args.capabilities:
        print(capability_matrix())
        return 0
    rows = provider_status()
    if args.json:
        print(json.dumps({"model": _configured_model(), "providers": rows}, indent=2))
        return 0
    print(_configured_model())
    print()
    table = [("provider", "adapter", "SDK", "environment")]
    for row in rows:
        if row["sdk"] is None:
            sdk = "none needed"
        elif row["sdk_installed"]:
            sdk = f"{row['sdk']} installed"
        else:
            sdk = f"{row['sdk']} missing: pip install 'alloy[{row['extra']}]'"
        env = ", ".join(f"{var} {'set' if on else 'not set'}" for var, on in row["env"].items())
        table.append(
            (row["provider"], "yes" if row["adapter"] else "missing", sdk, env or "none needed")
        )
    widths = [max(len(line[i]) for line in table) for i in range(3)]
    for line in table:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False))
            + "  "
            + line[3]
        )
    return 0


#: The matrix's columns after provider, model and output mode: what the engine and adapters read.
_CAPABILITY_COLUMNS = {
    "native_schema": "Native schema",
    "tools": "Tools",
    "strict_tools": "Strict tools",
}


def capability_matrix(models: Mapping[str, Sequence[str]] | None = None) -> str:
    """The capability matrix as a Markdown table.

    One row per example model of each provider descriptor (or per model in ``models``), with
    what the model's adapter declares in ``capabilities`` and the dialect its descriptor
    names. Models are built through the provider registry (no client is made and no key is
    needed); a provider whose adapter or SDK is missing is left out.
    """
    from .providers import providers

    registry = providers()
    if models is None:
        models = {name: p.example_models for name, p in registry.items() if p.example_models}
    header = ["Provider", "Model", "Output mode", *_CAPABILITY_COLUMNS.values(), "Schema dialect"]
    lines = [_row(header), _row(["---"] * len(header))]
    for provider, model_ids in models.items():
        if provider not in registry:
            continue
        descriptor = registry[provider]
        try:
            factory = descriptor.load_factory()
        except (ImportError, ConfigurationError):
            continue
        dialect = f"`{descriptor.dialect_name}`" if descriptor.dialect_name else "none"
        for model_id in model_ids:
            capabilities = factory(model_id).capabilities
            model = f"`{provider}:{model_id}`" if model_id else f"`{provider}`"
            cells = [f"`{provider}`", model, capabilities.default_output_mode()]
            cells += ["yes" if getattr(capabilities, n) else "no" for n in _CAPABILITY_COLUMNS]
            lines.append(_row([*cells, dialect]))
    return "\n".join(lines)


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


# -- alloy emulate ------------------------------------------------------------------------------


def _emulate(args: argparse.Namespace) -> int:
    try:
        from .testing.emulator import serve_forever
    except ImportError as exc:
        raise UsageError(f"the emulator is not available: {exc}") from None
    try:
        serve_forever(
            args.host, args.port, seed=args.seed, strict_schemas=not args.no_strict_schemas
        )
    except OSError as exc:  # the port is taken, or the host is not an address of this machine
        raise UsageError(
            f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}"
        ) from None
    return 0


def _cache(args: argparse.Namespace) -> int:
    from ._config import resolve
    from .cache import describe, is_off, new_store, store_file

    config = resolve({}, {})
    location = args.cache or config.cache
    if is_off(location):
        raise UsageError("no response cache is set: set ALLOY_CACHE or pass --cache LOCATION")
    assert location is not None
    path = store_file(location)
    if path is not None and not path.is_file():  # never made here: a typo stays a typo
        raise UsageError(
            f"no response cache exists at {location}: {path} is not a file "
            "(a cached call makes it; check the path)"
        )
    store = new_store(location, config.cache_max_entries)
    try:
        _manage(args, store)
    except Exception as exc:  # a store that cannot serve: say which and why, in one line
        raise ConfigurationError(
            f"the response cache at {store.location} cannot be used: {describe(exc)}"
        ) from None
    finally:
        store.close()
    return 0


def _manage(args: argparse.Namespace, store: Any) -> None:
    """Carry out ``alloy cache stats|clear|prune`` on ``store``."""
    if args.action == "clear":
        print(f"removed {store.clear()} entries from {store.location}")
    elif args.action == "prune":
        print(f"removed {store.prune()} entries from {store.location}")
    else:
        stats = store.stats()
        if args.json:
            _print_json(
                {
                    "location": stats.location,
                    "entries": stats.entries,
                    "expired": stats.expired,
                    "bytes": stats.bytes,
                }
            )
        else:
            print(f"{stats.location}: {stats.entries} entries, {stats.bytes} bytes", end="")
            print(f", {stats.expired} expired (alloy cache prune removes them)")


# -- alloy serve --------------------------------------------------------------------------------


def _serve(args: argparse.Namespace) -> int:
    try:
        from .serve._run import run
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


# -- the entry point ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser; ``alloy run`` parses the command's own arguments in a second step."""
    parser = _Parser(prog="alloy", description="Typed AI functions from the shell.")
    parser.add_argument("--version", action="version", version=f"alloy {__version__}")
    sub = parser.add_subparsers(dest="subcommand", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    run = sub.add_parser(
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
    run.set_defaults(handler=_run)

    mapping = sub.add_parser(
        "map",
        help="call a command once per row of a JSONL or CSV file",
        description="Call a command once per row of a file: JSON Lines (an object per line is "
        "keyword arguments, an array positional ones) or CSV (a header of parameter names). "
        "Writes a JSON record per row to --output, in input order; a row that fails (or a "
        "line that cannot be read) is reported with its line number and does not stop the run.",
    )
    mapping.add_argument("target", help="module:command or path/to/file.py:command")
    mapping.add_argument(
        "--input", required=True, help="rows: a .jsonl or .csv file, or - for stdin"
    )
    mapping.add_argument("--output", default="-", help="records (JSON Lines); - for stdout")
    mapping.add_argument("--csv", action="store_true", help="read the input as CSV")
    mapping.add_argument("--checkpoint", help="SQLite file of finished rows, to resume a run")
    mapping.add_argument("--concurrency", type=int, default=8, help="calls at once (default 8)")
    mapping.add_argument("--rpm", type=float, help="requests per minute at most")
    mapping.add_argument("--tpm", type=float, help="tokens per minute at most")
    mapping.add_argument(
        "--cost-budget",
        type=float,
        dest="cost_budget",
        metavar="USD",
        help="US dollars the whole run may spend; rows left when it is reached fail with "
        "BudgetExceeded and run again on resume",
    )
    mapping.add_argument(
        "--as-completed", action="store_true", help="write records as rows finish, not in order"
    )
    mapping.add_argument(
        "--errors",
        choices=("collect", "raise"),
        default="collect",
        help="collect failed rows (default), or stop at the first",
    )
    mapping.add_argument(
        "--keep-failed",
        action="store_true",
        help="on resume, keep rows that failed before instead of running them again",
    )
    mapping.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
    mapping.add_argument(
        "--mode",
        choices=("online", "batch", "auto"),
        default="online",
        help="online calls (default), the provider's batch API, or batch for big runs",
    )
    mapping.add_argument(
        "--poll-interval",
        type=float,
        default=30.0,
        dest="poll_interval",
        help="seconds between looks at running batch jobs (default 30)",
    )
    mapping.add_argument(
        "--batch-retry",
        choices=("online", "batch"),
        default="online",
        dest="batch_retry",
        help="rows a batch did not answer: run online (default) or in another batch",
    )
    mapping.add_argument("--model", help="model, e.g. openai:gpt-5-mini or offline")
    mapping.add_argument("--temperature", type=float, help="sampling temperature (0-2)")
    mapping.add_argument("--max-tokens", type=int, dest="max_tokens", help="output token limit")
    mapping.set_defaults(handler=_map)

    batch = sub.add_parser(
        "batch",
        help="the batch jobs of a run: list, status, wait, cancel, results",
        description="The provider batch jobs a batch run (alloy map --mode batch, or "
        "cmd.map(..., mode='batch')) recorded in its checkpoint: the jobs it knows, their "
        "state now, waiting for them to end, cancelling them, or the rows as JSON Lines "
        "(the answers of ended jobs read in first).",
    )
    batch.add_argument("action", choices=("list", "status", "wait", "cancel", "results"))
    batch.add_argument("checkpoint", help="the run's checkpoint (SQLite file)")
    batch.add_argument("--json", action="store_true", help="list and status as JSON")
    batch.add_argument("--output", default="-", help="results: where to write (default stdout)")
    batch.add_argument(
        "--poll-interval",
        type=float,
        default=30.0,
        dest="poll_interval",
        help="wait: seconds between looks (default 30)",
    )
    batch.set_defaults(handler=_batch)

    schema = sub.add_parser(
        "schema",
        help="print the output schema a provider receives",
        description="Print the command's output JSON Schema: the canonical one alloy "
        "validates against, or with --provider the one that provider is sent.",
    )
    schema.add_argument("target", help="module:command or path/to/file.py:command")
    schema.add_argument(
        "--provider", help="provider name, or provider:model (e.g. gemini:gemini-2.0-flash)"
    )
    schema.set_defaults(handler=_schema)

    prov = sub.add_parser(
        "providers",
        help="which SDKs are installed and which keys are set",
        description="List the registered providers, whether each SDK is installed and which "
        "of its environment variables are set. Values are never printed.",
    )
    prov.add_argument("--json", action="store_true", help="print JSON")
    prov.add_argument(
        "--capabilities", action="store_true", help="print the capability matrix (Markdown)"
    )
    prov.set_defaults(handler=_providers)

    emulate = sub.add_parser(
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
    emulate.set_defaults(handler=_emulate)

    cache = sub.add_parser(
        "cache",
        help="show, clear or prune the response cache",
        description="Manage the response cache that ALLOY_CACHE (or --cache) names: stats "
        "counts its entries, clear removes them all, prune removes the expired ones and the "
        "oldest beyond ALLOY_CACHE_MAX_ENTRIES.",
    )
    cache.add_argument("action", choices=("stats", "clear", "prune"))
    cache.add_argument(
        "--cache", help="the store: a file path, sqlite:///path or redis://host:port/db"
    )
    cache.add_argument("--json", action="store_true", help="print stats as JSON")
    cache.set_defaults(handler=_cache)

    serve = sub.add_parser(
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
        "--graceful-timeout",
        type=float,
        default=30.0,
        help="seconds to let requests in flight finish on shutdown (default 30)",
    )
    serve.set_defaults(handler=_serve)
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
