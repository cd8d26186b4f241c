"""No channel between boxes: two bots of one author at one table must not share their hands.

A sender in one box moves everything host-wide it can reach, at start (before the first
request) and at each of its turns; a receiver in another box of the same match reads
everything it can at each of its turns. The sender moves distinctive amounts (7 ptys, 23
open files, 311 inodes, 6 sleeping processes, 150 MiB) so a reading that moved would be
plain. The class is closed, not each instance: no host-wide counter is readable at all
(`/proc` shows only the box's processes and `self`, `thread-self`, `mounts`, `net`), and what
can be shared is denied (`/dev/ptmx`, file locks and notifications on the shared read-only
files, `sysinfo`, keyrings), or is per box (System V IPC and POSIX queues by the IPC
namespace, abstract sockets by the network namespace, /tmp and /dev/shm by tmpfs).

What remains is timing through the shared CPU and memory bus; README ("What a bot can see")
says what bounds it. Before this, a bot read `/proc/sys/kernel/pty/nr` and saw exactly the
ptys another box held, every time.
"""

from __future__ import annotations

from typing import Any

import pytest

from bots.runner.match import play_match
from bots.runner.results import MatchResult
from bots.runner.seats import TimeControl
from bots.sandbox.jail import PROC_ALLOWED
from tests.bots.test_hostile import assert_finished, findings, hostile

TOKEN = "grass-chan-7f3a"
COMMON = """
import ctypes, errno, fcntl, socket

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
KEY = 0x67726173
SHARED = ["/sandbox/lib/engine/__init__.py", "/usr/lib/python3.11/os.py"]


def call(nr, *args):
    ctypes.set_errno(0)
    conv = [ctypes.c_char_p(a) if isinstance(a, bytes) else ctypes.c_long(a) for a in args]
    r = libc.syscall(ctypes.c_long(nr), *conv)
    return r if r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
"""

SENDER = (
    COMMON
    + """
held = []


def move():
    did = {}
    ptys = []
    for _ in range(7):
        r = attempt(os.openpty)
        if "err" in r:
            did["pty"] = r
            break
        ptys.append(r)
    did.setdefault("pty", len(ptys))
    held.append([os.open("/dev/null", os.O_RDONLY) for _ in range(23)])
    for i in range(311):
        open(f"/tmp/inode-{i}", "w").close()
    did["shm"] = call(29, KEY, 4096, 0o1666)  # shmget IPC_CREAT
    did["msg"] = call(68, KEY, 0o1666)  # msgget IPC_CREAT
    did["sem"] = call(64, KEY, 1, 0o1666)  # semget IPC_CREAT
    libc.mq_open.restype = ctypes.c_int
    did["mq"] = libc.mq_open(b"/" + TOKEN.encode(), os.O_CREAT | os.O_RDWR, 0o666, None)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind("\\0" + TOKEN)
    listener.listen()
    held.append(listener)
    children = []
    for _ in range(6):
        pid = os.fork()
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        children.append(pid)
    held.append(children)
    ballast = bytearray(150 << 20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    held.append(ballast)
    did["flock"] = []
    for path in SHARED:
        fd = os.open(path, os.O_RDONLY)
        held.append(fd)
        did["flock"].append(attempt(fcntl.flock, fd, fcntl.LOCK_EX))
    did["key"] = call(248, b"user", TOKEN.encode(), b"secret", 6, -4)  # add_key
    with open("/dev/shm/" + TOKEN, "w") as f:
        f.write(TOKEN)
    with open("/tmp/" + TOKEN, "w") as f:
        f.write(TOKEN)
    did["hostname"] = attempt(socket.sethostname, TOKEN)
    return did


report(sender=move())


class Sender(Quiet):
    def choose(self, obs):
        for path in SHARED:  # what an inotify watch in another box would see
            for _ in range(3):
                open(path, "rb").close()
        return obs.legal[0]


run(Sender())
"""
)

