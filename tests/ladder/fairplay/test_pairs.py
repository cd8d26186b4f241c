"""Fair play on the ladder: rated matches' flows into each pair's test, flags for staff in the
admin and `manage.py collusion`, and the Void of a pair's shared matches."""

from __future__ import annotations

import gzip
from io import StringIO
from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.core.management import call_command

from bench import collusion
from bench.colluders.pair import Feeder, Partner
from engine.log import dumps
from ladder.bots.models import Bot
from ladder.bots.selectors import bot_circles
from ladder.fairplay.models import CircleMatch, CircleWatch, PairMatch, PairWatch
from ladder.fairplay.services import match_flows_record, pair_void
from ladder.matches.models import Match

pytestmark = pytest.mark.django_db

GAMES = 12


@pytest.fixture
def four(valid_version: Any, django_user_model: Any) -> list[Any]:
    """Versions of four bots of four accounts the site does not link (a rated table seats one
    bot per circle): the feeder's (ann's), the partner's (cy's), two honest greedy ones."""
    dee, eve, cy = (
        django_user_model.objects.create_user(username=name, password="pw")
        for name in ("dee", "eve", "cy")
    )
    return [
        valid_version("feeder", "greedy"),
        valid_version("partner", "greedy", by=cy),
        valid_version("honest1", "greedy", by=dee),
        valid_version("honest2", "greedy", by=eve),
    ]


def record(finished_match: Any, versions: list[Any], seed: int, colluding: bool) -> Match:
    """A rated match of the four bots played in this process (the colluding pair's code in
    the feeder's and partner's seats when `colluding`), recorded with its log."""
    order = [(seed + k) % 4 for k in range(4)]  # seats move round the table
    table = [versions[i] for i in order]
    bots = [
        (Feeder() if i == 0 else Partner() if i == 1 else collusion.make("greedy"))
        if colluding
        else collusion.make("greedy")
        for i in order
    ]
    events, ranks = collusion.play_bots(bots, seed)
    match: Match = finished_match(table, ranks)
    match.log.save(f"{match.pk}.jsonl.gz", ContentFile(gzip.compress(dumps(events).encode())))
    return match


@pytest.fixture
def shared(finished_match: Any, four: list[Any], settings: Any) -> list[Match]:
    settings.GRASS_FAIRPLAY_PAIRS = 10
    matches = [record(finished_match, four, seed, colluding=True) for seed in range(GAMES)]
    for match in matches:
        match_flows_record(match_id=match.pk)
    return matches


def watch_of(a: Any, b: Any) -> PairWatch:
    low, high = sorted([a.bot_id, b.bot_id])
    return PairWatch.objects.get(low_id=low, high_id=high)


def test_the_colluding_pair_is_flagged_and_the_honest_pairs_are_not(
    shared: list[Match], four: list[Any]
) -> None:
    feeder, partner, honest1, honest2 = four
    assert PairWatch.objects.count() == 6  # every pair of the four bots
    pair = watch_of(feeder, partner)
    assert pair.matches == GAMES
    assert pair.flagged is not None and pair.flagged_at is not None
    assert pair.flagged_at <= GAMES
    assert pair.hits >= GAMES // 2
    low_is_feeder = pair.low_id == feeder.bot_id
    given = pair.flows["low>high" if low_is_feeder else "high>low"]
    assert given["swap_value"] > 0 and given["granted"] > 0
    assert watch_of(honest1, honest2).flagged is None
    assert watch_of(feeder, honest1).flagged is None
    assert PairMatch.objects.filter(watch=pair).count() == GAMES
    # Each bot its own account here: the pairs of circles see what the pairs of bots see.
    assert CircleWatch.objects.count() == 6
    assert list(CircleWatch.objects.filter(flagged__isnull=False).values_list("low", "high")) == [
        tuple(sorted([feeder.bot.owner_id, partner.bot.owner_id]))
    ]
    assert CircleMatch.objects.count() == 6 * GAMES


