"""A bot process and its pipes: bounded, non-blocking, deadline-driven I/O.

The runner never blocks on a bot: writes and reads go through a selector with a deadline,
reply lines are capped at `MAX_REPLY`, and stderr is drained into a capped buffer whenever the
runner waits, so a bot that floods either stream or never reads costs only its own time.
What a bot writes on stderr is kept twice, both bounded: the head and tail of the whole match
(`stderr_text`, for faults) and what came since the referee last asked (`stderr_new`, the
decision's debug lines).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Sequence

from bots.protocol import MAX_REPLY

STDERR_KEEP = 16 * 1024
"""Bytes of stderr kept for the author: the first half and the last half of what it wrote."""
DEBUG_KEEP = 64 * 1024
"""Bytes of stderr kept since the last `stderr_new()` (the referee takes them at every decision,
as that decision's debug lines): the last ones; the bytes before them are counted, not kept."""


class BotTimeout(Exception):
    """No complete reply line before the deadline."""


class BotGone(Exception):
    """The bot closed its stdout or exited; carries the reason."""


class LineTooLong(Exception):
    """The bot wrote more than MAX_REPLY bytes without a newline."""


def _remaining(deadline: float, wait: Callable[[], float] | None) -> float:
    remaining = deadline - time.perf_counter()
    return remaining if wait is None else min(remaining, wait())


class BotProcess:
    """One running bot: a child process with three pipes."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        pass_fds: Sequence[int] = (),
        preexec_fn: Callable[[], None] | None = None,
        on_exit: Callable[[], None] | None = None,
    ) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env if env is not None else {"PATH": "/usr/bin:/bin"},
            cwd=cwd,
            pass_fds=tuple(pass_fds),
            # Joins the bot's cgroups and sets its rlimits; nothing else runs before exec.
            preexec_fn=preexec_fn,
            close_fds=True,
            start_new_session=True,
        )
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self.stdin = self.proc.stdin.fileno()
        self.stdout = self.proc.stdout.fileno()
        self.stderr = self.proc.stderr.fileno()
        for fd in (self.stdin, self.stdout, self.stderr):
            os.set_blocking(fd, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.stdout, selectors.EVENT_READ, "out")
        self.selector.register(self.stderr, selectors.EVENT_READ, "err")
        self.buffer = bytearray()
        self.taken = 0
        self.err_head = bytearray()
        self.err_tail = bytearray()
        self.err_total = 0
        self.err_new = bytearray()
        self.err_new_cut = 0
        self.stdout_open = True
        self.on_exit = on_exit
        self.closed = False

    # ------------------------------------------------------------------ I/O

    def send(self, data: bytes, deadline: float, wait: Callable[[], float] | None = None) -> None:
        """Write all of `data` before `deadline`, draining stderr meanwhile. `wait`, if
        given, says how long more the caller's other clock allows (0: time is up)."""
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.stdin, view)
                view = view[written:]
                continue
            except BlockingIOError:
                pass
            except OSError:
                # Usually the bot has exited: say how, as a failed read would.
                raise BotGone(self.exit_reason()) from None
            remaining = _remaining(deadline, wait)
            if remaining <= 0:
                raise BotTimeout("the bot did not read its input in time")
            self.selector.modify(self.stdout, selectors.EVENT_READ, "out")
            key = self.selector.get_map().get(self.stdin)
            if key is None:
                self.selector.register(self.stdin, selectors.EVENT_WRITE, "in")
            for key, _ in self.selector.select(min(remaining, 0.05)):
                if key.data == "err":
                    self._drain_err()
        if self.selector.get_map().get(self.stdin) is not None:
            self.selector.unregister(self.stdin)

    def readline(
        self, deadline: float, wait: Callable[[], float] | None = None, limit: int = MAX_REPLY
    ) -> bytes:
        """The next complete line from stdout (without the newline), before `deadline` and
        while `wait` (the caller's other clock, as in `send`) allows; LineTooLong past
        `limit` bytes. `self.taken` counts the bytes of the lines it returned."""
        while True:
            newline = self.buffer.find(b"\n")
            if 0 <= newline <= limit:
                line = bytes(self.buffer[:newline])
                del self.buffer[: newline + 1]
                self.taken += newline + 1
                return line
            if newline > limit or len(self.buffer) > limit:
                raise LineTooLong(f"a line longer than {limit} bytes")
            if not self.stdout_open:
                raise BotGone(self.exit_reason())
            remaining = _remaining(deadline, wait)
            if remaining <= 0:
                raise BotTimeout("no reply before the deadline")
            for key, _ in self.selector.select(remaining):
                if key.data == "err":
                    self._drain_err()
                elif key.data == "out":
                    self._read_out()

    def _read_out(self) -> None:
        try:
            chunk = os.read(self.stdout, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.stdout_open = False
            self.selector.unregister(self.stdout)
            return
        self.buffer += chunk

    def _drain_err(self) -> None:
        for _ in range(64):  # bounded work per wake-up: a flood cannot pin the runner here
            try:
                chunk = os.read(self.stderr, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.selector.unregister(self.stderr)
                return
            self.err_total += len(chunk)
            self._keep_new(chunk)
            room = STDERR_KEEP // 2 - len(self.err_head)
            if room > 0:
                self.err_head += chunk[:room]
                chunk = chunk[room:]
            self.err_tail = (self.err_tail + chunk)[-STDERR_KEEP // 2 :]

    def _keep_new(self, chunk: bytes) -> None:
        """Add `chunk` to what came since the last `stderr_new`, keeping its last DEBUG_KEEP
        bytes. Copies at most DEBUG_KEEP + len(chunk) bytes: a flood costs the runner a memory
        copy of what the bot wrote, as the reading itself does."""
        new = self.err_new
        if len(chunk) >= DEBUG_KEEP:
            self.err_new_cut += len(new) + len(chunk) - DEBUG_KEEP
            new[:] = chunk[-DEBUG_KEEP:]
            return
        new += chunk
        excess = len(new) - DEBUG_KEEP
        if excess > 0:
            del new[:excess]
            self.err_new_cut += excess

    def stderr_new(self) -> tuple[bytes, int]:
        """What the bot wrote on stderr since the last call: its last DEBUG_KEEP bytes, and the
        count of the bytes before them that were cut. Reads what the pipe holds first, so a
        line written before the bot's reply is never left for the next call."""
        with contextlib.suppress(KeyError, ValueError):
            self._drain_err()
        taken, cut = bytes(self.err_new), self.err_new_cut
        self.err_new.clear()
        self.err_new_cut = 0
        return taken, cut

    def stderr_text(self) -> str:
        """What the bot wrote to stderr, truncated in the middle if it was long."""
        with contextlib.suppress(KeyError, ValueError):
            self._drain_err()
        head = self.err_head.decode(errors="replace")
        tail = self.err_tail.decode(errors="replace")
        skipped = self.err_total - len(self.err_head) - len(self.err_tail)
        if skipped > 0:
            return f"{head}\n[... {skipped} bytes of stderr omitted ...]\n{tail}"
        return head + tail

    def exit_reason(self) -> str:
        code = self.proc.poll()
        if code is None:
            try:
                code = self.proc.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                return "closed its stdout or stdin"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            return f"killed by {name}"
        return f"exited with status {code}"

    # ------------------------------------------------------------------ teardown

    def wait_exit(self, seconds: float) -> None:
        """Give the bot up to `seconds` to exit by itself (after `game_end`)."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=seconds)

    def close(self) -> None:
        """Kill the bot and everything it started; safe to call twice."""
        if self.closed:
            return
        self.closed = True
        try:
            if self.on_exit is not None:
                self.on_exit()  # the sandbox kills the whole box
        except (OSError, RuntimeError):
            pass  # the box's removal kills what is left
        finally:
            if self.proc.poll() is None:
                # A box's process is not ours to signal when we are not root: the box
                # program's kill (on_exit) did it.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    self.proc.kill()
            self._reap()

    def _reap(self) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self.selector.close()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
