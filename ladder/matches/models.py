"""A Match and its seats (index 0-5, never "player 1 / player 2": Grass seats 2 to 6). A seat
is held by a bot's version or, in a game a person plays in the browser (`ladder.live`), by
that person."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

from ladder.bots.models import BotVersion
from ladder.matches.lanes import Lane

FAILURE_REASON_CHARS = 4_000
"""How much of a failure's text is kept: a match's `failure_reason`, a pending log's
`last_error`."""


def new_seed() -> int:
    """A game's seed decides every shuffle, so it comes from the OS's secure generator: a bot
    must not be able to guess it. 63 bits fit PostgreSQL's bigint."""
    return secrets.randbits(63)


def _log_path(match: Match, filename: str) -> str:
    return f"logs/{match.created:%Y/%m}/{filename}"


def _replay_path(match: Match, filename: str) -> str:
    return f"replays/{match.created:%Y/%m}/{filename}"


def _debug_path(match: Match, filename: str) -> str:
    return f"debug/{match.created:%Y/%m}/{filename}"


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
    host_faults = models.PositiveSmallIntegerField(default=0)
    """Runs given back for a host fault (`bots.runner.faults`): not attempts, since a host fault
    is never the match's; bounded by GRASS_MATCH_MAX_HOST_FAULTS, so that a match which breaks
    every host it reaches does not go round the workers for ever."""
    failure_reason = models.TextField(blank=True)
    """Why the run failed; on a finished match, a note on how it was played, if anything
    changed it: "played unrated: ..." when two of its seats sat in one seating circle by the
    time it was recorded (`recording._match_record`; docs/fairplay.md)."""
    created = models.DateTimeField(default=timezone.now)
    queued = models.DateTimeField(default=timezone.now)
    """When the match was last sent to the workers: a match queued for long lost its message."""
    started = models.DateTimeField(null=True, blank=True)
    heartbeat = models.DateTimeField(null=True, blank=True)
    """The last sign of life of the worker playing the match, in the database's clock (so hosts'
    clocks never matter): written at the claim and every GRASS_MATCH_HEARTBEAT_SECONDS while it
    plays. A running match silent for GRASS_MATCH_SILENT_SECONDS lost its worker, and the sweep
    takes it back (`recovery.match_requeue_stale`)."""
    host = models.CharField(max_length=255, blank=True)
    """The host whose worker claimed the match last (its host name): who played it, or who
    lost it."""
    pid = models.PositiveIntegerField(null=True, blank=True)
    """The process on `host` that claimed it last (the Celery pool process's pid)."""
    finished = models.DateTimeField(null=True, blank=True)
    log = models.FileField(upload_to=_log_path, blank=True, max_length=200)
    """The game's log, gzip-compressed JSON Lines (`engine.log.read_log` reads it). Empty on a
    finished match while its log waits in a PendingLog for storage to take it."""
    log_sha256 = models.CharField(max_length=64, blank=True)
    replay = models.FileField(upload_to=_replay_path, blank=True, max_length=200)
    """The replay viewer's document of the log (all cards face up), gzipped JSON, as workers
    stored it when they recorded a match, before replays were computed on first view and
    cached instead (docs/scale.md, "Storage"): kept for the matches that have it, written for
    no new match, and deleted with the log by retention."""
    replay_engine = models.CharField(max_length=16, blank=True)
    """The engine version that computed `replay`: another engine computes it again."""
    debug = models.FileField(upload_to=_debug_path, blank=True, max_length=200)
    """What the bots wrote on stderr while they decided, by decision (`ladder.matches.debug`),
    gzipped JSON beside the log: only for a match in which a bot wrote something (empty
    otherwise), at most 64 KiB per seat. Each seat's part is for its bot's owner and staff,
    or for everyone when the owner made the bot's debug lines public
    (`ladder.bots.selectors.bot_debug_visible`); the log, which is public, never holds them."""
    viewed = models.DateTimeField(null=True, blank=True)
    """When the match's replay was last opened (kept to the day: `files.match_viewed`).
    Retention (`files.match_files_expire`) keeps the files of matches watched lately."""
    result = models.JSONField(null=True, blank=True)
    """The engine's result line: totals, per-hand scores, ranks."""
    rated = models.BooleanField(default=True)
    """Whether the result feeds ladder Elo (tournament games do only if the organiser says so)."""
    lane = models.PositiveSmallIntegerField(null=True, blank=True, choices=Lane.choices)
    """Who waits for it (`lanes.Lane`: a person at the table, a challenge's author, a new
    version's author), or None for the ladder's background games: it says which queue and
    pool the match is sent to, and which share of that pool it holds."""
    time_control = models.JSONField(default=dict, blank=True)
    """`bots.runner.seats.TimeControl` fields that differ from the ladder's defaults."""
    runtime = models.CharField(max_length=64, blank=True)
    """The bots' runtime image the match must be played on (`bots.runner.runtime.identity`):
    the site's GRASS_RUNTIME_IMAGE when it was created. A worker on another image refuses it,
    so one match never mixes images, and its log header records the image it ran on."""
    # A tournament's games point here from `tournaments.TableGame`; a match knows nothing of them.

    files_expired = models.DateTimeField(null=True, blank=True)
    """When retention deleted the match's files (its log, a stored replay): the result, seats
    and rating changes stay; the page says the log is gone."""

    class Meta:
        verbose_name_plural = "matches"
        indexes = [
            models.Index(fields=["status", "created"]),
            # Lists of one status, newest first, a page at a time (`selectors.match_keys`).
            models.Index(fields=["status", "-id"], name="match_status_newest"),
            # Lists of one ruleset (`?ruleset=`), newest first: a rare one was a scan of every
            # match; and the time filters' bounds (`selectors._id_bounds`).
            models.Index(fields=["ruleset", "-id"], name="match_ruleset_newest"),
            models.Index(fields=["created"], name="match_created"),
            # A lane's latest finished games, newest first: how long its games take, for the
            # estimate of when a queued one starts (`selectors.lane_typical_seconds`). The
            # background games (lane null) have their own: PostgreSQL reads an index in order
            # after an equality on its first column, never after an IS NULL.
            models.Index(
                fields=["lane", "-finished"],
                name="match_lane_finished",
                condition=models.Q(status="finished", lane__isnull=False),
            ),
            models.Index(
                fields=["-finished"],
                name="match_background_finished",
                condition=models.Q(status="finished", lane__isnull=True),
            ),
            # Retention walks finished matches oldest first (`files.match_files_expire`).
            models.Index(
                fields=["finished", "id"],
                name="match_files_kept",
                condition=models.Q(files_expired__isnull=True, status="finished"),
            ),
        ]

    def __str__(self) -> str:
        return f"match {self.pk} ({self.status})"


