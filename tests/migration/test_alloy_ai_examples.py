"""alloy-ai's own examples run unchanged on alloy, offline, with the model forced from the
environment (``ALLOY_FORCE_MODEL=offline``, as alloy-ai ran them with ``ALLOY_BACKEND=fake``).

The scripts are alloy-ai 0.3.1's ``examples/`` directory, copied unchanged with its MIT licence
(see ``alloy_ai_examples/README.md``). Each runs as ``__main__`` from a copy in a temporary
directory, since some write files. Those that use an alloy-ai spelling must warn naming alloy's,
as docs/migrating.md says; every other one must run without a warning.
"""

from __future__ import annotations

import os
import re
import runpy
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: coverage[toml], in the dev extra, brings tomli
    import tomli as tomllib

EXAMPLES = Path(__file__).parent / "alloy_ai_examples"
SCRIPTS = sorted(str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*.py"))
ROOT = Path(__file__).resolve().parents[2]

#: Scripts that use an alloy-ai spelling, and the DeprecationWarning each must give.
WARNS = {
    "80-patterns/05_retry_strategies.py": "retry= in @command(...) is alloy-ai's spelling: use retries=",
    "90-advanced/01_deep_agents.py": "default_system= in ask() is alloy-ai's spelling: use system=",
}
#: Scripts that need a package alloy does not depend on; the ``dev`` extra installs it, so
#: ``make test`` runs them (never skipped: a missing package fails the run).
NEEDS = {
    "20-typed/04_csv_to_api.py": "pandas",
    "60-integration/01_with_pandas.py": "pandas",
    "60-integration/02_flask_endpoint.py": "flask",
}
#: A web app: imported and asked through Flask's test client instead of served.
SERVES = "60-integration/02_flask_endpoint.py"


@pytest.fixture
def copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The examples in a scratch directory, with the offline model forced on every command."""
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    monkeypatch.setenv("ALLOY_FORCE_MODEL", "offline")
    monkeypatch.setattr(sys, "argv", ["example"])
    return tmp_path / "examples"


def test_every_script_is_covered() -> None:
    assert len(SCRIPTS) == 46
    assert set(WARNS) <= set(SCRIPTS) and set(NEEDS) <= set(SCRIPTS)


def test_the_dev_extra_installs_what_the_examples_need() -> None:
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]["dev"]
    names = {re.split(r"[<>=\[ ]", requirement, maxsplit=1)[0].lower() for requirement in dev}
    assert set(NEEDS.values()) <= names


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_example_runs_unchanged(
    script: str, copy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy / script
    monkeypatch.chdir(path.parent)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DeprecationWarning)
        if script == SERVES:
            _ask_the_app(path)
        else:
            runpy.run_path(str(path), run_name="__main__")
    warned = [str(w.message) for w in caught]
    expected = WARNS.get(script)
    if expected is None:
        assert warned == []
    else:
        assert warned and all(expected in message for message in warned)
    assert capsys.readouterr().out.strip(), "the example printed its results"


def _ask_the_app(path: Path) -> None:
    app = runpy.run_path(str(path), run_name="alloy_ai_example")["app"]
    reply = app.test_client().post("/api/draft-email", json={"purpose": "p", "context": "c"})
    assert reply.status_code == 200
    print(reply.get_json())


def test_alloy_ais_own_offline_switch_runs_them_with_a_warning(copy: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALLOY_")}
    env.update(ALLOY_BACKEND="fake", ALLOY_NO_DOTENV="1", PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "01_first_command.py"],
        cwd=copy / "10-commands",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "[alloy offline model]" in done.stdout
    assert "DeprecationWarning: ALLOY_BACKEND=fake" in done.stderr
    assert "use ALLOY_FORCE_MODEL=offline" in done.stderr
