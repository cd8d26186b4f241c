"""Tournaments through their services: the clock, each format to the finish, duplicate tables,
byes, withdrawals, new versions mid-event, pause/resume/cancel, failed games, bad input.

Games are settled by `settle_games` (random results written as a worker would) so that these
tests check the tournament's logic; tests/e2e plays real games with real workers.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta
from itertools import combinations
from typing import Any

import pytest
from django.utils import timezone

from ladder.matches.models import Match
from ladder.tournaments.models import Entry, Round, Tournament
from ladder.tournaments.services import (
    TournamentError,
    tournament_cancel,
    tournament_pause,
    tournament_progress,
    tournament_register,
    tournament_resume,
    tournament_tick,
    tournament_withdraw,
)
from tests.ladder.tournaments.conftest import settle_games

pytestmark = pytest.mark.django_db


def _start(t: Tournament) -> Tournament:
    tournament_tick(tournament_id=t.pk, now=t.starts_at + timedelta(seconds=1))
    t.refresh_from_db()
    return t


def _enter(t: Tournament, bots: list[Any], owner: Any) -> list[Entry]:
    return [tournament_register(tournament=t, bot=bot, user=bot.owner) for bot in bots]


def _run_to_end(t: Tournament, rng: random.Random, limit: int = 50) -> Tournament:
    for _ in range(limit):
        settle_games(t, rng)
        tournament_progress(tournament_id=t.pk)
        t.refresh_from_db()
        if t.status != Tournament.Status.RUNNING:
            return t
    raise AssertionError("the tournament did not finish")


def _tables(t: Tournament) -> list[list[int]]:
    return [table.seats for r in t.rounds.all() for table in r.tables.all()]


def test_the_clock_opens_closes_and_starts_and_is_in_beats_database_schedule(
    make_tournament: Any, entrants: Any, owner: Any
) -> None:
    from django_celery_beat.models import PeriodicTask

    t = make_tournament(format="swiss", seats=3, swiss_rounds=2)
    assert t.status == Tournament.Status.REGISTRATION
    clock = PeriodicTask.objects.filter(name__startswith=f"tournament {t.pk} ")
    assert sorted(p.clocked.clocked_time for p in clock) == sorted(
        [t.registration_opens, t.registration_closes, t.starts_at]
    )
    assert all(p.one_off and p.task == "ladder.tournaments.tasks.tournament_tick" for p in clock)

    _enter(t, entrants(6), owner)
    tournament_tick(tournament_id=t.pk, now=t.registration_closes)
    t.refresh_from_db()
    assert t.status == Tournament.Status.CLOSED
    t = _start(t)
    assert t.status == Tournament.Status.RUNNING
    assert t.rounds.count() == 1
    assert Match.objects.filter(status=Match.Status.QUEUED).count() == 2  # two tables of three


@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6])
def test_a_swiss_tournament_runs_to_the_finish_with_byes_and_standings(
    make_tournament: Any, entrants: Any, owner: Any, seats: int
) -> None:
    t = make_tournament(format="swiss", seats=seats, swiss_rounds=3)
    entries = _enter(t, entrants(seats * 2 + 1), owner)
    t = _run_to_end(_start(t), random.Random(seats))

    assert t.status == Tournament.Status.FINISHED
    assert t.rounds.count() == 3
    everyone = {e.pk for e in entries}
    for r in t.rounds.all():
        seated = [pk for table in r.tables.all() for pk in table.seats]
        assert len(seated) == len(set(seated))
        assert set(seated) | set(r.byes) == everyone and not set(seated) & set(r.byes)
        for table in r.tables.all():
            assert 2 <= len(table.seats) <= seats
            assert table.result is not None
    from ladder.tournaments.selectors import tournament_detail

    standings = tournament_detail(tournament=t).standings
    assert [row.rank for row in standings] == list(range(1, len(entries) + 1))
    assert [row.points for row in standings] == sorted((r.points for r in standings), reverse=True)
    assert not t.rounds.filter(status=Round.Status.RUNNING).exists()


@pytest.mark.parametrize(("seats", "count"), [(2, 5), (3, 7), (4, 9), (5, 11), (6, 8)])
def test_a_round_robin_seats_every_pair_together_and_duplicate_rotates_the_same_cards(
    make_tournament: Any, entrants: Any, owner: Any, seats: int, count: int
) -> None:
    t = make_tournament(format="round_robin", seats=seats, duplicate=True, ruleset="classic")
    entries = _enter(t, entrants(count), owner)
    t = _run_to_end(_start(t), random.Random(1))

    assert t.status == Tournament.Status.FINISHED
    met = Counter(pair for seats in _tables(t) for pair in combinations(sorted(seats), 2))
    assert set(met) == set(combinations(sorted(e.pk for e in entries), 2))
    for r in t.rounds.all():
        for table in r.tables.all():
            games = list(table.games.select_related("match").order_by("rotation"))
            assert len(games) == len(table.seats)  # one game per seat rotation
            assert len({g.match.seed for g in games}) == 1  # the same shuffle each time
            orders = [[s.bot_version.bot_id for s in g.match.seats.order_by("seat")] for g in games]
            for rotation, order in enumerate(orders):
                assert order == orders[0][rotation:] + orders[0][:rotation]
            assert all(g.match.ruleset == "classic" and not g.match.rated for g in games)


@pytest.mark.parametrize(
    ("seats", "count", "seed"),
    [(2, 7, 2), (3, 4, 2), (3, 4, 3), (3, 10, 2), (4, 9, 2), (5, 12, 2), (6, 13, 2)],
)
def test_single_elimination_ends_with_one_winner(
    make_tournament: Any, entrants: Any, owner: Any, seats: int, count: int, seed: int
) -> None:
    from ladder.tournaments.selectors import tournament_detail

    t = make_tournament(format="elimination", seats=seats)
    _enter(t, entrants(count), owner)
    t = _run_to_end(_start(t), random.Random(seed))

    assert t.status == Tournament.Status.FINISHED
    last = t.rounds.order_by("-number").first()
    advancing = last.byes + [pk for tb in last.tables.all() for pk in tb.result["advancing"]]
    assert len(advancing) == 1
    # The champion heads the standings whatever the points say (a finalist may have more).
    standings = tournament_detail(tournament=t).standings
    assert standings[0].entry.pk == advancing[0]
    assert standings[0].advanced == t.rounds.count()
    assert [row.advanced for row in standings] == sorted(
        (row.advanced for row in standings), reverse=True
    )
    # The standings chart draws the same top, in the same order.
    from ladder.charts.selectors import standings_progress

    chart = standings_progress(tournament=t, limit=len(standings))
    assert [line.entry_id for line in chart.lines] == [row.entry.pk for row in standings]


def test_tournament_games_use_its_time_control_and_feed_elo_only_if_rated(
    make_tournament: Any, entrants: Any, owner: Any
) -> None:
    t = make_tournament(format="swiss", seats=2, swiss_rounds=1, rated=True, decision_ms=300)
    _enter(t, entrants(2), owner)
    t = _start(t)
    match = Match.objects.get()
    assert match.rated and match.time_control == {"decision_ms": 300, "bank_ms": 30_000}


def test_the_version_frozen_at_the_start_plays_even_after_a_new_upload(
    make_tournament: Any, entrants: Any, owner: Any, example_file: Any
) -> None:
    from ladder.bots.models import BotVersion
    from ladder.bots.services import bot_version_upload

    t = make_tournament(format="swiss", seats=2, swiss_rounds=2)
    bots = entrants(2)
    _enter(t, bots, owner)
    t = _start(t)
    frozen = {e.bot_id: e.version_id for e in t.entries.all()}
    newer = bot_version_upload(bot=bots[0], filename="bot.py", data=example_file("greedy"))
    BotVersion.objects.filter(pk=newer.pk).update(status=BotVersion.Status.VALID)

    settle_games(t, random.Random(3))
    tournament_progress(tournament_id=t.pk)  # round 2 starts
    round2 = Match.objects.filter(tournament_game__table__round__number=2).get()
    assert {s.bot_version.bot_id: s.bot_version_id for s in round2.seats.all()} == frozen


def test_a_bot_withdrawn_mid_event_is_not_paired_again(
    make_tournament: Any, entrants: Any, owner: Any
) -> None:
    t = make_tournament(format="swiss", seats=2, swiss_rounds=3)
    entries = _enter(t, entrants(4), owner)
    t = _start(t)
    tournament_withdraw(entry=entries[0], user=owner)
    t = _run_to_end(t, random.Random(4))

    assert t.status == Tournament.Status.FINISHED
    later = [
        pk
        for r in t.rounds.filter(number__gt=1)
        for pk in [*r.byes, *(seat for tb in r.tables.all() for seat in tb.seats)]
    ]
    assert entries[0].pk not in later
    with pytest.raises(TournamentError, match="finished"):
        tournament_withdraw(entry=Entry.objects.get(pk=entries[1].pk), user=entries[1].bot.owner)


def test_a_bot_withdrawn_mid_elimination_cannot_advance_and_one_champion_remains(
    make_tournament: Any, entrants: Any, owner: Any
) -> None:
    from ladder.tournaments.selectors import tournament_detail

    t = make_tournament(format="elimination", seats=3)
    entries = _enter(t, entrants(9), owner)
    t = _start(t)
    round1 = t.rounds.get()
    gone = round1.tables.order_by("number").first().seats[0]
    gone_entry = Entry.objects.select_related("bot__owner").get(pk=gone)
    tournament_withdraw(entry=gone_entry, user=gone_entry.bot.owner)
    # It wins its table (as far as money goes); it still may not advance.
    table = round1.tables.order_by("number").first()
    for match in Match.objects.filter(tournament_game__table=table):
        for seat in match.seats.all():
            won = Entry.objects.get(bot_id=seat.bot_version.bot_id, tournament=t).pk == gone
            seat.total, seat.place = (50_000, 1) if won else (0, 2)
            seat.save(update_fields=["total", "place"])
        match.status = Match.Status.FINISHED
        match.save(update_fields=["status"])
    t = _run_to_end(t, random.Random(8))

    assert t.status == Tournament.Status.FINISHED
    table.refresh_from_db()
    assert table.result["places"][str(gone)] == 1
    assert gone not in table.result["advancing"] and len(table.result["advancing"]) == 1
    later = [pk for r in t.rounds.filter(number__gt=1) for tb in r.tables.all() for pk in tb.seats]
    assert gone not in later and later
    last = t.rounds.order_by("-number").first()
    champion = [pk for tb in last.tables.all() for pk in tb.result["advancing"]] + last.byes
    assert len(champion) == 1 and champion[0] in {e.pk for e in entries} - {gone}
    standings = tournament_detail(tournament=t).standings
    assert standings[0].entry.pk == champion[0]
    assert next(row for row in standings if row.entry.pk == gone).advanced == 0


def test_a_bot_withdrawn_mid_round_robin_leaves_its_seats_empty(
    make_tournament: Any, entrants: Any, owner: Any
) -> None:
    t = make_tournament(format="round_robin", seats=4)
    entries = _enter(t, entrants(9), owner)
    t = _start(t)
    gone = entries[0].pk
    planned = len(t.schedule)
    settle_games(t, random.Random(9))
    tournament_withdraw(entry=entries[0], user=owner)
    tournament_progress(tournament_id=t.pk)  # round 2 starts without it
    t = _run_to_end(t, random.Random(9))

    assert t.status == Tournament.Status.FINISHED
    assert t.rounds.count() == planned  # the schedule is kept, less the withdrawn seats
    rounds = list(t.rounds.order_by("number"))
    assert gone in [pk for tb in rounds[0].tables.all() for pk in tb.seats]
    for r, scheduled in zip(rounds[1:], t.schedule[1:], strict=True):
        seated = [pk for tb in r.tables.all() for pk in tb.seats]
        assert gone not in seated and gone not in r.byes
        assert sorted(seated + r.byes) == sorted(pk for tb in scheduled for pk in tb if pk != gone)
        assert all(2 <= len(tb.seats) <= 4 and tb.result for tb in r.tables.all())
    # Its round-1 table still counts, for it and for everyone at it.
    assert any(str(gone) in tb.result["places"] for tb in rounds[0].tables.all())


def test_pause_holds_the_next_round_and_resume_starts_it(
    make_tournament: Any,
    entrants: Any,
    owner: Any,
    organiser: Any,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ladder.tournaments import tasks

    t = make_tournament(format="swiss", seats=2, swiss_rounds=2)
    _enter(t, entrants(4), owner)
    t = _start(t)
    with pytest.raises(TournamentError, match="only the organiser"):
        tournament_pause(tournament=t, user=owner)
    tournament_pause(tournament=t, user=organiser)
    settle_games(t, random.Random(5))
    tournament_progress(tournament_id=t.pk)
    assert t.rounds.count() == 1  # paused: the tables are scored, no new round
    assert all(tb.result for tb in t.rounds.get().tables.all())

    sent: list[int] = []
    monkeypatch.setattr(tasks.progress_tournament, "delay", sent.append)
    with django_capture_on_commit_callbacks(execute=True):
        tournament_resume(tournament=t, user=organiser)
    assert sent == [t.pk]
    tournament_progress(tournament_id=t.pk)
    assert t.rounds.count() == 2


def test_cancel_drops_queued_games_and_stops_the_clock(
    make_tournament: Any, entrants: Any, owner: Any, organiser: Any
) -> None:
    from django_celery_beat.models import PeriodicTask

    t = make_tournament(format="swiss", seats=2, swiss_rounds=2)
    _enter(t, entrants(4), owner)
    t = _start(t)
    tournament_cancel(tournament=t, user=organiser)
    t.refresh_from_db()
    assert t.status == Tournament.Status.CANCELLED
    assert set(Match.objects.values_list("status", "failure_reason")) == {
        ("failed", "tournament cancelled")
    }
    assert not PeriodicTask.objects.filter(name__startswith=f"tournament {t.pk} ", enabled=True)
    with pytest.raises(TournamentError, match="already cancelled"):
        tournament_cancel(tournament=t, user=organiser)


def test_a_game_that_failed_for_good_is_a_draw_with_no_money(
    make_tournament: Any, entrants: Any, owner: Any
) -> None:
    t = make_tournament(format="swiss", seats=3, swiss_rounds=1)
    _enter(t, entrants(3), owner)
    t = _start(t)
    settle_games(t, random.Random(6), fail=1)
    t = _run_to_end(t, random.Random(6))

    table = t.rounds.get().tables.get()
    assert set(table.result["places"].values()) == {1}
    assert set(table.result["totals"].values()) == {0}
    assert t.status == Tournament.Status.FINISHED


def test_a_failed_game_with_attempts_left_holds_its_table_then_is_a_draw_when_they_run_out(
    make_tournament: Any, entrants: Any, owner: Any, settings: Any
) -> None:
    settings.GRASS_MATCH_MAX_ATTEMPTS = 3
    t = make_tournament(format="swiss", seats=2, swiss_rounds=2)
    _enter(t, entrants(4), owner)
    t = _start(t)
    failing = Match.objects.order_by("id").first()
    settle_games(t, random.Random(7))  # every game finishes...
    Match.objects.filter(pk=failing.pk).update(status=Match.Status.FAILED, attempts=2)
    tournament_progress(tournament_id=t.pk)  # ...but one failed and will be retried

    round1 = t.rounds.get()
    waiting = round1.tables.get(games__match=failing)
    assert waiting.result is None
    assert round1.tables.exclude(pk=waiting.pk).get().result is not None
    assert round1.status == Round.Status.RUNNING and t.rounds.count() == 1

    Match.objects.filter(pk=failing.pk).update(attempts=3)  # the last attempt failed too
    tournament_progress(tournament_id=t.pk)
    waiting.refresh_from_db()
    assert set(waiting.result["places"].values()) == {1}
    assert set(waiting.result["totals"].values()) == {0}
    assert t.rounds.count() == 2
    assert t.rounds.get(number=1).status == Round.Status.FINISHED


def test_a_settled_match_moves_its_tournament_on_through_the_signal(
    make_tournament: Any,
    entrants: Any,
    owner: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from ladder.matches import services as match_services
    from ladder.matches.services import match_create, match_run
    from ladder.tournaments import tasks

    settings.GRASS_MATCH_MAX_ATTEMPTS = 1
    t = make_tournament(format="swiss", seats=2, swiss_rounds=2)
    bots = entrants(3)
    _enter(t, bots[:2], owner)
    t = _start(t)
    game = Match.objects.get()
    sent: list[int] = []

    def progress_now(tournament_id: int) -> None:
        sent.append(tournament_id)
        tasks.progress_tournament(tournament_id)  # what the worker would run

    def broken_runner(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the runner broke")

    monkeypatch.setattr(tasks.progress_tournament, "delay", progress_now)
    monkeypatch.setattr(match_services, "play_match", broken_runner)

    # A ladder game (no tournament) settles: nothing is sent.
    ladder_game = match_create(versions=[b.versions.get() for b in bots[1:]], rated=False)
    with django_capture_on_commit_callbacks(execute=True):
        match_run(match_id=ladder_game.pk)
    assert sent == []

    # The tournament's only game fails for good in the real match service: the signal it sends
    # after commit reaches the tournament, which scores the draw and starts round 2.
    with django_capture_on_commit_callbacks(execute=True):
        match_run(match_id=game.pk)
    assert Match.objects.get(pk=game.pk).status == Match.Status.FAILED
    assert sent == [t.pk]
    assert t.rounds.get(number=1).status == Round.Status.FINISHED
    assert t.rounds.count() == 2


def test_fewer_entrants_than_seats_cancels_at_the_start_with_the_reason(
    make_tournament: Any, entrants: Any, owner: Any
) -> None:
    t = make_tournament(format="swiss", seats=4)
    _enter(t, entrants(3), owner)
    t = _start(t)
    assert t.status == Tournament.Status.CANCELLED
    assert "3 entrants, fewer than 4 seats" in t.status_reason


def test_top_n_keeps_the_ladders_best_at_the_close(
    make_tournament: Any, entrants: Any, owner: Any
) -> None:
    from ladder.ratings.models import BotRating

    bots = entrants(4)
    for mu, bot in zip([1600, 1500, 1400, 1700], bots, strict=True):
        BotRating.objects.update_or_create(
            bot=bot, ruleset="modern", defaults={"mu": mu, "games": 5}
        )
    t = make_tournament(format="swiss", seats=2, eligibility="top_n", top_n=2)
    _enter(t, bots, owner)
    t = _start(t)
    playing = set(t.entries.filter(withdrawn__isnull=True).values_list("bot_id", flat=True))
    assert playing == {bots[0].pk, bots[3].pk}
    assert t.entries.filter(withdrawn_reason="not in the ladder's top 2").count() == 2


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"seats": 7}, "seats per table must be 2 to 6"),
        ({"seats": 1}, "seats per table must be 2 to 6"),
        ({"format": "knockout"}, "unknown format 'knockout'"),
        ({"swiss_rounds": 0}, "needs 1 to 50 rounds"),
        ({"ruleset": "1990"}, "unknown ruleset '1990'"),
        ({"eligibility": "top_n", "top_n": 2, "seats": 4}, "top N needs N of at least"),
        ({"decision_ms": 10}, "time per decision must be 50 to 60000 ms"),
        ({"variants": {"nonsense": True}}, "bad variants"),
        ({"limits": {"bogus": 1}}, r"bad limits: only max_hands, max_deals_per_turn .*'bogus'"),
        ({"limits": {"max_hands": 0}}, "bad limits: max_hands must be a positive integer, not 0"),
        ({"limits": {"max_hands": True}}, "bad limits: max_hands must be a positive integer"),
        ({"limits": {"max_deals_per_turn": "5"}}, "max_deals_per_turn must be a positive"),
        ({"limits": [20]}, "bad limits: expected an object"),
    ],
)
def test_bad_settings_are_refused_by_name(
    make_tournament: Any, fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(TournamentError, match=message):
        make_tournament(**fields)
    assert not Tournament.objects.exists()


def test_good_limits_are_kept_and_reach_every_game(
    make_tournament: Any, entrants: Any, owner: Any
) -> None:
    t = make_tournament(format="swiss", seats=2, swiss_rounds=1, limits={"max_hands": 3})
    _enter(t, entrants(2), owner)
    _start(t)
    assert Match.objects.get().limits == {"max_hands": 3}


def test_starting_before_registration_closes_is_refused(make_tournament: Any) -> None:
    now = timezone.now()
    with pytest.raises(TournamentError, match="cannot start before registration closes"):
        make_tournament(registration_closes=now + timedelta(hours=2), starts_at=now)
    with pytest.raises(TournamentError, match="must open before it closes"):
        make_tournament(registration_opens=now, registration_closes=now - timedelta(hours=1))


def test_registration_checks_owner_window_invitation_and_validity(
    make_tournament: Any, entrants: Any, owner: Any, stranger: Any, organiser: Any
) -> None:
    from ladder.bots.services import bot_create

    bots = entrants(2)
    t = make_tournament(format="swiss", seats=2, eligibility="invited")
    t.invited.set([bots[0]])
    with pytest.raises(TournamentError, match="only a bot's owner"):
        tournament_register(tournament=t, bot=bots[0], user=stranger)
    with pytest.raises(TournamentError, match="bot1 is not invited"):
        tournament_register(tournament=t, bot=bots[1], user=bots[1].owner)
    tournament_register(tournament=t, bot=bots[0], user=bots[0].owner)
    with pytest.raises(TournamentError, match="already entered"):
        tournament_register(tournament=t, bot=bots[0], user=bots[0].owner)
    empty = bot_create(owner=owner, name="empty")
    t.invited.add(empty)
    with pytest.raises(TournamentError, match="empty has no valid version"):
        tournament_register(tournament=t, bot=empty, user=empty.owner)
    tournament_tick(tournament_id=t.pk, now=t.registration_closes)
    t.refresh_from_db()
    with pytest.raises(TournamentError, match="registration is not open"):
        tournament_register(tournament=t, bot=bots[1], user=bots[1].owner)
