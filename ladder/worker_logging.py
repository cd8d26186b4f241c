"""How a worker stopped by Ctrl-C reports the matches it cut short.

`make run` runs the worker in the terminal's process group, so Ctrl-C reaches its pool's
child processes as well as the worker itself; each child playing a match dies of SIGINT, and
Celery logs "Task handler raised error: WorkerLostError(...)" with a traceback at ERROR for
each. Nothing is wrong: the match stays "running" and the next start takes it back
(GRASS_RECOVER_ON_WORKER_START, or the sweep on a site with several workers). This filter
turns exactly that record (a WorkerLostError whose child died of SIGINT) into one INFO line
without a traceback; a child that dies of anything else is still an ERROR with its traceback.
"""

from __future__ import annotations

import logging

from billiard.exceptions import WorkerLostError

STOPPED_BY = "SIGINT"
"""The signal a terminal's Ctrl-C sends to its process group."""
LOGGERS = ("celery.worker.request",)
"""Where Celery reports a task whose pool process was lost."""


class CutShortByCtrlC(logging.Filter):
    """Rewrites the record of a task cut short by Ctrl-C as one INFO line; passes the rest."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, WorkerLostError) and STOPPED_BY in str(exc):
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.msg = (
                "a task was cut short by Ctrl-C (%s); its match is taken back when a worker "
                "starts again"
            )
            record.args = (str(exc),)
            record.exc_info, record.exc_text = None, None
        return True


def quiet_ctrl_c() -> None:
    """Install the filter (once) on the loggers that report lost tasks."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, CutShortByCtrlC) for f in logger.filters):
            logger.addFilter(CutShortByCtrlC())
