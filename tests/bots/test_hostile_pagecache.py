"""No channel between two boxes of one match through the page cache of the runtime image.

Two attacks, both from the bots' side of the sandbox, a sender and a receiver in two boxes:

- Evicting: the sender evicted the pages that stand for its 0 bits (`posix_fadvise(DONTNEED)`)
  and the receiver timed one read of each (a resident page in microseconds, an evicted one from
  disk in tens of them or more): 31 of 32 bits passed between two turns, and freezing between
  turns did not help. The calls that evict or probe a shared file's pages are denied
  (`fadvise64`, `readahead`, `mincore`, `cachestat`, `madvise` COLD and PAGEOUT, `preadv2`
  RWF_NOWAIT: `bots/sandbox/seccomp_filter.py`).
- Reading (issue 33): with those closed, the sender *read* the pages of its 1 bits, pages of
  big files of the image that nobody had read (far apart, past any read-ahead), which made them
  resident for every box, and the receiver timed a 1-byte read of each: 29 and 30 of 32 bits
  passed in one pair of turns. Each box now reads the image through a mount of its own on a loop
  device of its own, over a copy of the pack in memory (`bots/sandbox/image.py`): what one box
  reads fills only its own cache, and below it every page is always in memory.

Each trial's secret has 16 ones and 16 zeros, so a receiver that knows nothing gets 16 bits
right on average; the test counts the bits a receiver gets right beyond those 16 with the two
decoders it could use (a page read under FAST_NS is a 1; the 16 fastest pages are the 1s),
over many trials, each on pages nobody has read: at most 2 of 32 may pass on average. Against
the shared mount of before, the same test saw 15.3-15.8 of 32 beyond chance (31.3-31.8 right;
2026-11-29, 2 runs of 32 trials); against the views of their own, -0.5 to +0.7 (5 runs, mean
+0.06) with the 16 fastest, -0.1 to +0.1 with FAST_NS.
"""

from __future__ import annotations

import os
import random
import statistics
from pathlib import Path
from typing import Any

import pytest

from bots.runner import home
from bots.runner.match import play_match
from bots.runner.results import MatchResult
from bots.runner.seats import TimeControl
from tests.bots.test_hostile import STARTUP_MS, findings, hostile

SPACING = 256 << 10
"""Pages this far apart: past the file's own read-ahead of a 1-byte read (16 KiB here)."""
FILES = (
    "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
    "/usr/lib/x86_64-linux-gnu/librustc_driver-4c3beb7552356b6f.so",
    "/usr/lib/rustlib/x86_64-unknown-linux-gnu/lib/libcore-2b149c462998d8e4.rlib",
    "/usr/bin/x86_64-linux-gnu-lto-dump-12",
)
"""Big files of the image that matches do not read (a Rust build reads the Rust ones: the test
makes them cold first, on the host)."""
TRIALS = 32
"""Each a fresh secret on fresh pages. With no channel, the average of bits right beyond
chance has a spread of about 0.5 bit over 32 trials (2.9 a trial): 2 is four of them."""
BITS = 32
FAST_NS = 15_000
"""A read under this is a page that was in memory (1-5 us here; from the disk or a loop device
reading a copy in memory, 20 us or more)."""
MOST_PASSED = 2.0
"""Bits per trial, beyond chance, that may pass on average (issue 33)."""

SENDER = """
import ctypes, mmap

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
fds, bases = {}, {}
for name in {{FILES}}:
    fds[name] = os.open(name, os.O_RDONLY)
    size = os.fstat(fds[name]).st_size
    bases[name] = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fds[name], 0)
did = {"fadvise": [], "pageout": [], "cold": []}
for trial, (secret, pages) in enumerate(zip({{SECRETS}}, {{PAGES}})):
    for bit, (name, offset) in enumerate(pages):
        fd = fds[name]
        if secret >> bit & 1:
            os.pread(fd, 1, offset)  # a 1: the page is in memory, for every box (before)
            continue
        if trial:
            continue
        # A 0, in the first trial: try to evict the page as well (denied).
        did["fadvise"].append(attempt(os.posix_fadvise, fd, offset, 4096, os.POSIX_FADV_DONTNEED))
        for advice, key in ((21, "pageout"), (20, "cold")):
            ctypes.set_errno(0)
            done = libc.madvise(ctypes.c_void_p(bases[name] + offset), 4096, advice)
            did[key].append(done if done == 0 else ctypes.get_errno())
report(sender=did, root=os.stat("/").st_dev)
run(Quiet())
"""

