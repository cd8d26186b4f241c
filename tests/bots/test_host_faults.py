"""Only bots' own play moves a rating: a broken host is the host's fault, never the bots'.

A worker whose runtime image had lost `python3` (its identity check still passed) recorded 16
matches in 30 s as finished, every seat forfeiting with "exit 127": 856 Elo points moved, all
eight bots were disabled, and a good upload was marked invalid. Here an image with its Python
removed (a copy made of hard links, so the shared image is untouched) plays such matches:
the referee says InfrastructureFault, which the ladder retries elsewhere without rating,
forfeiting, disabling or invalidating anything. A bot that fails the same way on purpose, on a
good host, is charged as ever: the known bot of its language proves the host (`proof`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bots.runner import proof
from bots.runner.botfiles import BotSource, load_bot
from bots.runner.match import play_match
from bots.runner.results import InfrastructureFault
from bots.runner.seats import TimeControl
from tests.bots.boxes import image_without_python
from tests.bots.test_hostile import STARTUP_MS, raw_bot

TC = TimeControl(startup_ms=STARTUP_MS)


@pytest.fixture
def binary_bot(sandbox_ready: None) -> BotSource:
    """A static binary (the C starter), built while the image is whole: it needs no Python."""
    return proof.known_bot("binary")


@pytest.fixture
def no_python(sandbox_ready: None) -> Iterator[Path]:
    with image_without_python() as root:
        yield root


def test_no_seat_can_start_on_a_host_without_python(no_python: Path, box_made: str) -> None:
    with pytest.raises(InfrastructureFault, match="host fault: no seat could start"):
        play_match(
            [load_bot("random"), load_bot("greedy")], limits={"max_hands": 1}, time_control=TC
        )


def test_a_seat_that_fails_as_the_host_makes_it_fail_is_proved(
    binary_bot: BotSource, no_python: Path, box_made: str
) -> None:
    """The binary starts; the Python seat does not, and the known Python bot fails too."""
    with pytest.raises(InfrastructureFault, match="the known bot fails here too: python"):
        play_match([binary_bot, load_bot("random")], limits={"max_hands": 1}, time_control=TC)


@pytest.mark.parametrize(
    "lie",
    [
        "import os\nos._exit(127)\n",
        "import os, sys\nsys.stderr.write('bwrap: execvp /usr/bin/python3: No such file\\n')\n"
        "sys.stderr.flush()\nos._exit(1)\n",
    ],
    ids=["exit-127", "bwrap-words"],
)
def test_a_bot_that_fails_like_a_broken_host_on_purpose_is_charged(
    sandbox_ready: None, lie: str
) -> None:
    """The known bot proves the host: the liar forfeits, the match is recorded as ever."""
    match = play_match(
        [raw_bot(lie, name="liar"), load_bot("random")],
        limits={"max_hands": 1},
        time_control=TC,
    )
    liar, other = match.seats
    assert liar.forfeited and liar.forfeit_reason.startswith("did not start")
    assert not other.forfeited and match.ranks == [2, 1]


def test_a_failed_proof_build_says_the_head_and_the_tail_of_its_log() -> None:
    """A JVM names its error on the first line, then prints a long stack trace: the tail
    alone (all the proof used to say) never named the cause."""
    from bots.runner.proof import _excerpt

    log = "Error occurred during initialization of VM: Metaspace\n" + "\tat x.y(Z.java:1)\n" * 200
    said = _excerpt(log)
    assert said.startswith("Error occurred during initialization of VM: Metaspace")
    assert said.endswith("\tat x.y(Z.java:1)\n") and "[...]" in said
    assert len(said) < 1000
    assert _excerpt("short log") == "short log"
