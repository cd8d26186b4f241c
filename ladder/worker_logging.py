"""How a worker that is being stopped reports the matches it cut short.

Ctrl-C of `make run` (honcho then sends SIGTERM to each process group), like `systemctl stop`
(SIGTERM to the service's whole cgroup), reaches the worker's pool processes as well as the
worker itself. Each pool process playing a match dies of that signal, and Celery logs it twice
at ERROR: "Process 'ForkPoolWorker-2' ... exited with 'signal 15 (SIGTERM)'" and "Task handler
raised error: WorkerLostError(...)" with a traceback. Nothing is wrong: the match stays
"running" and is taken back (at the next start with GRASS_RECOVER_ON_WORKER_START, by the sweep
otherwise). This filter turns exactly those records (a pool process that died of SIGINT or
SIGTERM) into one INFO line each, without a traceback; a pool process lost any other way (a
crash, the kernel's OOM killer's SIGKILL) is still an ERROR with its traceback.
"""

from __future__ import annotations

import logging

STOP_SIGNALS = ("signal 2 (SIGINT)", "signal 15 (SIGTERM)")
"""How billiard names the signals a stop sends (a terminal's Ctrl-C, honcho's and systemd's
SIGTERM) in the records it writes for a lost pool process."""
LOGGERS = ("celery.worker.request", "multiprocessing")
"""Where Celery reports a task whose pool process was lost, and where billiard reports the
pool process itself."""


class CutShortByStop(logging.Filter):
    """Rewrites the record of a pool process killed by a stop as one INFO line; passes the
    rest unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR:
            return True
        # The message names the signal ("... WorkerLostError('Worker exited prematurely:
        # signal 15 (SIGTERM) Job: 1.')"); the exception itself reaches the handler wrapped
        # (billiard's ExceptionWithTraceback), so its type says little.
        text = record.getMessage()
        stop = next((name for name in STOP_SIGNALS if name in text), None)
        if stop is None or (record.exc_info and "WorkerLostError" not in text):
            return True
        record.levelno, record.levelname = logging.INFO, "INFO"
        record.msg = "stopping: a pool process was ended by %s; its match is taken back later"
        record.args = (stop,)
        record.exc_info, record.exc_text = None, None
        return True


def quiet_stop() -> None:
    """Install the filter (once) on the loggers that report lost pool processes."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, CutShortByStop) for f in logger.filters):
            logger.addFilter(CutShortByStop())
