"""``alloy providers [--json | --capabilities | --probe MODEL [--save]]``: which SDKs are
installed and which keys are set (never their values), the capability matrix of the providers'
example models, or one endpoint's profile learned by asking it (``alloy.providers.probing``)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ConfigurationError
from ._shared import UsageError, Verbs


def add_parser(verbs: Verbs) -> None:
    prov = verbs.add_parser(
        "providers",
        help="which SDKs are installed and which keys are set",
        description="List the registered providers, whether each SDK is installed and which "
        "of its environment variables are set. Values are never printed.",
    )
    prov.add_argument("--json", action="store_true", help="print JSON")
    prov.add_argument(
        "--capabilities", action="store_true", help="print the capability matrix (Markdown)"
    )
    prov.add_argument(
        "--probe",
        metavar="MODEL",
        help="learn MODEL's capability profile at its endpoint in at most 8 tiny requests",
    )
    prov.add_argument(
        "--base-url", help="with --probe: the endpoint (else the provider's variable)"
    )
    prov.add_argument(
        "--server",
        choices=("llamacpp", "vllm", "none"),
        help="with --probe: the server to ask about itself (default: as the provider says)",
    )
    prov.add_argument(
        "--save",
        action="store_true",
        help="with --probe: store the profile for calls to use (ALLOY_PROFILE_STORE)",
    )
    prov.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.probe is None and (args.save or args.base_url or args.server):
        raise UsageError("--save, --base-url and --server go with --probe MODEL")
    if args.probe is not None:
        return _probe(args)
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


def _probe(args: argparse.Namespace) -> int:
    """Probe one model's endpoint, print its capability row, and store it with ``--save``."""
    from ..providers.probing import capability_row, probe, profile_json, save_probe

    result = probe(args.probe, base_url=args.base_url, server=args.server)
    saved = save_probe(result) if args.save else None
    row = capability_row(result)
    if args.json:
        data: dict[str, Any] = {
            "model": result.model,
            "endpoint": result.endpoint,
            "server": result.server,
            "server_version": result.server_version,
            "requests": result.requests,
            "profile": profile_json(result.profile),
            "learned": sorted(result.learned),
            "findings": list(result.findings),
            "saved": str(saved) if saved else None,
        }
        print(json.dumps(data, indent=2))
        return 0
    server = f" ({result.server} {result.server_version})" if result.server else ""
    print(f"{result.model} at {result.endpoint}{server}: {result.requests} requests")
    for finding in result.findings:
        print(f"  {finding}")
    print()
    width = max(len(name) for name, _ in row)
    for name, value in row:
        print(f"{name.ljust(width)}  {value}")
    if saved is not None:
        print(f"\nsaved to {saved}")
    return 0


def provider_status() -> list[dict[str, Any]]:
    """Per registered provider: adapter present, SDK installed, which variables are set.

    Nothing is imported (``importlib.util.find_spec`` only) and no value is read out: a
    variable is reported as set or not set.
    """
    from ..providers import providers

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
    from .._config import resolve

    try:
        model = resolve({}, {}).model
    except ConfigurationError as exc:
        return f"configuration error: {exc}"
    if model is None:
        return "no model configured (set ALLOY_MODEL, e.g. 'openai:gpt-5-mini' or 'offline')"
    return f"ALLOY_MODEL={model}"


#: The matrix's columns after provider, model and output mode: what the engine and adapters read.
_CAPABILITY_COLUMNS = {
    "native_schema": "Native schema",
    "tools": "Tools",
    "strict_tools": "Strict tools",
}


def capability_matrix(models: Mapping[str, Sequence[str]] | None = None) -> str:
    """The capability matrix as a Markdown table.

    One row per example model of each provider descriptor (or per model in ``models``), with
    what the endpoint declares (``Provider.profiles``), else what the model's adapter declares
    in ``capabilities`` (the model family), and the dialect its descriptor
    names. Models are built through the provider registry (no client is made and no key is
    needed); a provider whose adapter or SDK is missing is left out.
    """
    from ..providers import declared_profile, providers

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
            capabilities = declared_profile(descriptor, model_id) or factory(model_id).capabilities
            model = f"`{provider}:{model_id}`" if model_id else f"`{provider}`"
            cells = [f"`{provider}`", model, capabilities.default_output_mode()]
            cells += ["yes" if getattr(capabilities, n) else "no" for n in _CAPABILITY_COLUMNS]
            lines.append(_row([*cells, dialect]))
    return "\n".join(lines)


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"
