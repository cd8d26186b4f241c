"""Remote seats (`bots.runner.remote`): a seat whose decisions come from an object the caller
injects, under the same fault policy as a bot's, without the site."""

from __future__ import annotations

import io
import random
from collections.abc import Sequence
from typing import Any

import pytest

from bots.runner.botfiles import load_bot
from bots.runner.match import play_match
from bots.runner.remote import AgentGone, CallableAgent, RemoteAgent, RemoteRequest
from bots.runner.results import InfrastructureFault, SeatReport
from bots.runner.seats import TimeControl
from engine import new_game, observe
from engine.game import Game
from engine.log import read_log, replay

TWO_HANDS = {"max_hands": 2}


def first_legal(request: RemoteRequest) -> str:
    return request.legal[0]


def test_a_remote_seat_plays_beside_bots_and_its_log_verifies(sandbox_ready: None) -> None:
    seen: list[RemoteRequest] = []
    rng = random.Random(3)

    def choose(request: RemoteRequest) -> str:
        seen.append(request)
        return rng.choice(request.legal)

    person = CallableAgent("ann (person)", choose)
    bots: list[Any] = [load_bot("greedy"), person, load_bot("random")]
    match = play_match(bots, seed=21, limits=TWO_HANDS, sandboxed=True)

    assert isinstance(person, RemoteAgent)
    assert [s.name for s in match.seats] == ["greedy", "ann (person)", "random"]
    assert match.events[0]["players"] == ["greedy", "ann (person)", "random"]
    report = match.seats[1]
    assert report.decisions == len(seen) > 0
    assert report.strikes == 0 and not report.forfeited
    assert [r.request for r in seen] == list(range(1, len(seen) + 1))
    assert all(r.seat == 1 and r.observation["seat"] == 1 for r in seen)
    assert all(list(r.legal) == r.observation["legal"] for r in seen)
    # The same messages a bot gets: hello first, a hand_end per hand, game_end last.
    kinds = [message["type"] for message in person.told]
    assert kinds[0] == "hello" and kinds[-1] == "game_end"
    assert kinds.count("hand_end") == match.result["hands"]
    assert person.told[0]["seat"] == 1 and person.told[0]["time"]["clock"] == "wall"
    assert person.closed
    game = replay(read_log(io.BytesIO(match.log_text().encode())))
    assert game.result == match.result


def test_the_remote_seat_is_shown_exactly_what_observe_gives_its_seat() -> None:
    """Replaying the game's actions, each request's observation is `observe()` of the seat at
    that moment: the whole hand's history, no other seat's hidden cards."""
    seen: list[RemoteRequest] = []

    def choose(request: RemoteRequest) -> str:
        seen.append(request)
        return request.legal[-1]

    person = CallableAgent("bo", choose)
    match = play_match([person, load_bot("random")], seed=8, limits=TWO_HANDS, sandboxed=False)
    game = new_game("modern", ["bo", "random"], 8, None, TWO_HANDS)
    asked = iter(seen)
    for event in match.events:
        if event["e"] != "act" or "auto" in event:
            continue
        if event["seat"] == 0:
            request = next(asked)
            assert request.observation == observe(game, 0)
            assert request.legal == tuple(game.legal_actions())
        game.apply(event["action"])
    assert next(asked, None) is None
    assert game.result == match.result


def test_a_silent_remote_seat_is_struck_then_forfeits_and_is_asked_no_more() -> None:
    asked: list[int] = []

    def never(request: RemoteRequest) -> None:
        asked.append(request.request)
        return None

    person = CallableAgent("cy", never)
    tc = TimeControl(remote_decision_ms=30_000)
    match = play_match(
        [load_bot("random"), person], seed=4, limits=TWO_HANDS, time_control=tc, sandboxed=False
    )
    report = match.seats[1]
    assert asked == [1, 2, 3]
    assert report.timeouts == 3 and report.strikes == 3 and report.forfeited
    assert report.faults[0] == {
        "kind": "timeout",
        "detail": "no answer in 30 s",
        "strike": 1,
        "played": report.faults[0]["played"],
    }
    assert report.forfeit_reason.startswith("3 strikes (last: timeout")
    assert match.ranks[1] == 2
    assert {"type": "forfeit", "reason": report.forfeit_reason} in person.told
    assert person.told[-1]["type"] == "forfeit"  # not told the game's end once out
    notes = [e for e in match.events if e["e"] == "note"]
    assert [n["kind"] for n in notes] == ["timeout", "timeout", "timeout", "forfeit"]


@pytest.mark.parametrize("answer", ["play nothing-at-all", 42, "", None])
def test_an_illegal_or_malformed_answer_is_a_strike(answer: Any) -> None:
    answers = iter([answer])

    def once(request: RemoteRequest) -> Any:
        return next(answers, request.legal[0])

    match = play_match(
        [CallableAgent("dee", once), load_bot("random")],
        seed=2,
        limits=TWO_HANDS,
        sandboxed=False,
    )
    report = match.seats[0]
    assert report.strikes == 1 and not report.forfeited
    assert report.faults[0]["kind"] == ("timeout" if answer is None else "illegal")


