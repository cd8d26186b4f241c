"""A worker's checks at start (ladder/matches/workers.py): a worker whose media storage fails a
probe, or is not the site's shared media, refuses matches loudly (an ERROR, and it stops
consuming the matches queue) instead of reporting ready and failing every match it takes with
a raw FileNotFoundError. The real worker doing so is in tests/e2e/test_recovery.py."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ladder.matches import workers
from ladder.matches.tasks import check_worker_on_start
from tests.bots.boxes import image_without_python

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _proof_clock_kept() -> Iterator[None]:
    """The proof clock is the process's (shared with its forks): put back as it was."""
    proved = workers.proof_clock()
    yield
    workers.proof_clock_set(proved)


class Consumer:
    """What `worker_ready` passes: a Celery consumer that reads its queues and can stop
    consuming one."""

    def __init__(self) -> None:
        self.cancelled: list[str] = []
        self.task_consumer = SimpleNamespace(
            queues=[SimpleNamespace(name=name) for name in ("celery", "matches", "challenges")]
        )

    def cancel_task_queue(self, queue: str) -> None:
        self.cancelled.append(queue)


def _probes(media: Path) -> list[Path]:
    return list((media / workers.PROBE_FOLDER).glob("*")) if media.exists() else []


def test_the_site_media_passes_and_the_probe_leaves_nothing(
    settings: Any, valid_version: Any
) -> None:
    valid_version("a")  # an upload the database names, stored in the media
    assert workers.media_refusal() is None
    assert _probes(Path(settings.MEDIA_ROOT)) == []


