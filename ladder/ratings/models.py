"""Stored ratings: the current one per bot and ruleset, and every change that led to it.

The maths is in ladder/ratings/elo.py (no Django there); these tables only hold its inputs and
outputs. A RatingChange row per bot per match is the audit trail: replaying them in order with
`elo.recompute` gives the current BotRating rows back.

`BotRating.wins` is denormalised from RatingChange (the number of its rows with place 1), kept by
`services.rating_apply` in the same transaction, so the leaderboard never counts 4 million rows.
`services.rating_wins_recount` rebuilds it from the changes.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import models
from django.utils import timezone

NEVER = datetime(2000, 1, 1, tzinfo=UTC)
"""`BotRating.last_queued` of a bot the matchmaker has not seated yet: before every real time."""


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
    peak = models.FloatField(null=True, blank=True)
    """The best rating it has had in this ruleset (its starting one included), kept by
    `services.rating_apply`; None before its first rated game."""
    last_queued = models.DateTimeField(default=NEVER)
    """When the matchmaker last seated the bot at a table of this ruleset (NEVER: not yet). The
    matchmaker builds each match around the bot that has waited longest (`matchmaking`)."""
    on_ladder = models.BooleanField(default=True, editable=False)
    """Whether the bot is on the ladder (`Bot.disabled` unset): a bot taken off it keeps its
    rating but holds no rank, so its rows leave the leaderboard's partial index."""
    playing = models.BooleanField(default=True, editable=False)
    """Whether the bot may be seated now: on the ladder and with a valid version; the
    matchmaker's partial indexes hold only these rows.

    Both flags are denormalised so that the board's and the matchmaker's indexes hold only the
    bots they list: with half the bots disabled, a read still costs its rows, not the ladder's
    size. The database keeps them (triggers of migration ratings 0006_botrating_playing), in
    the statement that changes what they derive from, so they are exact in that transaction
    whoever writes (a forfeit, a verdict, staff in the admin, another app, a shell UPDATE): no
    code path can forget them, and bots and matches, below ratings, need not know of them. Django
    never sets them (the defaults only fill the columns; the insert's trigger sets them)."""

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["bot", "ruleset"], name="bot_rating_unique_per_ruleset"
            ),
        ]
        indexes = [
            # The leaderboard's order, tie-break included, so a page is an index range scan
            # (selectors.Leaderboard). Partial: only bots with games, on the ladder, are on the
            # board, so a deep page's ids and the board's count come from the index alone
            # (index-only scans), and a bot off the ladder costs the board nothing.
            models.Index(
                fields=["ruleset", "-mu", "bot"],
                name="bot_rating_board_listed",
                condition=models.Q(games__gt=0, on_ladder=True),
            ),
            # The matchmaker's two reads (`matchmaking.selectors`): who has waited longest, and
            # the bots nearest a rating. Every playable bot has a row in each ladder ruleset
            # (games 0 until it plays one), so both are index range scans; partial, so a bot
            # that cannot play (disabled, or without a valid version) is not in them at all
            # (before, the oldest-seated end of the index was every disabled bot, walked each
            # time).
            models.Index(
                fields=["ruleset", "last_queued", "bot"],
                name="bot_rating_pool_waiting",
                condition=models.Q(playing=True),
            ),
            models.Index(
                fields=["ruleset", "mu", "bot"],
                name="bot_rating_pool_nearest",
                condition=models.Q(playing=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot} {self.ruleset}: {self.mu:.0f} ({self.games} games)"


class RatingChange(models.Model):
    # Neither has an index of its own: the unique (match, bot) and the (bot, ruleset, ...)
    # indexes lead with them (two indexes fewer on a table of 4 to 6 rows a match).
    match = models.ForeignKey(
        "matches.Match", on_delete=models.PROTECT, related_name="rating_changes", db_index=False
    )
    bot = models.ForeignKey(
        "bots.Bot", on_delete=models.CASCADE, related_name="rating_changes", db_index=False
    )
    ruleset = models.CharField(max_length=16)
    place = models.PositiveSmallIntegerField()
    before = models.FloatField()
    after = models.FloatField()
    delta = models.FloatField()
    games_before = models.PositiveIntegerField()
    created = models.DateTimeField(default=timezone.now)
    peak_before = models.FloatField(null=True, blank=True)
    """The bot's best rating in this ruleset before this change (`BotRating.peak` then, or
    `before` for its first game): what a rating milestone is measured against. None on
    changes written before it was kept (`notifications` then reads the history)."""

    class Meta:
        constraints = [
            # The database's guarantee that a match's ratings are never applied twice.
            models.UniqueConstraint(fields=["match", "bot"], name="rating_change_once_per_match"),
        ]
        indexes = [
            models.Index(fields=["bot", "ruleset", "created"]),
            # A rating history's sampled points are looked up by game number (charts).
            models.Index(fields=["bot", "ruleset", "games_before"], name="rating_change_game"),
        ]

    def __str__(self) -> str:
        return f"{self.bot} in match {self.match_id}: {self.delta:+.1f}"
