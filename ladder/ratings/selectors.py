"""Reading ratings: the leaderboard, and each match's changes in play order."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, overload

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import OuterRef, QuerySet, Subquery

from ladder import shared_cache
from ladder.bots.models import BotVersion
from ladder.bots.names import display_name
from ladder.matches.models import MatchSeat
from ladder.ratings.elo import DEFAULT_PARAMS, EloParams, Rating, band, provisional
from ladder.ratings.models import BotRating, RatingChange

COUNT_SECONDS = 60
"""How long a big leaderboard's size (and its anchors) are kept in the cache."""
CACHED_FROM = 10_000
"""A board of fewer bots is counted at every request (under a millisecond); a bigger one's
count is kept COUNT_SECONDS. Paginators end the last page at the count, so a kept count may
leave off, for that long, the rows that a new bot pushed past the end of the board."""
ANCHOR_STEP = 1_000
"""From CACHED_FROM bots on, the board keeps (COUNT_SECONDS, beside its count) an anchor every
ANCHOR_STEP places: the rating there and the place of the first bot with that rating. A deep
page starts its index scan at the anchor before it, so it reads at most ANCHOR_STEP + its own
rows, however big the board: O(page), where an offset from the top is O(rank)."""
HOME_RULESET = "modern"
"""The ruleset whose leaderboard the home page shows (`/` without ?ruleset=)."""


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    bot_id: int
    bot: str
    owner: str
    elo: int
    band_low: int
    band_high: int
    games: int
    win_rate: float
    """Share of rated games finished in first place (shared firsts count)."""
    last_game: datetime
    provisional: bool
    """Fewer than GRASS_PROVISIONAL_GAMES rated games (`elo.provisional`). By the bot's games
    only: a new version's few games are marked on the bot's page (`bot_ratings`), since reading
    them costs a query per bot and a page of the board is one."""

    @property
    def display_name(self) -> str:
        """`owner/bot`: how the bot is shown (names are unique per owner only)."""
        return display_name(owner=self.owner, bot=self.bot)


