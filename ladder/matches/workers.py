"""The workers that play matches: whether a worker reads the matches queue, and what it checks
when it starts, before it takes a match.

Each start check is a function that returns why this worker must not play matches, or None.
A worker that fails one says why at ERROR and stops consuming the matches queue
(`tasks.check_worker_on_start`), so a host that cannot play as the site does takes no match,
instead of reporting ready and then failing every match it takes. To add a check, write one
more such function and put it in WORKER_START_CHECKS.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from collections.abc import Callable
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
    queue = match_queue()
    task_consumer = getattr(consumer, "task_consumer", None)
    if task_consumer is None:  # not consuming yet: what it was started to take
        return queue in consumer.app.amqp.queues.consume_from
    return any(q.name == queue for q in task_consumer.queues)


def media_refusal() -> str | None:
    """Why the media storage will not do for matches, or None: a probe file written, read back
    and deleted through Django's storage API (what matches use for logs and bots), then the
    newest uploads the database names looked for, since a storage that works but is not the
    shared one (the mount missing, MEDIA_ROOT pointing elsewhere) would fail every match with
    FileNotFoundError on the bots' files."""
    storage = storages["default"]
    where = _where(storage)
    host, pid = socket.gethostname(), os.getpid()
    data = f"media probe of {host} pid {pid}\n".encode()
    try:
        name = storage.save(
            f"{PROBE_FOLDER}/{host}-{pid}-{secrets.token_hex(8)}.txt", ContentFile(data)
        )
        try:
            with storage.open(name, "rb") as probe:
                back = probe.read()
        finally:
            storage.delete(name)
    except Exception as exc:
        return (
            f"the media storage ({where}) failed to write, read and delete a probe file: "
            f"{type(exc).__name__}: {exc}"
        )
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


_PROVED = {"at": -1e18, "host_faults": 0}
"""This process's last passing proof (monotonic time) and its matches failed in a row for
host faults."""


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
    _PROVED["at"] = time.monotonic()
    return None


def proof_due_refusal() -> str | None:
    """Before a match: a proof when the last one is older than GRASS_SANDBOX_PROOF_SECONDS
    (in this process), and why it failed, or None."""
    if not settings.GRASS_SANDBOXED:
        return None
    if time.monotonic() - _PROVED["at"] < settings.GRASS_SANDBOX_PROOF_SECONDS:
        return None
    return proof_refusal()


def after_match_refusal(*, status: str, failure_reason: str) -> str | None:
    """After a match: why this worker must stop taking matches, or None. A match failed for a
    host fault (`bots.runner.match.Referee.check_host`) makes it prove its sandbox again at
    once; GRASS_HOST_FAULTS_IN_A_ROW of them stop it even when the proof passes (a fault the
    proof does not see must not make it swallow the queue)."""
    if status == "failed" and "host fault" in failure_reason:
        _PROVED["host_faults"] += 1
        refusal = proof_refusal()
        if refusal is not None:
            return refusal
        if _PROVED["host_faults"] >= settings.GRASS_HOST_FAULTS_IN_A_ROW:
            return (
                f"{_PROVED['host_faults']} matches in a row failed for host faults "
                f"(the last: {failure_reason[:500]})"
            )
    elif status == "finished":
        _PROVED["host_faults"] = 0
    return None


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
