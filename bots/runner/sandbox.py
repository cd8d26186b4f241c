"""A bot's box, from the caller's side: made, filled, started, watched and removed through the
box program (`bots/sandbox`, the only code that runs as root; `bots.runner.boxctl` reaches it).

What a box is (a uid, a cgroup, namespaces, the runtime image as its root, seccomp, rlimits) is
the program's business. The caller holds the box's id (a claim, `bots.runner.home`), writes the
bot's files into the box's code folder (its own; the box sees it read-only), starts the box's
process (the program's `run` becomes it, so the caller holds its pipes), and reads the box's
CPU time, processes and memory events from files the kernel makes world-readable; the one file
it writes is the box's freezer, which the program gives it. It asks the program to kill and
to remove. docs/sandbox.md tells the whole design; the threat model is in
bots/sandbox/README.md.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bots.runner import boxctl, home, runtime
from bots.runner.botfiles import check_tree
from bots.runner.languages import LANGUAGES, Language
from bots.runner.process import BotProcess

PYTHON = boxctl.PYTHON


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot start here; a bot must then not run at all (infrastructure fault)."""


@dataclass(frozen=True)
class Limits:
    """Per-bot resource limits. Defaults suit a Python bot with room to think."""

    memory_mb: int = 256
    """Memory cgroup limit (resident memory, page cache included)."""
    address_space_mb: int = 1024
    """RLIMIT_AS: a runaway allocation fails with MemoryError before the OOM killer."""
    pids: int = 16
    """Processes and threads in the box (the pids cgroup)."""
    cpus: float = 1.0
    """CPU bandwidth of the whole box (the cpu controller's quota): however many processes
    it forks, a box never has more than one CPU, so it cannot slow the matches beside it."""
    cpu_seconds: int = 600
    """RLIMIT_CPU for the whole match: the kernel kills a bot past this."""
    file_size_mb: int = 8
    """RLIMIT_FSIZE: largest file the bot may write (in its /tmp)."""
    open_files: int = 64
    scratch_mb: int = 16
    """Size of the bot's private /tmp (and, separately, of its /dev/shm)."""
    build_mb: int = 0
    """A build's writable /build (a tmpfs of its own), 0 for a bot's box."""

    def run_args(self) -> list[tuple[str, int]]:
        return [
            ("cpu-seconds", self.cpu_seconds),
            ("address-space-mb", self.address_space_mb),
            ("file-size-mb", self.file_size_mb),
            ("open-files", self.open_files),
            ("scratch-mb", self.scratch_mb),
        ]


_CHECKED: list[int] = []


def check() -> None:
    """Raise SandboxUnavailable, saying why, if sandboxed bots cannot run on this machine (the
    box program's own check, once per process once it passed; the image, every time)."""
    try:
        runtime.image_dir()
    except runtime.RuntimeMissing as exc:
        raise SandboxUnavailable(str(exc)) from None
    if os.getpid() in _CHECKED:
        return
    try:
        home.layout()
    except OSError as exc:
        raise SandboxUnavailable(str(exc)) from None
    _CHECKED[:] = [os.getpid()]


def sweep() -> dict[str, int]:
    """Remove every box a dead caller left on this host (the program's `sweep`)."""
    check()
    try:
        answer = boxctl.facts("sweep")
    except OSError as exc:
        raise SandboxUnavailable(str(exc)) from None
    return {key: int(value) for key, value in answer.items()}


