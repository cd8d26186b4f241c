"""A challenge: an author's request for one unrated match now, between a version of theirs and
the opponents they chose, played by the ladder's workers in a share of their room of its own.

A challenge waits (`WAITING`) until `services.challenge_dispatch` gives it a place, then its
match is created and sent to the workers' `challenges` queue (`SENT`); from then on its
match's status is its status. Its seats are kept as asked (`ChallengeSeat`, in order: the
challenger's version first), so a rematch asks for the very same versions again.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from ladder.bots.models import BotVersion
from ladder.matches.models import Match


class Challenge(models.Model):
    class Status(models.TextChoices):
        WAITING = "waiting", "waiting"
        """Asked for; waiting for a place in the workers' share for challenges."""
        SENT = "sent", "sent"
        """Its match is created and sent to the workers: the match says how it goes."""
        CANCELLED = "cancelled", "cancelled"
        """Called off by its author while it waited; no match was played."""

    class Seating(models.TextChoices):
        RANDOM = "random", "random"
        """Seats drawn at random when the match is created, as on the ladder."""
        ORDERED = "ordered", "as listed"
        """The challenger's version in seat 0, the opponents after it in the order given."""

    requester = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="challenges"
    )
    ruleset = models.CharField(max_length=16, default="modern")
    seating = models.CharField(max_length=16, choices=Seating.choices, default=Seating.RANDOM)
    max_hands = models.PositiveSmallIntegerField(null=True, blank=True)
    """A shorter game than the ruleset's (None: the ruleset's own limit)."""
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.WAITING)
    created = models.DateTimeField(default=timezone.now)
    sent = models.DateTimeField(null=True, blank=True)
    match = models.OneToOneField(
        Match, on_delete=models.PROTECT, null=True, blank=True, related_name="challenge"
    )
    rematch_of = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="rematches"
    )

    class Meta:
        indexes = [
            # The daily quota reads an account's challenges of the last 24 hours at every
            # request, and its list pages go newest first: both by (requester, created).
            models.Index(fields=["requester", "created"], name="challenge_by_requester"),
            # The dispatcher reads the waiting ones, oldest first.
            models.Index(
                fields=["created"],
                condition=models.Q(status="waiting"),
                name="challenge_waiting",
            ),
        ]

    def __str__(self) -> str:
        return f"challenge {self.pk} ({self.status})"


class ChallengeSeat(models.Model):
    """One version asked for in a challenge, in the order given (0: the challenger's)."""

    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="seats")
    position = models.PositiveSmallIntegerField()
    version = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["challenge", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["challenge", "position"], name="challenge_seat_position_unique"
            ),
            models.UniqueConstraint(
                fields=["challenge", "version"], name="challenge_seat_version_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"challenge {self.challenge_id} position {self.position}"
