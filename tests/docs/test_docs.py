"""The documentation site: it builds in strict mode, and what it states is checked against the code.

- Every ```python block in ``docs/*.md`` runs (all the blocks of a page as one script, on the
  offline model, in a fresh process). A block that must not run is preceded by a line
  ``<!-- skip: reason -->``.
- The configuration page names every ``ALLOY_*`` variable and every option.
- The errors page draws the same tree as ``alloy/errors.py``.
- The capability matrix on the providers page is what ``alloy providers --capabilities`` renders
  from the adapters' declared capabilities.
- The ``--help`` output shown on the command-line page is what ``alloy run`` prints.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import alloy.errors
from alloy._config import ENV_VARS, OPTION_NAMES
from alloy.cli import capability_matrix

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
FENCE = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)
SKIP = re.compile(r"<!--\s*skip:[^>]*-->\s*$")
MATRIX = re.compile(
    r"<!-- capability-matrix:start -->\n(.*?)\n<!-- capability-matrix:end -->", re.DOTALL
)
PROVIDER_PREFIXES = ("ALLOY_", "OPENAI_", "ANTHROPIC_", "GOOGLE_", "GEMINI_", "OLLAMA_")


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without any alloy or provider setting, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(PROVIDER_PREFIXES)}
    env.update(PYTHONPATH=str(ROOT), ALLOY_NO_DOTENV="1", **extra)
    return env


def runnable_blocks(text: str) -> list[str]:
    blocks = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        if not SKIP.search(before):
            blocks.append(match.group(1))
    return blocks


def read(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


# -- the site -----------------------------------------------------------------------------------


@pytest.mark.timeout(300)
def test_site_builds_in_strict_mode(tmp_path: Path) -> None:
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        if importlib.util.find_spec(module.split(".")[0]) is None or (
            "." in module and importlib.util.find_spec(module) is None
        ):
            pytest.skip(
                f"{module} is not installed: pip install mkdocs-material 'mkdocstrings[python]'"
            )
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=clean_env(NO_MKDOCS_2_WARNING="1"),
        timeout=300,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    assert "WARNING" not in log, log
    assert (tmp_path / "site" / "reference" / "alloy" / "index.html").is_file()


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_code_blocks_run(page: Path, tmp_path: Path) -> None:
    blocks = runnable_blocks(page.read_text(encoding="utf-8"))
    if not blocks:
        pytest.skip(f"{page.name} has no runnable Python blocks")
    script = tmp_path / f"{page.stem.replace('-', '_')}_blocks.py"
    script.write_text("\n\n".join(blocks), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=clean_env(ALLOY_MODEL="offline"),
        timeout=180,
    )
    assert done.returncode == 0, f"{page.name}:\n{done.stdout}\n{done.stderr}"


def test_every_page_is_in_the_nav() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOCS.rglob("*.md"):
        assert str(page.relative_to(DOCS)) in config, f"{page} is not in mkdocs.yml's nav"


# -- statements checked against the code -------------------------------------------------------


def test_every_environment_variable_is_documented() -> None:
    text = read("configuration.md")
    for option, names in ENV_VARS.items():
        for name in names:
            assert f"`{name}`" in text, f"{name} (option {option}) is not in configuration.md"
        assert f"`{option}`" in text, f"option {option} is not in configuration.md"
    for option in OPTION_NAMES:
        assert f"`{option}`" in text, f"option {option} is not in configuration.md"
    assert "`ALLOY_NO_DOTENV`" in text


def test_every_error_class_is_on_the_errors_page() -> None:
    text = read("errors.md")
    for name in alloy.errors.__all__:
        assert name in text, f"{name} is not on errors.md"


def test_the_errors_page_draws_the_tree_of_the_code() -> None:
    doc = alloy.errors.__doc__ or ""
    code_tree = [line.strip().replace("``", "") for line in doc.splitlines() if "──" in line]
    page = read("errors.md").split("```", 2)[1]
    page_tree = [line.strip() for line in page.splitlines() if "──" in line]
    assert page_tree == code_tree


def test_capability_matrix_matches_the_adapters() -> None:
    found = MATRIX.search(read("providers.md"))
    assert found, "providers.md lost its capability-matrix markers"
    assert found.group(1).strip() == capability_matrix(), (
        "The capability matrix in docs/providers.md is out of date; regenerate it with "
        "`python -m alloy providers --capabilities`"
    )


def test_cli_help_on_the_page_is_what_alloy_prints(tmp_path: Path) -> None:
    text = read("cli.md")
    module = re.search(r"```python\n# prompts.py\n(.*?)^```$", text, re.DOTALL | re.MULTILINE)
    assert module, "cli.md lost its prompts.py example"
    (tmp_path / "prompts.py").write_text(module.group(1), encoding="utf-8")
    shown = re.search(r"\$ alloy run prompts:summarize --help\n(.*?)\n\n\$ ", text, re.DOTALL)
    assert shown, "cli.md lost its --help example"
    done = subprocess.run(
        [sys.executable, "-m", "alloy", "run", "prompts:summarize", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=clean_env(COLUMNS="100"),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == shown.group(1).strip()
