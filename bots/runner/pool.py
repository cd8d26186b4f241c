"""Boxes made ahead of time, so that a bot's start-up is its own program's start.

Making a box costs about 15-25 ms whatever runs in it (a uid, cgroups, bubblewrap building a
user namespace and mounting the image, covering /proc's host-wide files): a dozen times a
native bot's own start. A ready box is all of that done before the match, with a waiter as
its process: `/bin/sh` from the image, already inside every namespace, under the seccomp
filter, the uid, the cgroups and the rlimits, blocked reading one line from a pipe. The
bot's files are staged into its (empty, already mounted, read-only to the bot) folder, the
line names the bot's language, and the waiter `exec`s the language's command: from there on
the process is the bot, in the box it would have had anyway. Nothing of the bot exists before
it is launched, and a box serves one bot only: `Referee.close` destroys it as always.

Who fills the pool: a process that plays matches one after another (a Celery worker process,
`grass match`) calls `replenish()` between them, which makes one box again for each one used,
with the same limits (a JVM's box differs: `languages.Language.pids`). `start_bot` takes a
ready box when there is one and makes a box as before when there is none. A ready box belongs
to the process that made it: a forked child forgets its parent's (without touching them).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import shlex
import threading
import time
from dataclasses import dataclass

from bots.runner.languages import LANGUAGES
from bots.runner.process import BotGone, BotProcess, BotTimeout
from bots.runner.sandbox import Box, Limits, destroy_boxes

SIZE = int(os.environ.get("GRASS_READY_BOXES", "6"))
"""Ready boxes a process keeps at most (0: none, every box is made when its bot starts). Six,
a full table, by default: an idle box holds a uid, its cgroups and two small processes."""
UP_SECONDS = 10.0
"""How long `ReadyBox.wait_up` waits for a new box's waiter (bubblewrap's set-up)."""


def waiter_script() -> str:
    """The waiter's shell program: say it is up (one `.` on stdout), read the bot's language
    (one line on stdin; dash reads a pipe a byte at a time, so nothing after the line is taken
    from the bot), then become that language's command, with its environment. The two signals
    use the bot's own pipes, so the box holds no descriptor a box made at start would not."""
    cases = []
    for lang in LANGUAGES.values():
        exports = "".join(f"export {name}={shlex.quote(value)}; " for name, value in lang.env)
        command = " ".join(shlex.quote(arg) for arg in lang.command)
        cases.append(f"{lang.name}) {exports}exec {command} ;;")
    return (
        "printf .; IFS= read -r language || exit 125; "
        f'case "$language" in {" ".join(cases)} esac; exit 126'
    )


class WaiterGone(OSError):
    """A ready box's waiter did not come up, or is gone: the box cannot take a bot."""


@dataclass
class ReadyBox:
    """A box whose waiter stands ready: `launch` makes its process the bot."""

    box: Box
    proc: BotProcess
    owner: int
    """The pid of the process that made it: only that process may launch or destroy it."""
    up: bool = False
    """Whether the waiter has said it is up (its `.` read off its stdout)."""

    @property
    def limits(self) -> Limits:
        return self.box.limits

    def wait_up(self, timeout: float = UP_SECONDS) -> bool:
        """Whether the waiter is up (bubblewrap's set-up done, sh running), waiting for it at
        most `timeout` seconds."""
        if not self.up:
            # poll, not select: a table host's process holds thousands of descriptors, and
            # select() refuses any numbered past 1,023 (ValueError: every match of a host
            # with 500 tables failed on it, bench_tables).
            poller = select.poll()
            poller.register(self.proc.stdout, select.POLLIN)
            if poller.poll(max(0.0, timeout) * 1000):
                try:
                    said = os.read(self.proc.stdout, 1)
                except BlockingIOError:
                    said = b""
                self.up = said == b"."
        return self.up

    def launch(self, files: dict[str, bytes], language: str) -> BotProcess:
        """Stage the bot's files into the box and start it. Raises BadBot for files that
        cannot be a tree, OSError when the host cannot hold them, WaiterGone when the waiter
        is not there to start it (the caller then destroys the box: `discard`)."""
        if not self.wait_up():
            raise WaiterGone("the box made ahead did not come up")
        self.box.fill(files)
        self.proc.started = time.perf_counter()  # the bot's start-up clock starts now
        try:
            self.proc.send(f"{language}\n".encode(), self.proc.started + UP_SECONDS)
        except (BotGone, BotTimeout) as exc:
            raise WaiterGone(f"the box made ahead is gone: {exc}") from None
        return self.proc

    def discard(self) -> None:
        """Kill the waiter (or the bot) and destroy the box."""
        self.box.destroy()
        self.proc.close()

    def forget(self) -> None:
        """In a forked child: close this process's copies of the pipes and of the uid's lock
        (a lock held by a copy would outlive the parent's release), leave the box to its
        owner (killing it here would kill the parent's)."""
        for fd in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.box.forget_in_child()


def prepare(limits: Limits) -> ReadyBox:
    """A new ready box: everything made, the waiter started (not waited for). All or
    nothing, as `Box.open`: a failure on the way releases what was made (SandboxUnavailable,
    OSError)."""
    box = Box.open(limits)
    try:
        proc = box.start_waiter(waiter_script())
    except BaseException:
        box.destroy()
        raise
    return ReadyBox(box, proc, os.getpid())


class Pool:
    """A process's ready boxes, by limits."""

    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self.owner = os.getpid()
        self.ready: list[ReadyBox] = []
        self.used: list[Limits] = []
        """The limits of the boxes taken since the last `replenish`."""
        self.lock = threading.Lock()

    def _mine(self) -> bool:
        """Whether this is still the process that made the boxes; in a forked child, forget
        the parent's (once) and start empty."""
        if os.getpid() == self.owner:
            return True
        for ready in self.ready:
            ready.forget()
        self.ready, self.used, self.owner = [], [], os.getpid()
        return False

    def take(self, limits: Limits) -> ReadyBox | None:
        """A ready box with exactly these limits, or None."""
        with self.lock:
            if not self._mine():
                return None
            for index, ready in enumerate(self.ready):
                if ready.limits == limits:
                    self.used.append(limits)
                    return self.ready.pop(index)
            self.used.append(limits)  # missed: worth a box next time
            return None

    def fill(self, limits: Limits, count: int) -> None:
        """Make boxes with `limits` until `count` of them stand ready (within `size`)."""
        with self.lock:
            self._mine()
            have = sum(ready.limits == limits for ready in self.ready)
            for _ in range(min(count - have, self.size - len(self.ready))):
                self.ready.append(prepare(limits))

    def replenish(self) -> int:
        """One box again for each box taken (or missed) since the last call, with its limits,
        within `size`: the next match of the same bots finds its boxes ready. Returns how
        many it made."""
        with self.lock:
            if not self._mine():
                return 0
            wanted, self.used = self.used, []
            made = 0
            for limits in wanted[: max(0, self.size - len(self.ready))]:
                self.ready.append(prepare(limits))
                made += 1
            return made

    def close(self) -> None:
        """Destroy every ready box (at exit, and in tests)."""
        with self.lock:
            if not self._mine():
                return
            boxes, self.ready, self.used = self.ready, [], []
            destroy_boxes([ready.box for ready in boxes])  # one call of the box program
            for ready in boxes:
                ready.proc.close()


POOL = Pool()
"""This process's pool (`start_bot` takes from it)."""
atexit.register(POOL.close)
