"""The leaderboard benchmark's parts: a fast loader of a big ladder, and wrk's figures.

`manage.py bench_leaderboard` (bench/management/commands/bench_leaderboard.py) puts
them together. The loader writes every table with PostgreSQL COPY on Django's own connection, in
one transaction, into a schema made by `migrate`: users, bots, one valid version each, finished
matches with their seats, a RatingChange per seat and the BotRating rows they lead to. The
ratings are a real Elo replay (`elo.update`, match by match), so `before`, `after`,
`games_before`, `games` and `wins` agree exactly as `rating_apply` would have left them; the
finishing orders are drawn from hidden skills (Plackett-Luce), so the ratings spread as on a real
ladder.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management.color import no_style
from django.db import connection, models, transaction

from ladder.bots.models import Bot, BotVersion
from ladder.matches.models import Match, MatchSeat
from ladder.ratings.elo import DEFAULT_PARAMS, MAX_SEATS, MIN_SEATS, update
from ladder.ratings.models import BotRating, RatingChange

RULESET = "modern"
BOT_FILE = "bench/bot.py"
"""One small source file, stored once through Django's storage, that every version points at."""
BOT_SOURCE = b'''"""The bench ladder's bot: plays the first legal action."""

from bots.sdk import Bot, Observation, run


class First(Bot):
    def choose(self, obs: Observation) -> str:
        return obs.legal[0]


if __name__ == "__main__":
    run(First())
'''
BOTS_PER_USER = 2
HISTORY = timedelta(days=365)
"""The matches are spread evenly over the year before the load."""
BATCH = 20_000
"""Rows per write to a COPY."""

Advance = Callable[[str, int], None]
"""progress(table, rows): `rows` more rows of `table` were written."""


@dataclass(frozen=True)
class BenchSize:
    bots: int
    matches: int
    seats: int = 4

    def __post_init__(self) -> None:
        if not MIN_SEATS <= self.seats <= MAX_SEATS:
            raise ValueError(f"seats must be {MIN_SEATS} to {MAX_SEATS}, got {self.seats}")
        if self.bots < self.seats:
            raise ValueError(f"{self.seats}-seat matches need at least {self.seats} bots")
        if self.matches < 0:
            raise ValueError("matches must not be negative")

    @property
    def users(self) -> int:
        return math.ceil(self.bots / BOTS_PER_USER)

    def counts(self) -> dict[str, int]:
        """The row count of each table once this size is loaded (see `bench_counts`)."""
        seats = self.matches * self.seats
        return {
            "users": self.users,
            "bots": self.bots,
            "versions": self.bots,
            "matches": self.matches,
            "seats": seats,
            "rating changes": seats,
        }

    def rows(self) -> dict[str, int]:
        """Rows the loader writes per table, for progress bars (ratings: at most one per bot)."""
        return {**self.counts(), "ratings": self.bots}


def _tables() -> dict[str, type[models.Model]]:
    return {
        "users": get_user_model(),
        "bots": Bot,
        "versions": BotVersion,
        "matches": Match,
        "seats": MatchSeat,
        "rating changes": RatingChange,
        "ratings": BotRating,
    }


def bench_counts() -> dict[str, int]:
    """Rows in each table the loader fills (exact counts; a few seconds on 4 million rows)."""
    return {
        name: model._default_manager.count()
        for name, model in _tables().items()
        if name != "ratings"
    }


def _ts(moment: datetime) -> str:
    return moment.isoformat(sep=" ")


def _copy_value(value: object) -> str:
    """A Python value as a field of COPY's text format."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, dict | list):
        value = json.dumps(value)
    elif isinstance(value, datetime):
        value = _ts(value)
    text = str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


class _Copy:
    """Writes lines of tab-separated `given` columns to a COPY; every other column of the table
    gets its field's default, so that a column another app adds later (nullable or with a
    default) does not break the loader."""

    def __init__(self, model: type[models.Model], given: list[str]) -> None:
        others = [
            field
            for field in model._meta.concrete_fields
            if field.column not in given and not field.primary_key
        ]
        self.columns = given + [field.column for field in others]
        self._suffix = "".join("\t" + _copy_value(field.get_default()) for field in others)
        self.copy: Any = None

    def write(self, text: str) -> None:
        """`text`: whole lines, each ending in a newline, no newline inside a field."""
        if self._suffix:
            text = text.replace("\n", self._suffix + "\n")
        self.copy.write(text)


@contextmanager
def _copy(model: type[models.Model], columns: str) -> Iterator[_Copy]:
    """COPY into the model's table; `columns`: the column names, space-separated."""
    writer = _Copy(model, columns.split())
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(column) for column in writer.columns)
    # cursor.cursor: the psycopg 3 cursor under Django's wrapper.
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy,
    ):
        writer.copy = copy
        yield writer