RECEIVER = (
    COMMON
    + """
def read(path, limit=300):
    try:
        if os.path.isdir(path):
            return {"dir": sorted(os.listdir(path))[:5]}
        with open(path, "rb") as f:
            return {"data": f.read(limit).decode("latin-1")}
    except OSError as exc:
        return {"err": type(exc).__name__}


ALLOWED = {"self", "thread-self", "mounts", "net"}


def look(watch, first):
    seen = {}
    # Only what could carry something: top-level /proc names outside the allowed few that
    # read as anything but empty.
    seen["proc"] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() and name not in ALLOWED:
            value = read("/proc/" + name, 24)
            if value not in ({"data": ""}, {"dir": []}):
                seen["proc"][name] = value
    seen["proc_names"] = len(os.listdir("/proc"))
    for path in ("/proc/sys/kernel/pty/nr", "/proc/sys/fs/file-nr", "/proc/sys/fs/inode-nr"):
        seen[path] = read(path)
    seen["sysinfo"] = call(99, ctypes.addressof(ctypes.create_string_buffer(128)))
    seen["shm"] = call(29, KEY, 0, 0)
    seen["msg"] = call(68, KEY, 0)
    seen["sem"] = call(64, KEY, 0, 0)
    libc.mq_open.restype = ctypes.c_int
    seen["mq"] = libc.mq_open(b"/" + TOKEN.encode(), os.O_RDONLY)
    client = socket.socket(socket.AF_UNIX)
    seen["socket"] = attempt(client.connect, "\\0" + TOKEN)
    client.close()
    seen["flock"] = []
    for path in SHARED:
        fd = os.open(path, os.O_RDONLY)
        seen["flock"].append(attempt(fcntl.flock, fd, fcntl.LOCK_EX | fcntl.LOCK_NB))
        os.close(fd)
    seen["key"] = call(250, 8, -4, b"user", TOKEN.encode(), 0)  # keyctl SEARCH
    seen["files"] = [os.path.exists(p) for p in ("/dev/shm/" + TOKEN, "/tmp/" + TOKEN)]
    seen["hostname"] = socket.gethostname()
    seen["inotify"] = watch
    if isinstance(watch, int):
        os.set_blocking(watch, False)
        seen["events"] = attempt(os.read, watch, 4096)
    if first:
        lines = open("/proc/self/mountinfo").read().splitlines()
        seen["mount_roots"] = sorted({line.split()[3] for line in lines})
        seen["mount_sources"] = sorted({line.split(" - ")[1].split()[1] for line in lines})
        seen["cmdline1"] = read("/proc/1/cmdline")
    return seen


class Receiver(Quiet):
    watch = None

    def choose(self, obs):
        if self.watch is None:
            self.watch = call(294, 0)  # inotify_init1
            if isinstance(self.watch, int):
                for path in SHARED:
                    libc.inotify_add_watch(self.watch, path.encode(), 0x20 | 0x1)
        self.turns = getattr(self, "turns", 0) + 1
        if self.turns <= 4:  # the first turns are enough, and stderr is kept capped
            report(**{f"turn{self.turns}": look(self.watch, self.turns == 1)})
        return obs.legal[0]


run(Receiver())
"""
)


@pytest.fixture(scope="module")
def match(box_made: str) -> MatchResult:
    sender = hostile(SENDER.replace("TOKEN", repr(TOKEN)), name="sender")
    receiver = hostile(RECEIVER.replace("TOKEN", repr(TOKEN)), name="receiver")
    return play_match(
        [sender, receiver],
        seed=3,
        limits={"max_hands": 1},
        time_control=TimeControl(decision_ms=3_000, bank_ms=3_000, startup_ms=10_000),
        sandboxed=True,
    )


@pytest.fixture(scope="module")
def sent(match: MatchResult) -> dict[str, Any]:
    found: dict[str, Any] = findings(match.seats[0])["sender"]
    return found


@pytest.fixture(scope="module")
def readings(match: MatchResult) -> list[dict[str, Any]]:
    found = findings(match.seats[1])
    assert found, "the receiver read nothing"
    return list(found.values())


def test_the_match_finishes_with_both_bots_playing(match: MatchResult) -> None:
    assert all(seat.decisions > 0 and not seat.forfeited for seat in match.seats)
    assert match.result["e"] == "result"


