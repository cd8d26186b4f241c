"""Stored ratings: the current one per bot and ruleset, and every change that led to it.

The maths is in ladder/ratings/elo.py (no Django there); these tables only hold its inputs and
outputs. A RatingChange row per bot per match is the audit trail: replaying them in order with
`elo.recompute` gives the current BotRating rows back.

`BotRating.wins` is denormalised from RatingChange (the number of its rows with place 1), kept by
`services.rating_apply` in the same transaction, so the leaderboard never counts 4 million rows.
`services.rating_wins_recount` rebuilds it from the changes.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class BotRating(models.Model):
    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="ratings")
    ruleset = models.CharField(max_length=16)
    mu = models.FloatField()
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    """Rated games of `games` finished in first place (a shared first counts): the number of this
    bot's RatingChange rows in this ruleset with place 1."""
    updated = models.DateTimeField(default=timezone.now)
    """When the last rated game changed this rating."""

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["bot", "ruleset"], name="bot_rating_unique_per_ruleset"
            ),
        ]
        indexes = [
            # The leaderboard's order, tie-break included, so a page is an index range scan
            # (selectors.Leaderboard). Partial: only bots with games are on the board, so a deep
            # page's ids and the board's count come from the index alone (index-only scans).
            models.Index(
                fields=["ruleset", "-mu", "bot"],
                name="bot_rating_board",
                condition=models.Q(games__gt=0),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot} {self.ruleset}: {self.mu:.0f} ({self.games} games)"


class RatingChange(models.Model):
    match = models.ForeignKey(
        "matches.Match", on_delete=models.PROTECT, related_name="rating_changes"
    )
    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="rating_changes")
    ruleset = models.CharField(max_length=16)
    place = models.PositiveSmallIntegerField()
    before = models.FloatField()
    after = models.FloatField()
    delta = models.FloatField()
    games_before = models.PositiveIntegerField()
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            # The database's guarantee that a match's ratings are never applied twice.
            models.UniqueConstraint(fields=["match", "bot"], name="rating_change_once_per_match"),
        ]
        indexes = [models.Index(fields=["bot", "ruleset", "created"])]

    def __str__(self) -> str:
        return f"{self.bot} in match {self.match_id}: {self.delta:+.1f}"
