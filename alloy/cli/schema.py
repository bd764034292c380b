"""``alloy schema module:command [--provider P]``: the output schema a provider receives."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .. import Command
from ._shared import UsageError, Verbs, load_command


def add_parser(verbs: Verbs) -> None:
    schema = verbs.add_parser(
        "schema",
        help="print the output schema a provider receives",
        description="Print the command's output JSON Schema: the canonical one alloy "
        "validates against, or with --provider the one that provider is sent.",
    )
    schema.add_argument("target", help="module:command or path/to/file.py:command")
    schema.add_argument(
        "--provider", help="provider name, or provider:model (e.g. gemini:gemini-2.0-flash)"
    )
    schema.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    cmd = load_command(args.target)
    print(json.dumps(provider_schema(cmd, args.provider), indent=2, ensure_ascii=False))
    return 0


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
    from ..providers import providers

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
