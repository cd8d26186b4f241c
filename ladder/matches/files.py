"""A match's files: its log, its replay and its bots' debug lines, from the moment the match
is recorded until retention deletes them.

Apart from the flow because storage fails in ways the database does not (a full disk, a lost
mount), and a game that was played must never be failed and played again because of a file.
Recording (`_match_record`) hands the log to `match_log_store`, which keeps it in the database
(PendingLog) when storage refuses it, for the sweep to write once there is room
(`match_logs_write_pending`); the debug lines are left out instead (`match_debug_store`).
After the match, the replay viewer packs its replays (`replay_pack`) and notes each view
(`match_viewed`), and retention deletes the files of the old matches nobody watches
(`match_files_expire`).
"""

from __future__ import annotations

import gzip
import json
import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from bots.runner.results import MatchResult
from ladder.matches.debug import debug_pack
from ladder.matches.models import FAILURE_REASON_CHARS, Match, PendingLog
from ladder.storage import StorageFull, storage_save_whole

logger = logging.getLogger(__name__)


def log_name(match_id: int) -> str:
    return f"match-{match_id}.jsonl.gz"


def replay_name(match_id: int) -> str:
    return f"match-{match_id}.json.gz"


def match_log_store(match: Match, log: bytes) -> bool:
    """Write a just-played match's log to storage, or keep it in the database when storage
    refuses it (a full disk, a lost NFS mount): the game was played, and its result must not
    wait on a disk. Returns whether the file was written; if not, PendingLog holds the bytes
    until `match_logs_write_pending` writes them. Runs in `_match_record`'s transaction; the
    write has a savepoint of its own, so whatever the storage raised leaves it usable.
    """
    try:
        with transaction.atomic():
            storage_save_whole(match.log, log_name(match.pk), log)
    except Exception as exc:
        logger.exception("match %s: log kept in the database until storage takes it", match.pk)
        PendingLog.objects.update_or_create(
            match=match, defaults={"data": log, "last_error": _storage_error(exc)}
        )
        return False
    return True


def replay_pack(doc: dict[str, Any]) -> bytes:
    """A replay document as the viewer is sent it: compact JSON, gzipped."""
    return gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), compresslevel=6)


def match_viewed(*, match_id: int) -> None:
    """Note that the match's replay was opened now: retention keeps the files of matches
    watched lately. Written at most once a day per match (a conditional update), so a popular
    match costs no write per view."""
    now = timezone.now()
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    Match.objects.filter(pk=match_id).filter(
        models.Q(viewed__isnull=True) | models.Q(viewed__lt=today)
    ).update(viewed=now)


EXPIRE_BATCH = 1000
"""Matches whose files one retention run deletes at most (the next run goes on)."""


def match_files_expire(
    *, older_than: timedelta | None = None, limit: int = EXPIRE_BATCH
) -> list[int]:
    """Retention: delete the files (the log, and a replay stored by an older version) of the
    finished matches older than `older_than` (default GRASS_MATCH_FILES_KEEP_DAYS; 0 keeps
    everything) whose replay nobody opened in that time, oldest first, at most `limit`;
    returns their ids.

    Never touched: tournament games (their logs are the event's record, downloadable as its
    archive), a match whose log still waits in the database (PendingLog), and anything but
    files: the result, the seats and the rating changes stay, and the match says when its
    files went (`files_expired`). Each match is claimed with a conditional update before its
    files are deleted, so two runs never work on one match, and a row never points at a
    deleted file.
    """
    if older_than is None:
        days = settings.GRASS_MATCH_FILES_KEEP_DAYS
        if days <= 0:
            return []
        older_than = timedelta(days=days)
    now = timezone.now()
    cutoff = now - older_than
    old = (
        Match.objects.filter(
            status=Match.Status.FINISHED, files_expired__isnull=True, finished__lt=cutoff
        )
        # The tournaments app's one-to-one to a match: a tournament's games keep their logs.
        .filter(tournament_game__isnull=True, pending_log__isnull=True)
        .filter(models.Q(viewed__isnull=True) | models.Q(viewed__lt=cutoff))
        .order_by("finished", "id")
        .values_list("id", "log", "replay")[:limit]
    )
    unwatched = models.Q(viewed__isnull=True) | models.Q(viewed__lt=cutoff)
    expired: list[int] = []
    for match_id, log, replay in list(old):
        # Claimed only if still unexpired and unwatched (a view since the read above wins).
        claimed = (
            Match.objects.filter(pk=match_id, files_expired__isnull=True)
            .filter(unwatched)
            .update(files_expired=now, log="", replay="", replay_engine="")
        )
        if not claimed:
            continue
        for name in (log, replay):
            if name:
                try:
                    Match.log.field.storage.delete(name)
                except OSError:
                    logger.warning("match %s: could not delete %s", match_id, name, exc_info=True)
        expired.append(match_id)
    if expired:
        logger.info("retention deleted the files of %d matches", len(expired))
    return expired


def match_debug_store(match: Match, played: MatchResult) -> None:
    """Store what the bots wrote on stderr while they decided (`ladder.matches.debug`) beside
    the log, if any bot wrote anything. Their authors' aid, not the game: storage that refuses
    it (a full disk) leaves it out, and the match is recorded all the same."""
    try:
        packed = debug_pack(played.seats)
        if packed is None:
            return
        with transaction.atomic():
            storage_save_whole(match.debug, f"match-{match.pk}.json.gz", packed)
    except Exception:
        logger.exception("match %s: debug lines not stored", match.pk)
        match.debug = ""  # an empty FieldFile: none stored


def _storage_error(exc: Exception) -> str:
    cause = exc.__cause__ if isinstance(exc, StorageFull) and exc.__cause__ else exc
    return f"{type(cause).__name__}: {cause}"[:FAILURE_REASON_CHARS]


def match_logs_write_pending(*, limit: int = 100) -> list[int]:
    """Write to storage the logs that waited in the database (PendingLog), oldest first, at
    most `limit` per call; returns the ids of the matches whose log was written. Run by the
    sweep (`sweep_matches`, every minute on beat).

    Each match is taken under its row lock (skipping one another sweep holds), its file
    written whole and the row deleted in one transaction. The first refusal ends the call: a
    storage still full would refuse the rest too; the next sweep tries again.
    """
    written: list[int] = []
    waiting = PendingLog.objects.order_by("created").values_list("match_id", flat=True)
    for match_id in list(waiting[:limit]):
        with transaction.atomic():
            match = Match.objects.select_for_update(skip_locked=True).filter(pk=match_id).first()
            pending = PendingLog.objects.filter(match_id=match_id).first()
            if match is None or pending is None:
                continue  # another sweep holds it, or has written it
            try:
                with transaction.atomic():
                    storage_save_whole(match.log, log_name(match_id), bytes(pending.data))
            except Exception as exc:
                logger.warning("match %s: its log still cannot be stored: %s", match_id, exc)
                pending.last_error = _storage_error(exc)
                pending.save(update_fields=["last_error"])
                break
            match.save(update_fields=["log"])
            pending.delete()
        written.append(match_id)
    if written:
        logger.info("stored the logs that waited in the database: matches %s", written)
    return written