RECEIVER = """
class Receiver(Quiet):
    def choose(self, obs):
        if not hasattr(self, "read"):
            fds = {name: os.open(name, os.O_RDONLY) for name in {{FILES}}}
            threshold, rank, times = [], [], []
            for pages in {{PAGES}}:
                took = []
                for name, offset in pages:
                    start = time.perf_counter_ns()
                    os.pread(fds[name], 1, offset)
                    took.append(time.perf_counter_ns() - start)
                # The two decoders: a fast read is a 1; the fastest half are the 1s.
                threshold.append(sum(1 << bit for bit, ns in enumerate(took) if ns < {{FAST_NS}}))
                fastest = sorted(range(len(took)), key=took.__getitem__)[: len(took) // 2]
                rank.append(sum(1 << bit for bit in fastest))
                times += took
            times.sort()
            deciles = [times[len(times) * q // 10] // 1000 for q in range(10)]
            self.read = report(
                threshold=threshold, rank=rank, us=deciles + [times[-1] // 1000],
                root=os.stat("/").st_dev,
            )
        return obs.legal[0]


run(Receiver())
"""


def image_file(name: str) -> Path:
    """A file of the image as the host sees it (the pack's mount, or its folder)."""
    return Path(home.layout()["image"]) / name.lstrip("/")


def pages_and_secrets(seed: int) -> tuple[list[list[tuple[str, int]]], list[int]]:
    """TRIALS trials of BITS pages each, none shared, drawn at random from FILES (so a run
    does not reuse what an earlier run read), and each trial's secret of 16 ones."""
    rng = random.Random(seed)
    every = [
        (name, at)
        for name in FILES
        for at in range(SPACING, image_file(name).stat().st_size - 4096, SPACING)
    ]
    chosen = rng.sample(every, TRIALS * BITS)
    pages = [chosen[trial * BITS : (trial + 1) * BITS] for trial in range(TRIALS)]
    secrets = [sum(1 << bit for bit in rng.sample(range(BITS), BITS // 2)) for _ in pages]
    return pages, secrets


@pytest.fixture(scope="module")
def channel(sandbox_ready: None) -> tuple[MatchResult, list[int]]:
    pages, secrets = pages_and_secrets(random.SystemRandom().randrange(1 << 30))
    # Nobody has read the pages: out of the host's cache first (as on a worker that has not
    # run a Rust build since its boot). On the shared mount of before, this evicted the pages
    # every box read; now it evicts the host's own view's, which no box reads.
    for name in FILES:
        fd = os.open(image_file(name), os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    values = {"FILES": FILES, "PAGES": pages, "SECRETS": secrets, "FAST_NS": FAST_NS}
    match = play_match(
        [hostile(SENDER, name="sender", **values), hostile(RECEIVER, name="receiver", **values)],
        seed=3,
        limits={"max_hands": 1},
        time_control=TimeControl(decision_ms=3_000, bank_ms=20_000, startup_ms=STARTUP_MS),
    )
    return match, secrets


def passed(decoded: list[int], secrets: list[int]) -> float:
    """Bits right beyond chance (16 of 32), on average over the trials."""
    pairs = zip(decoded, secrets, strict=True)
    right = [BITS - bin(bits ^ secret).count("1") for bits, secret in pairs]
    return statistics.mean(right) - BITS // 2


def test_the_sender_cannot_evict_a_page_of_the_image(channel: tuple[MatchResult, Any]) -> None:
    match, _ = channel
    did: dict[str, Any] = findings(match.seats[0])["sender"]
    assert len(did["fadvise"]) == BITS // 2
    assert all("Errno 38" in outcome.get("msg", "") for outcome in did["fadvise"])  # ENOSYS
    assert did["pageout"] == [22] * (BITS // 2) and did["cold"] == [22] * (BITS // 2)  # EINVAL


def test_pages_one_box_reads_tell_another_box_nothing(channel: tuple[MatchResult, Any]) -> None:
    match, secrets = channel
    found = findings(match.seats[1])
    assert len(found["rank"]) == len(found["threshold"]) == TRIALS
    by = {decoder: passed(found[decoder], secrets) for decoder in ("threshold", "rank")}
    # On the shared mount: 15.3-15.8 bits beyond chance with either decoder. Now the receiver's
    # reads all come from its own loop device, whatever the sender read: chance.
    assert max(by.values()) <= MOST_PASSED, (by, "read times, deciles in us:", found["us"])
    assert all(not seat.forfeited for seat in match.seats)


def test_each_box_reads_the_image_through_a_file_system_of_its_own(
    channel: tuple[MatchResult, Any],
) -> None:
    """The two boxes' roots are two file systems (two page caches), not one bound twice."""
    match, _ = channel
    assert findings(match.seats[0])["root"] != findings(match.seats[1])["root"]


def test_the_files_are_where_the_test_expects_them(sandbox_ready: None) -> None:
    """The attack's files are in the image, big enough for its pages."""
    room = sum(image_file(name).stat().st_size // SPACING - 1 for name in FILES)
    assert room >= TRIALS * BITS
