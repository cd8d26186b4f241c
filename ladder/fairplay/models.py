"""What fair play keeps of rated matches: a watch per pair of bots and a watch per pair of
seating circles, each with its running test, and each shared match's part in it."""

from __future__ import annotations

from django.db import models


class Watch(models.Model):
    """A running collusion test and what its shared rated matches showed so far: the
    aggregates are kept here, updated once per shared match, never recomputed per request."""

    matches = models.PositiveIntegerField(default=0)
    hits = models.PositiveIntegerField(default=0)
    """Shared matches whose flow score exceeded the threshold (`detect.THRESHOLD`)."""
    firsts = models.PositiveIntegerField(default=0)
    """Shared matches one of the two won."""
    expected_firsts = models.FloatField(default=0.0)
    """What their ratings expected of `firsts`."""
    log_flow = models.JSONField(default=list)
    """The flow martingale's log-wealth per stake (`detect.PairTest.log_flow`)."""
    log_lift = models.JSONField(default=list)
    flows = models.JSONField(default=dict)
    """`engine.flows.PairFlow` counters summed over the shared matches, by direction:
    {"low>high": {...}, "high>low": {...}}."""
    evidence = models.FloatField(default=1.0)
    flagged_at = models.PositiveIntegerField(null=True, blank=True)
    """The shared-match count at which the evidence reached the bar."""
    flagged = models.DateTimeField(null=True, blank=True)
    voided = models.DateTimeField(null=True, blank=True)
    """When staff voided the shared rated matches and disabled the bots that met in them."""
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class PairWatch(Watch):
    """Two bots (`low` has the smaller id) and their shared rated matches."""

    low = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")
    high = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["low", "high"], name="pair_watch_once"),
            models.CheckConstraint(
                condition=models.Q(low__lt=models.F("high")), name="pair_low_first"
            ),
        ]
        indexes = [
            models.Index(
                fields=["-evidence"],
                name="pair_watch_flagged",
                condition=models.Q(flagged__isnull=False),
            )
        ]

    def __str__(self) -> str:
        return f"{self.low} & {self.high}: {self.matches} shared, evidence {self.evidence:,.0f}"


class CircleWatch(Watch):
    """Two seating circles (`low` has the smaller id; `ladder.accounts.selectors.
    seating_circle`: a user id, or minus a house bot's id) and every rated match any bot of
    one shared with any bot of the other: many feeders of one person, each at a few tables
    with the same partner, add up here where no pair of bots sees them.

    A circle's id is the one it had when the match was read: linking accounts merges circles
    under the smallest id, so the absorbed circle's watches stop growing and the merged
    circle's go on (unlinking likewise)."""

    low = models.BigIntegerField()
    high = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["low", "high"], name="circle_watch_once"),
            models.CheckConstraint(
                condition=models.Q(low__lt=models.F("high")), name="circle_low_first"
            ),
        ]
        indexes = [
            models.Index(
                fields=["-evidence"],
                name="circle_watch_flagged",
                condition=models.Q(flagged__isnull=False),
            )
        ]

    def __str__(self) -> str:
        return (
            f"circles {self.low} & {self.high}: {self.matches} shared, "
            f"evidence {self.evidence:,.0f}"
        )


class SharedMatch(models.Model):
    """One shared rated match of a watch: the evidence staff read (the match, the flows both
    ways, the result against the ratings' expectation). `low` and `high` are the watch's."""

    match = models.ForeignKey("matches.Match", on_delete=models.CASCADE, related_name="+")
    low_seat = models.PositiveSmallIntegerField()
    high_seat = models.PositiveSmallIntegerField()
    score = models.FloatField()
    help_low = models.FloatField()
    """Dollars `low` chose to move to `high` beyond the most it moved to any other seat."""
    help_high = models.FloatField()
    spared_low = models.FloatField()
    spared_high = models.FloatField()
    asks_low = models.IntegerField(null=True, blank=True)
    """Deals `low` proposed to `high` beyond the most it proposed to any other seat (None:
    recorded before they were kept). With the help and sparing each way, what says which
    bot's play made a hit (`detect.hit_cause`)."""
    asks_high = models.IntegerField(null=True, blank=True)
    first = models.BooleanField()
    expected_first = models.FloatField()
    flows = models.JSONField(default=dict)
    """This match's `PairFlow`s by direction, as in the watch's `flows`."""

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"match {self.match_id}: score {self.score:.2f}"


class PairMatch(SharedMatch):
    """A shared match of a pair of bots. Its existence also makes recording a match's flows
    idempotent."""

    watch = models.ForeignKey(PairWatch, on_delete=models.CASCADE, related_name="shared")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["watch", "match"], name="pair_match_once"),
        ]


class CircleMatch(SharedMatch):
    """A shared match of a pair of circles: which of their bots met in it, and their part.
    One per match and watch (a circle holds one seat of a rated table), which also makes
    recording a match's flows idempotent."""

    watch = models.ForeignKey(CircleWatch, on_delete=models.CASCADE, related_name="shared")
    low_bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")
    """The bot of the `low` circle."""
    high_bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["watch", "match"], name="circle_match_once"),
        ]