def _bot_file() -> tuple[str, str, int]:
    """Store BOT_SOURCE once; returns its storage name, sha256 and size."""
    name = BOT_FILE
    if not default_storage.exists(name):
        name = default_storage.save(name, ContentFile(BOT_SOURCE))
    return name, hashlib.sha256(BOT_SOURCE).hexdigest(), len(BOT_SOURCE)


def load_bench_data(
    size: BenchSize, *, seed: int = 1, progress: Advance | None = None
) -> dict[str, int]:
    """Write a ladder of `size` into empty tables, in one transaction; returns rows per table.

    Foreign keys are not checked row by row during the load when the database user may turn
    that off (`session_replication_role = replica`, superusers only): the rows are consistent by
    construction, and checking 8 million references would double the load time. Sequences are
    moved past the ids written, so the site can create rows afterwards.
    """
    advance = progress or (lambda table, rows: None)
    rng = random.Random(seed)
    now = datetime.now(UTC).replace(microsecond=0)
    start = now - HISTORY
    step = HISTORY / max(size.matches, 1)
    file_name, sha256, file_size = _bot_file()
    written: dict[str, int] = {}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        if cursor.fetchone()[0]:
            cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute("SET LOCAL synchronous_commit = off")

        joined = _ts(start)
        with _copy(
            get_user_model(),
            "id password is_superuser username first_name "
            "last_name email is_staff is_active date_joined",
        ) as copy:
            # "!": an unusable password, as set_unusable_password writes it.
            for user in range(1, size.users + 1):
                copy.write(f"{user}\t!bench\tf\tbench{user}\t\t\t\tf\tt\t{joined}\n")
        advance("users", size.users)
        written["users"] = size.users

        with _copy(Bot, "id owner_id name created") as copy:
            copy.write(
                "".join(
                    f"{bot}\t{(bot - 1) // BOTS_PER_USER + 1}\tbot{bot}\t{joined}\n"
                    for bot in range(1, size.bots + 1)
                )
            )
        advance("bots", size.bots)
        written["bots"] = size.bots
        # Version id = bot id: a seat's bot_version_id is its bot's id.
        with _copy(
            BotVersion,
            "id bot_id number file sha256 size status validation_error created",
        ) as copy:
            copy.write(
                "".join(
                    f"{bot}\t{bot}\t1\t{file_name}\t{sha256}\t{file_size}\tvalid\t\t{joined}\n"
                    for bot in range(1, size.bots + 1)
                )
            )
        advance("versions", size.bots)
        written["versions"] = size.bots

        with _copy(
            Match,
            "id ruleset variants limits seed status attempts failure_reason "
            "created started finished log log_sha256",
        ) as copy:
            for first in range(0, size.matches, BATCH):
                last = min(first + BATCH, size.matches)
                lines = []
                for index in range(first, last):
                    created = start + step * index
                    lines.append(
                        f"{index + 1}\t{RULESET}\t{{}}\t{{}}\t{rng.getrandbits(63)}\tfinished\t1"
                        f"\t\t{_ts(created)}\t{_ts(created)}\t{_ts(created + step / 2)}\t\t\n"
                    )
                copy.write("".join(lines))
                advance("matches", last - first)
        written["matches"] = size.matches

        # The seats, and the Elo replay that rates them: kept in arrays (8 bytes a number) for
        # the rating changes' COPY, which cannot run while this one is open.
        skill = [rng.gauss(0.0, 1.0) for _ in range(size.bots)]
        ratings = [DEFAULT_PARAMS.new_rating()] * size.bots
        wins = [0] * size.bots
        last_game = [0] * size.bots
        seat_bots = array("l")
        seat_places = array("b")
        before = array("d")
        games_before = array("l")
        after = array("d")
        bot_indexes = range(size.bots)
        seat_numbers = range(size.seats)
        seat_id = 0
        with _copy(
            MatchSeat,
            "id match_id seat bot_version_id bot_id place total "
            "forfeited forfeit_reason decisions think_ms strikes faults",
        ) as copy:
            for first in range(0, size.matches, BATCH):
                last = min(first + BATCH, size.matches)
                lines = []
                for index in range(first, last):
                    table = rng.sample(bot_indexes, size.seats)
                    # Plackett-Luce finishing order: sort skill + Gumbel noise.
                    keys = [skill[b] - math.log(-math.log(rng.random() or 1e-300)) for b in table]
                    order = sorted(seat_numbers, key=keys.__getitem__, reverse=True)
                    places = [0] * size.seats
                    for place, seat in enumerate(order, start=1):
                        places[seat] = place
                    old = [ratings[b] for b in table]
                    new = update(old, places, DEFAULT_PARAMS)
                    for seat in seat_numbers:
                        b, place = table[seat], places[seat]
                        ratings[b] = new[seat]
                        last_game[b] = index
                        if place == 1:
                            wins[b] += 1
                        seat_bots.append(b)
                        seat_places.append(place)
                        before.append(old[seat].mu)
                        games_before.append(old[seat].games)
                        after.append(new[seat].mu)
                        seat_id += 1
                        lines.append(
                            f"{seat_id}\t{index + 1}\t{seat}\t{b + 1}\t{b + 1}\t{place}"
                            f"\t{(size.seats - place) * 50_000}\tf\t\t150\t2.5\t0\t{{}}\n"
                        )
                copy.write("".join(lines))
                advance("seats", (last - first) * size.seats)
        written["seats"] = seat_id

        with _copy(
            RatingChange,
            "id match_id bot_id ruleset place before after delta games_before created",
        ) as copy:
            for first in range(0, seat_id, BATCH):
                last = min(first + BATCH, seat_id)
                lines = []
                finished = ""
                match_index = -1
                for row in range(first, last):
                    if row // size.seats != match_index:
                        match_index = row // size.seats
                        finished = _ts(start + step * match_index + step / 2)
                    old_mu, new_mu = before[row], after[row]
                    lines.append(
                        f"{row + 1}\t{match_index + 1}\t{seat_bots[row] + 1}\t{RULESET}"
                        f"\t{seat_places[row]}\t{old_mu!r}\t{new_mu!r}\t{new_mu - old_mu!r}"
                        f"\t{games_before[row]}\t{finished}\n"
                    )
                copy.write("".join(lines))
                advance("rating changes", last - first)
        written["rating changes"] = seat_id

        rated = [b for b in range(size.bots) if ratings[b].games]
        with _copy(BotRating, "id bot_id ruleset mu games wins updated") as copy:
            copy.write(
                "".join(
                    f"{n}\t{b + 1}\t{RULESET}\t{ratings[b].mu!r}\t{ratings[b].games}\t{wins[b]}"
                    f"\t{_ts(start + step * last_game[b] + step / 2)}\n"
                    for n, b in enumerate(rated, start=1)
                )
            )
        advance("ratings", size.bots)
        written["ratings"] = len(rated)

        for sql in connection.ops.sequence_reset_sql(no_style(), list(_tables().values())):
            cursor.execute(sql)
        cursor.execute("SET LOCAL session_replication_role = DEFAULT")
    return written


