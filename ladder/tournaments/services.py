"""Running tournaments: create, register, the clock (open, close, start), rounds, results,
and the organiser's pause, resume and cancel.

The life of a tournament is a small state machine driven by two idempotent services that any
number of callers may run at any time: `tournament_tick` (the clock: Celery beat runs it at the
three set times from the database schedule, and a sweep every 30 s as a safety net) and
`tournament_progress` (a table's games settled: record results, finish the round, start the
next; run when a match settles, and by the same sweep). Both lock the tournament's row first,
so two runs never act on the same state.

Rules worth knowing (also on the tournament page):
- The version that plays is the bot's newest valid version when the tournament starts; a
  version uploaded mid-event waits for the next event.
- A game that fails for good (the ladder's bounded retries are used up) counts as a draw with
  no money: every seat of that game shares first place with a total of 0. A round never hangs.
- A withdrawn entrant's games already queued are still played and count; it is not paired
  again, and in an elimination it cannot advance (the next best at its table does).
- Swiss and round robin byes score `standings.bye_points`; elimination byes advance.
- One bot per seating circle (an owner, or accounts the site links: `ladder.accounts.models`):
  a second bot of a circle is refused at registration, and one entered before its owner's
  accounts were linked is withdrawn at the start (the later entry), so no table of any format
  seats two bots of one person, who could feed one with the other (docs/fairplay.md).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from engine.rules import RULESETS, Variants, resolve_ruleset
from ladder.bots.models import Bot, BotVersion
from ladder.bots.selectors import bot_circles
from ladder.matches.models import Match
from ladder.matches.services import match_create
from ladder.ratings.models import BotRating
from ladder.task_sending import send_on_commit
from ladder.tournaments import pairing, standings
from ladder.tournaments.models import Entry, Round, Table, TableGame, Tournament
from ladder.tournaments.selectors import tournament_standings
from ladder.tournaments.signals import tournament_status_changed_on_commit


class TournamentError(ValueError):
    """Bad input or a step not allowed now; the message says which and why."""


class TournamentForbidden(TournamentError):
    """A step this user may not take (not the bot's owner, not the organiser): the API answers
    403, as it does to an upload to someone else's bot."""


# --- creating -------------------------------------------------------------------------------


def tournament_validate(
    *,
    seats: int,
    format: str,
    swiss_rounds: int,
    meetings: int,
    ruleset: str,
    variants: Mapping[str, Any],
    limits: Mapping[str, Any] | None,
    registration_opens: datetime,
    registration_closes: datetime,
    starts_at: datetime,
    eligibility: str,
    top_n: int | None,
    decision_ms: int,
    bank_ms: int,
) -> None:
    """Raise TournamentError naming the first thing wrong with these settings."""
    if not pairing.MIN_SEATS <= seats <= pairing.MAX_SEATS:
        raise TournamentError(f"seats per table must be 2 to 6, not {seats}")
    if format not in Tournament.Format.values:
        raise TournamentError(
            f"unknown format {format!r}; formats: {', '.join(Tournament.Format.values)}"
        )
    if format == Tournament.Format.SWISS and not 1 <= swiss_rounds <= 50:
        raise TournamentError(f"a Swiss tournament needs 1 to 50 rounds, not {swiss_rounds}")
    if format == Tournament.Format.ROUND_ROBIN and not 1 <= meetings <= 10:
        raise TournamentError(f"games per pairing must be 1 to 10, not {meetings}")
    if ruleset not in RULESETS:
        raise TournamentError(f"unknown ruleset {ruleset!r}; rulesets: {', '.join(RULESETS)}")
    try:
        parsed = Variants.from_dict(dict(variants))
    except (TypeError, ValueError) as exc:
        raise TournamentError(f"bad variants: {exc}") from None
    _validate_limits(ruleset, parsed, limits)
    if not registration_opens < registration_closes:
        raise TournamentError("registration must open before it closes")
    if starts_at < registration_closes:
        raise TournamentError("the tournament cannot start before registration closes")
    if eligibility not in Tournament.Eligibility.values:
        raise TournamentError(f"unknown eligibility {eligibility!r}")
    if eligibility == Tournament.Eligibility.TOP_N and (top_n is None or top_n < seats):
        raise TournamentError(f"top N needs N of at least one table ({seats}), not {top_n}")
    if not 50 <= decision_ms <= 60_000:
        raise TournamentError(f"time per decision must be 50 to 60000 ms, not {decision_ms}")
    if not 0 <= bank_ms <= 600_000:
        raise TournamentError(f"the time bank must be 0 to 600000 ms, not {bank_ms}")


def _validate_limits(ruleset: str, variants: Variants, limits: Mapping[str, Any] | None) -> None:
    """The engine's own check (`resolve_ruleset`, the same call every game makes), so that a
    limit every game would fail on is refused here, not found out one failed game at a time."""
    if limits is None:
        return
    if not isinstance(limits, Mapping):
        raise TournamentError(
            f"bad limits: expected an object such as {{'max_hands': 20}}, not {limits!r}"
        )
    for key, value in limits.items():
        # JSON true is a Python int; a limit of "true" is a mistake, not 1.
        if isinstance(value, bool):
            raise TournamentError(f"bad limits: {key} must be a positive integer, not {value!r}")
    try:
        resolve_ruleset(ruleset, variants, dict(limits))
    except (TypeError, ValueError) as exc:
        raise TournamentError(f"bad limits: {exc}") from None


def tournament_create(*, organiser: Any, invited: Sequence[Bot] = (), **fields: Any) -> Tournament:
    """A scheduled tournament and its three clock entries in beat's database schedule."""
    defaults = {
        f.name: f.get_default()
        for f in Tournament._meta.concrete_fields
        if f.name in VALIDATED_FIELDS and f.has_default()
    }
    values = {**defaults, **{k: v for k, v in fields.items() if v is not None}}
    values.setdefault("top_n", None)
    tournament_validate(**{k: values[k] for k in VALIDATED_FIELDS})
    with transaction.atomic():
        tournament = Tournament.objects.create(organiser=organiser, **values)
        tournament.invited.set(invited)
        tournament_schedule_clock(tournament)
    return tournament


VALIDATED_FIELDS = (
    # tournament_validate's parameters: the settings every way of creating one checks.
    "seats",
    "format",
    "swiss_rounds",
    "meetings",
    "ruleset",
    "variants",
    "limits",
    "registration_opens",
    "registration_closes",
    "starts_at",
    "eligibility",
    "top_n",
    "decision_ms",
    "bank_ms",
)


def tournament_schedule_clock(tournament: Tournament) -> None:
    """One-off entries in django-celery-beat's schedule: beat runs `tournament_tick` at each
    set time, and picks up entries added while it runs (no restart)."""
    import json

    from django_celery_beat.models import ClockedSchedule, PeriodicTask

    names = [f"tournament {tournament.pk} {step}" for step in ("open", "close", "start")]
    before = set(PeriodicTask.objects.filter(name__in=names).values_list("clocked_id", flat=True))
    for step, when in (
        ("open", tournament.registration_opens),
        ("close", tournament.registration_closes),
        ("start", tournament.starts_at),
    ):
        clock, _ = ClockedSchedule.objects.get_or_create(clocked_time=when)
        PeriodicTask.objects.update_or_create(
            name=f"tournament {tournament.pk} {step}",
            defaults={
                "task": "ladder.tournaments.tasks.tournament_tick",
                "clocked": clock,
                "one_off": True,
                "enabled": True,
                "args": json.dumps([tournament.pk]),
            },
        )
    # Times that moved leave clocks nobody uses (another tournament at the same moment may
    # share one: those stay).
    ClockedSchedule.objects.filter(pk__in=before, periodictask__isnull=True).delete()


def _unschedule_clock(tournament: Tournament) -> None:
    from django_celery_beat.models import PeriodicTask

    for task in PeriodicTask.objects.filter(name__startswith=f"tournament {tournament.pk} "):
        task.enabled = False
        task.save(update_fields=["enabled"])


# --- entries --------------------------------------------------------------------------------


def _playable_version(bot: Bot) -> BotVersion | None:
    return (
        BotVersion.objects.filter(bot=bot, status=BotVersion.Status.VALID)
        .order_by("-number")
        .first()
    )


def tournament_register(*, tournament: Tournament, bot: Bot, user: Any) -> Entry:
    """Enter `bot` (owned by `user`) while registration is open."""
    if bot.owner_id != user.pk:
        raise TournamentForbidden("only a bot's owner may enter it")
    if tournament.status != Tournament.Status.REGISTRATION:
        raise TournamentError(f"registration is not open (the tournament is {tournament.status})")
    if (
        tournament.eligibility == Tournament.Eligibility.INVITED
        and not tournament.invited.filter(pk=bot.pk).exists()
    ):
        raise TournamentError(f"{bot.name} is not invited to this tournament")
    if bot.disabled is not None:
        raise TournamentError(
            f"{bot.name} is off the ladder ({bot.disabled_reason}); a new version that passes "
            "validation puts it back, and then it may enter"
        )
    if _playable_version(bot) is None:
        raise TournamentError(f"{bot.name} has no valid version yet")
    entered = [e for e in _active(tournament) if e.bot_id != bot.pk]
    circles = bot_circles(bot_ids=[bot.pk, *(e.bot_id for e in entered)])
    clash = next((e for e in entered if circles[e.bot_id] == circles[bot.pk]), None)
    if clash is not None:
        whose = "yours" if clash.bot.owner_id == bot.owner_id else "of an account linked to yours"
        raise TournamentError(
            f"{bot.name} cannot enter: {clash.bot.display_name} ({whose}) is entered already, "
            "and a tournament seats one bot per owner (accounts the site links count as one)"
        )
    entry, created = Entry.objects.get_or_create(tournament=tournament, bot=bot)
    if not created and entry.withdrawn is None:
        raise TournamentError(f"{bot.name} is already entered")
    if not created:
        entry.withdrawn, entry.withdrawn_reason = None, ""
        entry.save(update_fields=["withdrawn", "withdrawn_reason"])
    return entry


def tournament_withdraw(
    *, entry: Entry, user: Any, reason: str = "withdrawn by its owner"
) -> Entry:
    """Withdraw an entry (its owner, the organiser or staff). Allowed until the tournament ends;
    see the module's docstring for what happens to its games."""
    tournament = entry.tournament
    if user.pk not in (entry.bot.owner_id, tournament.organiser_id) and not user.is_staff:
        raise TournamentForbidden("only the bot's owner or the organiser may withdraw it")
    if tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
        raise TournamentError(f"the tournament is {tournament.status}")
    if entry.withdrawn is not None:
        raise TournamentError(f"{entry.bot.name} is already withdrawn")
    entry.withdrawn, entry.withdrawn_reason = timezone.now(), reason[:200]
    entry.save(update_fields=["withdrawn", "withdrawn_reason"])
    return entry


def _active(tournament: Tournament) -> list[Entry]:
    return list(
        tournament.entries.filter(withdrawn__isnull=True).select_related("bot").order_by("id")
    )


# --- the clock ------------------------------------------------------------------------------


def tournament_tick(*, tournament_id: int, now: datetime | None = None) -> Tournament:
    """Take every clock step that is due: open registration, close it, start. Idempotent."""
    now = now or timezone.now()
    with transaction.atomic():
        t = Tournament.objects.select_for_update().get(pk=tournament_id)
        if t.status == Tournament.Status.SCHEDULED and now >= t.registration_opens:
            t.status = Tournament.Status.REGISTRATION
            t.save(update_fields=["status"])
        if t.status == Tournament.Status.REGISTRATION and now >= t.registration_closes:
            _close_registration(t)
        if t.status == Tournament.Status.CLOSED and now >= t.starts_at:
            _start(t)
    return t


def _close_registration(t: Tournament) -> None:
    if t.eligibility == Tournament.Eligibility.TOP_N:
        top = set(
            BotRating.objects.filter(ruleset=t.ruleset, games__gt=0, bot__disabled__isnull=True)
            .order_by("-mu", "bot_id")
            .values_list("bot_id", flat=True)[: t.top_n]
        )
        t.entries.filter(withdrawn__isnull=True).exclude(bot_id__in=top).update(
            withdrawn=timezone.now(), withdrawn_reason=f"not in the ladder's top {t.top_n}"
        )
    t.status = Tournament.Status.CLOSED
    t.save(update_fields=["status"])


def _start(t: Tournament) -> None:
    """Freeze each entry's version and seed, build the schedule, start round 1."""
    ratings = dict(BotRating.objects.filter(ruleset=t.ruleset).values_list("bot_id", "mu"))
    entries = _active(t)
    for entry in entries:
        version = _playable_version(entry.bot)
        if version is None:
            entry.withdrawn, entry.withdrawn_reason = timezone.now(), "no valid version at start"
        elif entry.bot.disabled is not None:
            # Taken off the ladder after it entered: it would forfeit every game.
            entry.withdrawn, entry.withdrawn_reason = timezone.now(), "off the ladder at start"
            version = None
        entry.version = version
    _withdraw_shared_circles([e for e in entries if e.withdrawn is None])
    entries.sort(key=lambda e: (-ratings.get(e.bot_id, float("-inf")), e.registered, e.pk))
    for rank, entry in enumerate(entries, start=1):
        entry.seed_rank = rank
    Entry.objects.bulk_update(entries, ["version", "seed_rank", "withdrawn", "withdrawn_reason"])
    entries = [e for e in entries if e.withdrawn is None]
    t.started = timezone.now()
    if len(entries) < t.seats:
        _cancel(t, f"cancelled at the start: {len(entries)} entrants, fewer than {t.seats} seats")
        return
    t.status = Tournament.Status.RUNNING
    if t.format == Tournament.Format.ROUND_ROBIN:
        rounds = pairing.round_robin_schedule(
            [e.pk for e in entries], t.seats, meetings=t.meetings, rng=_rng(t, 0)
        )
        t.schedule = [[list(table.seats) for table in r.tables] for r in rounds]
    t.save(update_fields=["status", "started", "schedule"])
    tournament_status_changed_on_commit(tournament_id=t.pk, status=t.status)
    _round_start(t, 1)


def _withdraw_shared_circles(entries: list[Entry]) -> None:
    """Withdraw (in place) every entry whose circle an earlier entry holds: accounts linked
    after both entered (registration refuses the rest). The first registered stays."""
    circles = bot_circles(bot_ids=[e.bot_id for e in entries])
    held: dict[int, Entry] = {}
    for entry in sorted(entries, key=lambda e: (e.registered, e.pk)):
        first = held.setdefault(circles[entry.bot_id], entry)
        if first is not entry:
            entry.withdrawn = timezone.now()
            entry.withdrawn_reason = f"one bot per owner: {first.bot.display_name} entered first"[
                :200
            ]
            entry.version = None


def _rng(t: Tournament, round_number: int) -> random.Random:
    """The pairing's random choices for one round: reproducible from the tournament's seed."""
    return random.Random(f"{t.seed}:{round_number}")


def _total_rounds(t: Tournament, entrants: int) -> int:
    if t.format == Tournament.Format.ROUND_ROBIN:
        return len(t.schedule or [])
    if t.format == Tournament.Format.SWISS:
        return t.swiss_rounds
    return pairing.elimination_rounds_needed(entrants, t.seats)


# --- rounds ---------------------------------------------------------------------------------


def _history(t: Tournament) -> list[pairing.Round]:
    return [
        pairing.Round(
            tables=tuple(pairing.Table(tuple(table.seats)) for table in r.tables.all()),
            byes=tuple(r.byes),
        )
        for r in t.rounds.prefetch_related("tables").order_by("number")
    ]


def _round_start(t: Tournament, number: int) -> Round:
    active = {e.pk: e for e in _active(t)}
    rng = _rng(t, number)
    if t.format == Tournament.Format.ROUND_ROBIN:
        tables: list[pairing.Table] = []
        byes: list[int] = []
        for seats in (t.schedule or [])[number - 1]:
            playing = tuple(s for s in seats if s in active)
            if len(playing) >= 2:
                tables.append(pairing.Table(playing))
            else:
                byes.extend(playing)
        planned = pairing.Round(tables=tuple(tables), byes=tuple(byes))
    elif t.format == Tournament.Format.SWISS:
        points = {s.entrant: s.points for s in tournament_standings(t)}
        planned = pairing.swiss_round(
            list(active), t.seats, points=points, history=_history(t), rng=rng
        )
    else:
        alive = _alive(t, active)
        seeding = sorted(alive, key=lambda pk: active[pk].seed_rank or 0)
        planned = pairing.elimination_round(alive, t.seats, seeding=seeding, rng=rng)
    round_ = Round.objects.create(tournament=t, number=number, byes=list(planned.byes))
    for index, planned_table in enumerate(planned.tables, start=1):
        table = Table.objects.create(round=round_, number=index, seats=list(planned_table.seats))
        _table_games(t, table, [active[pk] for pk in planned_table.seats], rng)
    if not planned.tables:  # everyone had a bye (cannot happen with 2+ entrants; be safe)
        _round_finish(t, round_)
    return round_


def _table_games(t: Tournament, table: Table, entries: list[Entry], rng: random.Random) -> None:
    seed = rng.getrandbits(63)
    rotations = (
        pairing.duplicate_rotations(pairing.Table(tuple(e.pk for e in entries)))
        if t.duplicate
        else [pairing.Table(tuple(e.pk for e in entries))]
    )
    by_pk = {e.pk: e for e in entries}
    for rotation, seated in enumerate(rotations):
        match = match_create(
            # Every entry gets its version when the tournament starts (null only before).
            versions=[by_pk[pk].version for pk in seated.seats],  # type: ignore[misc]
            ruleset=t.ruleset,
            variants=t.variants,
            limits=t.limits or None,
            seed=seed if t.duplicate else rng.getrandbits(63),
            shuffle=False,
            rated=t.rated,
            time_control={"decision_ms": t.decision_ms, "bank_ms": t.bank_ms},
            enqueue=True,
        )
        TableGame.objects.create(table=table, match=match, rotation=rotation)


def _alive(t: Tournament, active: Mapping[int, Entry]) -> list[int]:
    """Elimination: who is still in. Round 1: every active entrant; later: the previous round's
    advancing entrants that have not withdrawn since."""
    last = t.rounds.order_by("-number").first()
    if last is None:
        return list(active)
    advancing = (last.byes or []) + [
        pk for table in last.tables.all() for pk in (table.result or {}).get("advancing", [])
    ]
    return [pk for pk in advancing if pk in active]


# --- progress -------------------------------------------------------------------------------


def tournament_progress(*, tournament_id: int) -> Tournament:
    """Record the results of tables whose games are all settled; when the round is complete,
    finish it and start the next one (unless paused) or finish the tournament. Idempotent."""
    with transaction.atomic():
        t = Tournament.objects.select_for_update().get(pk=tournament_id)
        if t.status not in (Tournament.Status.RUNNING, Tournament.Status.PAUSED):
            return t
        round_ = t.rounds.filter(status=Round.Status.RUNNING).order_by("number").first()
        if round_ is None:
            return t
        entries = {e.bot_id: e for e in t.entries.all()}
        pending = False
        for table in round_.tables.filter(result__isnull=True):
            games = list(
                table.games.select_related("match").prefetch_related("match__seats__bot_version")
            )
            if any(
                g.match.status not in (Match.Status.FINISHED, Match.Status.FAILED)
                or (g.match.status == Match.Status.FAILED and not _failed_for_good(g.match))
                for g in games
            ):
                pending = True
                continue
            table.result = _table_result(t, table, games, entries)
            table.save(update_fields=["result"])
        if not pending and t.status == Tournament.Status.RUNNING:
            _round_finish(t, round_)
    return t


def _failed_for_good(match: Match) -> bool:
    return match.attempts >= settings.GRASS_MATCH_MAX_ATTEMPTS


def _table_result(
    t: Tournament, table: Table, games: list[TableGame], entries: Mapping[int, Entry]
) -> dict[str, Any]:
    rotations: list[dict[int, int]] = []
    for game in games:
        if game.match.status == Match.Status.FINISHED:
            rotations.append(
                {entries[s.version.bot_id].pk: s.total or 0 for s in game.match.seats.all()}
            )
        else:  # failed for good: a draw with no money (see the module docstring)
            rotations.append({pk: 0 for pk in table.seats})
    result = standings.duplicate_result(pairing.Table(tuple(table.seats)), rotations)
    if len(games) == 1 and games[0].match.status == Match.Status.FINISHED:
        # One game: the places are the engine's (a forfeit ranks last even with more money).
        result = standings.TableResult(
            table=result.table,
            places={entries[s.version.bot_id].pk: s.place or 1 for s in games[0].match.seats.all()},
            totals=result.totals,
        )
    stored: dict[str, Any] = {
        "places": {str(k): v for k, v in result.places.items()},
        "totals": {str(k): v for k, v in result.totals.items()},
    }
    if t.format == Tournament.Format.ELIMINATION:
        withdrawn = {e.pk for e in entries.values() if e.withdrawn is not None}
        seeds = {e.pk: e.seed_rank or 0 for e in entries.values()}
        contenders = sorted(
            (pk for pk in table.seats if pk not in withdrawn),
            key=lambda pk: (result.places[pk], seeds[pk]),
        )
        stored["advancing"] = contenders[:1]
    return stored


def _round_finish(t: Tournament, round_: Round) -> None:
    round_.status, round_.finished = Round.Status.FINISHED, timezone.now()
    round_.save(update_fields=["status", "finished"])
    active = {e.pk: e for e in _active(t)}
    if t.format == Tournament.Format.ELIMINATION:
        done = len(_alive(t, active)) <= 1
    else:
        # Withdrawals may leave too few for a full Swiss table: the event ends there.
        done = round_.number >= _total_rounds(t, len(active)) or len(active) < max(2, t.seats)
    if done:
        t.status, t.finished = Tournament.Status.FINISHED, timezone.now()
        t.save(update_fields=["status", "finished"])
        tournament_status_changed_on_commit(tournament_id=t.pk, status=t.status)
        _unschedule_clock(t)
    else:
        _round_start(t, round_.number + 1)


def _progress_on_commit(tournament_id: int) -> None:
    # Imported here: tasks import services, not the other way round at import time.
    from ladder.tournaments.tasks import progress_tournament

    # With the broker down, the step waits (not a 500) for beat's sweep of tournaments.
    send_on_commit(
        progress_tournament, tournament_id, recovery="beat's tournament sweep runs every 30 s"
    )


# --- the organiser's controls ---------------------------------------------------------------


def _may_control(t: Tournament, user: Any) -> None:
    if user.pk != t.organiser_id and not user.is_staff:
        raise TournamentForbidden("only the organiser (or staff) may do this")


def tournament_pause(*, tournament: Tournament, user: Any) -> Tournament:
    with transaction.atomic():
        t = Tournament.objects.select_for_update().get(pk=tournament.pk)
        _may_control(t, user)
        if t.status != Tournament.Status.RUNNING:
            raise TournamentError(f"only a running tournament can be paused (it is {t.status})")
        t.status, t.status_reason = Tournament.Status.PAUSED, f"paused by {user.get_username()}"
        t.save(update_fields=["status", "status_reason"])
    return t


def tournament_resume(*, tournament: Tournament, user: Any) -> Tournament:
    with transaction.atomic():
        t = Tournament.objects.select_for_update().get(pk=tournament.pk)
        _may_control(t, user)
        if t.status != Tournament.Status.PAUSED:
            raise TournamentError(f"only a paused tournament can be resumed (it is {t.status})")
        t.status, t.status_reason = Tournament.Status.RUNNING, f"resumed by {user.get_username()}"
        t.save(update_fields=["status", "status_reason"])
        # A round whose tables all finished while paused is closed, and the next one started.
        _progress_on_commit(t.pk)
    return t


def tournament_cancel(*, tournament: Tournament, user: Any, reason: str = "") -> Tournament:
    with transaction.atomic():
        t = Tournament.objects.select_for_update().get(pk=tournament.pk)
        _may_control(t, user)
        if t.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
            raise TournamentError(f"the tournament is already {t.status}")
        _cancel(t, reason or f"cancelled by {user.get_username()}")
    return t


def _cancel(t: Tournament, reason: str) -> None:
    """Cancel: queued games are dropped (marked failed, so no worker plays them); games
    already running finish but count for nothing."""
    Match.objects.filter(
        tournament_game__table__round__tournament=t, status=Match.Status.QUEUED
    ).update(
        status=Match.Status.FAILED,
        failure_reason="tournament cancelled",
        attempts=settings.GRASS_MATCH_MAX_ATTEMPTS,  # no retries: the sweep leaves it alone
        finished=timezone.now(),
    )
    t.status, t.status_reason, t.finished = Tournament.Status.CANCELLED, reason, timezone.now()
    t.save(update_fields=["status", "status_reason", "finished"])
    _unschedule_clock(t)


# --- who may do what -------------------------------------------------------------------------


CREATE_PERMISSION = "tournaments.add_tournament"
"""Who may organise: staff, and users given this permission in the admin."""

TOURNAMENT_ACTIONS: dict[str, Callable[..., Tournament]] = {
    "pause": tournament_pause,
    "resume": tournament_resume,
    "cancel": tournament_cancel,
}
"""What organisers do to a running tournament, by name (the API's and the page's
`pause`, `resume`, `cancel`)."""
