"""The hostile suite's escapes from other languages: a static C binary and a Node.js bot try
the network, the host's files, writing, a pty and the host-wide counters, a lock on a shared
file, a memory bomb and a fork bomb. The sandbox holds whatever the language: every attempt
fails, the bot plays on, nothing of its box is left after the match."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from bots.runner.botfiles import BotSource, load_bot
from bots.runner.build import BUILD_CPU_SECONDS as BUILD_LIMIT
from bots.runner.build import build_in_box
from bots.runner.match import play_match
from bots.runner.results import MatchResult
from bots.runner.seats import TimeControl
from tests.bots.test_hostile import STARTUP_MS, assert_finished, findings

HERE = Path(__file__).resolve().parent / "hostile"
pytestmark = pytest.mark.cgroups
BUILD_CPU_SECONDS = 600.0 if os.environ.get("GRASS_VM") else BUILD_LIMIT
"""The ladder's build limit, but in the emulated cgroup v2 guest (tests/vm): gcc there once
took more than 60 s of CPU on a busy host (a starved vCPU's time is charged to whatever ran)."""


def play(bot: BotSource) -> MatchResult:
    return play_match(
        [bot, load_bot("random")],
        seed=5,
        limits={"max_hands": 1},
        time_control=TimeControl(startup_ms=max(30_000, STARTUP_MS)),
    )


@pytest.fixture(scope="module")
def c_attack(sandbox_ready: None) -> tuple[MatchResult, dict[str, Any]]:
    built = build_in_box(
        {"attack.c": (HERE / "attack.c").read_bytes()},
        ("/bin/sh", "-c", 'exec gcc -O2 -static -o "$GRASS_BUILD/out/bot" attack.c'),
        "bot",
        cpu_seconds=BUILD_CPU_SECONDS,
    )
    assert built.ok and built.artifact is not None, built.log
    match = play(BotSource("hostile-c", {"bot": built.artifact}))
    return match, findings(match.seats[0])


@pytest.fixture(scope="module")
def js_attack(sandbox_ready: None) -> tuple[MatchResult, dict[str, Any]]:
    match = play(BotSource("hostile-js", {"bot.js": (HERE / "attack.js").read_bytes()}))
    return match, findings(match.seats[0])


def test_c_gets_nothing_of_the_host(c_attack: tuple[MatchResult, dict[str, Any]]) -> None:
    match, found = c_attack
    assert found["inet_socket"] == errno.EACCES  # the seccomp filter: no inet sockets
    assert found["shadow"] in (errno.ENOENT, errno.EACCES)
    assert found["work"] == errno.ENOENT  # the host's folders are not in the box
    assert found["write_root"] == errno.EROFS and found["write_usr"] == errno.EROFS
    assert found["ptmx"] == errno.ENOENT and found["pty_count"] == errno.ENOENT
    assert found["sysinfo"] == errno.EPERM and found["flock"] == errno.ENOSYS
    # The memory bomb failed to allocate (address space) or was killed (memory cgroup).
    assert found["memory_bomb"] in (42, -9), found
    # The fork bomb was held by the box's process limit.
    assert found["fork_refused"] == errno.EAGAIN and found["forks"] < 16
    assert_finished(match, attacker_forfeits=False)


def test_node_gets_nothing_of_the_host(js_attack: tuple[MatchResult, dict[str, Any]]) -> None:
    match, found = js_attack
    assert found["network"] in ("EACCES", "EPERM"), found
    assert found["shadow"] in ("ENOENT", "EACCES")
    assert found["work"] == "ENOENT"
    assert found["write_root"] == "EROFS" and found["write_usr"] == "EROFS"
    assert found["ptmx"] == "ENOENT" and found["pty_count"] == "ENOENT"
    assert found["meminfo"] == ""  # the host's memory figures are covered
    assert found["memory_bomb"] not in (0, None), found  # killed, or failed: not done
    # The box's process limit refuses forks: the shell says so (Node's own threads count).
    assert "Cannot fork" in found["fork_bomb"] or "unavailable" in found["fork_bomb"], found
    assert_finished(match, attacker_forfeits=False)
