"""The OpenAPI schema is the API: Schemathesis fuzzes every operation of /api/schema/ against a
live server and fails on any conformance error (a status code, content type, header or body the
schema does not describe, schema-valid data refused, schema-invalid data accepted, a 5xx).

Bounded: a fixed number of examples per operation and a fixed seed, so the run is the same every
time and takes well under two minutes. It is signed in with a token (the operations that need a
user are exercised too), and validation games are not played (the uploads it makes stay
pending): the test is about the API's shape, not the sandbox.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

MAX_EXAMPLES = 12
SEED = 20261125
ST = Path(sys.executable).with_name("st")
CONFIG = Path(__file__).with_name("schemathesis.toml")
"""The few requests a JSON Schema cannot describe, each with its reason."""


@pytest.fixture
def quiet_workers(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    """No task leaves the test process: uploads stay pending, no match or ping is sent."""
    from ladder.bots import tasks as bot_tasks
    from ladder.notifications import tasks as notification_tasks

    settings.GRASS_VALIDATE_INLINE = False
    monkeypatch.setattr(bot_tasks.validate_version, "delay", lambda *args, **kwargs: None)
    for name in dir(notification_tasks):
        task = getattr(notification_tasks, name)
        if hasattr(task, "delay") and hasattr(task, "apply_async"):
            monkeypatch.setattr(task, "delay", lambda *args, **kwargs: None)
            monkeypatch.setattr(task, "apply_async", lambda *args, **kwargs: None)


def test_the_api_conforms_to_its_openapi_schema(
    live_server: Any, django_user_model: Any, quiet_workers: None, tmp_path: Path
) -> None:
    if not ST.exists():
        pytest.fail(f"Schemathesis is a dev dependency: {ST} is missing (pip install -e '.[dev]')")
    from ladder.accounts.services import token_get_or_create

    user = django_user_model.objects.create_user(username="fuzzer", password="a long pass phrase")
    token = token_get_or_create(user=user)
    command = [
        str(ST),
        "--config-file",
        str(CONFIG),
        "run",
        f"{live_server.url}/api/schema/?format=json",
        "--checks",
        "all",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        str(SEED),
        "--workers",
        "1",
        "--phases",
        "examples,coverage,fuzzing",
        "--header",
        f"Authorization: Token {token.key}",
        "--request-timeout",
        "30",
        "--no-color",
    ]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "", "NO_COLOR": "1"}
    run = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=280
    )
    assert run.returncode == 0, run.stdout[-20000:] + run.stderr[-5000:]
