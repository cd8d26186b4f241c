"""Admin set-up as docs/admin.md writes it: `make admin` makes an admin in the database that
`make run` uses (a newcomer's first try made it in another file, and could not log in), as the
worker's user; a manage.py command without DEBUG=true (nor a SECRET_KEY) says how to go on."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "admin.md"


def documented_command() -> list[str]:
    """The development command of docs/admin.md, as words."""
    found = re.search(r"^sudo make admin$", DOC.read_text(), re.M)
    assert found, f"{DOC} no longer gives the command"
    return found.group(0).split()


@pytest.fixture
def run_dir() -> Iterator[Path]:
    """A folder for make's RUN_DIR that the worker's user may be given (pytest's own is 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="grass-test-admin-"))
    folder.chmod(0o755)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)


def run(
    words: list[str], tmp_path: Path, *extra: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """`words` (leading NAME=value words set the environment, as a shell does) with this
    test's Python, against a database of the test's own; no SECRET_KEY or DEBUG from outside."""
    assignments = {}
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        assignments[name] = value
    assert words[:2] == [".venv/bin/python", "manage.py"], words
    base = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG", "DATABASE_URL")}
    return subprocess.run(
        [sys.executable, "manage.py", *words[2:], *extra],
        cwd=REPO,
        env={
            **base,
            "DJANGO_SETTINGS_MODULE": "ladder.settings",
            # Not the developer's ladder.sqlite3: a database of this test's own.
            "DATABASE_URL": f"sqlite:///{tmp_path / 'ladder.sqlite3'}",
            **assignments,
            **env,
        },
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_the_documented_command_makes_an_admin_in_make_runs_database(run_dir: Path) -> None:
    words = documented_command()
    assert words[:2] == ["sudo", "make"], words
    if os.getuid() != 0:
        pytest.skip("make admin is documented with sudo: the test runs it as root")
    # Nothing of this test process's settings (pytest-django's module, the test database).
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SECRET_KEY", "DEBUG", "DATABASE_URL", "DJANGO_SETTINGS_MODULE")
        and not k.startswith("GRASS_TEST_")
    }
    settings = [f"RUN_DIR={run_dir}", "ARGS=--noinput"]
    made = subprocess.run(
        # (-o: the machine is set up already; make would otherwise run deploy/setup.sh here
        # after a change to one of its inputs.)
        ["make", "--no-print-directory", "-o", ".venv/.setup-done", *words[2:], *settings],
        cwd=REPO,
        env={
            **base,
            # The prompts' answers from the environment (Django's own way for scripts).
            "DJANGO_SUPERUSER_USERNAME": "root-of-all",
            "DJANGO_SUPERUSER_EMAIL": "",
            "DJANGO_SUPERUSER_PASSWORD": "a long pass phrase",
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    database = run_dir / "ladder.sqlite3"  # where make run's processes look
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT username, is_staff, is_superuser FROM auth_user").fetchall()
    assert rows == [("root-of-all", 1, 1)]
    # The worker's user owns what it made: make run's processes can still write it.
    import pwd

    assert pwd.getpwuid(database.stat().st_uid).pw_name == os.environ.get(
        "GRASS_WORKER_USER", "grass"
    )


def test_without_debug_it_says_how_to_go_on(tmp_path: Path) -> None:
    refused = run([".venv/bin/python", "manage.py", "createsuperuser"], tmp_path, "--noinput")
    assert refused.returncode != 0
    assert "SECRET_KEY must be set" in refused.stderr
    assert "sudo make admin" in refused.stderr
    assert "deploy/as-worker.sh env DEBUG=true .venv/bin/python manage.py" in refused.stderr
