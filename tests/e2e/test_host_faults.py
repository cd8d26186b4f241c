"""A broken worker host rates nothing (issue 24): real workers, a real image broken under one.

Seen on a site: with python3 missing from one worker's image (its identity check still
passed), 16 matches were recorded in 30 s as finished, every seat forfeiting with "exit 127":
856 Elo points moved and all 8 bots were disabled, and the worker logged nothing. Here one
worker plays on a copy of the image (made of hard links; the shared image is untouched) that
loses its Python after the worker started; a second worker's image is whole.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_ready", "redis_ready"),
]


@pytest.fixture
def image_copy() -> Iterator[Path]:
    """A copy of this host's image, for one worker's box program (whole, until broken)."""
    from bots.runner import runtime

    real = runtime.image_dir()
    root = Path(tempfile.mkdtemp(prefix="e2e-images-", dir=real.parent.parent))
    root.chmod(0o755)
    subprocess.run(["cp", "-al", str(real), str(root / real.name)], check=True)
    yield root / real.name
    shutil.rmtree(root, ignore_errors=True)


def _match(match_id: int) -> Any:
    from ladder.matches.models import Match

    return Match.objects.get(pk=match_id)


def test_a_worker_whose_image_breaks_rates_nothing_and_stops_taking_matches(
    celery: Any, valid_version: Any, image_copy: Path
) -> None:
    from ladder.bots.models import Bot
    from ladder.matches.models import MatchSeat
    from ladder.matches.services import match_create, match_retry_failed
    from ladder.matches.tasks import run_match
    from ladder.ratings.models import RatingChange

    versions = [valid_version("a"), valid_version("b"), valid_version("c")]
    broken = celery(
        "worker",
        queues="matches",
        as_root=True,
        GRASS_RUNTIME_ROOT=str(image_copy.parent),
        GRASS_SANDBOX_PROOF_SECONDS="3600",  # proved before its first match, not again
        # Root's folders in the media anyone may write, as the tests' own (settings_test).
        MEDIA_STORAGE_OPTIONS='{"directory_permissions_mode": 511}',
    )
    first = match_create(versions=versions, limits={"max_hands": 1})
    run_match.delay(first.pk)
    wait_until(lambda: _match(first.pk).status == "finished", timeout=180, what="a first match")
    rated = RatingChange.objects.count()

    for python in (image_copy / "usr" / "bin").glob("python3*"):
        python.unlink()  # the host breaks while the worker runs
    match = match_create(versions=versions, limits={"max_hands": 1})
    run_match.delay(match.pk)
    broken.wait_for(r"this worker stops taking matches: the known bots fail on this host: python")
    broken.wait_for(r"Canceling queue matches", timeout=30)
    failed = _match(match.pk)
    assert failed.status == "failed", failed.failure_reason
    assert "host fault: no seat could start" in failed.failure_reason
    assert RatingChange.objects.count() == rated
    assert not MatchSeat.objects.filter(match=failed, forfeited=True).exists()
    assert not Bot.objects.filter(disabled_reason__gt="").exists()

    # Retried elsewhere: a worker whose image is whole plays it, once, and it is rated.
    good = celery("worker", queues="matches")
    assert match_retry_failed() == [match.pk]
    wait_until(lambda: _match(match.pk).status == "finished", timeout=180, what="the replay")
    assert RatingChange.objects.filter(match=match).count() == 3
    # The match is recorded before the task returns and Celery logs its success: wait for it.
    good.wait_for(r"run_match\[.*\] succeeded", timeout=60)
    assert good.count(r"run_match\[.*\] succeeded") == 1
    assert broken.count(r"run_match\[.*\] received") == 2
