"""The scale benchmark's ladder: 100k bots and millions of finished matches, generated inside
PostgreSQL (`INSERT ... SELECT` over `generate_series`), so that 10M matches build in minutes
on a 2-core machine; `manage.py bench_scale` measures the site on it.

What is generated, and why so:
- users and bots (two bots a user), one valid version each (version id = bot id);
- finished four-seat matches, one every few seconds over the year before the load. A table is
  drawn around a random bot from its neighbours in skill order (offsets up to ~50), as the
  matchmaker seats bots of similar rating, so bots meet the same opponents again and again;
- `STAR` (bot 1) plays one match in five of the first 1M: 200,000 games, the bot page and the
  recording that the issue names;
- one match in RARE_EVERY is of another ruleset (the match list's rare `?ruleset=`), and
  `disable` takes a share of the bots off the ladder (half by default in `bench_scale`);
- places from skill plus noise; each seat a rating change with its bot's running game count
  (`games_before`), so rating histories and their charts are the real shape; the ratings are
  a cheap stand-in for Elo (each change is +/-, by place), not a replay;
- the kept aggregates (BotRating with its wins and peak, the seat and opponent records) are
  computed from those rows, as the recording service would have left them.

Growing in stages (1M, then 10M) keeps the first stage's rows: the same ladder, ten times
older. The tables' secondary indexes are dropped while a stage inserts and built again after
(far quicker than maintaining them row by row), then everything is VACUUM ANALYZEd, as
autovacuum would before long.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, models

from bench.leaderboard import BOT_FILE, BOTS_PER_USER, _bot_file
from ladder.bots.models import Bot, BotVersion
from ladder.matches.models import BotOpponentRecord, BotSeatRecord, Match, MatchSeat
from ladder.ratings.models import BotRating, RatingChange

RULESET = "modern"
RARE_RULESET = "classic"
RARE_EVERY = 1009
"""One match in RARE_EVERY is of RARE_RULESET (prime, so the star's games of it are rarer
still, one in 5,045 matches): what `?ruleset=` and `?bot=&ruleset=` look for."""
SEATS = 4
STAR = 1
"""The bot with 200,000 games: it plays one match in STAR_EVERY of the first STAR_MATCHES."""
STAR_EVERY = 5
STAR_MATCHES = 1_000_000
CHUNK = 1_000_000
"""Matches generated per statement (4 million seats and rating changes)."""
SECONDS_PER_MATCH = 3.0
"""The generated ladder plays a match every 3 s: 10M matches are about a year."""
RESULT = (
    '{"totals": [150000, 100000, 50000, 0], "ranks": [1, 2, 3, 4], '
    '"hand_scores": [[50000, 25000, 0, 0], [100000, 75000, 50000, 0]]}'
)
"""Every generated match's result line (the match page shows its hands)."""

Say = Callable[[str], None]


@dataclass(frozen=True)
class Ladder:
    bots: int
    matches: int


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


def _literal_defaults(model: type[models.Model], given: set[str]) -> tuple[list[str], list[Any]]:
    """The columns of `model` not in `given` (nor the primary key, if `given` names it), with
    their fields' defaults as parameters: a column another branch adds later (nullable or with
    a default) gets its default, and the generator keeps working."""
    columns: list[str] = []
    values: list[Any] = []
    for field in model._meta.concrete_fields:
        if field.column in given or (field.primary_key and "id" in given):
            continue
        if field.primary_key:
            continue
        columns.append(field.column)
        values.append(field.get_db_prep_save(field.get_default(), connection))
    return columns, values


def insert_select(
    model: type[models.Model],
    select: dict[str, str],
    source: str,
    *,
    select_params: tuple[Any, ...] = (),
    params: tuple[Any, ...] = (),
) -> int:
    """`INSERT INTO model (columns) SELECT expressions FROM source`; returns the rows added.
    `select_params` fill the expressions' placeholders, `params` the source's."""
    others, defaults = _literal_defaults(model, set(select))
    columns = list(select) + others
    expressions = list(select.values()) + ["%s"] * len(others)
    sql = (
        f"INSERT INTO {_q(model._meta.db_table)} ({', '.join(_q(c) for c in columns)}) "
        f"SELECT {', '.join(expressions)} FROM {source}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*select_params, *defaults, *params])
        return int(cursor.rowcount)


def execute(sql: str, params: list[Any] | None = None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])


