"""The example bots play clean games in the sandbox (no strikes, no forfeits), under both
rulesets and with the variants that add decisions (drafts, hidden deals)."""

from __future__ import annotations

import pytest

from bots.runner.botfiles import load_bot
from bots.runner.match import play_match
from engine import Variants


@pytest.mark.parametrize("ruleset", ["modern", "classic"])
def test_examples_play_clean_games(sandbox_ready: None, ruleset: str) -> None:
    bots = [load_bot(name) for name in ("strong", "greedy", "random")]
    variants = Variants(give_me_five=True, hidden_deals=True)
    match = play_match(bots, ruleset=ruleset, variants=variants, seed=4, limits={"max_hands": 2})
    for report in match.seats:
        assert report.strikes == 0 and not report.forfeited, (report.name, report.faults)
        assert report.decisions > 0
    assert "Traceback" not in "".join(s.stderr for s in match.seats)