def test_an_agent_that_is_gone_forfeits_its_seat_and_the_game_goes_on() -> None:
    def resign(request: RemoteRequest) -> str:
        if request.request == 3:
            raise AgentGone("resigned")
        return request.legal[0]

    person = CallableAgent("eve", resign)
    match = play_match(
        [person, load_bot("random"), load_bot("random")], seed=6, limits=TWO_HANDS, sandboxed=False
    )
    report = match.seats[0]
    assert report.forfeited and report.forfeit_reason == "gone: resigned"
    assert report.decisions == 3
    assert match.ranks[0] == 3
    assert not match.seats[1].forfeited and not match.seats[2].forfeited
    assert person.closed


def test_an_agent_gone_before_the_start_forfeits_without_failing_the_match() -> None:
    class Absent(CallableAgent):
        def start(self, hello: dict[str, Any]) -> None:
            raise AgentGone("never came")

    person = Absent("fay", first_legal)
    match = play_match([load_bot("random"), person], seed=1, limits=TWO_HANDS, sandboxed=False)
    assert match.seats[1].forfeit_reason == "did not start: never came"
    assert match.seats[1].decisions == 0
    assert person.closed


def test_only_remote_seats_need_no_bot_and_no_sandbox() -> None:
    people = [CallableAgent(f"p{i}", first_legal) for i in range(3)]
    match = play_match(people, seed=9, limits={"max_hands": 1}, sandboxed=True)
    assert all(s.decisions > 0 and not s.forfeited for s in match.seats)
    assert "runtime" in match.events[0]


def test_every_agent_is_closed_when_the_match_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    from bots.runner import match as match_module

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise InfrastructureFault("sandbox unavailable: no bwrap")

    monkeypatch.setattr(match_module, "start_bot", broken)
    person = CallableAgent("gus", first_legal)
    with pytest.raises(InfrastructureFault):
        play_match([load_bot("random"), person], seed=1, sandboxed=True)
    assert person.closed

    def buggy(request: RemoteRequest) -> str:
        raise RuntimeError("a bug in the relay")

    monkeypatch.undo()
    other = CallableAgent("hal", buggy)
    with pytest.raises(RuntimeError, match="a bug in the relay"):
        play_match([other, load_bot("random")], seed=1, sandboxed=False)
    assert other.closed


def test_the_watcher_sees_every_action_and_one_that_fails_is_dropped() -> None:
    counts: list[int] = []
    told: list[list[int]] = []
    """Each seat's decisions so far, at each call: the reports the referee keeps."""
    thought: list[float] = []

    def watch(game: Game, reports: Sequence[SeatReport]) -> None:
        counts.append(len(game.events))
        told.append([report.decisions for report in reports])
        thought[:] = [report.think_ms for report in reports]

    match = play_match(
        [load_bot("random"), CallableAgent("ivy", first_legal)],
        seed=3,
        limits=TWO_HANDS,
        sandboxed=False,
        watch=watch,
    )
    decisions = sum(s.decisions for s in match.seats)
    assert len(counts) == 1 + decisions  # before the first decision, then after each
    assert counts == sorted(counts)
    assert counts[-1] == len([e for e in match.events if e["e"] != "note"])
    # The seats' figures as they grow (the live table shows them during the game): none
    # before the first decision, one more after each, the match's own at the end.
    assert told[0] == [0, 0] and [sum(seats) for seats in told] == list(range(len(told)))
    assert told[-1] == [s.decisions for s in match.seats]
    assert thought == [s.think_ms for s in match.seats]

    calls: list[int] = []

    def failing(game: Game, reports: Sequence[SeatReport]) -> None:
        calls.append(1)
        raise ValueError("the live table broke")

    again = play_match(
        [load_bot("random"), load_bot("random")],
        seed=3,
        limits=TWO_HANDS,
        sandboxed=False,
        watch=failing,
    )
    assert calls == [1]
    assert again.result["hands"] == 2


def test_a_stopped_match_ends_at_once_tears_its_boxes_down_and_plays_no_more(
    sandbox_ready: None,
) -> None:
    """`stop` (the ladder: this run's claim was taken back) is asked before each decision and
    as each answer comes back: the answer given after it said stop is neither played nor
    watched, the sandboxed bots' boxes are destroyed, the agent is closed, and MatchStopped
    says why."""
    from bots.runner.results import MatchStopped
    from tests.bots.boxes import own_leftovers

    asked: list[int] = []
    reason: list[str] = []
    watched: list[int] = []
    games: list[Game] = []
    seen_at_stop: list[int] = []

    def choose(request: RemoteRequest) -> str:
        asked.append(request.request)
        if len(asked) == 3:
            reason.append("taken back: claim 1 no longer holds")
            seen_at_stop.append(len(watched))
        return request.legal[0]

    def watch(game: Game, reports: Sequence[SeatReport]) -> None:
        games[:] = [game]
        watched.append(len(game.events))

    person = CallableAgent("jo", choose)
    with pytest.raises(MatchStopped, match="claim 1 no longer holds"):
        play_match(
            [load_bot("random"), person, load_bot("greedy")],
            seed=4,
            limits=TWO_HANDS,
            sandboxed=True,
            watch=watch,
            stop=lambda: reason[0] if reason else None,
        )
    assert asked == [1, 2, 3] and person.closed
    # The third answer was not applied, nor shown: the game is as the watcher last saw it.
    assert len(watched) == seen_at_stop[0] and len(games[0].events) == watched[-1]
    assert own_leftovers() == []
