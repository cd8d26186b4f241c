"""The development path (`make run`, `make admin`, deploy/as-worker.sh) hands root's terminal and
the site's data to nobody (issue 36, part 5).

The attacks: a process of the worker's user with root's terminal as its controlling terminal
pushed keystrokes into root's shell (TIOCSTI, where `dev.tty.legacy_tiocsti` is 1); `.run/`,
with the SQLite database and every uploaded bot's source, was world-readable (umask 022). And
what must keep working: Ctrl-C in `make run` stops every process honcho started.

These run commands as the worker's user, so they need root and that user (deploy/setup.sh).
"""

from __future__ import annotations

import os
import pty
import pwd
import select
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
AS_WORKER = REPO / "deploy" / "as-worker.sh"
WORKER_USER = os.environ.get("GRASS_WORKER_USER", "grass")

# Run as the worker's user: for every descriptor on root's terminal (its device number is in
# ROOT_RDEV), try to push a character into that terminal's input.
PROBE = """
import fcntl, os, termios
root = int(os.environ["ROOT_RDEV"])
pushed = []
for fd in (0, 1, 2):
    try:
        if not os.isatty(fd) or os.fstat(fd).st_rdev != root:
            continue
        fcntl.ioctl(fd, termios.TIOCSTI, b" ")
        pushed.append(fd)
    except OSError:
        pass
print("uid", os.getuid(), "pushed into root's terminal" if pushed else "refused", pushed)
"""

# Run as root on the terminal: note the terminal's device, then run the command given.
LAUNCH = """
import os, sys
os.environ["ROOT_RDEV"] = str(os.fstat(0).st_rdev)
os.execvp(sys.argv[1], sys.argv[1:])
"""


@pytest.fixture(scope="module")
def worker_user() -> pwd.struct_passwd:
    if os.geteuid() != 0:
        pytest.skip("needs root: as-worker.sh changes users only as root")
    try:
        return pwd.getpwnam(WORKER_USER)
    except KeyError:
        if os.environ.get("CI") == "true":
            pytest.fail(f"no user {WORKER_USER}: run deploy/setup.sh")
        pytest.skip(f"no user {WORKER_USER}")


class Terminal:
    """A command run as root's login shell would: a session of its own on a new terminal.

    Its Ctrl-C and Ctrl-\\ are the defaults a login shell gives a command, whatever pytest was
    started with: a suite started in the background by a script (`make soak ... &`) inherits
    SIGINT and SIGQUIT ignored, every process below keeps them ignored across exec, and the
    Ctrl-C tests then saw the command live on (soak runs of 2026-11-29 failed so)."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.pid, self.master = pty.fork()
        if self.pid == 0:  # pragma: no cover (the child)
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                signal.signal(signal.SIGQUIT, signal.SIG_DFL)
                os.chdir(REPO)
                os.execvpe(argv[0], argv, {**os.environ, **(env or {})})
            finally:
                os._exit(127)
        self.output = b""

    def read_until(self, done: Callable[[str], bool], timeout: float = 60) -> str:
        """Read what the terminal shows until `done(text)` or the command's end."""
        deadline = time.monotonic() + timeout
        while not done(self.output.decode(errors="replace")):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out; the terminal showed: {self.output!r}")
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # EIO: nothing holds the terminal's other side any more
                chunk = b""
            if not chunk:
                break
            self.output += chunk
        return self.output.decode(errors="replace")

    def type(self, data: bytes) -> None:
        os.write(self.master, data)

    def wait(self, timeout: float = 60) -> int:
        self.read_until(lambda _: False, timeout)
        _, status = os.waitpid(self.pid, 0)
        os.close(self.master)
        return os.waitstatus_to_exitcode(status)


def _probe(prefix: list[str]) -> str:
    terminal = Terminal([sys.executable, "-c", LAUNCH, *prefix, "/usr/bin/python3", "-c", PROBE])
    assert terminal.wait() == 0, terminal.output
    return terminal.output.decode(errors="replace")


def test_as_worker_gives_the_command_a_terminal_of_its_own(
    worker_user: pwd.struct_passwd,
) -> None:
    shown = _probe([str(AS_WORKER)])
    assert f"uid {worker_user.pw_uid} refused" in shown, shown


