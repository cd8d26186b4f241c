"""The WSGI entry point loads the whole site, then freezes it out of the garbage collector's
sight (ladder/wsgi.py says why: a full collection walked it once in thirteen match pages)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

PROBE = """
import gc, json, sys
import ladder.wsgi
print(json.dumps({
    "frozen": gc.get_freeze_count(),
    "tracked": len(gc.get_objects()),
    "views_loaded": "ladder.matches.apis" in sys.modules,
}))
"""


def test_the_site_is_loaded_then_frozen_when_gunicorn_imports_it() -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ladder.settings_test"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["views_loaded"]  # the URLconf's views came in before the freeze
    # Nearly everything the site holds is frozen; what the collector still tracks is the
    # little made after the freeze.
    assert found["frozen"] > 50_000
    assert found["tracked"] < found["frozen"] / 10
