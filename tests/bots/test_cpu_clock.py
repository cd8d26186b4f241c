"""CPU-time clocks and the CPU quota: a bot's thinking time is its box's CPU time, so a busy
worker does not shorten it, and a box never has more than one CPU, so it cannot slow the
matches beside it. Nothing here measures wall time: the bounds hold on a loaded machine.

Before, a decision's deadline was wall-clock time and nothing bounded a box's CPU share: a bot
that forked ten spinners used 2.6-3.4 CPU-seconds in 7 s of its own turns, and a bot that
thought until its clock said stop got a third less CPU on a loaded host.
"""

from __future__ import annotations

import pytest

from bots.runner.botfiles import load_bot
from bots.runner.match import play_match
from bots.runner.sandbox import Limits
from bots.runner.seats import TimeControl
from tests.bots.test_hostile import STARTUP_MS, assert_finished, findings, hostile

pytestmark = pytest.mark.cgroups


def test_a_box_never_has_more_than_its_cpu_quota(sandbox_ready: None) -> None:
    bot = hostile(
        """
        class Swarm(Quiet):
            def choose(self, obs):
                for _ in range(4):  # four spinners and itself: five runnable processes
                    if os.fork() == 0:
                        while True:
                            pass
                while True:
                    pass


        run(Swarm())
        """
    )
    match = play_match(
        [bot, load_bot("random")],
        seed=7,
        limits={"max_hands": 1},
        time_control=TimeControl(decision_ms=400, bank_ms=0, startup_ms=STARTUP_MS),
        resources=Limits(cpus=1.0),
    )
    attacker = match.seats[0]
    assert attacker.timeouts >= 1
    # CPU over the wall time of its own decisions: one CPU at most (a CFS period of slack),
    # where five spinners on this host's cores would use several.
    assert attacker.cpu_ms <= attacker.think_ms * 1.0 + 100 * attacker.decisions
    assert_finished(match, attacker_forfeits=True)


def test_a_bot_that_budgets_by_its_cpu_clock_gets_that_cpu(sandbox_ready: None) -> None:
    bot = hostile(
        """
        class Thinker(Quiet):
            def on_game_start(self, hello):
                report(clock=hello["time"]["clock"], wall_factor=hello["time"]["wall_factor"])

            def choose(self, obs):
                if not hasattr(self, "told"):  # once: stderr keeps only its last 4,000 bytes
                    self.told = report(cpu_ms=obs.cpu_ms, wall_ms=obs.wall_ms, bank=obs.bank_ms)
                self.thought = getattr(self, "thought", 0) + 1
                while self.thought <= 8 and obs.cpu_left() > 0.03:  # think till told to stop
                    pass
                return obs.legal[0]


        run(Thinker())
        """
    )
    # A wall backstop of 20 x the CPU time: the CPU clock decides while the box gets a
    # twentieth of a core (with the default 3 x, a box given less than a third of a core hits
    # the backstop first: that happened here beside two CPU hogs and a 2-job match series).
    tc = TimeControl(decision_ms=150, bank_ms=0, startup_ms=STARTUP_MS, wall_factor=20)
    match = play_match([bot, load_bot("random")], seed=5, limits={"max_hands": 1}, time_control=tc)
    thinker = match.seats[0]
    found = findings(thinker)
    assert found["clock"] == "cpu" and found["wall_factor"] == 20
    assert (found["cpu_ms"], found["wall_ms"], found["bank"]) == (150, 3000, 0)
    assert thinker.timeouts == 0 and thinker.strikes == 0
    # It used about what it was given (120 ms of each 150, for 8 decisions), whatever the
    # machine was doing; the other decisions cost it almost nothing.
    assert thinker.decisions >= 8
    assert 8 * 100 <= thinker.cpu_ms <= 8 * 150 + 20 * (thinker.decisions - 8)
    assert_finished(match, attacker_forfeits=False)


@pytest.mark.parametrize("spent_ms", [0, 400])
def test_the_bank_pays_for_cpu_past_the_decision_time(sandbox_ready: None, spent_ms: int) -> None:
    """A decision may use its decision time plus the bank; the bank pays for CPU past the
    decision time, and the next request says what is left of it."""
    bot = hostile(
        """
        SPEND = {{SPENT}} / 1000


        class Spender(Quiet):
            first = True
            told = 0

            def choose(self, obs):
                if self.told < 2:  # stderr keeps only its last 4,000 bytes
                    self.told += 1
                    report(**{f"bank{self.first}": obs.bank_ms})
                if self.first:
                    self.first = False
                    start = time.process_time()
                    while time.process_time() - start < 0.2 + SPEND:
                        pass
                return obs.legal[0]


        run(Spender())
        """,
        SPENT=spent_ms,
    )
    tc = TimeControl(decision_ms=200, bank_ms=1_000, startup_ms=STARTUP_MS, wall_factor=20)
    match = play_match([bot, load_bot("random")], seed=5, limits={"max_hands": 1}, time_control=tc)
    found = findings(match.seats[0])
    assert found["bankTrue"] == 1_000
    assert 1_000 - spent_ms - 60 <= found["bankFalse"] <= 1_000 - spent_ms
    assert match.seats[0].timeouts == 0


def test_time_a_box_waits_for_a_cpu_is_not_charged_to_its_bot(sandbox_ready: None) -> None:
    """A bot that thinks its whole CPU budget in a box given a fifth of a CPU needs five times
    that in wall time, past the backstop of three times: before, every such decision was a
    "timeout" strike and the bot forfeited (a strong bot at 600 ms a decision forfeited every
    game on a host at load 13, its box getting under a third of a core). The box's run delay,
    here its CPU quota's throttling, now moves the backstop: no strike, and the bot's wall bank
    is untouched. (A crowded host delays a box's threads the same way: /proc schedstat counts
    both.)"""
    bot = hostile(
        """
        class Thinker(Quiet):
            def choose(self, obs):
                self.thought = getattr(self, "thought", 0) + 1
                while self.thought <= 3 and obs.cpu_left() > 0.05:  # think till told to stop
                    pass
                return obs.legal[0]


        run(Thinker())
        """
    )
    tc = TimeControl(decision_ms=400, bank_ms=0, startup_ms=STARTUP_MS)
    match = play_match(
        [bot, load_bot("random")],
        seed=5,
        limits={"max_hands": 1},
        time_control=tc,
        resources=Limits(cpus=0.2),
    )
    thinker = match.seats[0]
    assert thinker.faults == [], thinker.faults
    assert thinker.max_think_ms > tc.wall_factor * tc.decision_ms  # it did wait past 1.2 s
    assert_finished(match, attacker_forfeits=False)
