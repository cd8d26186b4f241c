"""Challenges as services: what may be asked for, the account's quota, the share of the workers'
room they get (never crowding rated play out, accounts served in turn), and that a challenge's
match never moves a rating."""

from __future__ import annotations

import gzip
import json
from datetime import timedelta
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from ladder.bots.models import Bot, BotVersion
from ladder.challenges.models import Challenge
from ladder.challenges.services import (
    ChallengeLimited,
    challenge_cancel,
    challenge_create,
    challenge_dispatch,
    challenge_rematch,
    challenge_slots,
)
from ladder.challenges.specs import Opponent, Spec, spec_readings
from ladder.matches.lanes import Lane
from ladder.matches.models import Match, MatchSeat
from ladder.matches.services import match_run
from ladder.matches.tasks import run_match
from ladder.matchmaking.services import matchmaker_fill
from ladder.ratings.models import BotRating, RatingChange
from tests.ladder.challenges.conftest import second_version

pytestmark = pytest.mark.django_db


def refused(field: str, call: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        call()
    messages = caught.value.message_dict
    assert list(messages) == [field], messages
    return " ".join(messages[field])


def test_a_challenge_waits_with_its_seats_in_the_order_asked(
    owner: Any, mine: BotVersion, examples: dict[str, BotVersion]
) -> None:
    greedy, random_bot = examples["greedy"], examples["random"]
    challenge = challenge_create(
        requester=owner,
        bot_id=mine.bot_id,
        opponents=[Opponent(greedy.bot_id), Opponent(random_bot.bot_id)],
        ruleset="classic",
        seating=Challenge.Seating.ORDERED,
        max_hands=2,
    )
    assert challenge.status == Challenge.Status.WAITING and challenge.match is None
    seats = [s.version for s in challenge.seats.order_by("position")]
    assert seats == [mine, greedy, random_bot]
    assert (challenge.ruleset, challenge.max_hands) == ("classic", 2)


def test_what_may_not_be_asked_for_is_refused_by_field(
    owner: Any,
    stranger: Any,
    mine: BotVersion,
    examples: dict[str, BotVersion],
    owned_by: Any,
    example_file: Any,
) -> None:
    greedy = Opponent(examples["greedy"].bot_id)
    theirs = owned_by(stranger, "theirs")

    def ask(**given: Any) -> Any:
        args: dict[str, Any] = {"requester": owner, "bot_id": mine.bot_id, "opponents": [greedy]}
        return lambda: challenge_create(**{**args, **given})

    assert "You have no bot with id" in refused("bot", ask(bot_id=theirs.bot_id))
    assert "has no version 7" in refused("bot", ask(version=7))
    pending = second_version(mine, example_file, valid=False)
    assert "v2 is pending" in refused("bot", ask(version=pending.number))
    assert "1 to 5 opponents" in refused("opponents", ask(opponents=[]))
    assert "1 to 5 opponents" in refused("opponents", ask(opponents=[greedy] * 6))
    assert "no bot with id" in refused("opponents", ask(opponents=[Opponent(999_999)]))
    # Another owner's bot plays its ladder version: its older versions are not yours to pick.
    assert "your own bots only" in refused("opponents", ask(opponents=[Opponent(theirs.bot_id, 1)]))
    Bot.objects.filter(pk=theirs.bot_id).update(disabled=timezone.now(), disabled_reason="x")
    assert "off the ladder" in refused("opponents", ask(opponents=[Opponent(theirs.bot_id)]))
    assert "one seat only" in refused("opponents", ask(opponents=[greedy, greedy]))
    assert "one seat only" in refused("opponents", ask(opponents=[Opponent(mine.bot_id)]))
    assert "Unknown ruleset" in refused("ruleset", ask(ruleset="chess"))
    assert "1 to 30 hands" in refused("max_hands", ask(max_hands=31))
    assert "Seating is one of" in refused("seating", ask(seating="sideways"))
    assert not Challenge.objects.exists()


def test_an_author_may_pit_two_versions_of_one_bot_even_off_the_ladder(
    owner: Any, mine: BotVersion, example_file: Any, examples: dict[str, BotVersion]
) -> None:
    newer = second_version(mine, example_file)
    Bot.objects.filter(pk=mine.bot_id).update(disabled=timezone.now(), disabled_reason="x")
    challenge = challenge_create(
        requester=owner, bot_id=mine.bot_id, opponents=[Opponent(mine.bot_id, 1)]
    )
    assert [s.version for s in challenge.seats.order_by("position")] == [newer, mine]


def test_the_daily_quota_counts_the_last_24_hours_and_says_when_to_come_back(
    owner: Any, mine: BotVersion, examples: dict[str, BotVersion], settings: Any
) -> None:
    settings.GRASS_CHALLENGES_PER_DAY = 2
    settings.GRASS_CHALLENGES_WAITING_PER_ACCOUNT = 0
    ask = {
        "requester": owner,
        "bot_id": mine.bot_id,
        "opponents": [Opponent(examples["greedy"].bot_id)],
    }
    old = challenge_create(**ask)
    Challenge.objects.filter(pk=old.pk).update(created=timezone.now() - timedelta(hours=25))
    first = challenge_create(**ask)
    Challenge.objects.filter(pk=first.pk).update(created=timezone.now() - timedelta(hours=20))
    challenge_create(**ask)
    with pytest.raises(ChallengeLimited) as caught:
        challenge_create(**ask)
    # The oldest of the two counted leaves the 24 hours in about 4 hours.
    assert 4 * 3600 - 60 < caught.value.wait <= 4 * 3600
    assert "at most 2 in 24 hours" in str(caught.value) and "4 hours" in str(caught.value)
    # A rematch is a challenge like any other.
    with pytest.raises(ChallengeLimited):
        challenge_rematch(requester=owner, challenge=first)
    assert Challenge.objects.count() == 3
    settings.GRASS_CHALLENGES_PER_DAY = 0  # no limit
    challenge_create(**ask)


def test_an_account_may_have_a_few_waiting_at_once(
    owner: Any, mine: BotVersion, examples: dict[str, BotVersion], settings: Any
) -> None:
    settings.GRASS_CHALLENGES_WAITING_PER_ACCOUNT = 2
    ask = {
        "requester": owner,
        "bot_id": mine.bot_id,
        "opponents": [Opponent(examples["greedy"].bot_id)],
    }
    first = challenge_create(**ask)
    challenge_create(**ask)
    with pytest.raises(ChallengeLimited, match="at most 2 waiting") as caught:
        challenge_create(**ask)
    assert caught.value.wait == 30
    assert challenge_cancel(challenge=first)
    assert not challenge_cancel(challenge=first)  # already called off
    challenge_create(**ask)


def test_the_share_is_a_quarter_of_the_capacity_and_at_least_one(settings: Any) -> None:
    # With people's games on the table hosts (the default), the pool is the challenges' and
    # the first games' alone: a quarter each of a pool shared with people is half of it.
    assert [challenge_slots(capacity=c) for c in (0, 1, 4, 16)] == [0, 1, 2, 8]
    settings.GRASS_PLAY_QUEUE = "now"  # people's games on the `now` pool too
    assert challenge_slots(capacity=0) == 0  # no worker up: nothing is sent
    assert challenge_slots(capacity=1) == 1
    assert challenge_slots(capacity=4) == 1
    assert challenge_slots(capacity=16) == 4
    settings.GRASS_CHALLENGE_SHARE = 50
    assert challenge_slots(capacity=16) == 8


def waiting_challenges(
    requester: Any, bot: BotVersion, against: BotVersion, count: int
) -> list[Challenge]:
    return [
        challenge_create(
            requester=requester, bot_id=bot.bot_id, opponents=[Opponent(against.bot_id)]
        )
        for _ in range(count)
    ]


def test_dispatch_fills_the_share_only_accounts_in_turn_and_the_other_lanes_keep_the_rest(
    owner: Any,
    stranger: Any,
    mine: BotVersion,
    owned_by: Any,
    examples: dict[str, BotVersion],
    settings: Any,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.GRASS_CHALLENGE_SHARE = 50  # two places of a capacity of four
    greedy = examples["greedy"]
    hers = waiting_challenges(owner, mine, greedy, 3)
    his = waiting_challenges(stranger, owned_by(stranger, "his"), greedy, 1)
    sent_to: list[tuple[int, str]] = []
    monkeypatch.setattr(
        run_match,
        "apply_async",
        lambda args, queue, priority: sent_to.append((args[0], queue, priority)),
    )

    with django_capture_on_commit_callbacks(execute=True):
        sent = challenge_dispatch(capacity=4)
    # Her first, then his (asked for after her second and third): accounts take turns.
    assert [c.pk for c in sent] == [hers[0].pk, his[0].pk]
    matches = [Match.objects.get(challenge=c) for c in sent]
    assert all(not m.rated and m.status == Match.Status.QUEUED for m in matches)
    # To the pool of what someone waits for, behind people's games (ladder.matches.lanes).
    assert sorted(sent_to) == sorted((m.pk, "now", 3) for m in matches)
    assert {m.lane for m in matches} == {Lane.CHALLENGE}
    # Their places are taken: nothing more is sent until one of them settles.
    assert challenge_dispatch(capacity=4) == []
    # The ladder's games are apart (another pool): challenges take none of their room.
    rated = matchmaker_fill(ruleset="modern", seats=2, capacity=4)
    assert len(rated) == 4 and all(m.rated and m.lane is None for m in rated)
    Match.objects.filter(pk=matches[0].pk).update(status=Match.Status.FINISHED)
    assert [c.pk for c in challenge_dispatch(capacity=4)] == [hers[1].pk]
    # A challenge called off is never sent.
    assert challenge_cancel(challenge=hers[2])
    Match.objects.filter(pk=matches[1].pk).update(status=Match.Status.FINISHED)
    assert challenge_dispatch(capacity=4) == []
    assert Challenge.objects.get(pk=hers[2].pk).match is None


def test_a_challenge_never_moves_a_rating_nor_takes_a_bot_off_the_ladder(
    owner: Any,
    mine: BotVersion,
    examples: dict[str, BotVersion],
    settings: Any,
    example_file: Any,
) -> None:
    """Played through to the end by match_run, as a worker plays it: a win, a loss and a
    forfeit change no rating, no rating history, and disable no bot."""
    settings.GRASS_SANDBOXED = False
    settings.GRASS_DISABLE_AFTER_FORFEITS = 1
    crasher = second_version(mine, example_file, data=b"raise SystemExit(3)\n")
    # Validated bots are in the matchmaker's pool (a row per ladder ruleset, no games yet).
    BotRating.objects.filter(bot_id=examples["greedy"].bot_id, ruleset="modern").update(mu=1600.0)
    ratings_before = sorted(
        BotRating.objects.values_list("bot_id", "ruleset", "mu", "games", "wins")
    )
    assert (examples["greedy"].bot_id, "modern", 1600.0, 0, 0) in ratings_before
    challenge_create(
        requester=owner,
        bot_id=mine.bot_id,
        version=crasher.number,
        opponents=[Opponent(examples["greedy"].bot_id), Opponent(mine.bot_id, 1)],
        max_hands=1,
    )
    (sent,) = challenge_dispatch(capacity=4)
    assert sent.match is not None
    match_run(match_id=sent.match.pk)

    match = Match.objects.get(pk=sent.match.pk)
    assert match.status == Match.Status.FINISHED and match.rated is False
    seats = MatchSeat.objects.filter(match=match)
    assert any(seat.forfeited for seat in seats)
    assert not RatingChange.objects.exists()
    ratings_after = sorted(
        BotRating.objects.values_list("bot_id", "ruleset", "mu", "games", "wins")
    )
    assert ratings_after == ratings_before
    assert not Bot.objects.filter(disabled__isnull=False).exists()
    # Two versions of one bot are told apart by their numbers in the game.
    with match.log.open("rb") as handle:
        header = json.loads(gzip.decompress(handle.read()).splitlines()[0])
    assert sorted(header["players"]) == ["ann/mine v1", "ann/mine v2", "examples/greedy"]


def test_a_rematch_asks_for_the_very_same_versions_again(
    owner: Any, mine: BotVersion, examples: dict[str, BotVersion], example_file: Any
) -> None:
    first = challenge_create(
        requester=owner,
        bot_id=mine.bot_id,
        opponents=[Opponent(examples["greedy"].bot_id)],
        seating=Challenge.Seating.ORDERED,
        max_hands=3,
    )
    second_version(mine, example_file)  # a newer version since: the rematch keeps v1
    again = challenge_rematch(requester=owner, challenge=first)
    assert again.rematch_of == first and again.pk != first.pk
    assert [s.version_id for s in again.seats.order_by("position")] == [
        s.version_id for s in first.seats.order_by("position")
    ]
    assert (again.seating, again.max_hands, again.status) == (
        first.seating,
        first.max_hands,
        Challenge.Status.WAITING,
    )


def test_opponents_are_written_as_owner_slash_bot_with_an_optional_version() -> None:
    assert spec_readings("examples/greedy", me="ann") == [Spec("examples", "greedy")]
    assert spec_readings(" mine ", me="ann") == [Spec("ann", "mine")]
    assert spec_readings("ann/mine@v3", me="bo") == [
        Spec("ann", "mine@v3"),
        Spec("ann", "mine", 3),
    ]


def test_a_rematch_seats_the_opponents_current_versions_and_refuses_a_disabled_bot(
    owner: Any, mine: BotVersion, examples: dict[str, BotVersion], example_file: Any
) -> None:
    greedy = examples["greedy"]
    first = challenge_create(
        requester=owner, bot_id=mine.bot_id, opponents=[Opponent(greedy.bot_id)]
    )
    # The opponent's owner replaced it: the rematch plays what plays on the ladder now.
    replaced = second_version(greedy, example_file)
    again = challenge_rematch(requester=owner, challenge=first)
    assert [s.version_id for s in again.seats.order_by("position")] == [mine.pk, replaced.pk]

    # Taken off the ladder (staff, or its failures): no rematch against it.
    Bot.objects.filter(pk=greedy.bot_id).update(disabled=timezone.now(), disabled_reason="cheat")
    message = refused("opponents", lambda: challenge_rematch(requester=owner, challenge=first))
    assert "examples/greedy is off the ladder: cheat" in message
    assert Challenge.objects.count() == 2


def test_a_rematch_refuses_an_own_version_that_is_no_longer_valid(
    owner: Any, mine: BotVersion, examples: dict[str, BotVersion]
) -> None:
    first = challenge_create(
        requester=owner, bot_id=mine.bot_id, opponents=[Opponent(examples["random"].bot_id)]
    )
    BotVersion.objects.filter(pk=mine.pk).update(status=BotVersion.Status.INVALID)
    message = refused("bot", lambda: challenge_rematch(requester=owner, challenge=first))
    assert "only valid versions play" in message