def scalar(sql: str, params: list[Any] | None = None) -> Any:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        row = cursor.fetchone()
    return row[0] if row else None


BIG_TABLES: tuple[type[models.Model], ...] = (Match, MatchSeat, RatingChange)


@dataclass(frozen=True)
class _Index:
    definition: str
    constraint: str | None
    """The unique constraint the index backs (added back with USING INDEX), or None."""
    name: str


def _secondary_indexes(model: type[models.Model]) -> list[_Index]:
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indexname, i.indexdef, c.conname FROM pg_indexes i "
            "LEFT JOIN pg_constraint c ON c.conname = i.indexname AND c.contype = 'u' "
            "WHERE i.tablename = %s AND i.indexname NOT IN ("
            "  SELECT conname FROM pg_constraint WHERE contype = 'p' AND conrelid = %s::regclass)",
            [table, table],
        )
        return [_Index(d, c, n) for n, d, c in cursor.fetchall()]


@contextmanager
def indexes_dropped(say: Say, tables: tuple[type[models.Model], ...]) -> Iterator[None]:
    """Drop the tables' secondary indexes for a bulk insert; build them again after."""
    kept = {model: _secondary_indexes(model) for model in tables}
    for model, indexes in kept.items():
        for index in indexes:
            if index.constraint:
                execute(f"ALTER TABLE {_q(model._meta.db_table)} DROP CONSTRAINT {_q(index.name)}")
            else:
                execute(f"DROP INDEX {_q(index.name)}")
    try:
        yield
    finally:
        _indexes_build(kept, say)


def _indexes_build(kept: dict[type[models.Model], list[_Index]], say: Say) -> None:
    for model, indexes in kept.items():
        for index in indexes:
            started = time.monotonic()
            execute(index.definition)
            if index.constraint:
                execute(
                    f"ALTER TABLE {_q(model._meta.db_table)} ADD CONSTRAINT {_q(index.name)} "
                    f"UNIQUE USING INDEX {_q(index.name)}"
                )
            say(f"  index {index.name}: {time.monotonic() - started:.0f} s")


def session_for_bulk() -> None:
    execute("SET session_replication_role = replica")  # no foreign key checks row by row
    execute("SET synchronous_commit = off")
    execute("SET work_mem = '1GB'")
    execute("SET maintenance_work_mem = '2GB'")
    execute("SET max_parallel_workers_per_gather = 2")  # the site's settings turn them off


