"""A worker's checks at start (ladder/matches/workers.py): a worker whose media storage fails a
probe, or is not the site's shared media, refuses matches loudly (an ERROR, and it stops
consuming the matches queue) instead of reporting ready and failing every match it takes with
a raw FileNotFoundError. The real worker doing so is in tests/e2e/test_recovery.py."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ladder.matches import workers
from ladder.matches.tasks import check_worker_on_start
from tests.bots.boxes import image_without_python

pytestmark = pytest.mark.django_db


class Consumer:
    """What `worker_ready` passes: a Celery consumer that can stop consuming a queue."""

    def __init__(self) -> None:
        self.cancelled: list[str] = []

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


def test_host_faults_in_a_row_stop_a_worker_even_when_its_proof_passes(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.GRASS_HOST_FAULTS_IN_A_ROW = 3
    proved: list[bool] = []
    monkeypatch.setattr(workers.proof, "prove", lambda: proved.append(True) or {})
    monkeypatch.setitem(workers._PROVED, "host_faults", 0)
    fault = "InfrastructureFault: host fault: every seat failed the same way: crashed: ..."
    assert workers.after_match_refusal(status="failed", failure_reason=fault) is None
    assert workers.after_match_refusal(status="finished", failure_reason="") is None  # resets
    assert workers.after_match_refusal(status="failed", failure_reason=fault) is None
    assert workers.after_match_refusal(status="failed", failure_reason="OSError: x") is None
    assert workers.after_match_refusal(status="failed", failure_reason=fault) is None
    refusal = workers.after_match_refusal(status="failed", failure_reason=fault)
    assert refusal is not None and refusal.startswith("3 matches in a row failed for host faults")
    assert len(proved) == 4  # each host fault proved the sandbox again at once


def test_a_failed_proof_after_a_host_fault_stops_the_worker_at_once(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workers.proof, "prove", lambda: {"python": "did not start: exit 127"})
    monkeypatch.setitem(workers._PROVED, "host_faults", 0)
    refusal = workers.after_match_refusal(
        status="failed", failure_reason="InfrastructureFault: host fault: no seat could start"
    )
    assert refusal == "the known bots fail on this host: python: did not start: exit 127"


def test_a_proof_is_due_after_its_period(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    settings.GRASS_SANDBOX_PROOF_SECONDS = 600
    proved: list[bool] = []
    monkeypatch.setattr(workers.proof, "prove", lambda: proved.append(True) or {})
    monkeypatch.setitem(workers._PROVED, "at", -1e18)
    assert workers.proof_due_refusal() is None and len(proved) == 1
    assert workers.proof_due_refusal() is None and len(proved) == 1  # not due again yet
    monkeypatch.setitem(workers._PROVED, "at", workers.time.monotonic() - 601)
    assert workers.proof_due_refusal() is None and len(proved) == 2
