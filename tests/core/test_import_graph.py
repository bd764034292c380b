"""alloy's own import graph has no cycle, counting imports inside functions too.

A function-level import that closes a cycle only hides it: the modules still depend on each
other, and which one loads first decides what works. So every ``import`` statement under
``alloy/`` counts, wherever it is written (in a function, under ``TYPE_CHECKING``); only modules
outside alloy (the SDKs, loaded lazily on purpose) are left out. Protocol types live low and
factories high: ``_rail_types`` holds the rail types, ``rails`` the ready-made rails that are commands;
``_output`` holds the output-type protocol, ``_command`` picks the output machinery.

Provider facts live with the providers: the engine prices nothing and knows no provider, shipped
code never imports the test kit, and nothing outside ``providers/`` (and the emulator in
``testing/``, which speaks each wire API) names a provider (see the tests below).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "alloy"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, source: str, known: set[str], *, is_package: bool = False) -> Iterator[str]:
    """The alloy modules that module ``name`` imports anywhere in ``source``."""
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from . import x`` imports the submodule x when there is one, else a name of base.
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            # ``import alloy.events.x`` names a module through its parents: climb to a module.
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name and target.split(".")[0] == "alloy":
                yield target


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {
        name: set(
            imported(
                name,
                path.read_text(encoding="utf-8"),
                known,
                is_package=path.name == "__init__.py",
            )
        )
        for name, path in found.items()
    }


def tangles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def shortest_cycle(component: set[str], edges: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through the component's first module, for the failure message."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(edges[node] & component):
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                queue.append(target)
    raise AssertionError(f"{sorted(component)} is not strongly connected")


def test_every_kind_of_import_is_an_edge() -> None:
    known = {"alloy", "alloy._a", "alloy._b", "alloy._c", "alloy.sub", "alloy.sub._d", "alloy.e"}
    source = (
        "from __future__ import annotations\n"
        "import json\n"
        "from typing import TYPE_CHECKING\n"
        "from ._a import thing\n"
        "from . import _b\n"
        "import alloy.sub._d\n"
        "if TYPE_CHECKING:\n"
        "    from alloy.e import Other\n"
        "def later():\n"
        "    from .sub import helper\n"
        "    from . import name_in_init\n"
        "    import openai\n"
    )
    edges = set(imported("alloy._c", source, known))
    assert edges == {"alloy._a", "alloy._b", "alloy.sub._d", "alloy.e", "alloy.sub", "alloy"}
    # Relative imports count from the package of a package's __init__ itself.
    assert set(imported("alloy.sub", "from ._d import x", known, is_package=True)) == {
        "alloy.sub._d"
    }
    assert set(imported("alloy.sub._d", "from .. import _a", known)) == {"alloy._a"}


def test_a_cycle_is_found_and_named() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    (component,) = tangles(edges)
    assert component == {"a", "b", "c"}
    assert shortest_cycle(component, edges) == ["a", "b", "c", "a"]


def test_the_import_graph_of_alloy_has_no_cycle() -> None:
    edges = graph()
    found = tangles(edges)
    assert not found, "import cycles in alloy/ (one per tangle of modules):\n" + "\n".join(
        " -> ".join(shortest_cycle(c, edges)) for c in found
    )


def test_the_core_types_import_nothing_above_them() -> None:
    """The bottom of the core: the normalized types and the protocols stay low."""
    edges = graph()
    assert edges["alloy._types"] <= {"alloy._text", "alloy._profile"}
    assert not edges["alloy._profile"]  # the capability profile is vocabulary beneath the types
    assert edges["alloy._rail_types"] <= {
        "alloy._types",
        "alloy._blocking",
        "alloy._deps",
        "alloy._pickling",
        "alloy.errors",
    }
    assert edges["alloy._deps"] <= {"alloy.errors"}
    assert edges["alloy._output"] <= {"alloy._schema", "alloy.errors", "alloy._pickling"}
    assert not edges["alloy._blocking"]
    assert not edges["alloy._pickling"]  # how things pickle, beneath everything that pickles
    assert "alloy._command" not in edges["alloy._engine"] | edges["alloy._drivers"]


def reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` loads, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in edges.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_engine_prices_nothing_and_knows_no_provider() -> None:
    """The engine decides; the drivers price its Result (``pricing.priced``) and the provider
    facts it needs (the schema ``Dialect``) are vocabulary in ``_types``. The rule on
    ``providers`` is on the engine's own imports: the configuration it reads (``_config``)
    checks model names against the provider registry, a step above it."""
    edges = graph()
    own = edges["alloy._engine"]
    assert "alloy.pricing" not in own
    assert not {m for m in own if m == "alloy.providers" or m.startswith("alloy.providers.")}
    assert "alloy.pricing" not in reachable(edges, "alloy._engine")


def test_shipped_code_imports_nothing_from_the_test_kit() -> None:
    """The offline model owns its sampler: no provider (nor anything below the test kit)
    imports ``alloy.testing``."""
    edges = graph()
    for name, targets in edges.items():
        if name.startswith("alloy.providers"):
            kit = {t for t in targets if t == "alloy.testing" or t.startswith("alloy.testing.")}
            assert not kit, f"{name} imports the test kit: {sorted(kit)}"


def test_tools_read_no_private_of_the_configuration() -> None:
    assert "alloy._config" not in graph()["alloy._tools"]


def provider_names_in(source: str, names: set[str], adapters: set[str], module: str) -> list[str]:
    """Where ``source`` (module ``module``) names a provider: a comparison with a provider's
    name (``provider == "gemini"``, ``in ("openai", ...)``), a ``case "anthropic":``, or an
    import of an adapter module (which an ``isinstance`` on its model class needs)."""
    found = []
    package = module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                found += [
                    f"line {node.lineno}: compares with {item.value!r}"
                    for item in items
                    if isinstance(item, ast.Constant) and item.value in names
                ]
        elif isinstance(node, ast.MatchValue) and isinstance(node.value, ast.Constant):
            if node.value.value in names:
                found.append(f"line {node.lineno}: case {node.value.value!r}")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = {base, *(f"{base}.{alias.name}" for alias in node.names)}
            found += [f"line {node.lineno}: imports {t}" for t in sorted(targets & adapters)]
        elif isinstance(node, ast.Import):
            targets = {alias.name for alias in node.names}
            found += [f"line {node.lineno}: imports {t}" for t in sorted(targets & adapters)]
    return found


def test_provider_names_in_finds_ladders_and_adapter_imports() -> None:
    source = (
        "from ..providers.gemini import GeminiModel\n"
        "import alloy.providers.anthropic\n"
        "from ..providers import get_model\n"
        "if provider == 'openai-chat': pass\n"
        "if name in ('ollama', 'x'): pass\n"
        "match p:\n"
        "    case 'anthropic': pass\n"
        "if kind == 'text': pass\n"
    )
    adapters = {"alloy.providers.gemini", "alloy.providers.anthropic"}
    names = {"openai-chat", "ollama", "anthropic", "gemini"}
    assert provider_names_in(source, names, adapters, "alloy.batch._x") == [
        "line 1: imports alloy.providers.gemini",
        "line 2: imports alloy.providers.anthropic",
        "line 4: compares with 'openai-chat'",
        "line 5: compares with 'ollama'",
        "line 7: case 'anthropic'",
    ]


def test_nothing_outside_providers_names_a_provider() -> None:
    """Provider facts go back to the provider: outside ``alloy/providers/`` (and the emulator's
    ``alloy/testing/``, one module per wire API), no module picks behaviour by a provider's
    name (an if-ladder or ``match`` on the names of the providers with an SDK; ``offline`` is
    alloy's own stand-in, which configuration names as its default) or imports an adapter
    module (the modules the descriptors name: factory, dialect, batch API). What differs by
    provider is asked of its descriptor (``Provider.batch_api``, ``dialect``, ``prices``) or
    of its model (``cache_key_parts``). Names in messages and docstrings are not choices, and
    are left alone."""
    from alloy.providers import providers

    described = providers().values()
    names = {provider.name for provider in described if provider.sdk_module}
    adapters = {
        target.partition(":")[0]
        for provider in described
        for target in (provider.factory, provider.dialect, provider.batch_api)
        if isinstance(target, str)
    }
    assert {"alloy.providers.gemini", "alloy.providers.openai_batch"} <= adapters
    found = []
    for name, path in modules().items():
        if name.startswith(("alloy.providers", "alloy.testing")):
            continue
        for where in provider_names_in(path.read_text(encoding="utf-8"), names, adapters, name):
            found.append(f"{name} {where}")
    assert not found, "provider names outside alloy/providers/:\n" + "\n".join(found)


#: The outlets: they stand on the call seam (``alloy._call``), never on ``Command``'s insides.
OUTLETS = ("alloy.rows", "alloy.batch", "alloy.serve", "alloy.mcp", "alloy.eval", "alloy.cli")


def _in_outlets() -> Iterator[tuple[str, ast.AST]]:
    for name, path in modules().items():
        if name.startswith(tuple(f"{outlet}." for outlet in OUTLETS)) or name in OUTLETS:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                yield name, node


def test_the_outlets_import_no_private_of_command() -> None:
    found = []
    for name, node in _in_outlets():
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("_command"):
            found += [f"{name}: {alias.name}" for alias in node.names if alias.name[0] == "_"]
    assert not found, "outlets importing privates of alloy._command:\n" + "\n".join(found)


def _command_privates() -> set[str]:
    """The private members of ``Command``: its methods and the attributes it sets."""
    tree = ast.parse((PACKAGE / "_command.py").read_text(encoding="utf-8"))
    (command,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Command"]
    names = set()
    for node in ast.walk(command):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and isinstance(node.ctx, ast.Store)
        ):
            names.add(node.attr)
    return {n for n in names if n.startswith("_") and not n.endswith("__")}


def test_the_outlets_reach_no_private_of_a_command() -> None:
    """Rows, batch and serve hold a ``Prepared`` (``alloy._call``), not a command's insides."""
    privates = _command_privates()
    assert {"_fn", "_spec", "_call_options"} <= privates
    found = sorted(
        f"{name}: .{node.attr}"
        for name, node in _in_outlets()
        if isinstance(node, ast.Attribute)
        and node.attr in privates
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    )
    assert not found, "outlets reaching privates of Command:\n" + "\n".join(found)


def _in_cli(name: str) -> bool:
    return name == "alloy.cli" or name.startswith("alloy.cli.")


def test_the_command_line_is_the_top_and_uses_public_faces() -> None:
    """The command line stands on top: no module of alloy imports ``alloy.cli`` but
    ``alloy.__main__``, which runs it. Each verb reaches another package through its public
    face (``alloy.rows``, ``alloy.batch``, ``alloy.serve``...), never its underscore modules."""
    edges = graph()
    above = sorted(
        name
        for name, targets in edges.items()
        if not _in_cli(name) and name != "alloy.__main__" and any(map(_in_cli, targets))
    )
    assert not above, f"modules importing the command line: {above}"
    private = sorted(
        f"{name} -> {target}"
        for name, targets in edges.items()
        if _in_cli(name)
        for target in targets
        if not _in_cli(target) and any(part.startswith("_") for part in target.split(".")[2:])
    )
    assert not private, "the command line reaching into privates:\n" + "\n".join(private)


def test_the_emulators_batch_store_and_api_base_name_no_provider() -> None:
    """Each provider's emulator module brings its HTTP API and its batch API (issue 28): the
    batch store (``_batches``) and the base every API stands on (``_api``) pick nothing by a
    provider's name and import no provider's module, so a provider added to the emulator
    changes neither. And no module of alloy imports a deprecated alias module."""
    from alloy.providers import providers

    names = {provider.name for provider in providers().values() if provider.sdk_module}
    provider_modules = "_openai _openai_chat _openai_responses _anthropic _anthropic_clouds"
    emulated = {
        f"alloy.testing.emulator.{m}"
        for m in f"{provider_modules} _gemini _ollama _bedrock".split()
    }
    found = []
    for name in ("alloy.testing.emulator._batches", "alloy.testing.emulator._api"):
        source = modules()[name].read_text(encoding="utf-8")
        found += [f"{name} {where}" for where in provider_names_in(source, names, emulated, name)]
    assert not found, "provider names in the emulator's shared modules:\n" + "\n".join(found)
    deprecated = {"alloy.providers.batch_wire"}
    for name, path in modules().items():
        if name not in deprecated:
            source = path.read_text(encoding="utf-8")
            found += [
                f"{name} {where}" for where in provider_names_in(source, set(), deprecated, name)
            ]
    assert not found, "modules importing a deprecated alias module:\n" + "\n".join(found)