class Leaderboard:
    """The bots rated in one ruleset, best first (equal ratings in bot id order), read a page at
    a time: `len()` is one COUNT, a slice one LIMIT/OFFSET query over the (ruleset, -mu, bot)
    index (two from `deep` on), its rows ranked by their position in the whole board. On a big
    board (CACHED_FROM bots) a deep page starts at a kept anchor, not at the top (ANCHOR_STEP).
    Django's Paginator and DRF's pagination take it like a queryset.
    """

    deep = 1_000
    """From this offset on, a page reads its bot ids from the index first, then joins only
    those: a single query would join every row above the page (PostgreSQL then prefers joining
    and sorting the whole board)."""

    def __init__(self, *, ruleset: str, params: EloParams = DEFAULT_PARAMS) -> None:
        self.ruleset = ruleset
        self.params = params
        self.provisional_games: int = settings.GRASS_PROVISIONAL_GAMES
        self._count: int | None = None

    def _ratings(self) -> QuerySet[BotRating]:
        # A bot taken off the ladder (disabled after its forfeits) keeps its rating but holds
        # no rank until a valid version puts it back: `off_the_ladder` lists it apart. Its
        # rows are not `on_ladder` (kept by the database), so they are not in the board's
        # partial index: no join, no subquery over the bots off the ladder, however many.
        return BotRating.objects.filter(ruleset=self.ruleset, games__gt=0, on_ladder=True)

    def _key(self, what: str) -> str:
        # The database's name too: sites (and test runs) on one host may share a cache.
        database = connection.settings_dict.get("NAME")
        return f"leaderboard:{what}:{database}:{self.ruleset}"

    def __len__(self) -> int:
        """The bots on the board: an index-only count; from CACHED_FROM bots on, kept
        COUNT_SECONDS in the cache (the page count, and the end of the last page, may then lag
        new bots by that much; so may a deep page's places, read from kept anchors)."""
        if self._count is None:
            key = self._key("count")
            # The cache down, the count is read (fail open: a slower page, never a 500).
            cached = shared_cache.get(key)
            if not isinstance(cached, int) or cached < CACHED_FROM:
                cached = self._ratings().count()
                if cached >= CACHED_FROM:
                    shared_cache.put(key, cached, COUNT_SECONDS)
            self._count = cached
        return self._count

    def count(self) -> int:
        return len(self)

    @overload
    def __getitem__(self, index: int) -> LeaderboardRow: ...

    @overload
    def __getitem__(self, index: slice) -> list[LeaderboardRow]: ...

    def __getitem__(self, index: int | slice) -> LeaderboardRow | list[LeaderboardRow]:
        if isinstance(index, int):
            if index < 0:
                raise IndexError("negative leaderboard positions are not supported")
            one = self[index : index + 1]
            if not one:
                raise IndexError(index)
            return one[0]
        start, stop, step = index.start or 0, index.stop, index.step
        if start < 0 or (stop is not None and stop < 0) or step not in (None, 1):
            raise ValueError("a leaderboard slice is [start:stop] with non-negative bounds")
        if stop is not None and stop <= start:
            return []
        if start < self.deep:
            # One query: a range scan of the (ruleset, -mu, bot) index joined row by row.
            rows = list(self.rows()[start:stop])
        else:
            # A deep page: its bot ids from the index alone, then only their rows joined, so
            # the database never joins (or sorts) the thousands of rows above the page.
            page = self._deep_ids(start, stop)
            found = {values[0]: values for values in self.rows().filter(bot_id__in=page)}
            rows = [found[bot_id] for bot_id in page if bot_id in found]
        return [self._row(rank, *values) for rank, values in enumerate(rows, start=start + 1)]

    def _deep_ids(self, start: int, stop: int | None) -> list[int]:
        """The bot ids of places [start, stop): on a big board, an index range from the anchor
        at or before `start` (its rating down), skipping only the places between the two."""
        if len(self) < CACHED_FROM:
            return list(self.order()[start:stop])
        anchors = self._anchors()
        if not anchors:
            return list(self.order()[start:stop])
        mu, first = anchors[min(start // ANCHOR_STEP, len(anchors) - 1)]
        # Kept anchors may lag the board by COUNT_SECONDS, as the count does: a bot whose
        # rating crossed an anchor since shifts the places below it by one until they are
        # read again (rows may then repeat or skip one across a page boundary).
        end = None if stop is None else stop - first
        return list(self.order().filter(mu__lte=mu)[start - first : end])

    def _anchors(self) -> list[tuple[float, int]]:
        """(rating, place of the first bot rated so) at places 0, ANCHOR_STEP, 2*ANCHOR_STEP...,
        as kept in the cache (by `keep`, from beat), or read now if they are not."""
        cached = shared_cache.get(self._key("anchors"))
        if isinstance(cached, list):
            return [(float(mu), int(first)) for mu, first in cached]
        return self._read_anchors()

    def _read_anchors(self) -> list[tuple[float, int]]:
        """One pass over the board's index (about 0.13 s at 100,000 bots), kept COUNT_SECONDS."""
        board, params = self._ratings().values("mu", "bot_id").query.sql_with_params()
        sql = (
            "SELECT mu, first FROM ("
            " SELECT mu, row_number() OVER (ORDER BY mu DESC, bot_id) - 1 AS place,"
            " rank() OVER (ORDER BY mu DESC) - 1 AS first"
            f" FROM ({board}) AS board"
            ") AS ranked WHERE place %% %s = 0 ORDER BY place"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, (*params, ANCHOR_STEP))
            anchors = [(float(mu), int(first)) for mu, first in cursor.fetchall()]
        shared_cache.put(self._key("anchors"), anchors, COUNT_SECONDS)
        return anchors

    def keep(self) -> int:
        """Count a big board and read its anchors again, for the cache (beat's "leaderboards"
        entry, more often than COUNT_SECONDS): the requests then find them kept, and none pays
        the passes over the whole board that they cost. Returns the board's size."""
        count = self._ratings().count()
        if count >= CACHED_FROM:
            shared_cache.put(self._key("count"), count, COUNT_SECONDS)
            self._read_anchors()
        self._count = count
        return count

    def order(self) -> QuerySet[BotRating, int]:
        """The bot ids of the whole board in order (an index scan of (ruleset, -mu, bot)); slice
        it for a page."""
        return self._ratings().order_by("-mu", "bot_id").values_list("bot_id", flat=True)

    def rows(self) -> QuerySet[BotRating, tuple[Any, ...]]:
        """The whole board in order, as tuples of the columns a row shows (three model instances
        per row would cost more than the query)."""
        username = f"bot__owner__{get_user_model().USERNAME_FIELD}"
        return (
            self._ratings()
            .order_by("-mu", "bot_id")
            .values_list("bot_id", "bot__name", username, "mu", "games", "wins", "updated")
        )

    def __iter__(self) -> Iterator[LeaderboardRow]:
        return iter(self[0:])

    def _row(
        self,
        rank: int,
        bot_id: int,
        bot: str,
        owner: str,
        mu: float,
        games: int,
        wins: int,
        updated: datetime,
    ) -> LeaderboardRow:
        low, high = band(Rating(mu, games), self.params)
        return LeaderboardRow(
            rank=rank,
            bot_id=bot_id,
            bot=bot,
            owner=owner,
            elo=round(mu),
            band_low=round(low),
            band_high=round(high),
            games=games,
            win_rate=round(wins / games, 4),
            last_game=updated,
            provisional=provisional(games, threshold=self.provisional_games),
        )


@dataclass(frozen=True)
class OffLadderRow:
    bot_id: int
    display_name: str
    elo: int
    games: int
    disabled: datetime
    reason: str


def off_the_ladder(*, ruleset: str, limit: int = 50) -> list[OffLadderRow]:
    """The bots rated in `ruleset` that are off the ladder (disabled for forfeiting), most
    recently disabled first: shown apart from the ranking, with why."""
    username = f"bot__owner__{get_user_model().USERNAME_FIELD}"
    rows = (
        BotRating.objects.filter(ruleset=ruleset, games__gt=0, bot__disabled__isnull=False)
        .order_by("-bot__disabled", "bot_id")
        .values_list(
            "bot_id", "bot__name", username, "mu", "games", "bot__disabled", "bot__disabled_reason"
        )[:limit]
    )
    return [
        OffLadderRow(bot_id, display_name(owner=owner, bot=name), round(mu), games, when, why)
        for bot_id, name, owner, mu, games, when, why in rows
    ]


def leaderboard(*, ruleset: str, params: EloParams = DEFAULT_PARAMS) -> Leaderboard:
    """Every bot rated in `ruleset`, best first (equal ratings in bot id order), as a lazy
    sequence: slice it (or hand it to a paginator) to read one page."""
    return Leaderboard(ruleset=ruleset, params=params)


@dataclass(frozen=True)
class BotRatingRow:
    ruleset: str
    elo: int
    band_low: int
    band_high: int
    games: int
    updated: datetime
    provisional: bool
    """`elo.provisional`: fewer than GRASS_PROVISIONAL_GAMES rated games, of the bot or (in
    `bot_ratings`) of its newest valid version."""
    version_games: int | None = None
    """Rated games of the bot's newest valid version in this ruleset, counted up to
    GRASS_PROVISIONAL_GAMES; None where not read (`ratings_of_bots`, fewer games than that, no
    valid version)."""


def _rating_row(
    rating: BotRating, params: EloParams, version_games: int | None = None
) -> BotRatingRow:
    low, high = band(Rating(rating.mu, rating.games), params)
    threshold = settings.GRASS_PROVISIONAL_GAMES
    return BotRatingRow(
        ruleset=rating.ruleset,
        elo=round(rating.mu),
        band_low=round(low),
        band_high=round(high),
        games=rating.games,
        updated=rating.updated,
        provisional=provisional(rating.games, version_games, threshold=threshold),
        version_games=version_games,
    )


def version_games(*, bot_id: int, ruleset: str, version_id: int, most: int) -> int:
    """How many of the bot's last rated games in `ruleset` its version `version_id` played, in a
    row from the newest, counted up to `most`: the games of its newest version since it became
    the newest. Reads at most `most` rating changes, newest first (the (bot, ruleset,
    games_before) index), each with its seat (the (match, seat) index); never all its games."""
    seat = MatchSeat.objects.filter(match_id=OuterRef("match_id"), bot_id=OuterRef("bot_id"))
    versions = (
        RatingChange.objects.filter(bot_id=bot_id, ruleset=ruleset)
        .order_by("-games_before")
        .annotate(version=Subquery(seat.values("bot_version_id")[:1]))
        .values_list("version", flat=True)[:most]
    )
    played = 0
    for version in versions:
        if version != version_id:
            break
        played += 1
    return played


def bot_ratings(*, bot_id: int, params: EloParams = DEFAULT_PARAMS) -> list[BotRatingRow]:
    """The bot's rating in each ruleset it has played, by ruleset name, with its band and whether
    it is provisional, its newest version's games included: with GRASS_PROVISIONAL_GAMES or more
    games in a ruleset, two queries more (its newest valid version, once; at most that many
    changes of the ruleset's)."""
    threshold = settings.GRASS_PROVISIONAL_GAMES
    # Rows without games are the matchmaker's pool entries of a bot not yet rated there.
    ratings = list(BotRating.objects.filter(bot_id=bot_id, games__gt=0).order_by("ruleset"))
    newest: int | None = None
    if any(rating.games >= threshold for rating in ratings):
        newest = (
            BotVersion.objects.filter(bot_id=bot_id, status=BotVersion.Status.VALID)
            .order_by("-number")
            .values_list("pk", flat=True)
            .first()
        )
    rows = []
    for rating in ratings:
        played = None
        if newest is not None and rating.games >= threshold:
            played = version_games(
                bot_id=bot_id, ruleset=rating.ruleset, version_id=newest, most=threshold
            )
        rows.append(_rating_row(rating, params, played))
    return rows


def ratings_of_bots(
    *, bot_ids: list[int], params: EloParams = DEFAULT_PARAMS
) -> dict[int, list[BotRatingRow]]:
    """`bot_ratings` of several bots in one query (a page of an owner's bots), by bot id;
    provisional by the bots' games only."""
    rows: dict[int, list[BotRatingRow]] = {bot_id: [] for bot_id in bot_ids}
    ratings = BotRating.objects.filter(bot_id__in=bot_ids, games__gt=0).order_by("bot", "ruleset")
    for rating in ratings:
        rows[rating.bot_id].append(_rating_row(rating, params))
    return rows
