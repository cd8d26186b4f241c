"""Scheduled tournaments: the event, its entries, rounds, tables and the games of each table.

The pairing and standings maths is in `pairing.py` and `standings.py` (no Django there); these
tables hold their inputs and outputs. Seat order is always recorded: a table's `seats` lists
entry ids in seat order, and its games are matches seated in that order (rotated, for
duplicate tables).
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

from ladder.bots.models import Bot, BotVersion
from ladder.matches.models import Match


def new_seed() -> int:
    """Seeds the pairing's random choices and the games' shuffles (63 bits fit bigint)."""
    return secrets.randbits(63)


class Tournament(models.Model):
    class Format(models.TextChoices):
        ROUND_ROBIN = "round_robin", "round robin"
        SWISS = "swiss", "Swiss"
        ELIMINATION = "elimination", "single elimination"

    class Eligibility(models.TextChoices):
        OPEN = "open", "open to all"
        INVITED = "invited", "invited bots only"
        TOP_N = "top_n", "the ladder's top N at the close of registration"

    class Status(models.TextChoices):
        SCHEDULED = "scheduled", "scheduled"
        """Created; registration has not opened yet."""
        REGISTRATION = "registration", "registration open"
        CLOSED = "closed", "registration closed"
        """Entries are final; waiting for the start time."""
        RUNNING = "running", "running"
        PAUSED = "paused", "paused"
        """Games already queued finish; no new round starts until resumed."""
        FINISHED = "finished", "finished"
        CANCELLED = "cancelled", "cancelled"

    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    organiser = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="tournaments"
    )
    ruleset = models.CharField(max_length=16, default="modern")
    variants = models.JSONField(default=dict, blank=True)
    limits = models.JSONField(default=dict, blank=True)
    """Engine limits for every game (`max_hands`...); empty for full games."""
    seats = models.PositiveSmallIntegerField(default=4)
    """Seats per table, 2 to 6."""
    format = models.CharField(max_length=16, choices=Format.choices, default=Format.SWISS)
    swiss_rounds = models.PositiveSmallIntegerField(default=5)
    """Swiss: the number of rounds. Round robin and elimination work theirs out."""
    meetings = models.PositiveSmallIntegerField(default=1)
    """Round robin: how often every pair of entrants shares a table (games per pairing)."""
    duplicate = models.BooleanField(default=False)
    """Each table's shuffle is played once per seat rotation; the table's result is the sum."""
    decision_ms = models.PositiveIntegerField(default=1_000)
    bank_ms = models.PositiveIntegerField(default=30_000)
    registration_opens = models.DateTimeField()
    registration_closes = models.DateTimeField()
    starts_at = models.DateTimeField()
    eligibility = models.CharField(
        max_length=16, choices=Eligibility.choices, default=Eligibility.OPEN
    )
    top_n = models.PositiveIntegerField(null=True, blank=True)
    invited = models.ManyToManyField(Bot, blank=True, related_name="invitations")
    rated = models.BooleanField(default=False)
    """Whether the tournament's games also feed ladder Elo."""
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.SCHEDULED)
    status_reason = models.TextField(blank=True)
    """Why it was cancelled, or the last thing the organiser did."""
    seed = models.BigIntegerField(default=new_seed)
    schedule = models.JSONField(null=True, blank=True)
    """Round robin: every round's tables (entry ids in seat order), built at the start."""
    created = models.DateTimeField(default=timezone.now)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-starts_at", "-id"]
        indexes = [models.Index(fields=["status", "starts_at"])]

    def __str__(self) -> str:
        return self.name


class Entry(models.Model):
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entries")
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="entries")
    version = models.ForeignKey(BotVersion, on_delete=models.PROTECT, null=True, blank=True)
    """The version that plays every game: the bot's newest valid version at the start. A version
    uploaded during the event waits for the next event."""
    seed_rank = models.PositiveIntegerField(null=True, blank=True)
    """1 = best ladder rating at the start (unrated bots last): the elimination bracket's seeds."""
    registered = models.DateTimeField(default=timezone.now)
    withdrawn = models.DateTimeField(null=True, blank=True)
    withdrawn_reason = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["tournament", "id"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "bot"], name="entry_once_per_bot"),
        ]
        verbose_name_plural = "entries"

    def __str__(self) -> str:
        return f"{self.bot} in {self.tournament}"


class Round(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running", "running"
        FINISHED = "finished", "finished"

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveSmallIntegerField()
    """1-based."""
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    byes = models.JSONField(default=list, blank=True)
    """Entry ids that sit this round out."""
    started = models.DateTimeField(default=timezone.now)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["tournament", "number"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "number"], name="round_number_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.tournament} round {self.number}"


class Table(models.Model):
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="tables")
    number = models.PositiveSmallIntegerField()
    seats = models.JSONField()
    """Entry ids in seat order (seat 0 first)."""
    result = models.JSONField(null=True, blank=True)
    """Once every game is settled: `places` and `totals`, each {entry id: value}."""

    class Meta:
        ordering = ["round", "number"]
        constraints = [
            models.UniqueConstraint(fields=["round", "number"], name="table_number_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.round} table {self.number}"


class TableGame(models.Model):
    """One game of a table: the only game, or one seat rotation of a duplicate table."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="games")
    match = models.OneToOneField(Match, on_delete=models.PROTECT, related_name="tournament_game")
    rotation = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["table", "rotation"]