def test_ptys_cannot_be_opened_nor_counted(
    sent: dict[str, Any], readings: list[dict[str, Any]]
) -> None:
    assert sent["pty"]["err"] in ("FileNotFoundError", "OSError")  # no /dev/ptmx
    for seen in readings:
        assert seen["/proc/sys/kernel/pty/nr"] == {"err": "FileNotFoundError"}


@pytest.mark.parametrize("path", ["/proc/sys/fs/file-nr", "/proc/sys/fs/inode-nr"])
def test_open_file_and_inode_counts_are_not_readable(
    readings: list[dict[str, Any]], path: str
) -> None:
    for seen in readings:
        assert seen[path] == {"err": "FileNotFoundError"}


def test_no_host_wide_proc_file_is_readable(readings: list[dict[str, Any]]) -> None:
    """Memory, load, processes, interrupts, locks, keys, System V IPC, pressure...: every
    top-level name outside the allowed few reads as empty (a file) or holds nothing (a folder),
    whatever the sender did."""
    assert {"self", "thread-self", "mounts", "net"} == PROC_ALLOWED  # as the receiver has it
    for seen in readings:
        assert seen["proc_names"] > 20  # the names are there...
        assert {k: v for k, v in seen["proc"].items() if "err" not in v} == {}  # ...empty


def test_sysinfo_is_denied(readings: list[dict[str, Any]]) -> None:
    """sysinfo(2) gives the host's process count, free memory and load."""
    assert all(seen["sysinfo"] == "EPERM" for seen in readings)


@pytest.mark.parametrize("kind", ["shm", "msg", "sem", "mq"])
def test_ipc_objects_stay_in_their_box(
    sent: dict[str, Any], readings: list[dict[str, Any]], kind: str
) -> None:
    made = sent[kind]
    assert isinstance(made, int) and made >= 0  # the sender may use IPC in its own box...
    for seen in readings:
        assert seen[kind] in ("ENOENT", -1)  # ...but the receiver finds nothing


def test_abstract_sockets_stay_in_their_box(readings: list[dict[str, Any]]) -> None:
    for seen in readings:
        assert seen["socket"]["err"] == "ConnectionRefusedError"


def test_locks_on_shared_files_are_denied(
    sent: dict[str, Any], readings: list[dict[str, Any]]
) -> None:
    # ENOSYS: what a filesystem without locks says (cargo then builds without them)
    assert all("Errno 38" in r["msg"] for r in sent["flock"])
    for seen in readings:
        assert all("Errno 38" in r["msg"] for r in seen["flock"])


def test_notifications_on_shared_files_are_denied(readings: list[dict[str, Any]]) -> None:
    assert all(seen["inotify"] == "EPERM" for seen in readings)


def test_keyrings_are_denied(sent: dict[str, Any], readings: list[dict[str, Any]]) -> None:
    assert sent["key"] == "EPERM"
    assert all(seen["key"] == "EPERM" for seen in readings)


def test_scratch_space_and_names_are_the_boxs_own(
    sent: dict[str, Any], readings: list[dict[str, Any]]
) -> None:
    assert "err" in sent["hostname"]
    for seen in readings:
        assert seen["files"] == [False, False]
        assert seen["hostname"] == "grass"


def test_the_hosts_layout_is_hidden(readings: list[dict[str, Any]]) -> None:
    """/proc/self/mountinfo named the host folders bound into the box (/tmp/grass-...), and
    /proc/1/cmdline held bwrap's whole command line."""
    from bots.runner import home

    first = readings[0]
    cmdline = first["cmdline1"]["data"]
    shown = " ".join([*first["mount_roots"], *first["mount_sources"], cmdline])
    from bots.runner import runtime

    image = str(runtime.ROOT)  # the image is a filesystem of its own: `/` in mountinfo
    for host_path in (home.layout()["home"], "/tmp/grass", str(home.PROJECT), "/work", image):
        assert host_path not in shown, host_path
    # The box's code and image are file systems of their own: `/` is all their roots say.
    assert "/boxes/" not in shown and "/runtimes/" in shown  # (the runtime: the home's tmpfs)
    assert "/bot" in cmdline and "--args" in cmdline


def test_nothing_is_left(match: MatchResult) -> None:
    assert_finished(match, attacker_forfeits=False)
