"""A worker's claim on a match: taken with a conditional update that exactly one caller wins,
and compared on every heartbeat, before the match is failed and when it is recorded.

The claim's token is its start time and its attempt number together (`Claim.held`): the sweep
that takes a match back clears `started`, and the next claim counts one more attempt, so a run
whose match was taken back (its worker was thought lost) finds that its claim no longer holds,
stops, and can neither record nor fail the match (issue 35).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import F, QuerySet
from django.db.models.functions import Now
from django.utils import timezone

from ladder.matches.models import Match


@dataclass(frozen=True)
class Claim:
    """One run's hold on a match: the claim's start (the worker's clock) and its attempt
    number (1 for the first claim of the match)."""

    match_id: int
    started: datetime
    attempt: int

    def held(self) -> QuerySet[Match]:
        """The match, while this claim still holds it (running, as this claim left it): a
        conditional update on it changes one row, or none once the claim is gone."""
        return Match.objects.filter(
            pk=self.match_id,
            status=Match.Status.RUNNING,
            started=self.started,
            attempts=self.attempt,
        )

    def concluded(self) -> bool:
        """Whether this claim's own run ended the match (recorded or failed it): the claim is
        gone the right way. A match taken back has lost its `started`."""
        return (
            Match.objects.filter(pk=self.match_id, started=self.started, attempts=self.attempt)
            .exclude(status=Match.Status.RUNNING)
            .exists()
        )

    def __str__(self) -> str:
        return f"attempt {self.attempt}, claimed at {self.started.isoformat()}"


def match_claim(*, match_id: int) -> Claim | None:
    """Claim a queued match for this process (queued -> running, one attempt more, this host
    and process, a first heartbeat), or None when it is not queued (claimed by another run,
    finished, failed). The attempt number is read back in the claim's own transaction, under
    the row lock its update took."""
    started = timezone.now()
    with transaction.atomic():
        claimed = Match.objects.filter(pk=match_id, status=Match.Status.QUEUED).update(
            status=Match.Status.RUNNING,
            started=started,
            heartbeat=Now(),
            host=socket.gethostname()[:255],
            pid=os.getpid(),
            attempts=F("attempts") + 1,
        )
        if claimed != 1:
            return None
        attempt = Match.objects.filter(pk=match_id).values_list("attempts", flat=True).get()
    return Claim(match_id=match_id, started=started, attempt=attempt)