def test_a_storage_that_cannot_write_is_refused(settings: Any, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the media folder should be")
    settings.MEDIA_ROOT = blocker / "media"
    refusal = workers.media_refusal()
    assert refusal is not None
    assert "failed to write, read and delete a probe file" in refusal and str(blocker) in refusal


def test_a_storage_that_is_not_the_shared_media_is_refused(
    settings: Any, tmp_path: Path, valid_version: Any
) -> None:
    """An empty local folder where the shared mount should be: writable, but without the bots
    the database names, so every match would fail on their files."""
    version = valid_version("a")
    settings.MEDIA_ROOT = tmp_path / "empty"
    refusal = workers.media_refusal()
    assert refusal is not None
    assert "holds none of the newest uploaded bots" in refusal and version.file.name in refusal
    assert _probes(tmp_path / "empty") == []


def test_a_worker_that_fails_a_check_stops_taking_matches_and_says_why(
    settings: Any, tmp_path: Path, valid_version: Any, caplog: Any
) -> None:
    valid_version("a")
    settings.MEDIA_ROOT = tmp_path / "empty"
    consumer = Consumer()
    with caplog.at_level(logging.ERROR):
        check_worker_on_start(sender=consumer)
    assert consumer.cancelled == ["matches", "challenges"]
    assert "this worker refuses matches: the media storage" in caplog.text


def test_a_check_slots_in_as_one_more_function(
    monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    """The lead's sandbox self-test (issue 24) is one more function in WORKER_START_CHECKS; a
    check that raises refuses too, naming itself."""
    ran: list[str] = []

    def self_test() -> str | None:
        ran.append("self_test")
        return "the sandbox let a bot read /etc/shadow"

    def broken() -> str | None:
        raise RuntimeError("boom")

    passing = [check for check in workers.WORKER_START_CHECKS if check is workers.media_refusal]
    monkeypatch.setattr(workers, "WORKER_START_CHECKS", (*passing, self_test))
    consumer = Consumer()
    with caplog.at_level(logging.ERROR):
        check_worker_on_start(sender=consumer)
    assert ran == ["self_test"] and consumer.cancelled == ["matches", "challenges"]
    assert "/etc/shadow" in caplog.text

    monkeypatch.setattr(workers, "WORKER_START_CHECKS", (broken, self_test))
    assert workers.worker_start_refusal() == "broken raised RuntimeError: boom"
    assert ran == ["self_test"]  # the first refusal ends the checks


def test_a_worker_that_passes_keeps_its_queues(settings: Any) -> None:
    settings.GRASS_SANDBOXED = False  # the sandbox's own checks are tests/bots' and tests/e2e's
    consumer = Consumer()
    check_worker_on_start(sender=consumer)
    assert consumer.cancelled == []


# ---------------------------------------------------------------------- the sandbox's proof


@pytest.fixture
def no_python(sandbox_ready: None) -> Iterator[Path]:
    with image_without_python() as root:
        yield root


def test_a_worker_whose_known_bots_fail_refuses_matches_at_start(
    sandbox_ready: None, no_python: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A worker whose image had lost python3 passed every start check and recorded 16
    matches in 30 s, every seat forfeiting: the known bot of each language now makes a
    decision at start, and the worker refuses matches when one cannot."""
    consumer = Consumer()
    with caplog.at_level(logging.ERROR, logger="ladder.matches.tasks"):
        check_worker_on_start(sender=consumer)
    assert consumer.cancelled == ["matches", "challenges"]
    assert "the known bots fail on this host: python:" in caplog.text
    assert "javascript" not in caplog.text.split("known bots fail")[1]  # node is there


def test_a_proof_is_due_after_its_period(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    settings.GRASS_SANDBOX_PROOF_SECONDS = 600
    proved: list[bool] = []
    monkeypatch.setattr(workers.proof, "prove", lambda: proved.append(True) or {})
    workers.proof_clock_set(-1e18)
    assert workers.proof_due_refusal() is None and len(proved) == 1
    assert workers.proof_due_refusal() is None and len(proved) == 1  # not due again yet
    workers.proof_clock_set(workers.time.monotonic() - 601)
    assert workers.proof_due_refusal() is None and len(proved) == 2


def test_a_proof_passed_in_the_main_process_counts_for_the_processes_it_forked(
    settings: Any,
) -> None:
    """Celery forks its pool before the start checks run (worker_ready): each pool process
    proved again before its first match, which a person's game then waited for (10 s)."""
    import os

    settings.GRASS_SANDBOX_PROOF_SECONDS = 600
    workers.proof_clock_set(-1e18)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the pool process: waits for the proof, then says whether one is due
        try:
            os.read(read, 1)
            due = workers.time.monotonic() - workers.proof_clock() >= 600
            os.write(write, b"due" if due else b"not due")
        finally:
            os._exit(0)
    workers.proof_clock_set(workers.time.monotonic())  # the start checks' proof, after the fork
    os.write(write, b"!")
    os.waitpid(child, 0)
    said = os.read(read, 16)
    os.close(read)
    os.close(write)
    assert said == b"not due"


def test_a_proof_due_soon_is_run_after_a_task_not_before_the_next_match(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.GRASS_SANDBOX_PROOF_SECONDS = 600
    proved: list[bool] = []
    monkeypatch.setattr(workers.proof, "prove", lambda: proved.append(True) or {})
    monkeypatch.setattr(workers, "media_refusal", lambda: None)
    now = workers.time.monotonic()
    workers.proof_clock_set(now - 400)  # two thirds of the period: not yet
    assert workers.proof_ahead() is None and proved == []
    workers.proof_clock_set(now - 460)  # past three quarters: now, after this task
    assert workers.proof_ahead() is None and proved == [True]
    assert workers.proof_due_refusal() is None and proved == [True]  # the next match: none
    monkeypatch.setattr(workers.proof, "prove", lambda: {"python": "no interpreter"})
    workers.proof_clock_set(now - 460)
    assert "python: no interpreter" in (workers.proof_ahead() or "")


def test_a_proof_due_checks_the_media_too(
    settings: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, valid_version: Any
) -> None:
    """Issue 36: with the shared media gone after a passed proof, a worker failed 222 matches
    in 8.5 min with a raw FileNotFoundError, since its periodic proof did not look at media."""
    valid_version("a")
    monkeypatch.setattr(workers.proof, "prove", lambda: {})
    workers.proof_clock_set(-1e18)
    settings.MEDIA_ROOT = tmp_path / "empty"  # the mount is gone: an empty folder instead
    refusal = workers.proof_due_refusal()
    assert refusal is not None and "holds none of the newest uploaded bots" in refusal
