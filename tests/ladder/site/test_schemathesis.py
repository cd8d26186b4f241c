"""The OpenAPI schema is the API: Schemathesis fuzzes every operation of /api/schema/ against a
live server and fails on any conformance error (a status code, content type, header or body the
schema does not describe, schema-valid data refused, schema-invalid data accepted, a 5xx).

No operation is exempt from any check: what the API refuses, the schema says (a password's
length and that it is not all digits, a username's characters, an http(s) URL), and what a
schema cannot say the API takes and judges later (an upload that is no bot is an invalid
version saying why; a webhook host that does not resolve yet is checked at each delivery).
The refusals left are in the schema's 4xx responses: wrong credentials (401), a taken name
(409), a limit reached (409, 429).

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

    # Not an organiser: creating a tournament is refused (403) before its fields are read.
    # Its rules across fields (registration opens before it closes, before the start) are
    # beyond what a JSON Schema states, and an organiser's script meets them as 400s.
    user = django_user_model.objects.create_user(username="fuzzer", password="a long pass phrase")
    token = token_get_or_create(user=user)
    command = [
        str(ST),
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
    # The summary (phases, operations, test cases generated), shown by `pytest -s`.
    print(run.stdout[run.stdout.rfind("SUMMARY") - 40 :])
