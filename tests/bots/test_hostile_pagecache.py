"""No channel through the page cache of the shared image.

Two boxes of one match share the runtime image's file pages. A sender evicted the pages that
stand for its 0 bits (`posix_fadvise(DONTNEED)`) and a receiver timed one read of each page
(a resident page in microseconds, an evicted one from disk in tens of them or more): 31 of 32
bits passed between two turns, and freezing between turns did not help. The calls that evict or
probe a shared file's pages are now denied (`fadvise64`, `readahead`, `mincore`, `cachestat`,
`madvise` COLD and PAGEOUT, `preadv2` RWF_NOWAIT: `bots/sandbox/seccomp_filter.py`); with the
pages warm, the receiver reads every page fast and learns nothing. (A page nobody has read
yet can still be brought in by one box and timed by another, once: bots/sandbox/README.md.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from bots.runner import home
from bots.runner.match import MatchResult, TimeControl, play_match
from tests.bots.test_hostile import STARTUP_MS, findings, hostile

SHARED = "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"
"""A large file of the image that matches do not read: its pages are the sender's bits."""
OFFSETS = [i * (3 << 20) + (1 << 20) for i in range(32)]
SECRET = 0b1011_0010_1110_0001_0100_1101_0011_1010  # 16 ones, 16 zeros
FAST_NS = 15_000
"""A read under this is a page that was in memory (about 2 us here; from disk, far more)."""

SENDER = """
import ctypes, mmap

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
fd = os.open({{SHARED}}, os.O_RDONLY)
size = os.fstat(fd).st_size
base = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
did = {"fadvise": [], "pageout": [], "cold": []}
for bit, offset in enumerate({{OFFSETS}}):
    if {{SECRET}} >> bit & 1:
        os.pread(fd, 1, offset)  # a 1: the page is in memory
        continue
    did["fadvise"].append(attempt(os.posix_fadvise, fd, offset, 4096, os.POSIX_FADV_DONTNEED))
    for advice, name in ((21, "pageout"), (20, "cold")):
        ctypes.set_errno(0)
        done = libc.madvise(ctypes.c_void_p(base + offset), 4096, advice)
        did[name].append(done if done == 0 else ctypes.get_errno())
report(sender=did)
run(Quiet())
"""

RECEIVER = """
class Receiver(Quiet):
    def choose(self, obs):
        if not hasattr(self, "read"):
            fd = os.open({{SHARED}}, os.O_RDONLY)
            times = []
            for offset in {{OFFSETS}}:
                start = time.perf_counter_ns()
                os.pread(fd, 1, offset)
                times.append(time.perf_counter_ns() - start)
            self.read = report(times=times)
        return obs.legal[0]


run(Receiver())
"""


@pytest.fixture(scope="module")
def match(sandbox_ready: None) -> MatchResult:
    # Every page of the bits in memory first, as a busy worker's would be.
    with open(Path(home.layout()["image"]) / SHARED.lstrip("/"), "rb") as shared:
        for offset in OFFSETS:
            os.pread(shared.fileno(), 1, offset)
    values = {"SHARED": SHARED, "OFFSETS": OFFSETS, "SECRET": SECRET}
    return play_match(
        [hostile(SENDER, name="sender", **values), hostile(RECEIVER, name="receiver", **values)],
        seed=3,
        limits={"max_hands": 1},
        time_control=TimeControl(decision_ms=3_000, bank_ms=3_000, startup_ms=STARTUP_MS),
    )


def test_the_sender_cannot_evict_a_page_of_the_image(match: MatchResult) -> None:
    did: dict[str, Any] = findings(match.seats[0])["sender"]
    assert len(did["fadvise"]) == 16
    assert all("Errno 38" in outcome.get("msg", "") for outcome in did["fadvise"])  # ENOSYS
    assert did["pageout"] == [22] * 16 and did["cold"] == [22] * 16  # EINVAL


def test_the_receiver_learns_nothing(match: MatchResult) -> None:
    times = findings(match.seats[1])["times"]
    bits = sum(1 << bit for bit, ns in enumerate(times) if ns < FAST_NS)
    right = 32 - bin(bits ^ SECRET).count("1")
    # With the evictions allowed, 31-32 of 32 came through; now the pages all read as in
    # memory (16 right: the 1s), give or take a read slowed by a busy host.
    assert right <= 24, (right, times)
    assert all(not seat.forfeited for seat in match.seats)


def test_the_shared_file_is_where_the_test_expects_it(sandbox_ready: None) -> None:
    """The pages warmed are the ones boxes read: those of the image as boxes see it."""
    image = Path(home.layout()["image"])
    assert (image / SHARED.lstrip("/")).stat().st_size > OFFSETS[-1] + 4096