class Box:
    """One bot's box. Create with `Box.open`; `destroy` releases all of it, and every failure
    on the way in destroys what was made."""

    def __init__(self, claim: home.Claim, limits: Limits, facts: dict[str, str]) -> None:
        self.claim = claim
        self.id = claim.box
        self.uid = int(facts["uid"])
        self.limits = limits
        self.code_dir: Path | None = Path(facts["dir"])
        self.facts = facts
        self.frozen = False
        self.destroyed = False
        self._cpu_fd = os.open(facts["cpu"], os.O_RDONLY | os.O_CLOEXEC)
        self._freeze_fd = os.open(facts["freeze"], os.O_WRONLY | os.O_CLOEXEC)
        self._v2 = facts["cgroup"] == "v2"
        self._delay_fds: dict[str, int] = {}

    @classmethod
    def open(cls, limits: Limits) -> Box:
        check()
        try:
            claim = home.claim_box()
        except OSError as exc:
            raise SandboxUnavailable(str(exc)) from None
        try:
            facts = boxctl.facts(
                "init",
                "--box", str(claim.box),
                "--memory-mb", str(limits.memory_mb),
                "--pids", str(limits.pids),
                "--cpus", str(limits.cpus),
                "--build-mb", str(limits.build_mb),
            )  # fmt: skip
            return cls(claim, limits, facts)
        except (OSError, KeyError) as exc:
            with contextlib.suppress(OSError):
                boxctl.call("cleanup", "--box", str(claim.box))
            claim.release()
            raise SandboxUnavailable(f"cannot make a box: {exc}") from None

    # ------------------------------------------------------------------ the bot's files

    def stage(self, files: dict[str, bytes]) -> Path:
        """Write the bot's files into the box's code folder (read-only to the bot; `bot`, an
        executable's name in every language, may be run). Raises BadBot for files that
        cannot be a tree (see `botfiles.check_tree`), OSError when the host cannot hold
        them; the caller destroys the box either way."""
        self.fill(files)
        assert self.code_dir is not None
        return self.code_dir

    def fill(self, files: dict[str, bytes]) -> None:
        """Write the bot's files into the code folder (possibly already mounted in a running
        box: the folder itself is kept, only filled). The folder is this process's own; its
        group is the box's (set-group-id), so the box reads what is written here."""
        check_tree("the bot", files)
        folder = self.code_dir
        assert folder is not None, "the box is destroyed"
        for rel, data in files.items():
            target = folder / rel
            for parent in reversed(target.relative_to(folder).parents[:-1]):
                # Set-group-id and the box's group come from the folder above; a chmod here
                # would clear them (the caller is not in the box's group).
                with contextlib.suppress(FileExistsError):
                    (folder / parent).mkdir(mode=0o750)
            mode = 0o750 if rel == "bot" else 0o640
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
            try:
                os.fchmod(fd, mode)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)

    # ------------------------------------------------------------------ processes

    def run_command(
        self,
        argv: Sequence[str],
        *,
        env: Sequence[tuple[str, str]] = (),
        build: bool = False,
        chdir: str | None = None,
    ) -> list[str]:
        """The command line whose process becomes `argv` in this box."""
        return boxctl.run_command(
            self.id,
            image=runtime.identity(),
            runtime=home.runtime_name(),
            limits=self.limits.run_args(),
            env=env,
            build=build,
            chdir=chdir,
            argv=argv,
        )

    def start(self, language: Language | None = None) -> BotProcess:
        """Launch the staged bot in this box (a Python bot unless `language` says else)."""
        lang = language or LANGUAGES["python"]
        return self._spawn(self.run_command(lang.command, env=lang.env))

    def start_waiter(self, script: str) -> BotProcess:
        """Start `/bin/sh -c script` in this box as its bot process would start (the ready
        boxes of `bots.runner.pool`: the script becomes the bot's command once told which)."""
        return self._spawn(self.run_command(["/bin/sh", "-c", script]))

    def start_build(
        self, command: Sequence[str], env: Sequence[tuple[str, str]] = (), *, merge: bool = True
    ) -> subprocess.Popen[bytes]:
        """Run a build step in this box, with /build writable (the box must have been made
        with `build_mb`); output on one pipe (stdout and stderr together, or with `merge`
        False stdout alone)."""
        argv = self.run_command(command, env=env, build=True, chdir="/build")
        try:
            return subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if merge else subprocess.DEVNULL,
                env=boxctl.environment(),
                close_fds=True,
                start_new_session=True,
            )
        except OSError as exc:
            raise SandboxUnavailable(f"cannot start the sandbox: {exc}") from None

    def _spawn(self, argv: list[str]) -> BotProcess:
        try:
            return BotProcess(argv, env=boxctl.environment(), on_exit=self.kill_all)
        except OSError as exc:
            raise SandboxUnavailable(f"cannot start the sandbox: {exc}") from None

    # ------------------------------------------------------------------ while running

    def cpu_ns(self) -> int:
        """CPU time used by every process that was ever in the box."""
        text = os.pread(self._cpu_fd, 4096, 0)
        if not self._v2:
            return int(text)
        for line in text.split(b"\n"):
            if line.startswith(b"usage_usec "):
                return int(line.split()[1]) * 1000
        raise SandboxUnavailable(f"no usage_usec in {self.facts['cpu']}")

    def run_delay_ns(self, refresh: bool = True) -> int:
        """How long the box's threads have waited, runnable, for a CPU (the second field of
        each one's /proc schedstat): time a busy host took from it, not time it thought. The
        threads' files stay open between calls (a read is then a few microseconds); `refresh`
        looks for threads that came since (the clock does when a decision's wall time is up),
        and the first call always does. A thread that ended takes its delay with it."""
        if refresh or not self._delay_fds:
            with contextlib.suppress(OSError):
                tids = set(Path(self.facts["tasks"]).read_text().split())
                for tid in tids - self._delay_fds.keys():
                    with contextlib.suppress(OSError):
                        self._delay_fds[tid] = os.open(
                            f"/proc/{tid}/schedstat", os.O_RDONLY | os.O_CLOEXEC
                        )
        total = 0
        for tid, fd in list(self._delay_fds.items()):
            try:
                total += int(os.pread(fd, 128, 0).split()[1])
            except (OSError, IndexError, ValueError):  # the thread is gone
                os.close(fd)
                del self._delay_fds[tid]
        return total

    def memory_exceeded(self) -> bool:
        """Whether the box ever hit its memory limit (to explain an OOM kill)."""
        try:
            text = Path(self.facts["memory"]).read_text()
        except OSError:
            return False
        fields = text.split()
        events = dict(zip(fields[::2], fields[1::2], strict=False))
        # v1's memory.oom_control and v2's memory.events both count the box's OOM kills
        return int(events.get("oom_kill", "0")) > 0 or int(events.get("max", "0")) > 0

    def freeze(self) -> None:
        if not self.frozen and not self.destroyed:
            os.pwrite(self._freeze_fd, b"1" if self._v2 else b"FROZEN", 0)
            self.frozen = True

    def thaw(self) -> None:
        if self.frozen and not self.destroyed:
            os.pwrite(self._freeze_fd, b"0" if self._v2 else b"THAWED", 0)
            self.frozen = False

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in Path(self.facts["procs"]).read_text().split()]
        except OSError:
            return []

    def kill_all(self) -> None:
        """Kill every process in the box (the program's `kill`); the box stays made."""
        if self.destroyed:
            return
        try:
            boxctl.call("kill", "--box", str(self.id))
        except OSError as exc:
            raise SandboxUnavailable(f"cannot kill box {self.id}'s processes: {exc}") from None
        self.frozen = False

    def destroy(self) -> None:
        """Kill everything, remove the box, release its id. Safe to call twice; the id is
        released last, so no other caller can claim it half-cleaned (and if the program
        could not remove it, whoever claims it next removes it first: `init` does)."""
        destroy_boxes([self])

    def forget_in_child(self) -> None:
        """In a forked child: let go of this process's copies (the claim above all: a copy
        would keep the box held after its owner released it), touching nothing of the box."""
        self._forget()

    def _forget(self) -> None:
        self.destroyed = True
        self.code_dir = None
        for fd in (self._cpu_fd, self._freeze_fd, *self._delay_fds.values()):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._delay_fds.clear()
        self._cpu_fd = self._freeze_fd = -1
        self.claim.release()


def destroy_boxes(boxes: Sequence[Box]) -> None:
    """Destroy several boxes with one call of the program (a match's seats at its end)."""
    alive = [box for box in boxes if not box.destroyed]
    if not alive:
        return
    try:
        args: list[Any] = []
        for box in alive:
            args += ["--box", str(box.id)]
        boxctl.call("cleanup", *args)
    except OSError:
        pass  # the next claim of these ids removes what is left (`init` does, first)
    finally:
        for box in alive:
            box._forget()
