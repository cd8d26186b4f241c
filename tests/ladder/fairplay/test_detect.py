"""ladder.fairplay.detect: the per-match statistics and the sequential test (pure maths)."""

from __future__ import annotations

import random

import pytest

from engine.flows import PairFlow
from ladder.fairplay import detect
from ladder.fairplay.detect import PairMatch, PairTest, bar, pair_match


def flows(**given: PairFlow) -> dict[tuple[int, int], PairFlow]:
    """Flows of a 4-seat game: all zero but those given as `g1t2=PairFlow(...)`."""
    table = {(g, t): PairFlow(g, t) for g in range(4) for t in range(4) if g != t}
    for key, flow in given.items():
        table[int(key[1]), int(key[3])] = flow
    return table


def test_a_feeder_swapping_down_and_sparing_its_partner_scores_high() -> None:
    table = flows(
        g0t2=PairFlow(0, 2, swaps=2, swap_value=150_000, gift_excess=45_000, attack_chances=6),
        g0t1=PairFlow(0, 1, swaps=2, swap_value=-90_000, attacks=3, attack_chances=6),
        g0t3=PairFlow(0, 3, attacks=2, attack_chances=6),
    )
    match = pair_match(table, 0, 2, ranks=[2, 3, 1, 4])
    assert match.help_ab == 195_000
    assert match.spared_ab == pytest.approx(1 - 0 - (1 - 5 / 12))
    assert match.first
    assert match.score > detect.THRESHOLD and match.hit
    # Seen from the other end the pair is the same pair.
    assert pair_match(table, 2, 0, ranks=[2, 3, 1, 4]).score == match.score


def test_giving_to_everyone_alike_is_not_help() -> None:
    """A bot that swaps down at random gives to all seats: only what one seat gets beyond the
    most any other got counts."""
    table = flows(
        g0t1=PairFlow(0, 1, swap_value=100_000),
        g0t2=PairFlow(0, 2, swap_value=100_000),
        g0t3=PairFlow(0, 3, swap_value=80_000),
    )
    assert pair_match(table, 0, 1, ranks=[1, 2, 3, 4]).help_ab == 0


def test_taking_from_the_other_is_not_help() -> None:
    table = flows(g0t1=PairFlow(0, 1, swaps=3, swap_value=-200_000))
    assert pair_match(table, 0, 1, ranks=[4, 3, 2, 1]).score <= 0


def honest_stream(rng: random.Random, length: int) -> list[tuple[PairMatch, float]]:
    """Matches of an honest pair at the null's edge: the flow statistic exceeds the threshold
    at exactly NULL_RATE and the pair places first exactly as expected."""
    out = []
    for _ in range(length):
        expected = rng.choice([0.1, 0.5, 0.9])
        score = detect.THRESHOLD + 1 if rng.random() < detect.NULL_RATE else 0.0
        out.append((PairMatch(score * detect.SCALE, 0, 0, 0, rng.random() < expected), expected))
    return out


def test_honest_pairs_are_flagged_at_most_alpha_of_the_time_however_long_watched() -> None:
    rng = random.Random(7)
    flagged = 0
    trials = 300
    for _ in range(trials):
        test = PairTest()
        for match, expected in honest_stream(rng, 1000):
            test = test.observe(match, expected, alpha=0.05)
        flagged += test.flagged_at is not None
    # Ville's inequality: at most 5% in expectation (15 of 300); well past it means a bet
    # whose factor has a mean above 1 under the null.
    assert flagged <= 30


def test_a_pair_that_helps_in_most_matches_is_flagged_soon() -> None:
    rng = random.Random(8)
    test = PairTest()
    for _ in range(30):
        hit = rng.random() < 0.6
        match = PairMatch((detect.THRESHOLD + 1) * detect.SCALE * hit, 0, 0, 0, rng.random() < 0.7)
        test = test.observe(match, 0.5, pairs=100)
    assert test.flagged_at is not None and test.flagged_at <= 30
    assert test.evidence >= bar(100)


def test_a_pair_that_only_wins_more_is_flagged_by_the_lift() -> None:
    test = PairTest()
    for _ in range(60):
        test = test.observe(PairMatch(0, 0, 0, 0, True), 0.4)
    assert test.flagged_at is not None
    assert test.flow_evidence < 1 < test.lift_evidence


def test_an_expected_first_of_one_bets_nothing() -> None:
    test = PairTest().observe(PairMatch(0, 0, 0, 0, True), 1.0)
    assert test.lift_evidence == 1.0


def test_the_bar_grows_with_the_pairs_under_test() -> None:
    assert bar(1, 0.01) == 100
    assert bar(10_000, 0.01) == 1_000_000


def test_the_union_bound_counts_the_circles_watches_beside_the_pairs() -> None:
    """A watch per pair of bots and one per pair of circles, no more of those than of these:
    with 1,000 pairs of bots under test the bar is that of 2,000 tests."""
    assert detect.watches(1000) == 2000
    assert bar(detect.watches(1000)) == 200_000


class InOrder(random.Random):
    """Draws 0, 1, 2, ...: a trial that takes the stream as it is."""

    def __init__(self) -> None:
        super().__init__(0)
        self.next = 0

    def randrange(self, *args: object) -> int:
        self.next += 1
        return self.next - 1


def test_the_benchs_trial_flags_where_pair_test_does() -> None:
    """bench.collusion replays PairTest's steps without building one per match: same answer."""
    from bench.collusion import run_trial

    rng = random.Random(3)
    stream = []
    for _ in range(60):
        hit = rng.random() < 0.3
        match = PairMatch((detect.THRESHOLD + 1) * detect.SCALE * hit, 0, 0, 0, rng.random() < 0.6)
        stream.append((match, 0.5))
    flagged = []
    for pairs in (1, 1000, 10**9):
        test = PairTest()
        for match, expected in stream:
            test = test.observe(match, expected, pairs=pairs)
        assert run_trial(stream, len(stream), InOrder(), pairs) == test.flagged_at
        flagged.append(test.flagged_at)
    assert flagged[0] is not None and flagged[-1] is None  # both answers were tried


def test_the_cause_says_which_way_a_hit_went_and_when_it_is_one_bots_asks_alone() -> None:
    flood = PairMatch(0, 0, 0, 0, False, asks_ab=0, asks_ba=detect.ASK_THRESHOLD + 1)
    assert flood.hit and flood.cause.asks_alone == "ba"
    assert (flood.cause.flows_ab, flood.cause.flows_ba, flood.cause.asks_ab) == (False,) * 3
    # Help beside the asks: the hit is not the asks alone.
    fed = PairMatch((detect.THRESHOLD + 1) * detect.SCALE, 0, 0, 0, True, 0, 100)
    assert fed.cause.flows_ab and fed.cause.asks_ba and fed.cause.asks_alone is None
    # Both asking: not one bot's doing.
    both = PairMatch(0, 0, 0, 0, False, 100, 100)
    assert both.hit and both.cause.asks_alone is None
    assert not PairMatch(0, 0, 0, 0, False, 5, 5).cause.hit


def test_the_cause_is_a_hit_exactly_when_the_match_is() -> None:
    """The directions staff read are the test's own hits, split by way: never more, never fewer."""
    rng = random.Random(11)
    for _ in range(2000):
        match = PairMatch(
            rng.uniform(-3, 3) * detect.SCALE,
            rng.uniform(-3, 3) * detect.SCALE,
            rng.uniform(-1, 1),
            rng.uniform(-1, 1),
            rng.random() < 0.5,
            rng.randint(-20, 120),
            rng.randint(-20, 120),
        )
        assert match.cause.hit == match.hit
