"""The seccomp filter, rule by rule, where nothing else would stop the call.

Inside a box most of these calls fail anyway (no capabilities, no shared files to lock), so a
box alone cannot show that the filter holds. Here a root process on the host loads the same
compiled filter and tries each call in a form that succeeds without it: every call must then
fail with the filter's answer (EPERM, or ENOSYS for calls made to look absent), and ordinary
calls must still work. `tests/bots/test_hostile.py` attacks the same ways from inside a box.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from typing import Any

import pytest

from bots.runner.boxctl import PYTHON
from tests.bots.boxes import seccomp_program

PROBE = textwrap.dedent(
    r"""
    import ctypes, errno, fcntl, json, os, socket, sys

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.argtypes = [
        ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong
    ]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    def load(program):
        buffer = ctypes.create_string_buffer(program)
        fprog = SockFprog(len(program) // 8, ctypes.addressof(buffer))
        PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
        assert libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) == 0
        assert libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) == 0

    def arg(a):
        if isinstance(a, bytes):
            return ctypes.c_char_p(a)
        if isinstance(a, int):
            return ctypes.c_long(a)
        return a

    def call(nr, *args):
        ctypes.set_errno(0)
        r = libc.syscall(ctypes.c_long(nr), *[arg(a) for a in args])
        e = ctypes.get_errno()
        if r == 0 and nr in (56, 57, 435):
            os._exit(0)  # the child of a fork or a clone that got through
        if r > 0 and nr in (56, 57, 435):
            os.waitpid(r, 0)
        return "ok" if r >= 0 else errno.errorcode.get(e, str(e))

    def clone3(flags):
        args = (ctypes.c_uint64 * 11)(flags, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0)
        return call(435, ctypes.addressof(args), 88)

    with open(sys.argv[1], "rb") as f:
        program = f.read()
    work = sys.argv[2]
    shared = os.path.join(work, "shared")
    open(shared, "w").close()
    before = {"flock": call(73, os.open(shared, os.O_RDONLY), fcntl.LOCK_SH)}
    load(program)
    found = {}
    CLONE_NEW = {"NEWNS": 0x20000, "NEWCGROUP": 0x2000000, "NEWUTS": 0x4000000,
                 "NEWIPC": 0x8000000, "NEWUSER": 0x10000000, "NEWPID": 0x20000000,
                 "NEWNET": 0x40000000}
    for name, flag in CLONE_NEW.items():
        found["clone_" + name] = call(56, flag | 17, 0, 0, 0, 0)
        found["unshare_" + name] = call(272, flag)
    found["clone3_NEWUSER"] = clone3(0x10000000)
    found["clone3_plain"] = clone3(0)
    found["setns"] = call(308, os.open("/proc/self/ns/uts", os.O_RDONLY), 0)
    found["mount"] = call(165, b"none", work.encode(), b"tmpfs", 0, 0)
    found["chroot"] = call(161, b"/")
    found["pivot_root"] = call(155, b"/", b"/")
    found["fsopen"] = call(430, b"tmpfs", 0)
    found["fspick"] = call(433, -100, b"/", 0)
    found["open_tree"] = call(428, -100, work.encode(), 1)
    found["open_tree_attr"] = call(467, -100, work.encode(), 1, 0, 0)
    found["move_mount"] = call(429, -1, b"", -100, work.encode(), 0)
    found["fsconfig"] = call(431, -1, 0, 0, 0, 0)
    found["fsmount"] = call(432, -1, 0, 0)
    found["mount_setattr"] = call(442, -100, work.encode(), 0, 0, 0)
    found["statmount"] = call(457, 0, 0, 0, 0)
    found["listmount"] = call(458, 0, 0, 0, 0)
    fd = os.open(shared, os.O_RDWR)
    found["flock"] = call(73, fd, fcntl.LOCK_EX)
    commands = {"F_SETLK": 6, "F_GETLK": 5, "F_OFD_SETLK": 37, "F_SETLEASE": 1024,
                "F_NOTIFY": 1026}
    for name, command in commands.items():
        lock = ctypes.addressof(ctypes.create_string_buffer(32)) if command < 1024 else 0
        found["fcntl_" + name] = call(72, fd, command, lock)
    found["inotify_init1"] = call(294, 0)
    found["fanotify_init"] = call(300, 0, 0)
    found["sysinfo"] = call(99, ctypes.addressof(ctypes.create_string_buffer(128)))
    found["cachestat"] = call(451, fd, 0, 0, 0)
    # The page cache of shared files: no eviction, no probe (a channel between boxes).
    found["fadvise_dontneed"] = call(221, fd, 0, 0, 4)
    found["readahead"] = call(187, fd, 0, 4096)
    import mmap
    os.write(fd, b"x" * 8192)
    base = libc.mmap
    base.restype = ctypes.c_void_p
    base.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                     ctypes.c_long]
    page = base(None, 8192, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    vec = ctypes.create_string_buffer(2)
    found["mincore"] = call(27, page, 8192, ctypes.addressof(vec))
    found["madvise_pageout"] = call(28, page, 8192, 21)
    found["madvise_cold"] = call(28, page, 8192, 20)
    found["madvise_dontneed"] = call(28, page, 8192, 4)
    ctx = ctypes.c_ulong(0)
    found["io_setup"] = call(206, 8, ctypes.addressof(ctx))  # kernel AIO: RWF_NOWAIT reads
    iov = (ctypes.c_uint64 * 2)(ctypes.addressof(ctypes.create_string_buffer(8)), 8)
    found["preadv2_nowait"] = call(327, fd, ctypes.addressof(iov), 1, 0, 0, 8)
    found["future_call"] = call(520)
    found["socket_inet"] = call(41, socket.AF_INET, socket.SOCK_STREAM, 0)
    found["keyctl"] = call(250, 0, 0, 0, 0, 0)
    found["bpf"] = call(321, 0, 0, 0)
    # Ordinary work goes on.
    found["preadv2_plain"] = call(327, fd, ctypes.addressof(iov), 1, 0, 0, 0)
    found["fork"] = call(57)
    found["socket_unix"] = call(41, socket.AF_UNIX, socket.SOCK_STREAM, 0)
    found["fcntl_getfl"] = call(72, fd, 3, 0)
    print(json.dumps({"before": before, "after": found}))
    """
)

EPERM = {
    **{f"clone_NEW{n}": "EPERM" for n in ("NS", "CGROUP", "UTS", "IPC", "USER", "PID", "NET")},
    **{f"unshare_NEW{n}": "EPERM" for n in ("NS", "CGROUP", "UTS", "IPC", "USER", "PID", "NET")},
    "setns": "EPERM",
    "mount": "EPERM",
    "chroot": "EPERM",
    "pivot_root": "EPERM",
    "fsopen": "EPERM",
    "fspick": "EPERM",
    "open_tree": "EPERM",
    "open_tree_attr": "EPERM",
    "move_mount": "EPERM",
    "fsconfig": "EPERM",
    "fsmount": "EPERM",
    "mount_setattr": "EPERM",
    "statmount": "EPERM",
    "listmount": "EPERM",
    "flock": "ENOSYS",
    "fadvise_dontneed": "ENOSYS",
    "readahead": "ENOSYS",
    "mincore": "ENOSYS",
    "madvise_pageout": "EINVAL",
    "io_setup": "ENOSYS",
    "madvise_cold": "EINVAL",
    "fcntl_F_SETLK": "EPERM",
    "fcntl_F_GETLK": "EPERM",
    "fcntl_F_OFD_SETLK": "EPERM",
    "fcntl_F_SETLEASE": "EPERM",
    "fcntl_F_NOTIFY": "EPERM",
    "inotify_init1": "EPERM",
    "fanotify_init": "EPERM",
    "sysinfo": "EPERM",
    "preadv2_nowait": "EPERM",
    "keyctl": "EPERM",
    "bpf": "EPERM",
    "clone3_NEWUSER": "ENOSYS",
    "clone3_plain": "ENOSYS",
    "cachestat": "ENOSYS",
    "future_call": "ENOSYS",
    "socket_inet": "EACCES",
    "preadv2_plain": "ok",
    "fork": "ok",
    "socket_unix": "ok",
    "fcntl_getfl": "ok",
    "madvise_dontneed": "ok",
}


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if os.geteuid() != 0:
        pytest.skip("needs root: the calls must be ones that succeed without the filter")
    work = tmp_path_factory.mktemp("seccomp")
    program = work / "filter.bpf"
    program.write_bytes(seccomp_program())
    done = subprocess.run(
        [PYTHON, "-I", "-c", PROBE, str(program), str(work)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_without_the_filter_the_calls_work(probed: dict[str, Any]) -> None:
    """The probe runs as root: a lock works before the filter is loaded."""
    assert probed["before"] == {"flock": "ok"}


@pytest.mark.parametrize(("call", "answer"), sorted(EPERM.items()))
def test_the_filter_answers(probed: dict[str, Any], call: str, answer: str) -> None:
    assert probed["after"][call] == answer


def test_the_filter_is_small() -> None:
    """A binary tree of calls: each call the bot makes runs it."""
    assert len(seccomp_program()) // 8 < 1024