def load_bots(bots: int) -> None:
    """Users, bots and a valid version each; the bots' (empty) ratings in the pool."""
    users = -(-bots // BOTS_PER_USER)
    user_model = get_user_model()
    insert_select(
        user_model,
        {
            "id": "u",
            "password": "'!bench'",
            "is_superuser": "false",
            "username": "'bench' || u",
            "first_name": "''",
            "last_name": "''",
            "email": "''",
            "is_staff": "false",
            "is_active": "true",
            "date_joined": "now() - interval '400 days'",
        },
        "generate_series(1, %s) u",
        params=(users,),
    )
    insert_select(
        Bot,
        {
            "id": "b",
            "owner_id": f"(b - 1) / {BOTS_PER_USER} + 1",
            "name": "'bot' || b",
            "created": "now() - interval '400 days'",
            "disabled": "NULL",
            "disabled_reason": "''",
        },
        "generate_series(1, %s) b",
        params=(bots,),
    )
    name, sha256, size = _bot_file()
    insert_select(
        BotVersion,
        {
            "id": "b",
            "bot_id": "b",
            "number": "1",
            "file": "%s",
            "sha256": "%s",
            "size": "%s",
            "status": "'valid'",
            "created": "now() - interval '400 days'",
            "validation_sent": "now() - interval '400 days'",
        },
        "generate_series(1, %s) b",
        select_params=(name, sha256, size),
        params=(bots,),
    )


RULESET_OF_I = f"CASE WHEN mod(i, {RARE_EVERY}) = 0 THEN '{RARE_RULESET}' ELSE '{RULESET}' END"
"""SQL: the ruleset of generated match `i`."""


def disable(bots: int, share: float) -> int:
    """Take `share` of the bots off the ladder (spread evenly over the ids, so over skill),
    never the star nor bots 2-4 (the recording's table); returns how many. Sets their rating
    rows' flags too, as the database's triggers would (session_for_bulk turns them off)."""
    bot_table = _q(Bot._meta.db_table)
    execute(
        f"UPDATE {bot_table} SET disabled = now() - interval '1 day',"
        " disabled_reason = 'bench: forfeited its last 5 games'"
        " WHERE id > 4 AND floor(id * %s) <> floor((id - 1) * %s)",
        [share, share],
    )
    execute(
        f"UPDATE {_q(BotRating._meta.db_table)} r SET on_ladder = b.disabled IS NULL,"
        f" playing = b.disabled IS NULL FROM {bot_table} b WHERE b.id = r.bot_id"
    )
    return int(scalar(f"SELECT count(*) FROM {bot_table} WHERE disabled IS NOT NULL"))


def load_matches(first: int, last: int, *, bots: int, total: int) -> None:
    """Matches `first`..`last` (1-based ids), their seats and rating changes. Match i was
    created `(total - i) * SECONDS_PER_MATCH` seconds before now: the newest is the last."""
    step = f"interval '{SECONDS_PER_MATCH} seconds'"
    created = f"now() - ({total} - i) * {step}"
    # One row per match, in a temporary table: its seats' bots drawn once, read twice.
    execute("DROP TABLE IF EXISTS bench_tables")
    execute(
        f"""
        CREATE TEMPORARY TABLE bench_tables AS
        SELECT i,
               CASE WHEN i <= {STAR_MATCHES} AND mod(i, {STAR_EVERY}) = 0 THEN 0
                    ELSE floor(random() * {bots})::int END AS c,
               1 + floor(random() * 16)::int AS a,
               1 + floor(random() * 16)::int AS b,
               1 + floor(random() * 16)::int AS d
        FROM generate_series(%s, %s) i
        """,
        [first, last],
    )
    insert_select(
        Match,
        {
            "id": "i",
            "ruleset": RULESET_OF_I,
            "variants": "'{}'::jsonb",
            "limits": "'{}'::jsonb",
            "seed": "floor(random() * 9e18)::bigint",
            "status": "'finished'",
            "attempts": "1",
            "failure_reason": "''",
            "created": created,
            "queued": created,
            "started": created,
            "finished": f"{created} + {step} / 2",
            "log": "%s",
            "log_sha256": "''",
            "replay": "''",
            "replay_engine": "''",
            "result": f"'{RESULT}'::jsonb",
            "rated": "true",
            "time_control": "'{}'::jsonb",
            "runtime": "''",
        },
        "bench_tables",
        select_params=(BENCH_LOG,),
    )
    # Seats: positions c, c+a, c+a+b, c+a+b+d in skill order (bot id order: bot 1 best),
    # places by skill plus noise, rated in match order.
    execute("DROP TABLE IF EXISTS bench_seats")
    execute(
        f"""
        CREATE TEMPORARY TABLE bench_seats AS
        SELECT i, s, bot,
               rank() OVER (PARTITION BY i ORDER BY key DESC)::smallint AS place
        FROM (
            SELECT t.i, v.s, 1 + mod(v.pos, {bots}) AS bot,
                   -3.0 * mod(v.pos, {bots}) / {bots} - ln(-ln(random() * 0.999998 + 0.000001))
                     AS key
            FROM bench_tables t
            CROSS JOIN LATERAL (VALUES (0, t.c), (1, t.c + t.a), (2, t.c + t.a + t.b),
                                       (3, t.c + t.a + t.b + t.d)) v(s, pos)
        ) seated
        """
    )
    insert_select(
        MatchSeat,
        {
            "id": f"(i - 1) * {SEATS} + s + 1",
            "match_id": "i",
            "seat": "s",
            "bot_version_id": "bot",
            "bot_id": "bot",
            "ruleset": RULESET_OF_I,  # the insert's trigger is off (session_for_bulk)
            "place": "place",
            "total": f"({SEATS} - place) * 50000",
            "forfeited": "false",
            "forfeit_reason": "''",
            "decisions": "150",
            "think_ms": "2.5",
            "strikes": "0",
            # One seat in 500 timed out once: the bot page's fault list has something to show.
            "faults": """CASE WHEN random() < 0.002 THEN '{"timeout": 1}'::jsonb
                              ELSE '{}'::jsonb END""",
            "fault_details": """'{}'::jsonb""",
            "stderr": "''",
        },
        "bench_seats",
    )
    # Rating changes: each bot's running game count from bench_games (its games so far).
    execute("DROP TABLE IF EXISTS bench_changes")
    execute(
        """
        CREATE TEMPORARY TABLE bench_changes AS
        SELECT s.i, s.s, s.bot, s.place,
               g.games + row_number() OVER (PARTITION BY s.bot ORDER BY s.i) - 1 AS games_before
        FROM bench_seats s JOIN bench_games g ON g.bot = s.bot
        """
    )
    # A stand-in for Elo: each game moves the rating by (2.5 - place) * 4, around a level set
    # by skill, so the history has a shape and the board an order.
    insert_select(
        RatingChange,
        {
            "id": f"(i - 1) * {SEATS} + s + 1",
            "match_id": "i",
            "bot_id": "bot",
            "ruleset": RULESET_OF_I,
            "place": "place",
            "before": f"1500 + 400.0 * (1 - 2.0 * bot / {bots}) + mod(games_before, 7) * 3",
            "after": f"1500 + 400.0 * (1 - 2.0 * bot / {bots}) + mod(games_before, 7) * 3"
            f" + ({(SEATS + 1) / 2} - place) * 4",
            "delta": f"({(SEATS + 1) / 2} - place) * 4",
            "games_before": "games_before",
            "created": f"{created} + {step} / 2",
            "peak_before": f"1500 + 400.0 * (1 - 2.0 * bot / {bots}) + 18",
        },
        "bench_changes",
    )
    execute(
        """
        UPDATE bench_games g SET games = g.games + n.n
        FROM (SELECT bot, count(*) AS n FROM bench_seats GROUP BY bot) n WHERE n.bot = g.bot
        """
    )
    # The chunk's pairs of bots, summed here while its seats are a small table in memory
    # (a self-join of every seat at the end took longer than the rest of the build).
    execute(
        """
        INSERT INTO bench_pairs
        SELECT mine.bot, other.bot, count(*),
               count(*) FILTER (WHERE mine.place < other.place),
               count(*) FILTER (WHERE mine.place = other.place)
        FROM bench_seats mine JOIN bench_seats other ON other.i = mine.i AND other.s <> mine.s
        GROUP BY mine.bot, other.bot
        """
    )


BENCH_LOG = "bench/match.jsonl.gz"
"""The one log file every generated match points at (a real game's, written by the command)."""


def load_aggregates(bots: int) -> None:
    """BotRating (mu, games, wins, peak, last game) and the seat and opponent records, from
    the generated rows, replacing what an earlier stage computed."""
    execute(f"DELETE FROM {_q(BotRating._meta.db_table)}")
    execute(f"DELETE FROM {_q(BotSeatRecord._meta.db_table)}")
    execute(f"DELETE FROM {_q(BotOpponentRecord._meta.db_table)}")
    insert_select(
        BotRating,
        {
            "bot_id": "b",
            "ruleset": f"'{RULESET}'",
            "mu": f"1500 + 400.0 * (1 - 2.0 * b / {bots}) + coalesce(mod(g.games, 7), 0) * 3",
            "games": "coalesce(g.games, 0)",
            "wins": "coalesce(g.games, 0) / 4",
            "updated": "now()",
            "peak": f"1500 + 400.0 * (1 - 2.0 * b / {bots}) + 18",
            "last_queued": "now() - b * interval '1 second'",
            # As the triggers would (session_for_bulk turns them off); every bot has a valid
            # version.
            "on_ladder": f"(SELECT disabled IS NULL FROM {_q(Bot._meta.db_table)} WHERE id = b)",
            "playing": f"(SELECT disabled IS NULL FROM {_q(Bot._meta.db_table)} WHERE id = b)",
        },
        "generate_series(1, %s) b LEFT JOIN bench_games g ON g.bot = b",
        params=(bots,),
    )
    seat_table = _q(MatchSeat._meta.db_table)
    insert_select(
        BotSeatRecord,
        {
            "bot_id": "bot_id",
            "seat": "seat",
            "games": "count(*)",
            "wins": "count(*) FILTER (WHERE place = 1)",
            "places": "sum(place)",
            "opponents": f"count(*) * {SEATS - 1}",
            "beaten": f"sum({SEATS} - place)",
            "timed_out": "count(*) FILTER (WHERE faults ? 'timeout')",
            "crashed": "count(*) FILTER (WHERE faults ? 'crashed')",
        },
        f"{seat_table} GROUP BY bot_id, seat",
    )
    insert_select(
        BotOpponentRecord,
        {
            "bot_id": "bot",
            "opponent_id": "opponent",
            "games": "sum(games)",
            "ahead": "sum(ahead)",
            "tied": "sum(tied)",
        },
        "bench_pairs GROUP BY bot, opponent",
    )


def reset_sequences() -> None:
    from django.core.management.color import no_style

    tables: list[type[models.Model]] = [
        get_user_model(),
        Bot,
        BotVersion,
        Match,
        MatchSeat,
        RatingChange,
        BotRating,
        BotSeatRecord,
        BotOpponentRecord,
    ]
    for sql in connection.ops.sequence_reset_sql(no_style(), tables):
        execute(sql)


def vacuum_analyze() -> None:
    for model in (
        get_user_model(),
        Bot,
        BotVersion,
        Match,
        MatchSeat,
        RatingChange,
        BotRating,
        BotSeatRecord,
        BotOpponentRecord,
    ):
        execute(f"VACUUM (ANALYZE) {_q(model._meta.db_table)}")


def _games_so_far(ladder: Ladder) -> None:
    """bench_games: each bot's games so far (the next rating change's `games_before`), kept
    across chunks in the session; counted from the seats when a run starts on a kept ladder."""
    execute(
        "CREATE TEMPORARY TABLE IF NOT EXISTS bench_games "
        "(bot int PRIMARY KEY, games int NOT NULL, mu float8 NOT NULL)"
    )
    if scalar("SELECT count(*) FROM bench_games") == ladder.bots:
        return
    execute("DELETE FROM bench_games")
    execute(
        f"INSERT INTO bench_games SELECT b, coalesce(n.games, 0), 1500 "
        f"FROM generate_series(1, {ladder.bots}) b LEFT JOIN ("
        f"  SELECT bot_id, count(*) AS games FROM {_q(MatchSeat._meta.db_table)} GROUP BY bot_id"
        f") n ON n.bot_id = b"
    )


def grow(ladder: Ladder, *, to: int, total: int, say: Say) -> Ladder:
    """Add matches from `ladder.matches + 1` to `to` (of a final ladder of `total`), then the
    aggregates again; returns the ladder grown."""
    _games_so_far(ladder)
    # The pairs of bots that met, summed a chunk at a time (UNLOGGED: a bench's scratch).
    execute(
        "CREATE UNLOGGED TABLE IF NOT EXISTS bench_pairs (bot int NOT NULL, opponent int "
        "NOT NULL, games int NOT NULL, ahead int NOT NULL, tied int NOT NULL)"
    )
    if ladder.matches and not scalar("SELECT EXISTS (SELECT 1 FROM bench_pairs)"):
        raise RuntimeError("a kept ladder without bench_pairs: build it again without --keep")
    with indexes_dropped(say, (*BIG_TABLES, BotSeatRecord, BotOpponentRecord)):
        for first in range(ladder.matches + 1, to + 1, CHUNK):
            last = min(first + CHUNK - 1, to)
            started = time.monotonic()
            load_matches(first, last, bots=ladder.bots, total=total)
            say(f"  matches {first:,}-{last:,}: {time.monotonic() - started:.0f} s")
        started = time.monotonic()
        load_aggregates(ladder.bots)
        say(f"  ratings and records: {time.monotonic() - started:.0f} s")
    reset_sequences()
    started = time.monotonic()
    vacuum_analyze()
    say(f"  vacuum analyze: {time.monotonic() - started:.0f} s")
    return Ladder(ladder.bots, to)


__all__ = ["BOT_FILE", "Ladder", "grow", "load_bots", "session_for_bulk"]
