"""What CI checks besides behaviour: the code is linted and formatted (ruff), typed (`mypy
--strict` on engine and bots, mypy with the Django plugins on ladder), and keeps its import
contracts (.importlinter). `.ci/run` runs only the README's test command: these tests are how
it runs the rest. Each runs the real tool on the tree and fails with the tool's own report."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def run(*command: str) -> None:
    done = subprocess.run(
        [str(BIN / command[0]), *command[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"


@pytest.mark.lint
def test_ruff_finds_nothing() -> None:
    run("ruff", "check", ".")


@pytest.mark.lint
def test_the_code_is_formatted() -> None:
    run("ruff", "format", "--check", ".")


@pytest.mark.lint
def test_engine_and_bots_are_strictly_typed() -> None:
    run("mypy", "--strict", "engine", "bots")


@pytest.mark.lint
def test_the_ladder_is_typed() -> None:
    run("mypy", "ladder")


@pytest.mark.lint
def test_the_benchmarks_are_typed() -> None:
    run("mypy", "bench")


@pytest.mark.lint
def test_the_import_contracts_hold() -> None:
    run("lint-imports")


@pytest.mark.parametrize("path", sorted((ROOT / "engine").rglob("*.py")), ids=lambda p: p.name)
def test_the_engine_imports_only_the_standard_library(path: Path) -> None:
    """import-linter forbids the third-party packages it knows of; this closes the rest."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            assert top == "engine" or top in sys.stdlib_module_names or top == "__future__", (
                f"{path.relative_to(ROOT)} imports {name}"
            )
