"""alloy-ai's modules that alloy lacks: each import either runs (warning, naming alloy's name) or
fails with an ImportError naming the replacement, never a bare "No module named".

The table in docs/migrating.md checks each name (tests/migration/test_migrating_table.py); these
tests check the import forms alloy-ai code uses, and that importing the modules whose names
are also alloy's decorators leaves those decorators in place.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import alloy
from alloy._alloy_ai_modules import BRIDGES, REMOVED

ROOT = Path(__file__).resolve().parents[2]


def test_importing_a_module_named_like_a_decorator_keeps_the_decorator() -> None:
    # In a fresh interpreter: this process may have imported them already.
    code = (
        "import warnings; warnings.simplefilter('error')\n"
        "import alloy, alloy.command, alloy.tool, alloy.ask\n"
        "from alloy import ask, command, tool\n"
        "assert callable(command) and command is alloy.command, command\n"
        "assert callable(tool) and tool is alloy.tool, tool\n"
        "assert ask is alloy.ask and hasattr(ask, 'stream'), ask\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.stdout.strip() == "ok", done.stderr


def test_a_bridged_module_is_reachable_as_an_attribute_after_import() -> None:
    import alloy.types

    with pytest.warns(DeprecationWarning, match="use dataclasses.is_dataclass"):
        check = alloy.types.is_dataclass_type  # type: ignore[attr-defined]
    assert check(alloy.Result)
    assert "to_jsonable" in dir(alloy.types)


@pytest.mark.parametrize("module", sorted(REMOVED))
def test_a_removed_module_fails_at_import_naming_the_replacement(module: str) -> None:
    with pytest.raises(ImportError) as caught:
        importlib.import_module(module)
    assert not isinstance(caught.value, ModuleNotFoundError)
    assert f"{module} was alloy-ai's, and alloy has no such module: " in str(caught.value)


def test_from_a_package_import_a_removed_module_keeps_the_advice() -> None:
    # ``from package import sub`` swallows a ModuleNotFoundError for ``sub``: the error is a
    # plain ImportError so that its advice reaches the user.
    with pytest.raises(ImportError, match=r"alloy\.register_provider"):
        from alloy.models import base  # type: ignore[import-not-found]  # noqa: F401


@pytest.mark.parametrize(
    ("module", "name"),
    [(module, name) for module, names in BRIDGES.items() for name in names],
)
def test_every_name_runs_with_a_warning_or_fails_with_advice(module: str, name: str) -> None:
    loaded = importlib.import_module(module)
    counterpart, advice = BRIDGES[module][name]
    if counterpart is None:
        with pytest.raises(ImportError, match="alloy has no such name") as caught:
            getattr(loaded, name)
        assert advice in str(caught.value)
    else:
        with pytest.warns(DeprecationWarning) as caught_warnings:
            value = getattr(loaded, name)
        assert value is not None
        assert advice in str(caught_warnings[0].message)


def test_a_name_alloy_ai_never_had_is_an_ordinary_error() -> None:
    import alloy.types

    assert not hasattr(alloy.types, "surely_not_a_name")
    with pytest.raises(ImportError, match="cannot import name"):
        from alloy.types import surely_not_a_name  # type: ignore[attr-defined]  # noqa: F401


def test_the_finder_answers_only_for_alloy_ais_names() -> None:
    with pytest.raises(ModuleNotFoundError, match=r"No module named 'alloy\.surely_not_a_module'"):
        importlib.import_module("alloy.surely_not_a_module")
    assert alloy.command is not sys.modules["alloy.command"]