def test_recording_a_match_twice_adds_it_once(shared: list[Match], four: list[Any]) -> None:
    before = watch_of(four[0], four[1]).matches
    circles = CircleWatch.objects.order_by("pk").values_list("matches", flat=True)
    counted = list(circles)
    again = match_flows_record(match_id=shared[0].pk)
    assert again.pairs == 0 and again.circles == 0
    assert list(circles) == counted
    assert watch_of(four[0], four[1]).matches == before


def test_unrated_matches_are_not_read(finished_match: Any, four: list[Any]) -> None:
    match = record(finished_match, four, 0, colluding=True)
    Match.objects.filter(pk=match.pk).update(rated=False)
    assert match_flows_record(match_id=match.pk).pairs == 0
    assert not PairWatch.objects.exists()


def test_the_command_lists_the_flag_with_its_evidence(shared: list[Match], four: list[Any]) -> None:
    out = StringIO()
    call_command("collusion", "--matches", "3", stdout=out)
    text = out.getvalue()
    assert "ann/feeder" in text and "cy/partner" in text
    assert "swap_value" in text and "match " in text
    assert "honest1 & " not in text and "& eve/honest2" not in text
    # Which way it went: the feeder's help and sparing, the partner's proposals.
    feeder_way = next(line for line in text.splitlines() if "ann/feeder -> cy/partner:" in line)
    partner_way = next(line for line in text.splitlines() if "cy/partner -> ann/feeder:" in line)
    assert "hits made: 0 by its help and sparing" not in feeder_way
    assert "hits made: 0 by its help and sparing" in partner_way
    assert ", 0 by its proposals" not in partner_way
    circles = [line for line in text.splitlines() if line.startswith("circles ")]
    assert len(circles) == 1 and circles[0].startswith("circles ann & cy (flagged")


def test_the_admin_voids_the_pairs_matches_and_disables_its_bots(
    shared: list[Match],
    four: list[Any],
    admin_client: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from ladder.ratings import tasks

    sent: list[str] = []
    monkeypatch.setattr(tasks.rebuild_ratings, "delay", sent.append)
    pair = watch_of(four[0], four[1])
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/fairplay/pairwatch/",
            {"action": "void", "_selected_action": [pair.pk], "confirm": "yes"},
            follow=True,
        )
    assert response.status_code == 200
    assert f"Voided {GAMES} shared rated matches" in response.content.decode()
    assert sent == ["modern"]
    assert not Match.objects.filter(pk__in=[m.pk for m in shared], rated=True).exists()
    disabled = Bot.objects.filter(disabled__isnull=False)
    assert set(disabled.values_list("pk", flat=True)) == {four[0].bot_id, four[1].bot_id}
    pair.refresh_from_db()
    assert pair.voided is not None
    # Disabled is not for good (a new valid version puts a bot back): the owners are linked,
    # so whatever they upload next never shares a rated table again.
    circles = bot_circles(bot_ids=[four[0].bot_id, four[1].bot_id])
    assert circles[four[0].bot_id] == circles[four[1].bot_id]
    page = admin_client.get(f"/admin/fairplay/pairwatch/{pair.pk}/change/")
    assert page.status_code == 200 and b"expected" in page.content


def test_a_void_with_no_rated_match_left_changes_no_rating(
    shared: list[Match], four: list[Any]
) -> None:
    Match.objects.update(rated=False)
    assert pair_void(watch_id=watch_of(four[0], four[1]).pk) == []


def test_recording_a_rated_match_sends_its_flows_task_and_the_stored_log_is_read(
    valid_version: Any,
    owners: Any,
    sandbox_ready: None,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from ladder.fairplay import tasks
    from ladder.matches.services import match_create, match_run
    from ladder.matches.tasks import run_match

    monkeypatch.setattr(run_match, "delay", lambda match_id: None)
    sent: list[int] = []
    monkeypatch.setattr(tasks.match_flows, "delay", sent.append)
    versions = [valid_version("a", "greedy"), valid_version("b", "random", by=owners(1)[0])]
    match = match_create(versions=versions, limits={"max_hands": 1})
    with django_capture_on_commit_callbacks(execute=True):
        match_run(match_id=match.pk)
    assert sent == [match.pk]
    assert match_flows_record(match_id=match.pk).pairs == 1
    assert PairWatch.objects.get().matches == 1
