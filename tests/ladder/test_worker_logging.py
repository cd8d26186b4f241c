"""Ctrl-C of `make run` prints no WorkerLostError traceback at ERROR (issue 15, point 6): the
record Celery writes for a pool process killed by SIGINT becomes one INFO line; a process lost
any other way is still an ERROR with its traceback."""

from __future__ import annotations

import logging
import sys

import pytest
from billiard.exceptions import WorkerLostError

import ladder.celery  # noqa: F401  (the worker's module: it installs the filter)


def lost(status: str) -> logging.LogRecord:
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


def test_a_task_cut_short_by_ctrl_c_is_one_info_line(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("celery.worker.request")
    with caplog.at_level(logging.INFO, logger="celery.worker.request"):
        logger.handle(lost("signal 2 (SIGINT) Job: 3"))
        logger.handle(lost("signal 9 (SIGKILL) Job: 4"))

    quiet, loud = caplog.records
    assert quiet.levelno == logging.INFO and quiet.exc_info is None
    assert "cut short by Ctrl-C" in quiet.getMessage()
    assert "Traceback" not in caplog.text.split("SIGKILL")[0]
    assert loud.levelno == logging.ERROR and loud.exc_info is not None
