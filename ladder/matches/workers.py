"""The workers that play matches: whether a worker reads the matches queue, and what it checks
when it starts, before it takes a match.

Each start check is a function that returns why this worker must not play matches, or None.
A worker that fails one says why at ERROR and stops consuming the matches queue
(`tasks.check_worker_on_start`), so a host that cannot play as the site does takes no match,
instead of reporting ready and then failing every match it takes. To add a check, write one
more such function and put it in WORKER_START_CHECKS.
"""

from __future__ import annotations

import errno
import logging
import mmap
import os
import secrets
import socket
import struct
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import Storage, storages

from bots.runner import proof, sandbox
from ladder.bots.models import BotVersion
from ladder.bots.runtimes import runtime_refusal
from ladder.matches.broker import match_queue

logger = logging.getLogger(__name__)

PROBE_FOLDER = "probes"
"""Where the media check writes its probe file (and deletes it at once)."""
UPLOADS_CHECKED = 3
"""The newest uploads the media check looks for: a storage that holds none of them is not
the site's (an empty local folder where the shared mount should be)."""


def takes_matches(consumer: Any) -> bool:
    """Whether a worker's consumer reads the matches queue (its -Q, less the queues it
    cancelled since)."""
    return takes_queue(consumer, match_queue())


def takes_queue(consumer: Any, queue: str) -> bool:
    """Whether a worker's consumer reads `queue` (its -Q, less the queues it cancelled
    since)."""
    task_consumer = getattr(consumer, "task_consumer", None)
    if task_consumer is None:  # not consuming yet: what it was started to take
        return queue in consumer.app.amqp.queues.consume_from
    return any(q.name == queue for q in task_consumer.queues)


def media_refusal() -> str | None:
    """Why the media storage will not do for matches, or None: a probe file written, read back
    and deleted through Django's storage API (what matches use for logs and bots), then the
    newest uploads the database names looked for, since a storage that works but is not the
    shared one (the mount missing, MEDIA_ROOT pointing elsewhere) would fail every match with
    FileNotFoundError on the bots' files. A storage that is there but full passes: matches go
    on, their logs waiting in the database (issue 36: the periodic proof checks media too, and
    must not stop every worker of a site whose disk filled up)."""
    storage = storages["default"]
    where = _where(storage)
    host, pid = socket.gethostname(), os.getpid()
    data = f"media probe of {host} pid {pid}\n".encode()
    requested = f"{PROBE_FOLDER}/{host}-{pid}-{secrets.token_hex(8)}.txt"
    try:
        name = storage.save(requested, ContentFile(data))
        try:
            with storage.open(name, "rb") as probe:
                back = probe.read()
        finally:
            storage.delete(name)
    except OSError as exc:
        if exc.errno not in FULL:
            return _probe_failed(where, exc)
        # Full, not gone: a played match keeps its result and its log waits in the database
        # (PendingLog) until there is room, so a full disk stops no worker; the uploads are
        # still looked for below.
        logger.warning("the media storage (%s) is full: %s", where, exc)
        with suppress(OSError):
            storage.delete(requested)  # the empty file the failed write left
        back = data
    except Exception as exc:
        return _probe_failed(where, exc)
    if back != data:
        return f"the media storage ({where}) gave back other bytes than a probe file's"
    newest = list(
        BotVersion.objects.exclude(file="")
        .order_by("-pk")
        .values_list("file", flat=True)[:UPLOADS_CHECKED]
    )
    if newest and not any(storage.exists(upload) for upload in newest):
        return (
            f"the media storage ({where}) holds none of the newest uploaded bots (such as "
            f"{newest[0]}): the site's shared media is not mounted here, or MEDIA_ROOT / "
            "MEDIA_STORAGE point elsewhere (deploy/README.md, 'Media')"
        )
    return None


FULL = (errno.ENOSPC, errno.EDQUOT)
"""The errors of a media storage that is there but has no room."""


def _probe_failed(where: str, exc: BaseException) -> str:
    return (
        f"the media storage ({where}) failed to write, read and delete a probe file: "
        f"{type(exc).__name__}: {exc}"
    )


def _where(storage: Storage) -> str:
    location = getattr(storage, "location", None)
    return str(location) if location else type(storage).__name__