class MatchSeat(models.Model):
    # No index of its own: the unique (match, seat) leads with it (one index fewer on the
    # largest table, 4 to 6 rows a match).
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="seats", db_index=False)
    seat = models.PositiveSmallIntegerField()
    """0-based, in the engine's seat order."""
    bot_version = models.ForeignKey(
        BotVersion, on_delete=models.PROTECT, related_name="seats", null=True, blank=True
    )
    """The bot that holds the seat; None for a person's seat (`player`)."""
    bot = models.ForeignKey(
        "bots.Bot",
        on_delete=models.PROTECT,
        related_name="seats",
        db_index=False,
        null=True,
        blank=True,
    )
    """`bot_version.bot`, kept on the seat so that a bot's matches are one index range
    (bot, -match), whatever its number of versions or games; None for a person's seat."""
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="match_seats",
        null=True,
        blank=True,
    )
    """The person who holds the seat, playing in the browser (`ladder.live`); None for a bot's.
    Exactly one of `bot_version` and `player` is set."""
    ruleset = models.CharField(max_length=16, blank=True, editable=False)
    """`match.ruleset`, kept on the seat so that a bot's matches of one ruleset are one index
    range (bot, ruleset, -match): `?bot=&ruleset=` read every seat of the bot for a rare one.
    Kept by the database (triggers of migration matches 0015_seat_ruleset) on every insert and
    on any change of the match's ruleset, so no writer (bulk_create included) can forget it."""
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
            models.CheckConstraint(
                condition=models.Q(bot_version__isnull=False, player__isnull=True)
                | models.Q(bot_version__isnull=True, player__isnull=False),
                name="match_seat_bot_or_person",
            ),
            # A person holds one seat of a match; the index finds a person's games.
            models.UniqueConstraint(
                fields=["player", "match"],
                condition=models.Q(player__isnull=False),
                name="match_seat_person_once",
            ),
        ]
        indexes = [
            # A bot's matches, newest first: its page and `/api/matches/?bot=`.
            models.Index(fields=["bot", "-match"], name="match_seat_bot_newest"),
            # A bot's matches of one ruleset, newest first: `/api/matches/?bot=&ruleset=`.
            models.Index(fields=["bot", "ruleset", "-match"], name="match_seat_bot_ruleset"),
            # A bot's latest troubles (`selectors.bot_faults`), without reading its clean games.
            models.Index(
                fields=["bot", "-match"],
                name="match_seat_bot_faults",
                condition=models.Q(forfeited=True) | ~models.Q(faults={}),
            ),
        ]

    def __str__(self) -> str:
        return f"match {self.match_id} seat {self.seat}"

    @property
    def version(self) -> BotVersion:
        """The seat's bot version, for code that reads bots' seats only (rated games,
        tournaments, a bot's own seats); a person's seat raises ValueError."""
        if self.bot_version is None:
            raise ValueError(f"{self} is a person's seat")
        return self.bot_version

    @property
    def holder(self) -> str:
        """Who holds the seat, as the game names it: `owner/bot` for a bot, the username of a
        person (which never holds a `/`)."""
        if self.bot_version is not None:
            return self.bot_version.bot.display_name
        assert self.player is not None
        return self.player.get_username()


