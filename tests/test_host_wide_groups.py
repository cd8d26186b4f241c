"""Every test file that starts Celery workers runs in the host-wide group (tests/conftest.py):
a worker sweeps the host's leftover boxes when it starts and may leave its own ready boxes
when stopped, which the leak tests, run beside it, counted as theirs (seen: a browser test's
worker beside test_sandbox_leaks)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import HOST_WIDE

TESTS = Path(__file__).resolve().parent


def test_every_file_that_starts_workers_is_host_wide() -> None:
    # A call of the `celery` fixture (tests/e2e/conftest.py): celery("worker", ...).
    starts = re.compile(r"\bcelery\(\s*[\"']")
    starters = sorted(
        str(path.relative_to(TESTS.parent))
        for path in TESTS.rglob("test_*.py")
        if path != Path(__file__).resolve() and starts.search(path.read_text())
    )
    assert starters, "no test starts a worker: the check looks for the wrong text"
    assert [path for path in starters if not path.startswith(HOST_WIDE)] == []


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text())) or ""


def test_every_host_wide_file_says_how_it_keeps_to_itself() -> None:
    """Issue 37: a test of host-wide state says which it does, runs alone or owns its own
    instance, in its docstring (or its folder's conftest.py's, for a whole folder)."""
    files = [
        path
        for prefix in HOST_WIDE
        for path in sorted((TESTS.parent / prefix).parent.rglob("test_*.py"))
        if str(path.relative_to(TESTS.parent)).startswith(prefix)
    ]
    assert len(files) > len(HOST_WIDE)
    silent = [
        str(path.relative_to(TESTS.parent))
        for path in files
        if "host-wide group" not in _docstring(path)
        and "host-wide group" not in _docstring(path.parent / "conftest.py")
    ]
    assert silent == []
