"""alloy uses the standard library through its public names only.

Private attributes (``os.environ._data``, ``re._parser``) change between Python versions without
notice; code that reads them breaks on an upgrade, or silently reads something else. A few names
with a leading underscore are documented API (``sys._getframe``, ``os._exit``).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "alloy"
#: Documented in the standard library's reference despite the underscore.
DOCUMENTED = frozenset({"sys._getframe", "os._exit"})


def private_reads(source: str) -> Iterator[str]:
    """``module.…._name`` and ``getattr(module.…, "_name")`` for standard-library modules."""
    tree = ast.parse(source)
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in sys.stdlib_module_names:
                    modules.add(alias.asname or alias.name.split(".")[0])

    def rooted(node: ast.expr) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in modules

    def private(name: str) -> bool:
        return name.startswith("_") and not name.endswith("__")

    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and private(node.attr)
            and rooted(node.value)
            and ast.unparse(node) not in DOCUMENTED
        ):
            yield ast.unparse(node)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2
            and rooted(node.args[0])
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and private(node.args[1].value)
        ):
            yield ast.unparse(node)


def test_the_check_finds_private_reads() -> None:
    source = (
        "import os\nimport re as regex\nimport json\nimport sys\n"
        "a = os.environ._data\n"
        "b = getattr(os.environ, '_data', None)\n"
        "c = regex._parser\n"
        "d = os.environ.get('X')\n"
        "e = json.__name__\n"
        "f = mine._private\n"
        "g = sys._getframe(1)\n"
    )
    assert set(private_reads(source)) == {
        "os.environ._data",
        "regex._parser",
        "getattr(os.environ, '_data', None)",
    }


def test_alloy_reads_no_private_attribute_of_the_standard_library() -> None:
    found = {
        str(path.relative_to(PACKAGE.parent)): reads
        for path in sorted(PACKAGE.rglob("*.py"))
        if (reads := sorted(set(private_reads(path.read_text(encoding="utf-8")))))
    }
    assert not found, found
