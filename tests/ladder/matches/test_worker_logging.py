"""Stopping a worker prints no WorkerLostError traceback at ERROR (issue 15, point 6): the
records Celery and billiard write for a pool process killed by the stop's SIGINT or SIGTERM
become one INFO line each; a process lost any other way is still an ERROR with its traceback.
(tests/e2e/test_make_run.py checks the real Ctrl-C of `make run`.)"""

from __future__ import annotations

import logging
import sys

import pytest
from billiard.exceptions import WorkerLostError

import ladder.celery  # noqa: F401  (the worker's module: it installs the filter)


def lost_task(status: str) -> logging.LogRecord:
    """Celery's record of a task whose pool process died (celery.worker.request)."""
    try:
        raise WorkerLostError(f"Worker exited prematurely: {status}.")
    except WorkerLostError:
        exc_info = sys.exc_info()
    return logging.LogRecord(
        "celery.worker.request",
        logging.ERROR,
        __file__,
        1,
        "Task handler raised error: %r",
        (exc_info[1],),
        exc_info,
    )


def lost_process(status: str) -> logging.LogRecord:
    """billiard's record of the pool process itself (the multiprocessing logger)."""
    return logging.LogRecord(
        "multiprocessing",
        logging.ERROR,
        __file__,
        1,
        "Process %r pid:%r exited with %r",
        ("ForkPoolWorker-2", 9165, status),
        None,
    )


@pytest.mark.parametrize("signal", ["signal 2 (SIGINT)", "signal 15 (SIGTERM)"])
def test_a_stop_cuts_matches_short_in_one_info_line_each(
    caplog: pytest.LogCaptureFixture, signal: str
) -> None:
    with caplog.at_level(logging.INFO):
        logging.getLogger("celery.worker.request").handle(lost_task(f"{signal} Job: 3"))
        logging.getLogger("multiprocessing").handle(lost_process(signal))

    assert [r.levelno for r in caplog.records] == [logging.INFO, logging.INFO]
    assert all(r.exc_info is None for r in caplog.records)
    assert all("taken back later" in r.getMessage() for r in caplog.records)
    assert "Traceback" not in caplog.text and "WorkerLostError" not in caplog.text


def test_a_process_lost_otherwise_is_still_an_error_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO):
        logging.getLogger("celery.worker.request").handle(lost_task("signal 9 (SIGKILL) Job: 4"))
        logging.getLogger("multiprocessing").handle(lost_process("exitcode 1"))

    task, process = caplog.records
    assert task.levelno == logging.ERROR and task.exc_info is not None
    assert process.levelno == logging.ERROR