def test_the_old_way_pushed_keys_into_roots_terminal(worker_user: pwd.struct_passwd) -> None:
    """The control: setpriv alone, as as-worker.sh ran it, leaves root's terminal to the
    command (where the kernel still allows TIOCSTI at all)."""
    legacy = Path("/proc/sys/dev/tty/legacy_tiocsti")
    if legacy.exists() and legacy.read_text().strip() == "0":
        pytest.skip("this kernel refuses TIOCSTI to every unprivileged process")
    shown = _probe(
        ["setpriv", f"--reuid={WORKER_USER}", f"--regid={WORKER_USER}", "--init-groups", "--"]
    )
    assert "pushed into root's terminal [0, 1, 2]" in shown, shown


def test_as_worker_keeps_the_environment_and_stops_on_ctrl_c(
    worker_user: pwd.struct_passwd,
) -> None:
    """A recipe's command (migrate, createsuperuser) on its own terminal: make's settings reach
    it, and Ctrl-C typed at root's terminal stops it."""
    script = 'echo "ready $(id -u) $GRASS_PROBE"; exec sleep 3141'
    terminal = Terminal([str(AS_WORKER), "sh", "-c", script], env={"GRASS_PROBE": "kept"})
    try:
        terminal.read_until(lambda text: f"ready {worker_user.pw_uid} kept" in text)
        terminal.type(b"\x03")
        assert terminal.wait() != 0
        assert not _processes("sleep", "3141")
    finally:  # a failure must not leave the command behind to fail the next run too
        for pid in _processes("sleep", "3141"):
            os.kill(pid, signal.SIGKILL)


def _processes(*argv: str) -> list[int]:
    """Pids of the processes running exactly `argv`."""
    wanted = "\0".join(argv).encode() + b"\0"
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes() == wanted:
                found.append(int(entry.name))
        except OSError:
            pass
    return found


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder the worker's user may read (pytest's own are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="grass-dev-path-"))
    folder.chmod(0o755)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)


@pytest.mark.slow
def test_ctrl_c_in_make_run_still_stops_every_process(
    worker_user: pwd.struct_passwd, shared_folder: Path
) -> None:
    procfile = shared_folder / "Procfile"
    procfile.write_text(
        f"one: {AS_WORKER} sleep 2718\ntwo: {AS_WORKER} sleep 2718\n"
        f"three: {AS_WORKER} sh -c 'exec sleep 2718'\n"
    )
    honcho = REPO / ".venv" / "bin" / "honcho"
    terminal = Terminal([str(honcho), "start", "-f", str(procfile)])
    try:
        terminal.read_until(lambda _: len(_processes("sleep", "2718")) == 3, timeout=60)
        owners = {Path(f"/proc/{pid}").stat().st_uid for pid in _processes("sleep", "2718")}
        assert owners == {worker_user.pw_uid}
        terminal.type(b"\x03")
        terminal.wait(timeout=60)
        assert not _processes("sleep", "2718")
    finally:
        for pid in _processes("sleep", "2718"):
            os.kill(pid, signal.SIGKILL)


def test_make_run_keeps_its_folder_and_files_to_its_user(
    worker_user: pwd.struct_passwd, shared_folder: Path
) -> None:
    """`make run` with stand-ins for Python and honcho that report what they were given."""
    run_dir = shared_folder / "run"
    run_dir.mkdir(mode=0o755)  # as an older make run left it
    report = shared_folder / "report"
    report.touch()
    report.chmod(0o666)
    stub = shared_folder / "stub"
    stub.write_text(f'#!/bin/sh\necho "$(id -u) $(umask)" >> {report}\ntouch {run_dir}/made\n')
    stub.chmod(0o755)
    done = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "run",
            "SETUP_DONE=",
            f"PYTHON={stub}",
            f"HONCHO={stub}",
            f"RUN_DIR={run_dir}",
        ],
        cwd=REPO,
        env={**os.environ, "CELERY_BROKER_URL": "redis://127.0.0.1:1/0"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert stat.S_IMODE(run_dir.stat().st_mode) == 0o700
    assert run_dir.stat().st_uid == worker_user.pw_uid
    assert stat.S_IMODE((run_dir / "made").stat().st_mode) == 0o600
    lines = report.read_text().split("\n")[:-1]
    # migrate and ladder_examples as the worker's user; honcho (as root) starts the rest.
    assert lines == [f"{worker_user.pw_uid} 0077"] * 2 + ["0 0077"], lines