def vacuum_analyze() -> None:
    """VACUUM (ANALYZE) the loaded tables, as autovacuum would do before long: the planner gets
    statistics and index-only scans a visibility map. Outside any transaction."""
    with connection.cursor() as cursor:
        for model in _tables().values():
            cursor.execute(f"VACUUM (ANALYZE) {connection.ops.quote_name(model._meta.db_table)}")


def explain_leaderboard(*, ruleset: str = RULESET, offset: int = 0, limit: int = 50) -> str:
    """EXPLAIN ANALYZE of the queries `selectors.Leaderboard` runs for one page."""
    from ladder.ratings.selectors import leaderboard

    board = leaderboard(ruleset=ruleset)
    if offset < board.deep:
        return board.rows()[offset : offset + limit].explain(analyze=True)
    page = board.order()[offset : offset + limit]
    rows = board.rows().filter(bot_id__in=list(page))
    return f"{page.explain(analyze=True)}\n{rows.explain(analyze=True)}"


@dataclass(frozen=True)
class WrkResult:
    p50_ms: float
    p75_ms: float
    p90_ms: float
    p99_ms: float
    requests: int
    seconds: float
    requests_per_s: float
    errors: int
    """Socket errors plus responses that were not 2xx or 3xx."""


_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if match is None:
        raise ValueError(f"not a wrk latency: {text!r}")
    return float(match[1]) * _UNITS_MS[match[2]]


def parse_wrk(output: str) -> WrkResult:
    """The figures of `wrk --latency`'s report (its latency distribution, requests/s, errors)."""
    percentiles = {
        int(match[1]): _ms(match[2])
        for match in re.finditer(r"^\s+(50|75|90|99)%\s+(\S+)\s*$", output, re.MULTILINE)
    }
    total = re.search(r"^\s*(\d+) requests in ([\d.]+)(us|ms|s|m),", output, re.MULTILINE)
    rate = re.search(r"^Requests/sec:\s+([\d.]+)", output, re.MULTILINE)
    if len(percentiles) != 4 or total is None or rate is None:
        raise ValueError(f"unexpected wrk output (was --latency given?):\n{output}")
    errors = 0
    socket = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    if socket:
        errors += sum(int(n) for n in socket.groups())
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if bad:
        errors += int(bad[1])
    return WrkResult(
        p50_ms=percentiles[50],
        p75_ms=percentiles[75],
        p90_ms=percentiles[90],
        p99_ms=percentiles[99],
        requests=int(total[1]),
        seconds=_ms(total[2] + total[3]) / 1000,
        requests_per_s=float(rate[1]),
        errors=errors,
    )
