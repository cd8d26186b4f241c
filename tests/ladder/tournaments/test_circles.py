"""A tournament seats one bot per circle (an owner, or accounts the site links): a second is
refused at registration, and one entered before its accounts were linked is withdrawn at the
start. The attack: an author enters a feeder beside a partner (docs/fairplay.md); Swiss and
round-robin tables would seat them together."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest

from ladder.accounts.services import account_house_set, accounts_link
from ladder.bots.selectors import bot_circles
from ladder.matches.models import MatchSeat
from ladder.tournaments.models import Entry, Tournament
from ladder.tournaments.services import (
    TournamentError,
    tournament_progress,
    tournament_register,
    tournament_tick,
)
from tests.ladder.tournaments.conftest import settle_games

pytestmark = pytest.mark.django_db


def test_a_second_bot_of_one_owner_is_refused_and_says_why(
    make_tournament: Any, valid_version: Any, owner: Any
) -> None:
    t = make_tournament(format="swiss", seats=2)
    feeder, partner = valid_version("feeder").bot, valid_version("partner").bot
    tournament_register(tournament=t, bot=feeder, user=owner)
    with pytest.raises(TournamentError, match=r"ann/feeder \(yours\) is entered already"):
        tournament_register(tournament=t, bot=partner, user=owner)
    # Withdrawn, the first no longer holds the circle's place.
    Entry.objects.filter(bot=feeder).update(withdrawn=t.registration_opens)
    tournament_register(tournament=t, bot=partner, user=owner)


def test_a_bot_of_a_linked_account_is_refused(
    make_tournament: Any, valid_version: Any, owners: Any
) -> None:
    alice, alias = owners(2)
    accounts_link(user_ids=[alice.pk, alias.pk], reason="staff")
    t = make_tournament(format="round_robin", seats=2)
    tournament_register(tournament=t, bot=valid_version("a", by=alice).bot, user=alice)
    with pytest.raises(TournamentError, match="of an account linked to yours"):
        tournament_register(tournament=t, bot=valid_version("b", by=alias).bot, user=alias)


def test_the_house_enters_all_its_examples(
    make_tournament: Any, valid_version: Any, django_user_model: Any
) -> None:
    house = django_user_model.objects.create_user(username="examples")
    account_house_set(user_id=house.pk)
    t = make_tournament(format="swiss", seats=3)
    for name in ("random", "greedy", "strong"):
        tournament_register(tournament=t, bot=valid_version(name, name, by=house).bot, user=house)
    assert t.entries.count() == 3


@pytest.mark.parametrize("format_", ["swiss", "round_robin", "elimination"])
def test_accounts_linked_after_entering_are_split_at_the_start(
    make_tournament: Any, valid_version: Any, owners: Any, format_: str
) -> None:
    users = owners(6)
    t = make_tournament(format=format_, seats=3, swiss_rounds=3)
    entries = [
        tournament_register(tournament=t, bot=valid_version(f"b{i}", by=u).bot, user=u)
        for i, u in enumerate(users)
    ]
    accounts_link(user_ids=[users[1].pk, users[4].pk], reason="staff, after they entered")
    tournament_tick(tournament_id=t.pk, now=t.starts_at + timedelta(seconds=1))
    t.refresh_from_db()
    later = Entry.objects.get(pk=entries[4].pk)
    assert later.withdrawn is not None and "one bot per owner" in later.withdrawn_reason
    assert "b1 entered first" in later.withdrawn_reason
    assert Entry.objects.get(pk=entries[1].pk).withdrawn is None

    rng = random.Random(2)
    for _ in range(30):
        settle_games(t, rng)
        tournament_progress(tournament_id=t.pk)
        t.refresh_from_db()
        if t.status != Tournament.Status.RUNNING:
            break
    seats = MatchSeat.objects.filter(match__tournament_game__table__round__tournament=t)
    by_match: dict[int, list[int]] = {}
    for match_id, bot_id in seats.values_list("match_id", "bot_id"):
        by_match.setdefault(match_id, []).append(bot_id)
    assert by_match, "no games were played"
    circles = bot_circles(bot_ids={b for bots in by_match.values() for b in bots})
    assert all(len({circles[b] for b in bots}) == len(bots) for bots in by_match.values())
