"""The circuit breaker of every worker (issue 36): a worker whose host breaks while it runs
stops taking work within seconds, proves itself again, and takes work once the proof passes.

A match or a validation that fails for a host fault (`bots.runner.faults`: by the exception's
type) is one fault; GRASS_HOST_FAULTS_IN_A_ROW of them in a row on one worker open its breaker,
and so does one fault after which the worker's own checks (for a match worker: its media, its
sandbox's known bots) fail at once. A match or validation that runs without a host fault sets
the count to 0 again.

Here, at the ladder's root, because both the quick worker's tasks (`ladder.bots`) and the match
worker's (`ladder.matches`) use it, and an app may not import one above it; the checks, which
are the matches app's (`ladder.matches.workers`), are handed in.

The count and the open flag are kept in shared memory made when this module is imported, which
is in the worker's main process before Celery's prefork pool forks its processes: every process
of one worker shares them, so N faults in a row is N on the worker, not N on each of its
processes; another worker (another host) has its own.

Opened (`stop_taking_work`), the worker stops consuming every queue it reads (its main
process, told by a remote control command, `ladder.matches.tasks.grass_stop_taking_work`),
tasks it had already reserved go back unrun (`refuse_if_stopped`), and a thread of its main
process proves it again every GRASS_BREAKER_PROOF_SECONDS until the proof passes
(`breaker_reprove`), then closes the breaker and consumes its queues again.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from collections.abc import Callable

from celery.exceptions import Reject
from django.conf import settings

from bots.runner.faults import describe
from ladder.celery import app

Check = Callable[[], str | None]
"""Why this worker must not take work, or None (`ladder.matches.workers`' checks)."""

logger = logging.getLogger(__name__)

_FAULTS = multiprocessing.Value("q", 0)
"""Host faults in a row on this worker (shared by its pool's processes)."""
_OPEN = multiprocessing.Value("b", 0)
"""1 while this worker's breaker is open: it takes no work until it proves itself again."""


def breaker_open() -> bool:
    """Whether this worker has stopped taking work (its breaker is open)."""
    return bool(_OPEN.value)


def breaker_host_fault(exc: BaseException, *, check: Check | None = None) -> str | None:
    """Count one host fault on this worker; why it must stop taking work now, or None.

    After each fault `check` (if given) looks at once at what a broken host breaks (the match
    worker's media storage, then the known bots in its sandbox): one that refuses opens the
    breaker on the first fault. Otherwise the GRASS_HOST_FAULTS_IN_A_ROW-th fault in a row
    does, whatever the check says: a fault the check does not see must not let the worker
    swallow the queue.
    """
    with _FAULTS.get_lock():
        _FAULTS.value += 1
        faults = int(_FAULTS.value)
    said = describe(exc)[:500]
    refusal = _refusal(check) if check is not None else None
    if refusal is None and faults < settings.GRASS_HOST_FAULTS_IN_A_ROW:
        logger.warning("host fault %d in a row on this worker: %s", faults, said)
        return None
    breaker_stop()
    if refusal is None:
        return f"{faults} host faults in a row (the last: {said})"
    return f"{refusal} (after the host fault: {said})"


def breaker_stop() -> None:
    """Open the breaker: this worker takes no work until it proves itself again (its checks
    refused, or `breaker_host_fault` said so)."""
    _OPEN.value = 1


def breaker_work_done() -> None:
    """A match or validation ran without a host fault: the faults in a row start again at 0."""
    if _FAULTS.value:
        with _FAULTS.get_lock():
            _FAULTS.value = 0


def breaker_close() -> None:
    """The worker proved itself: it takes work again, its count at 0."""
    with _FAULTS.get_lock():
        _FAULTS.value = 0
    _OPEN.value = 0


def _refusal(check: Check) -> str | None:
    try:
        return check()
    except Exception as exc:
        return f"{getattr(check, '__name__', 'the check')} raised {describe(exc)}"


def refuse_if_stopped() -> None:
    """A task's prologue on a worker whose breaker is open: the message goes back to its queue,
    unrun, for a peer. Reject(requeue=True) hands it back to the broker as it came (acks_late
    leaves it unacknowledged until then); cancelling the consumer alone would not, since that
    stops new deliveries only and the worker still runs what it had already reserved (its
    prefetch)."""
    if breaker_open():
        raise Reject("this worker stopped taking work (its breaker is open)", requeue=True)


def stop_taking_work(*, hostname: str | None, reason: str) -> None:
    """Open this worker's breaker: say why at ERROR, and have its main process stop consuming
    every queue it reads and prove it again until a proof passes.

    Why a broadcast: a pool process cannot cancel its worker's consumer itself, and Celery's
    remote control (a message on the broker's pidbox; `destination`, this worker alone) is how
    a running consumer is told to stop reading a queue (`cancel_consumer`) without a restart.
    The main process acts on it within a second or so; meanwhile `refuse_if_stopped` gives
    back what it still hands to its pool."""
    breaker_stop()
    logger.error("this worker stops taking work: %s", reason)
    if hostname:
        app.control.broadcast(
            "grass_stop_taking_work", arguments={"reason": reason[:2000]}, destination=[hostname]
        )


_REPROVING = threading.Lock()
"""Held by the thread that proves a stopped worker again: one such thread per process."""


def breaker_reprove(
    *, prove: Check, resume: Callable[[], None], stopped: threading.Event | None = None
) -> bool:
    """Prove this stopped worker again every GRASS_BREAKER_PROOF_SECONDS with `prove` (the
    checks a worker passes at start: its media read and written, its runtime image, its
    sandbox, the known bots), until it passes; then close the breaker and call `resume`
    (which has the worker consume its queues again). Returns False at once when another
    thread already proves it, or when `stopped` is set (the worker shuts down) before a proof
    passes."""
    if not _REPROVING.acquire(blocking=False):
        return False
    try:
        stopped = stopped or threading.Event()
        while not stopped.wait(settings.GRASS_BREAKER_PROOF_SECONDS):
            refusal = _refusal(prove)
            if refusal is None:
                breaker_close()
                logger.warning("this worker proved itself again and takes work again")
                resume()
                return True
            logger.error("this worker still takes no work: %s", refusal)
        return False
    finally:
        _REPROVING.release()