def sandbox_refusal() -> str | None:
    """Why bots cannot run in the sandbox here, or None; on the way, removes the boxes a dead
    worker on this host left (processes, cgroups, staged code: `bots.runner.home.sweep`), so a
    host that lost workers does not run out of sandboxes."""
    if not settings.GRASS_SANDBOXED:
        return None
    try:
        removed = sandbox.sweep()
    except sandbox.SandboxUnavailable as exc:
        return f"the bot sandbox cannot run on this worker: {exc}"
    if any(removed.values()):
        # Routine after a stop: a worker that stops makes no more boxes, but those it made
        # ahead for the next match are left to this sweep when it is killed or stopped mid-task.
        logger.info("removed boxes left by stopped or dead runners on this host: %s", removed)
    return None


_PROVED = mmap.mmap(-1, 8)
"""The worker's last passing proof (a monotonic time: the clock is the host's), in memory the
worker shares with the pool processes it forks (an anonymous shared mapping, made when the
module is imported, before the pool starts). The proof at start runs in the main process,
after the pool forked: with a clock of each process's own, every pool process proved again
before its first match (a person's game started 10 s late), and each again every period."""
PROOF_AHEAD = 0.75
"""After a task, a proof older than this part of GRASS_SANDBOX_PROOF_SECONDS is run at once
(`proof_ahead`), so that the next match does not wait for it."""


def proof_clock() -> float:
    """When the last proof passed (monotonic time)."""
    return float(struct.unpack("d", _PROVED[:8])[0])


def proof_clock_set(at: float) -> None:
    _PROVED[:8] = struct.pack("d", at)


proof_clock_set(-1e18)  # never


def proof_refusal() -> str | None:
    """Why the known bot of some language cannot make a decision here, or None
    (`bots.runner.proof`: a broken image, a missing interpreter, a sandbox that starts nothing
    fail every match the same way, and must not be charged to bots)."""
    if not settings.GRASS_SANDBOXED:
        return None
    problems = proof.prove()
    if problems:
        said = "; ".join(f"{language}: {why}" for language, why in sorted(problems.items()))
        return f"the known bots fail on this host: {said}"
    proof_clock_set(time.monotonic())
    return None


def proof_ahead() -> str | None:
    """After a task (`tasks.prove_ahead`): when the proof will be due within a quarter of its
    period, run it now, while no match waits for this process, and say why it failed (or None).
    A failure changes nothing here: the next match finds the proof due and is refused as
    `proof_due_refusal` says."""
    age = time.monotonic() - proof_clock()
    if age < settings.GRASS_SANDBOX_PROOF_SECONDS * PROOF_AHEAD:
        return None
    return _prove_now()


def proof_due_refusal() -> str | None:
    """Before a match or a validation: when the last proof is older than
    GRASS_SANDBOX_PROOF_SECONDS (in this process), the media storage checked (a probe written,
    read and deleted; the newest uploads found) and the known bots proved, and why either
    failed, or None. The media is checked here as well as at start: a mount lost after the
    start failed every match with FileNotFoundError (issue 36)."""
    if time.monotonic() - proof_clock() < settings.GRASS_SANDBOX_PROOF_SECONDS:
        return None
    # On a table host the tasks are threads of one process: one of them proves, the others
    # wait for it and read its clock, instead of proving the host side by side.
    with _PROVING:
        if time.monotonic() - proof_clock() < settings.GRASS_SANDBOX_PROOF_SECONDS:
            return None
        return _prove_now()


_PROVING = threading.Lock()


def _prove_now() -> str | None:
    refusal = media_refusal()
    if refusal is not None:
        return refusal
    if not settings.GRASS_SANDBOXED:
        proof_clock_set(time.monotonic())
        return None
    return proof_refusal()


def after_fault_refusal() -> str | None:
    """After a match failed for a host fault: the media storage and the known bots checked at
    once, and why either failed, or None (`ladder.breaker.breaker_host_fault`: a refusal stops
    the worker at its first fault)."""
    return media_refusal() or proof_refusal()


WORKER_START_CHECKS: tuple[Callable[[], str | None], ...] = (
    media_refusal,
    runtime_refusal,  # its bots' runtime image is the site's
    sandbox_refusal,
    proof_refusal,  # a known bot of each language makes a decision here
)
"""Run in this order by every worker that starts, up to the first that refuses (the sandbox's
sweep of dead runners' boxes then waits for a worker that may run bots)."""


def worker_start_refusal() -> str | None:
    """Why this worker must not play matches, or None: the first start check that refuses. A
    check that raises refuses, naming itself."""
    for check in WORKER_START_CHECKS:
        try:
            refusal = check()
        except Exception as exc:
            logger.exception("start check %s raised", check.__name__)
            refusal = f"{check.__name__} raised {type(exc).__name__}: {exc}"
        if refusal is not None:
            return refusal
    return None
