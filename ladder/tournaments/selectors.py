"""Reading tournaments: lists by status, one tournament with everything its page shows, the
results archive (every log plus a standings CSV)."""

from __future__ import annotations

import csv
import io
import zipfile
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from ladder.tournaments import pairing
from ladder.tournaments import standings as standings_rules
from ladder.tournaments.models import Entry, Round, Tournament

UPCOMING = (
    Tournament.Status.SCHEDULED,
    Tournament.Status.REGISTRATION,
    Tournament.Status.CLOSED,
)
RUNNING = (Tournament.Status.RUNNING, Tournament.Status.PAUSED)
DONE = (Tournament.Status.FINISHED, Tournament.Status.CANCELLED)
GROUPS = {"upcoming": UPCOMING, "running": RUNNING, "finished": DONE}


def tournament_list(*, group: str | None = None) -> QuerySet[Tournament]:
    tournaments = (
        Tournament.objects.select_related("organiser")
        .prefetch_related("invited")
        .order_by("-starts_at", "-id")
    )
    if group is not None:
        tournaments = tournaments.filter(status__in=GROUPS[group])
    return tournaments


@dataclass(frozen=True)
class StandingRow:
    rank: int
    entry: Entry
    points: float
    tiebreak: tuple[Any, ...]
    games: int
    byes: int
    advanced: int | None
    """Single elimination: the rounds advanced from, which rank before points."""


@dataclass(frozen=True)
class TableRow:
    number: int
    seats: list[tuple[Entry, int | None]]
    """Seat order: each entry with its place once the table is done."""
    result: dict[str, Any] | None
    matches: list[tuple[int, int, str]]
    """(rotation, match id, status) per game."""


@dataclass(frozen=True)
class RoundRow:
    number: int
    status: str
    byes: list[Entry]
    tables: list[TableRow]


@dataclass(frozen=True)
class TournamentDetail:
    tournament: Tournament
    entries: list[Entry]
    rounds: list[RoundRow]
    standings: list[StandingRow]
    tie_breaks: tuple[str, ...]
    """The tie-breaks after points."""
    ranked_by: tuple[str, ...]
    """The whole order of the standings: points and the tie-breaks, after the rounds advanced
    in a single elimination."""


def tournament_detail(*, tournament: Tournament) -> TournamentDetail:
    entries = {
        e.pk: e for e in tournament.entries.select_related("bot__owner", "version").order_by("id")
    }
    rounds = []
    for r in tournament.rounds.prefetch_related("tables__games__match").order_by("number"):
        tables = [
            TableRow(
                number=table.number,
                seats=[
                    (entries[pk], (table.result or {}).get("places", {}).get(str(pk)))
                    for pk in table.seats
                ],
                result=table.result,
                matches=[(g.rotation, g.match_id, g.match.status) for g in table.games.all()],
            )
            for table in r.tables.all()
        ]
        rounds.append(RoundRow(r.number, r.status, [entries[pk] for pk in r.byes], tables))
    rows = [
        StandingRow(
            s.rank, entries[s.entrant], s.points, tuple(s.tiebreak), s.games, s.byes, s.advanced
        )
        for s in tournament_standings(tournament)
    ]
    ranked_by = (
        standings_rules.ELIMINATION_RANKING
        if tournament.format == Tournament.Format.ELIMINATION
        else standings_rules.RANKING
    )
    return TournamentDetail(
        tournament, list(entries.values()), rounds, rows, standings_rules.TIE_BREAKS, ranked_by
    )


def standings_csv(detail: TournamentDetail) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    elimination = detail.tournament.format == Tournament.Format.ELIMINATION
    writer.writerow(
        [
            "rank",
            *(["rounds advanced"] if elimination else []),
            "bot",
            "owner",
            "version",
            "points",
            *detail.tie_breaks,
            "games",
            "byes",
            "withdrawn",
        ]
    )
    for row in detail.standings:
        writer.writerow(
            [
                row.rank,
                *([row.advanced] if elimination else []),
                row.entry.bot.name,
                row.entry.bot.owner.get_username(),
                row.entry.version.number if row.entry.version else "",
                row.points,
                *row.tiebreak,
                row.games,
                row.byes,
                row.entry.withdrawn_reason if row.entry.withdrawn else "",
            ]
        )
    return out.getvalue()


def tournament_archive(*, tournament: Tournament) -> bytes:
    """A zip of `standings.csv` and every finished game's log (`round-R/table-T-game-G.jsonl.gz`,
    the same bytes as each match's log download)."""
    detail = tournament_detail(tournament=tournament)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("standings.csv", standings_csv(detail))
        rounds = Round.objects.filter(tournament=tournament).prefetch_related(
            "tables__games__match"
        )
        for r in rounds:
            for table in r.tables.all():
                for game in table.games.all():
                    if not game.match.log:
                        continue
                    with game.match.log.open("rb") as log:
                        # Stored, not deflated again: the logs are gzip already.
                        archive.writestr(
                            f"round-{r.number}/table-{table.number}-game-{game.rotation}"
                            f"-match-{game.match_id}.jsonl.gz",
                            log.read(),
                            compress_type=zipfile.ZIP_STORED,
                        )
    return buffer.getvalue()


def tournament_standings(t: Tournament) -> list[standings_rules.Standing]:
    """The standings now, in the table's order, from the settled tables, byes and (single
    elimination) the rounds advanced: the page, the API, the CSV and the chart all read this."""
    results: list[standings_rules.TableResult] = []
    byes: dict[int, int] = {}
    # Elimination: the rounds each entrant advanced from (a bye or a table's "advancing").
    advanced: dict[int, int] | None = None
    if t.format == Tournament.Format.ELIMINATION:
        advanced = {}
    for r in t.rounds.prefetch_related("tables").order_by("number"):
        for pk in r.byes:
            byes[pk] = byes.get(pk, 0) + 1
            if advanced is not None:
                advanced[pk] = advanced.get(pk, 0) + 1
        for table in r.tables.all():
            if table.result is None:
                continue
            if advanced is not None:
                for pk in table.result.get("advancing", []):
                    advanced[pk] = advanced.get(pk, 0) + 1
            results.append(
                standings_rules.TableResult(
                    table=pairing.Table(tuple(table.seats)),
                    places={int(k): v for k, v in table.result["places"].items()},
                    totals={int(k): v for k, v in table.result["totals"].items()},
                )
            )
    entrants = list(
        t.entries.filter(version__isnull=False).order_by("id").values_list("id", flat=True)
    )
    return standings_rules.standings(entrants, results, byes, seats=t.seats, advanced=advanced)
