"""A Match and its seats (index 0-5, never "player 1 / player 2": Grass seats 2 to 6)."""

from __future__ import annotations

import secrets

from django.db import models
from django.utils import timezone

from ladder.bots.models import BotVersion


def new_seed() -> int:
    """A game's seed decides every shuffle, so it comes from the OS's secure generator: a bot
    must not be able to guess it. 63 bits fit PostgreSQL's bigint."""
    return secrets.randbits(63)


def _log_path(match: Match, filename: str) -> str:
    return f"logs/{match.created:%Y/%m}/{filename}"


def _replay_path(match: Match, filename: str) -> str:
    return f"replays/{match.created:%Y/%m}/{filename}"


class Match(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        """Created, waiting for a worker to claim it."""
        RUNNING = "running", "running"
        """Claimed by a worker, being played."""
        FINISHED = "finished", "finished"
        """Played; log, seats' results and rating changes are stored."""
        FAILED = "failed", "failed"
        """The run raised (not a bot's fault: bots' faults are forfeits); see failure_reason."""

    ruleset = models.CharField(max_length=16, default="modern")
    variants = models.JSONField(default=dict, blank=True)
    limits = models.JSONField(default=dict, blank=True)
    """Engine limits such as `max_hands`; empty for ladder games, set by tests and test runs."""
    seed = models.BigIntegerField(default=new_seed)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    failure_reason = models.TextField(blank=True)
    created = models.DateTimeField(default=timezone.now)
    queued = models.DateTimeField(default=timezone.now)
    """When the match was last sent to the workers: a match queued for long lost its message."""
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    log = models.FileField(upload_to=_log_path, blank=True, max_length=200)
    """The game's log, gzip-compressed JSON Lines (`engine.log.read_log` reads it). Empty on a
    finished match while its log waits in a PendingLog for storage to take it."""
    log_sha256 = models.CharField(max_length=64, blank=True)
    replay = models.FileField(upload_to=_replay_path, blank=True, max_length=200)
    """The replay viewer's document of the log (all cards face up), gzipped JSON, computed by
    the worker when it recorded the match: opening the match page reads it, nothing is
    replayed. Empty when it could not be stored (the viewer then computes it)."""
    replay_engine = models.CharField(max_length=16, blank=True)
    """The engine version that computed `replay`: another engine computes it again."""
    result = models.JSONField(null=True, blank=True)
    """The engine's result line: totals, per-hand scores, ranks."""
    rated = models.BooleanField(default=True)
    """Whether the result feeds ladder Elo (tournament games do only if the organiser says so)."""
    time_control = models.JSONField(default=dict, blank=True)
    """`bots.runner.match.TimeControl` fields that differ from the ladder's defaults."""
    runtime = models.CharField(max_length=64, blank=True)
    """The bots' runtime image the match must be played on (`bots.runner.runtime.identity`):
    the site's GRASS_RUNTIME_IMAGE when it was created. A worker on another image refuses it,
    so one match never mixes images, and its log header records the image it ran on."""
    # A tournament's games point here from `tournaments.TableGame`; a match knows nothing of them.

    class Meta:
        verbose_name_plural = "matches"
        indexes = [models.Index(fields=["status", "created"])]

    def __str__(self) -> str:
        return f"match {self.pk} ({self.status})"


class MatchSeat(models.Model):
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="seats")
    seat = models.PositiveSmallIntegerField()
    """0-based, in the engine's seat order."""
    bot_version = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="seats")
    place = models.PositiveSmallIntegerField(null=True, blank=True)
    """1 is first; a forfeiting seat ranks below every other. Null until the match finishes."""
    total = models.IntegerField(null=True, blank=True)
    forfeited = models.BooleanField(default=False)
    forfeit_reason = models.TextField(blank=True)
    decisions = models.PositiveIntegerField(default=0)
    think_ms = models.FloatField(default=0.0)
    strikes = models.PositiveSmallIntegerField(default=0)
    faults = models.JSONField(default=dict, blank=True)
    """Fault counts by kind (`timeout`, `illegal`, ...); every fault's detail is in the log."""
    fault_details = models.JSONField(default=dict, blank=True)
    """The first detail of each fault kind ("timeout": "no answer within 1.0 s", ...), kept
    here so the bot page can say why without reading logs."""
    stderr = models.TextField(blank=True)
    """The end of what the bot wrote on stderr in this match (the runner keeps the last 4,000
    characters): its own debugging output and tracebacks, which quote its private source, so
    only the bot's owner and staff may read it (`matches.selectors.seat_stderr_visible`)."""

    class Meta:
        ordering = ["match", "seat"]
        constraints = [
            models.UniqueConstraint(fields=["match", "seat"], name="match_seat_unique"),
            models.CheckConstraint(condition=models.Q(seat__lte=5), name="match_seat_index_0_to_5"),
        ]

    def __str__(self) -> str:
        return f"match {self.match_id} seat {self.seat}"


class PendingLog(models.Model):
    """A finished match's log that the media storage refused when the match was recorded (a
    full disk): its gzip bytes, kept in the database until the sweep
    (`services.match_logs_write_pending`) writes them to storage and deletes this row.

    A played game is never lost to its log: the match is recorded (seats, places, ratings,
    status finished) whatever storage says, and its page says the log is not available yet.
    A table of its own, so that reading matches never drags the bytes along.
    """

    match = models.OneToOneField(
        Match, on_delete=models.CASCADE, primary_key=True, related_name="pending_log"
    )
    data = models.BinaryField()
    created = models.DateTimeField(default=timezone.now)
    last_error = models.TextField(blank=True)
    """Why storage refused it last time (the sweep's tries included)."""

    def __str__(self) -> str:
        return f"pending log of match {self.match_id}"
