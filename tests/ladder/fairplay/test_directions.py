"""Which way it went (issue 33): the evidence of a flagged pair says, per direction, what each
bot gave, spared and proposed, and which bot's play made the hits.

The attack (docs/fairplay.md, found by a cheater's pass): asks are one-sided. A bot that
floods a rival with deal proposals, which the rival refuses, makes every match a hit (one bot
proposed far more deals to the other than to anyone); the pair is flagged, and the Void
disabled both bots, the rival with the flooder. Staff must see that the hits were the
flooder's proposals alone before voiding.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from engine.flows import PairFlow
from ladder.bots.models import Bot
from ladder.fairplay import services
from ladder.fairplay.models import PairWatch
from ladder.fairplay.services import match_flows_record
from ladder.matches.models import Match
from tests.ladder.fairplay.test_pairs import record

pytestmark = pytest.mark.django_db

FLOOD = 100
"""Deals the flooder proposes to its rival in a game beyond what it proposes to anyone."""
GAMES = 6


@pytest.fixture
def flooded(
    valid_version: Any,
    django_user_model: Any,
    finished_match: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> PairWatch:
    """Six rated matches of four greedy bots of four accounts, in which cy/flooder also
    proposed a hundred deals to ann/rival, who refused them all: the pair's watch."""
    settings.GRASS_FAIRPLAY_PAIRS = 10
    cy, dee, eve = (
        django_user_model.objects.create_user(username=name, password="pw")
        for name in ("cy", "dee", "eve")
    )
    rival = valid_version("rival", "greedy")
    flooder = valid_version("flooder", "greedy", by=cy)
    versions = [
        rival,
        flooder,
        valid_version("honest1", "greedy", by=dee),
        valid_version("honest2", "greedy", by=eve),
    ]
    seats: dict[int, int] = {}
    real: Callable[..., dict[tuple[int, int], PairFlow]] = services.game_flows

    def with_the_flood(events: Any) -> dict[tuple[int, int], PairFlow]:
        flows = dict(real(events))
        at_rival, at_flooder = seats[rival.bot_id], seats[flooder.bot_id]
        refused = flows[at_rival, at_flooder]  # asked: what the taker proposed to the giver
        flows[at_rival, at_flooder] = replace(refused, asked=refused.asked + FLOOD)
        return flows

    monkeypatch.setattr(services, "game_flows", with_the_flood)
    for seed in range(GAMES):
        match: Match = record(finished_match, versions, seed, colluding=False)
        seats.clear()
        seats.update((bot, seat) for seat, bot in match.seats.values_list("seat", "bot_id"))
        match_flows_record(match_id=match.pk)
    low, high = sorted([rival.bot_id, flooder.bot_id])
    return PairWatch.objects.get(low_id=low, high_id=high)


def test_the_command_says_the_hits_were_one_bots_proposals_alone(flooded: PairWatch) -> None:
    assert flooded.flagged is not None
    out = StringIO()
    call_command("collusion", stdout=out)
    text = out.getvalue()
    assert "ann/rival -> cy/flooder:" in text and "cy/flooder -> ann/rival:" in text
    flooder_way = next(line for line in text.splitlines() if "cy/flooder -> ann/rival:" in line)
    proposed = re.search(r"deal proposals ([\d,]+) \((\d+) accepted", flooder_way)
    assert proposed is not None
    assert int(proposed[1].replace(",", "")) >= FLOOD * GAMES  # its own few beside the flood
    assert f"hits made: 0 by its help and sparing, {GAMES} by its proposals" in flooder_way
    assert (
        f"{GAMES} of the {GAMES} hits were cy/flooder's deal proposals to ann/rival alone" in text
    )
    assert "read which way it went before voiding" in text.lower()


def test_the_admin_shows_the_directions_and_the_void_asks_to_read_them_first(
    flooded: PairWatch, admin_client: Any
) -> None:
    page = admin_client.get(f"/admin/fairplay/pairwatch/{flooded.pk}/change/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "ann/rival -&gt; cy/flooder:" in text and "cy/flooder -&gt; ann/rival:" in text
    assert "deal proposals to ann/rival alone" in text

    # The Void asks first, with the directions on the page, and voids nothing yet.
    asked = admin_client.post(
        "/admin/fairplay/pairwatch/", {"action": "void", "_selected_action": [flooded.pk]}
    )
    assert asked.status_code == 200
    confirm = asked.content.decode()
    assert "Read which way it went before voiding" in confirm
    assert "cy/flooder -&gt; ann/rival:" in confirm
    assert "deal proposals to ann/rival alone" in confirm
    assert not Bot.objects.filter(disabled__isnull=False).exists()
    flooded.refresh_from_db()
    assert flooded.voided is None
    # Each shared match says whose play made its hit (low and high: the pair's, named above).
    assert text.count("high&#x27;s deal proposals to low alone") == GAMES

    # Read, and confirmed: voided.
    done = admin_client.post(
        "/admin/fairplay/pairwatch/",
        {"action": "void", "_selected_action": [flooded.pk], "confirm": "yes"},
        follow=True,
    )
    assert "Voided" in done.content.decode()
    flooded.refresh_from_db()
    assert flooded.voided is not None
