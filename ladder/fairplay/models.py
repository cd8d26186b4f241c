"""A pair of bots that shared rated tables, its running test, and each shared match's part."""

from __future__ import annotations

from django.db import models


class PairWatch(models.Model):
    """Two bots (`low` has the smaller id) and what their shared rated matches showed so far:
    the aggregates are kept here, updated once per shared match, never recomputed per request.
    """

    low = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")
    high = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")
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
    """When staff voided the pair's shared rated matches and disabled both bots."""
    updated = models.DateTimeField(auto_now=True)

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


class PairMatch(models.Model):
    """One shared rated match of a watched pair: the evidence staff read (the match, the
    flows both ways, the result against the ratings' expectation). Its existence also makes
    recording a match's flows idempotent."""

    watch = models.ForeignKey(PairWatch, on_delete=models.CASCADE, related_name="shared")
    match = models.ForeignKey("matches.Match", on_delete=models.CASCADE, related_name="+")
    low_seat = models.PositiveSmallIntegerField()
    high_seat = models.PositiveSmallIntegerField()
    score = models.FloatField()
    help_low = models.FloatField()
    """Dollars `low` chose to move to `high` beyond the most it moved to any other seat."""
    help_high = models.FloatField()
    spared_low = models.FloatField()
    spared_high = models.FloatField()
    first = models.BooleanField()
    expected_first = models.FloatField()
    flows = models.JSONField(default=dict)
    """This match's `PairFlow`s by direction, as in `PairWatch.flows`."""

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["watch", "match"], name="pair_match_once"),
        ]

    def __str__(self) -> str:
        return f"match {self.match_id}: score {self.score:.2f}"