class PendingLog(models.Model):
    """A finished match's log that the media storage refused when the match was recorded (a
    full disk): its gzip bytes, kept in the database until the sweep
    (`files.match_logs_write_pending`) writes them to storage and deletes this row.

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


class BotSeatRecord(models.Model):
    """A bot's finished games (any ruleset, rated or not) at one seat index, added to by the
    service that records each match (`records.bot_records_add`), so that the bot page reads
    at most six rows however many games the bot has. `records.bot_records_rebuild` computes
    them again from the seats (they must agree: tested)."""

    bot = models.ForeignKey(
        "bots.Bot", on_delete=models.CASCADE, related_name="seat_records", db_index=False
    )  # the unique (bot, seat) leads with it
    seat = models.PositiveSmallIntegerField()
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    """Finished first (a shared first counts)."""
    places = models.PositiveIntegerField(default=0)
    """The sum of its places: the average place is places / games."""
    opponents = models.PositiveIntegerField(default=0)
    """Opponents it sat with, summed over its games."""
    beaten = models.FloatField(default=0.0)
    """Opponents it finished ahead of, ties counting half: the seat's score is beaten /
    opponents."""
    timed_out = models.PositiveIntegerField(default=0)
    """Games in which it timed out at least once."""
    crashed = models.PositiveIntegerField(default=0)
    """Games in which its process crashed."""

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["bot", "seat"], name="bot_seat_record_unique"),
        ]

    def __str__(self) -> str:
        return f"bot {self.bot_id} at seat {self.seat}: {self.games} games"


class BotOpponentRecord(models.Model):
    """A bot's finished games against one opponent (any ruleset), added to as matches are
    recorded, like BotSeatRecord: one row per ordered pair of bots that shared a table."""

    bot = models.ForeignKey(
        "bots.Bot", on_delete=models.CASCADE, related_name="+", db_index=False
    )  # the unique (bot, opponent) leads with it
    opponent = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")
    games = models.PositiveIntegerField(default=0)
    ahead = models.PositiveIntegerField(default=0)
    tied = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["bot", "opponent"], name="bot_opponent_record_unique"),
        ]
        indexes = [
            # The bot page's most frequent opponents: the first rows of this range.
            models.Index(fields=["bot", "-games", "opponent"], name="bot_opponent_most_met"),
        ]

    def __str__(self) -> str:
        return f"bot {self.bot_id} against {self.opponent_id}: {self.games} games"
