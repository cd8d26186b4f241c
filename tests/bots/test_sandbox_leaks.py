"""Sandbox resources are released on every path: a failing stage, a bot that crashes, a start
that fails, a runner killed mid-match. What is left is counted before and after: cgroups, uid
locks, file descriptors, staged folders and temporary folders.

Before the fix, staging a zip that held both `a` and `a/b` raised FileExistsError after the box
was made, and nothing destroyed it: each attempt leaked four cgroups, two file descriptors, a
locked uid and a folder, until the host could start no bot at all.

Host-wide state: boxes, their claims and cgroups, and sweeps. The file runs alone in the suite
(the host-wide group, tests/conftest.py), and every test looks at its own boxes only: other
programs on the machine (a `make run` beside the suite, another checkout's tests) make, leave
and sweep boxes too.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from bots.runner import boxctl, home, pool, sandbox
from bots.runner.botfiles import BadBot, BotSource, load_bot
from bots.runner.boxes import start_bot, stop_bot
from bots.runner.match import play_match
from bots.runner.results import InfrastructureFault
from bots.runner.sandbox import Box
from bots.runner.seats import TimeControl
from bots.runner.series import SeriesConfig, close_pool_at_exit, plan, run_series
from tests.bots import boxes
from tests.bots.boxes import own_leftovers
from tests.bots.test_hostile import STARTUP_MS

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 2 if os.environ.get("GRASS_VM") else 6
"""Rounds of every way to fail (fewer in the emulated cgroup v2 VM, where all is slower)."""


def HOME() -> Path:
    return Path(home.layout()["home"])


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def old_layout_folders() -> list[Path]:
    """Folders only the runner before this layout made (it never removed them)."""
    tmp = Path("/tmp")
    return [*tmp.glob("grass-bot-*"), *tmp.glob("grass-runtime-*")]


def crashing() -> BotSource:
    return BotSource("crash", {"bot.py": b"import os\nos._exit(3)\n"})


def unstageable() -> BotSource:
    return BotSource("bad", {"bot.py": b"pass\n", "a": b"", "a/b": b""})


def killed_runner() -> tuple[int, int]:
    """A runner process that starts a bot in a box, then is SIGKILLed. Returns the box's id
    and a descriptor of the box's claim that the runner handed over before it died (the same
    open file, so the same lock): while the caller keeps it open, no sweep on this host (the
    suite's own, a `make run` worker's beside it, another checkout's tests) takes the dead
    box. Issue 37: one did, between the kill and the test's look."""
    script = textwrap.dedent(
        """
        import socket, sys, time
        from bots.runner.botfiles import load_bot
        from bots.runner.boxes import start_bot
        channel = socket.socket(fileno=int(sys.argv[1]))
        proc, box, _ = start_bot(load_bot("random"), True)
        socket.send_fds(channel, [str(box.id).encode()], [box.claim.fd])
        time.sleep(600)
        """
    )
    ours, theirs = socket.socketpair()
    runner = subprocess.Popen(
        [sys.executable, "-c", script, str(theirs.fileno())],
        cwd=ROOT,
        pass_fds=[theirs.fileno()],
    )
    theirs.close()
    try:
        message, fds, _, _ = socket.recv_fds(ours, 64, 1)
        assert message and len(fds) == 1, "the runner did not hand over its box's claim"
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
        ours.close()
    return int(message), fds[0]


def remains(box: int) -> list[str]:
    """What is left of box `box` on this host: its folder, its view of the image, its cgroups."""
    found = [
        str(HOME() / sub / str(box))
        for sub in ("boxes", "roots")
        if (HOME() / sub / str(box)).exists()
    ]
    for controller in ("memory", "pids", "freezer", ""):
        cgroup = Path("/sys/fs/cgroup") / controller / "grass-box" / str(box)
        if cgroup.exists():
            found.append(str(cgroup))
    return found


@pytest.mark.cgroups
def test_no_start_leaks_on_any_path(sandbox_ready: None) -> None:
    """Every way a start can fail leaves nothing behind; a killed runner's box outlives it
    until a sweep, which removes all of it.

    Host-wide state: boxes, their claims and cgroups, and the sweep. The file runs alone in
    the suite (the host-wide group, tests/conftest.py), but other programs on the machine make,
    leave and sweep boxes too, so the test looks at its own boxes only (`own_leftovers`) and
    holds its dead runners' claims until it looks (`killed_runner`)."""
    fds_before = open_fds()
    old_before = old_layout_folders()
    real_fchmod = os.fchmod

    def disk_full(*args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    for _ in range(ROUNDS):
        # A stage that fails on the bot's files: the bot's fault, nothing left behind.
        with pytest.raises(BadBot, match="is both a file and the folder"):
            start_bot(unstageable(), True)
        # (A patch of its own: undoing the test's `monkeypatch` would stop `own_leftovers`'s
        # record of the boxes claimed.)
        with pytest.MonkeyPatch.context() as patch:
            # A stage that fails on the host (disk full half-way): an infrastructure fault.
            patch.setattr(os, "fchmod", disk_full)
            with pytest.raises(InfrastructureFault, match="No space left"):
                start_bot(load_bot("random"), True)
            patch.setattr(os, "fchmod", real_fchmod)
            # A start that fails after staging.
            patch.setattr(Box, "start", lambda *_: (_ for _ in ()).throw(OSError("no exec")))
            with pytest.raises(InfrastructureFault):
                start_bot(load_bot("random"), True)
        # A bot that crashes at once, and a whole match with one.
        proc, box, folder = start_bot(crashing(), True)
        stop_bot(proc, box, folder)
        match = play_match(
            [crashing(), load_bot("random")],
            limits={"max_hands": 1},
            time_control=TimeControl(startup_ms=STARTUP_MS),
        )
        assert match.seats[0].forfeited and not match.seats[1].forfeited
        # An unstageable bot in a match: it did not start, the match still finishes.
        match = play_match([unstageable(), load_bot("random")], limits={"max_hands": 1})
        assert match.seats[0].forfeit_reason.startswith("did not start: ")

    assert boxes.claimed(), "no box of this test was recorded: own_leftovers would see none"
    assert own_leftovers() == []
    killed = dict(killed_runner() for _ in range(3))
    # A killed runner's boxes outlive it (nothing of it ran to clean up) until the sweep: all
    # there while this test holds their claims, so that no sweep can have taken them.
    for box in killed:
        assert remains(box), f"box {box} of a SIGKILLed runner is already gone"
    for claim in killed.values():
        os.close(claim)
    # Nobody holds them now: they are leftovers (or being swept by another program's sweep,
    # which ends in moments; a box left, unlisted, for longer would never be swept).
    for box in killed:
        deadline = time.monotonic() + 30
        while remains(box) and box not in home.leftovers():
            assert time.monotonic() < deadline, f"box {box} is left but not a leftover"
            time.sleep(0.1)
    sandbox.sweep()
    for box in killed:
        assert remains(box) == []
        assert box not in home.leftovers()
    assert open_fds() == fds_before
    assert old_layout_folders() == old_before


@pytest.mark.cgroups
def test_a_claimed_uid_starts_clean(sandbox_ready: None) -> None:
    """A box id whose dead box was never swept is cleaned by the next box made with that id
    (the program's `init` removes what the id left first). The test claims the dead box's id
    by keeping the claim its runner handed over (`killed_runner`): no sweep elsewhere on the
    host can take the box first."""
    box, fd = killed_runner()
    claim = home.Claim(box, fd)
    try:
        assert (HOME() / "boxes" / str(box)).exists()  # still there: claiming is not making
        boxctl.call("init", "--box", str(box))
        assert not list((HOME() / "boxes" / str(box)).iterdir())  # made anew, empty
        assert box not in home.leftovers()
    finally:
        boxctl.call("cleanup", "--box", str(box))
        claim.release()


def _uid_is_free(box: int) -> bool:
    """Whether nobody holds box `box`'s claim (taken and let go again at once)."""
    fd = os.open(HOME() / "claims" / str(box), os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


@pytest.mark.parametrize("kind", ["claimed", "ready box"])
def test_a_forked_child_does_not_keep_its_parents_uids(sandbox_ready: None, kind: str) -> None:
    """A child forked without exec (a library's worker, a job process) gets copies of the
    uid locks; an flock lasts while any copy is open, so before the fork hook the child kept
    the uid held, and its box unswept, after the parent let it go."""
    if kind == "claimed":
        claim = home.claim_box()
        uid, let_go = claim.box, claim.release
    else:
        ready = pool.prepare(sandbox.Limits())
        uid, let_go = ready.box.id, ready.discard
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: say it is up, then outlive the parent's release
        os.close(read)
        os.write(write, b"up")
        time.sleep(60)
        os._exit(0)
    try:
        os.close(write)
        assert os.read(read, 2) == b"up"
        assert not _uid_is_free(uid)
        let_go()
        assert _uid_is_free(uid), "the forked child still holds the uid's lock"
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.close(read)


def test_one_runtime_copy_per_code_version(sandbox_ready: None) -> None:
    first = home.runtime_name()
    again = boxctl.facts("runtime", stdin=home.runtime_stream(home.runtime_files()))
    assert again["runtime"] == first
    folder = HOME() / "runtimes" / first
    assert (folder / "launch.py").is_file()
    assert oct(folder.stat().st_mode & 0o777) == "0o755"
    assert os.path.ismount(HOME())


def _series(jobs: int, games: int) -> list[str]:
    """A short sandboxed series of `random` against `random`; the faults of its seats."""
    config = SeriesConfig(
        bots=(load_bot("random"), load_bot("random")),
        players=2,
        limits=(("max_hands", 1),),
        time_control=TimeControl(startup_ms=STARTUP_MS),
    )
    finished = list(run_series(config, plan(2, 2, games, seed=5), jobs=jobs))
    assert len(finished) == games
    return [fault["kind"] for _, match in finished for seat in match.seats for fault in seat.faults]


def test_a_series_starts_its_bots_from_boxes_made_ahead(
    sandbox_ready: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`grass match` as a ladder worker: every match but the first takes ready boxes."""
    taken: list[bool] = []
    take = pool.POOL.take

    def spy(limits: sandbox.Limits) -> pool.ReadyBox | None:
        ready = take(limits)
        taken.append(ready is not None)
        return ready

    pool.POOL.close()  # no box left ready, or wanted, by the tests before in this process
    monkeypatch.setattr(pool.POOL, "take", spy)
    try:
        assert _series(jobs=1, games=3) == []
    finally:
        pool.POOL.close()
    assert taken == [False, False, True, True, True, True]
    assert own_leftovers() == []


def test_a_series_in_parallel_jobs_leaves_no_box_behind(sandbox_ready: None) -> None:
    """Each job process destroys its ready boxes as it ends (a multiprocessing child skips
    `atexit`): nothing is left for a sweep. (Its own boxes only, the job processes' included:
    other programs on the host leave boxes too.)"""
    assert _series(jobs=2, games=5) == []

    assert boxes.claimed(), "the job processes' boxes were not recorded"
    assert own_leftovers() == []


def _hold_a_ready_box() -> int:
    """In a job process: make a box ahead and keep it; its uid."""
    pool.POOL.fill(sandbox.Limits(), 1)
    return pool.POOL.ready[0].box.id


def test_a_job_process_destroys_the_boxes_it_made_ahead_as_it_ends(sandbox_ready: None) -> None:
    """A job that ends with boxes still ready (its last match ended early, say) takes them
    with it: multiprocessing's finalizer does what `atexit` does elsewhere. (Its own boxes
    only: other programs on the host leave boxes too.)"""
    with ProcessPoolExecutor(max_workers=1, initializer=close_pool_at_exit) as jobs:
        uid = jobs.submit(_hold_a_ready_box).result()

    assert uid in boxes.claimed()
    assert own_leftovers() == []


def test_a_code_folder_of_the_layout_before_is_removed_as_its_owner(sandbox_ready: None) -> None:
    """A host upgraded with boxes in it has code folders that are not mounts of their own: the
    box program empties such a folder in a process running as its owner (a root walk of a
    caller's folder once followed a link the caller swapped in), and takes no time over a
    FIFO or a link to a host folder in it."""
    import pwd

    grass = pwd.getpwnam("grass")
    claim = home.claim_box()
    folder = HOME() / "boxes" / str(claim.box)
    try:
        boxctl.call("cleanup", "--box", str(claim.box))
        folder.mkdir()
        (folder / "sub" / "deeper").mkdir(parents=True)
        (folder / "sub" / "deeper" / "file").write_text("x")
        (folder / "to-etc").symlink_to("/etc")
        os.mkfifo(folder / "fifo")
        for path in [folder, *folder.rglob("*")]:
            os.lchown(path, grass.pw_uid, grass.pw_gid)
        boxctl.call("cleanup", "--box", str(claim.box))
        assert not folder.exists()
        assert Path("/etc/passwd").is_file()
    finally:
        claim.release()
