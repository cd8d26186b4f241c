"""Matches through the runner: plain and sandboxed, deterministic, with verifiable logs."""

from __future__ import annotations

import io

import pytest

from bots.runner import runtime
from bots.runner.botfiles import load_bot
from bots.runner.fouls import forfeit_ranks, safe_default
from bots.runner.match import play_match
from engine.log import read_log, replay


@pytest.mark.parametrize("sandboxed", [False, True])
def test_a_match_finishes_and_its_log_verifies(
    sandboxed: bool, request: pytest.FixtureRequest
) -> None:
    if sandboxed:
        request.getfixturevalue("sandbox_ready")
    bots = [load_bot("greedy"), load_bot("random"), load_bot("random")]
    match = play_match(bots, seed=11, limits={"max_hands": 2}, sandboxed=sandboxed)
    assert match.result["e"] == "result"
    assert sorted(match.ranks)[0] == 1
    assert all(s.decisions > 0 and not s.forfeited and s.strikes == 0 for s in match.seats)
    game = replay(read_log(io.BytesIO(match.log_text().encode())))
    assert game.result == match.result


def test_sandboxed_and_plain_matches_play_the_same_game(sandbox_ready: None) -> None:
    bots = [load_bot("greedy"), load_bot("random")]
    a = play_match(bots, seed=5, limits={"max_hands": 2}, sandboxed=True)
    b = play_match(bots, seed=5, limits={"max_hands": 2}, sandboxed=False)
    # Only the sandboxed log says which runtime image its bots ran on; the game is the same.
    assert a.events[0].pop("runtime") == runtime.identity()  # type: ignore[misc]
    assert "runtime" not in b.events[0]
    assert a.log_text() == b.log_text()


def test_safe_default_prefers_harmless_moves() -> None:
    assert safe_default(["play panama", "deal @1", "end"]) == "end"
    assert safe_default(["accept", "decline"]) == "decline"
    assert safe_default(["pass mexico", "pass panama"]) == "pass mexico"


def test_forfeits_rank_below_everyone() -> None:
    assert forfeit_ranks([300_000, 10_000, 50_000], [True, False, False]) == [3, 2, 1]
    assert forfeit_ranks([5, 5, 1], [False, False, False]) == [1, 1, 3]


def test_no_sandbox_means_no_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sandbox that cannot start is an infrastructure fault: no bot runs unsandboxed."""
    from bots.runner import boxes, sandbox
    from bots.runner.results import InfrastructureFault

    def broken() -> None:
        raise sandbox.SandboxUnavailable("bwrap is not installed")

    started: list[object] = []
    monkeypatch.setattr(sandbox, "check", broken)
    monkeypatch.setattr(boxes, "BotProcess", lambda *a, **k: started.append(a))
    with pytest.raises(InfrastructureFault, match="bwrap is not installed"):
        play_match([load_bot("random"), load_bot("random")], seed=1, sandboxed=True)
    assert started == []
