"""The bots' records (`BotSeatRecord`, `BotOpponentRecord`): what one finished match adds to
them, and writing it.

A module of its own because the bot page reads these few kept rows instead of all the bot's
games, so the rows must never disagree with the games. A match's share is computed by plain
functions over its seats' (bot, seat, place, faults), without the database (`match_shares`).
Recording (`_match_record`) adds each match's share in its transaction (`bot_records_add`);
the rebuild (`bot_records_rebuild`, and the migration that introduced the records) adds up
every finished match's share with the same functions, so the kept records and a recomputation
cannot disagree by construction of the sums.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import connection, models, transaction

from ladder.matches.models import BotOpponentRecord, BotSeatRecord, MatchSeat


@dataclass(frozen=True)
class SeatResult:
    """One seat of a finished match, as the records need it."""

    bot_id: int
    seat: int
    place: int
    faults: Mapping[str, Any]


@dataclass
class SeatShare:
    games: int = 0
    wins: int = 0
    places: int = 0
    opponents: int = 0
    beaten: float = 0.0
    timed_out: int = 0
    crashed: int = 0

    def add(self, other: SeatShare) -> None:
        self.games += other.games
        self.wins += other.wins
        self.places += other.places
        self.opponents += other.opponents
        self.beaten += other.beaten
        self.timed_out += other.timed_out
        self.crashed += other.crashed


@dataclass
class OpponentShare:
    games: int = 0
    ahead: int = 0
    tied: int = 0

    def add(self, other: OpponentShare) -> None:
        self.games += other.games
        self.ahead += other.ahead
        self.tied += other.tied


SEAT_FIELDS = ("games", "wins", "places", "opponents", "beaten", "timed_out", "crashed")
OPPONENT_FIELDS = ("games", "ahead", "tied")


def match_shares(
    seats: Iterable[SeatResult],
) -> tuple[dict[tuple[int, int], SeatShare], dict[tuple[int, int], OpponentShare]]:
    """One match's share of its bots' records: by (bot, seat) and by (bot, opponent)."""
    seated = list(seats)
    by_seat: dict[tuple[int, int], SeatShare] = {}
    by_pair: dict[tuple[int, int], OpponentShare] = {}
    for mine in seated:
        others = [other for other in seated if other.bot_id != mine.bot_id]
        ahead = sum(1 for other in others if mine.place < other.place)
        tied = sum(1 for other in others if mine.place == other.place)
        by_seat[(mine.bot_id, mine.seat)] = SeatShare(
            games=1,
            wins=int(mine.place == 1),
            places=mine.place,
            opponents=len(others),
            beaten=ahead + 0.5 * tied,
            timed_out=int("timeout" in mine.faults),
            crashed=int("crashed" in mine.faults),
        )
        for other in others:
            by_pair[(mine.bot_id, other.bot_id)] = OpponentShare(
                games=1,
                ahead=int(mine.place < other.place),
                tied=int(mine.place == other.place),
            )
    return by_seat, by_pair


def add_shares(
    seats_total: dict[tuple[int, int], SeatShare],
    pairs_total: dict[tuple[int, int], OpponentShare],
    seats: Iterable[SeatResult],
) -> None:
    """Add one match's share (`match_shares`) to running totals."""
    by_seat, by_pair = match_shares(seats)
    for key, share in by_seat.items():
        seats_total.setdefault(key, SeatShare()).add(share)
    for key, pair in by_pair.items():
        pairs_total.setdefault(key, OpponentShare()).add(pair)


def _upsert_added(
    model: type[models.Model],
    keys: tuple[str, str],
    fields: tuple[str, ...],
    rows: dict[tuple[int, int], Any],
) -> None:
    """Add `rows` ({key: share}) to `model`'s rows of those key columns, creating the missing
    ones, in one INSERT ... ON CONFLICT DO UPDATE (PostgreSQL and SQLite both speak it). The rows go
    in key order, so two matches recorded at once that share bots lock them in the same order
    and cannot deadlock."""
    if not rows:
        return
    table = connection.ops.quote_name(model._meta.db_table)
    names = list(keys) + list(fields)
    quoted = [connection.ops.quote_name(name) for name in names]
    placeholders = "(" + ", ".join(["%s"] * len(names)) + ")"
    params: list[Any] = []
    for key in sorted(rows):
        params.extend(key)
        params.extend(getattr(rows[key], name) for name in fields)
    added = ", ".join(
        f"{quoted[i]} = {table}.{quoted[i]} + excluded.{quoted[i]}"
        for i in range(len(keys), len(names))
    )
    conflict = ", ".join(quoted[: len(keys)])
    sql = (
        f"INSERT INTO {table} ({', '.join(quoted)}) VALUES "
        + ", ".join([placeholders] * len(rows))
        + f" ON CONFLICT ({conflict}) DO UPDATE SET {added}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def bot_records_add(*, seats: list[SeatResult]) -> None:
    """Add a finished match (its seats with places) to its bots' records: by seat index and
    by opponent. Called by the service that records the match, in its transaction, so the bot
    page reads a few kept rows instead of all the bot's games."""
    by_seat, by_pair = match_shares(seats)
    _upsert_added(BotSeatRecord, ("bot_id", "seat"), SEAT_FIELDS, by_seat)
    _upsert_added(BotOpponentRecord, ("bot_id", "opponent_id"), OPPONENT_FIELDS, by_pair)


def bot_records_rebuild(
    *,
    seat_model: type[MatchSeat] = MatchSeat,
    seat_record_model: type[BotSeatRecord] = BotSeatRecord,
    opponent_record_model: type[BotOpponentRecord] = BotOpponentRecord,
    chunk: int = 5_000,
) -> tuple[int, int]:
    """Compute every bot's records again from the seats of the finished matches and replace
    the stored ones; returns (seat records, opponent records). The seats are streamed in match
    order; the totals are held in memory (one entry per bot and seat, and per pair of bots
    that met). For a repair, or the migration that introduced the records (hence the model
    arguments)."""
    seats_total: dict[tuple[int, int], SeatShare] = {}
    pairs_total: dict[tuple[int, int], OpponentShare] = {}
    rows = (
        seat_model.objects.filter(match__status="finished", place__isnull=False, bot__isnull=False)
        .order_by("match_id", "seat")
        .values_list("match_id", "bot_id", "seat", "place", "faults")
    )
    current: int | None = None
    seated: list[SeatResult] = []
    for match_id, bot_id, seat, place, faults in rows.iterator(chunk_size=chunk):
        if match_id != current:
            add_shares(seats_total, pairs_total, seated)
            current, seated = match_id, []
        assert place is not None  # filtered above
        seated.append(SeatResult(bot_id, seat, place, faults or {}))
    add_shares(seats_total, pairs_total, seated)
    with transaction.atomic():
        seat_record_model.objects.all().delete()
        opponent_record_model.objects.all().delete()
        seat_record_model.objects.bulk_create(
            (
                seat_record_model(bot_id=bot, seat=seat, **vars(share))
                for (bot, seat), share in seats_total.items()
            ),
            batch_size=chunk,
        )
        opponent_record_model.objects.bulk_create(
            (
                opponent_record_model(bot_id=bot, opponent_id=opponent, **vars(share))
                for (bot, opponent), share in pairs_total.items()
            ),
            batch_size=chunk,
        )
    return len(seats_total), len(pairs_total)
