"""The colluding pair the detector is measured with (`bench.colluders.pair`) and the bench's
in-process games (`bench.collusion`): the pair finds itself by play alone and then helps."""

from __future__ import annotations

from bench import collusion
from bench.colluders.pair import Feeder, Partner
from engine.flows import game_flows


def test_the_pair_finds_each_other_and_the_feeder_gives() -> None:
    feeder, partner = Feeder(), Partner()
    events, _ = collusion.play_bots(
        [feeder, collusion.make("greedy"), partner, collusion.make("greedy")], seed=3
    )
    assert (feeder.friend, partner.friend) == (2, 0)
    flows = game_flows(events)
    # The feeder never swaps up at the partner's cost, gives it value and spares it.
    assert flows[0, 2].swap_value > 0
    assert flows[0, 2].swap_value > flows[0, 1].swap_value
    assert flows[0, 2].attacks < flows[0, 1].attacks
    assert flows[0, 2].granted > 0


def test_without_a_friend_a_colluder_finds_none() -> None:
    feeder = Feeder()
    events, _ = collusion.play_bots([feeder, *(collusion.make("greedy") for _ in range(3))], seed=4)
    assert feeder.friend is None
    flows = game_flows(events)
    assert all(flows[0, t].swap_value <= 0 for t in (1, 2, 3))  # it plays as greedy does


def test_a_random_table_is_not_a_friend() -> None:
    partner = Partner()
    collusion.play_bots([partner, *(collusion.make("random") for _ in range(3))], seed=5)
    assert partner.friend is None
