"""Boxes made ahead of time (`bots.runner.pool`): the pool gives each box to one bot only,
makes again what was used, and releases every box it made on every path: used, unused at
close, with a dead waiter, with files that cannot be staged, in a forked child that must not
touch its parent's. (That a bot launched into such a box is held exactly as in a box made as
it starts is the hostile tests' part: they run in both, `box_made`.)
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from bots.runner import home, pool
from bots.runner.botfiles import BadBot, BotSource, load_bot
from bots.runner.boxes import box_limits, start_bot, stop_bot
from bots.runner.languages import LANGUAGES, detect
from bots.runner.match import play_match
from bots.runner.sandbox import Box

READY = b'{"type":"ready","protocol":1}'
ECHO = BotSource(
    "echo",
    {
        "bot.py": b"import sys\n"
        b"for line in sys.stdin:\n"
        b"    sys.stdout.write('" + READY + b"\\n')\n"
        b"    sys.stdout.flush()\n"
    },
)
LIMITS = box_limits(detect(ECHO.files))


def gone(box: Box) -> bool:
    """Nothing of `box` is left: no cgroup, no code folder, its id free."""
    return (
        not Path(box.facts["procs"]).parent.exists()
        and not Path(box.facts["dir"]).exists()
        and box.id not in home.leftovers()
    )


def answers(proc: object) -> bytes:
    from bots.runner.process import BotProcess

    assert isinstance(proc, BotProcess)
    deadline = proc.started + 20
    proc.send(b'{"type":"hello"}\n', deadline)
    return proc.readline(deadline)


@pytest.fixture
def empty_pool(sandbox_ready: None) -> Iterator[pool.Pool]:
    pool.POOL.close()
    yield pool.POOL
    pool.POOL.close()


def test_a_bot_starts_in_the_box_made_for_it(empty_pool: pool.Pool) -> None:
    empty_pool.fill(LIMITS, 1)
    (ready,) = empty_pool.ready
    assert ready.wait_up()
    proc, box, _ = start_bot(ECHO, True)
    try:
        assert box is ready.box and proc is ready.proc and empty_pool.ready == []
        assert answers(proc) == READY
    finally:
        stop_bot(proc, box, None)
    assert gone(ready.box)


def test_a_box_is_made_again_for_each_one_used_or_missed(empty_pool: pool.Pool) -> None:
    empty_pool.fill(LIMITS, 1)
    match = play_match([load_bot("random"), load_bot("random")], limits={"max_hands": 1})
    assert not any(seat.forfeited for seat in match.seats)
    assert empty_pool.ready == []  # one taken, one made as its bot started
    empty_pool.replenish()
    assert [ready.limits for ready in empty_pool.ready] == [LIMITS, LIMITS]
    assert all(ready.wait_up() for ready in empty_pool.ready)
    made = [ready.box for ready in empty_pool.ready]
    empty_pool.replenish()  # nothing used since
    assert len(empty_pool.ready) == 2
    empty_pool.close()
    assert all(gone(box) for box in made)


def test_the_pool_keeps_at_most_its_size(sandbox_ready: None) -> None:
    small = pool.Pool(size=2)
    taken: list[pool.ReadyBox] = []
    try:
        small.fill(LIMITS, 5)
        assert len(small.ready) == 2
        taken = [ready for ready in (small.take(LIMITS), small.take(LIMITS)) if ready]
        assert len(taken) == 2
        assert small.take(LIMITS) is None
    finally:
        small.close()
        for ready in taken:  # taken boxes are the taker's to destroy
            ready.discard()
    assert all(gone(ready.box) for ready in taken)


def test_a_box_with_other_limits_is_not_taken(empty_pool: pool.Pool) -> None:
    java = box_limits(LANGUAGES["java"])
    assert java != LIMITS
    empty_pool.fill(java, 1)
    assert empty_pool.take(LIMITS) is None
    ready = empty_pool.take(java)
    assert ready is not None
    ready.discard()
    assert gone(ready.box)


def test_a_dead_waiter_falls_back_to_a_box_made_at_start(empty_pool: pool.Pool) -> None:
    empty_pool.fill(LIMITS, 1)
    (ready,) = empty_pool.ready
    assert ready.wait_up()
    ready.box.kill_all()  # as if the host had killed it while it waited
    proc, box, _ = start_bot(ECHO, True)
    try:
        assert box is not None and box is not ready.box
        assert answers(proc) == READY
    finally:
        stop_bot(proc, box, None)
    assert gone(ready.box)


def test_files_that_cannot_be_staged_are_the_bots_fault_and_leave_nothing(
    empty_pool: pool.Pool,
) -> None:
    empty_pool.fill(LIMITS, 1)
    (ready,) = empty_pool.ready
    bad = BotSource("bad", {"bot.py": b"pass\n", "a": b"", "a/b": b""})
    with pytest.raises(BadBot, match="is both a file and the folder"):
        start_bot(bad, True)
    assert empty_pool.ready == []
    assert gone(ready.box)


def test_a_forked_child_leaves_its_parents_boxes_alone(empty_pool: pool.Pool) -> None:
    empty_pool.fill(LIMITS, 1)
    (ready,) = empty_pool.ready
    child = os.fork()
    if child == 0:  # the child: sees no box, and its close destroys nothing of the parent's
        code = 0
        try:
            code |= pool.POOL.take(LIMITS) is not None
            pool.POOL.close()
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    proc, box, _ = start_bot(ECHO, True)
    try:
        assert box is ready.box and answers(proc) == READY
    finally:
        stop_bot(proc, box, None)


def test_the_waiter_becomes_each_languages_command() -> None:
    script = pool.waiter_script()
    for lang in LANGUAGES.values():
        case = script.split(f"{lang.name}) ", 1)[1].split(" ;;", 1)[0]
        assert case.endswith("exec " + " ".join(shlex.quote(arg) for arg in lang.command))
        for name, value in lang.env:
            assert f"export {name}={shlex.quote(value)};" in case


@pytest.fixture
def descriptors_past_1024() -> Iterator[None]:
    """This process holds descriptors numbered past 1,023, as a table host's does with its
    hundreds of tables' pipes and sockets: every descriptor opened next is numbered higher."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.fail(f"the hard limit on open files is {hard}: the test needs 2048")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2048), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_box_made_by_a_process_with_many_descriptors_starts_its_bot(
    empty_pool: pool.Pool, descriptors_past_1024: None
) -> None:
    """select() refuses a descriptor past 1,023 (ValueError): on a table host with 500
    tables every match failed so (bench_tables); the waiter's pipe is polled instead."""
    empty_pool.fill(LIMITS, 1)
    (ready,) = empty_pool.ready
    assert ready.proc.stdout > 1024
    assert ready.wait_up()
    proc, box, _ = start_bot(ECHO, True)
    try:
        assert box is ready.box and answers(proc) == READY
    finally:
        stop_bot(proc, box, None)
