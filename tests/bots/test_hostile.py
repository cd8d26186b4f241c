"""Hostile bots against the sandboxed runner.

Every bot here attacks the sandbox or the runner, then reports what it obtained on stderr (one
`HOSTILE {json}` line, kept in `SeatReport.stderr`). Each test checks two things: the attack got
nothing (an error, an empty answer, a denial), and the match still finished with a correct,
replayable result, the other seat untouched and no process or cgroup of the box left behind.

Gaps found while writing these (a writable root, no quota on /dev/shm, an idle-CPU rule that
short bursts could dodge, a stale CPU reading after a strike) were fixed in the runner; their
tests stay here as regressions.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import subprocess
import textwrap
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bots import protocol
from bots.runner import home, runtime
from bots.runner.botfiles import BotSource, load_bot
from bots.runner.match import play_match
from bots.runner.results import MatchResult, SeatReport
from bots.runner.sandbox import Limits
from bots.runner.seats import TimeControl
from engine.log import read_log, replay
from tests.bots.boxes import own_leftovers

STARTUP_MS = 120_000 if os.environ.get("GRASS_VM") else 20_000
"""Start-up is not what these tests test, and some attackers start their attack before
`ready` (a fork bomb shares its box's one CPU with the main process): room for a loaded host,
and much more in the emulated cgroup v2 guest (tests/vm), whose clock runs on while the host
gives its vCPUs no time (three tests missed 5 s there on an idle, slower host)."""
FAST = TimeControl(decision_ms=200, bank_ms=500, startup_ms=STARTUP_MS)
"""Tight clocks: a bot that stalls costs at most 0.7 s for its first decision, 0.2 s after."""
ROOMY = TimeControl(decision_ms=3_000, bank_ms=2_000, startup_ms=STARTUP_MS)
"""For attacks that take a while in `choose` (a filesystem scan, filling memory)."""

PRELUDE = '''\
import json, os, sys, time
from bots.sdk import Bot, run


def report(**found):
    """Tell the test what the attack obtained: one line on stderr."""
    sys.stderr.write("HOSTILE " + json.dumps(found, default=repr) + "\\n")
    sys.stderr.flush()


def attempt(fn, *args):
    """{"ok": what the call returned} or {"err": the exception's class name, "msg": ...}."""
    try:
        return {"ok": repr(fn(*args))[:500]}
    except BaseException as exc:
        return {"err": type(exc).__name__, "msg": str(exc)[:200]}


def readable_files(top, skip=("/proc", "/usr", "/dev", "/sys")):
    """Every regular file under `top` this process can open, outside `skip`."""
    for root, dirs, files in os.walk(top):
        if root in skip:
            dirs[:] = []
            continue
        for name in files:
            path = os.path.join(root, name)
            try:
                with open(path, "rb") as f:
                    yield path, f.read(1 << 20)
            except OSError:
                pass


def proc_pids():
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())


def proc_read(pid, what):
    try:
        with open(f"/proc/{pid}/{what}", "rb") as f:
            return f.read()
    except OSError:
        return b""


class Quiet(Bot):
    """Plays the first legal action: after its attack, a hostile bot behaves."""

    name = "hostile"

    def choose(self, obs):
        return obs.legal[0]

'''


def hostile(body: str, name: str = "hostile", **values: Any) -> BotSource:
    """A bot: the prelude, then `body` with `{{NAME}}` placeholders filled from `values`."""
    text = textwrap.dedent(body)
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", repr(value))
    assert "{{" not in text, "a placeholder was left unfilled"
    return BotSource(name, {"bot.py": (PRELUDE + text).encode()})


def raw_bot(body: str, name: str = "raw") -> BotSource:
    """A bot that speaks the protocol itself (no SDK), to send exactly the bytes it wants."""
    return BotSource(name, {"bot.py": textwrap.dedent(body).encode()})


def play(
    attacker: BotSource,
    opponent: BotSource | None = None,
    *,
    time_control: TimeControl = FAST,
    resources: Limits | None = None,
    seed: int = 7,
) -> MatchResult:
    """One small sandboxed match: the attacker in seat 0, `random` (or `opponent`) in seat 1."""
    return play_match(
        [attacker, opponent or load_bot("random")],
        seed=seed,
        limits={"max_hands": 1},
        time_control=time_control,
        resources=resources,
        sandboxed=True,
    )


def findings(seat: SeatReport) -> dict[str, Any]:
    """Everything the hostile bot reported (later lines override earlier keys)."""
    found: dict[str, Any] = {}
    for line in seat.stderr.splitlines():
        if line.startswith("HOSTILE "):
            # The first line kept may be cut by the stderr cap.
            with contextlib.suppress(json.JSONDecodeError):
                found.update(json.loads(line[len("HOSTILE ") :]))
    assert found, f"the hostile bot reported nothing; its stderr: {seat.stderr[-1500:]!r}"
    return found


def denied(outcome: dict[str, Any]) -> bool:
    """An `attempt` that raised: the attacker obtained nothing."""
    return "err" in outcome and "ok" not in outcome


def leftover_boxes() -> list[int]:
    """Uids of this test's boxes of which something (cgroups, staged code) is left with no
    live box holding the uid."""
    return own_leftovers()


def host_processes_with(marker: str) -> list[int]:
    """Host pids whose command line contains `marker` (this process excluded)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def fault_kinds(seat: SeatReport) -> list[str]:
    return [f["kind"] for f in seat.faults]


def assert_finished(match: MatchResult, *, attacker_forfeits: bool | None = None) -> None:
    """The match ended with a result the engine verifies, the opponent was untouched, the
    attacker's forfeit (if expected either way) is recorded, and nothing of either box is left."""
    assert match.result["e"] == "result"
    game = replay(read_log(io.BytesIO(match.log_text().encode())))
    assert game.result == match.result
    attacker, opponent = match.seats
    assert opponent.decisions > 0
    assert opponent.faults == [] and opponent.strikes == 0 and not opponent.forfeited
    if attacker_forfeits is not None:
        assert attacker.forfeited is attacker_forfeits, attacker.faults
    if attacker.forfeited:
        assert match.ranks == [2, 1]
        assert attacker.forfeit_reason
        assert "forfeit" in fault_kinds(attacker)
        notes = [e for e in match.events if e["e"] == "note" and e["seat"] == 0]
        assert [n["kind"] for n in notes] == fault_kinds(attacker)
    assert leftover_boxes() == []


# ---------------------------------------------------------------------------- 1. network


def test_network_is_unreachable(box_made: str) -> None:
    # A listener on the host the bot must not reach: an abstract Unix socket (AF_UNIX is allowed
    # by the seccomp filter, so only the network namespace keeps the bot out) and a TCP port.
    name = f"grass-hostile-{uuid.uuid4().hex}"
    with (
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix_listener,
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp_listener,
    ):
        unix_listener.bind("\0" + name)
        unix_listener.listen()
        tcp_listener.bind(("127.0.0.1", 0))
        tcp_listener.listen()
        port = tcp_listener.getsockname()[1]
        bot = hostile(
            """
            import socket

            def connect(host, port):
                with socket.create_connection((host, port), timeout=1) as s:
                    return s.getpeername()

            def connect_unix(address):
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.settimeout(1)
                    s.connect(address)
                    return "connected"

            report(
                redis=attempt(connect, "127.0.0.1", 6379),
                host_port=attempt(connect, "127.0.0.1", {{PORT}}),
                outside=attempt(connect, "1.1.1.1", 80),
                outside_v6=attempt(connect, "2606:4700:4700::1111", 80),
                dns=attempt(socket.getaddrinfo, "example.com", 80),
                udp=attempt(socket.socket, socket.AF_INET, socket.SOCK_DGRAM),
                raw=attempt(socket.socket, socket.AF_INET, socket.SOCK_RAW, 1),
                netlink=attempt(socket.socket, socket.AF_NETLINK, socket.SOCK_RAW, 0),
                host_abstract_unix=attempt(connect_unix, "\\0" + {{NAME}}),
                interfaces=attempt(socket.if_nameindex),
            )
            run(Quiet())
            """,
            PORT=port,
            NAME=name,
        )
        match = play(bot)
    found = findings(match.seats[0])
    for attack in (
        "redis",
        "host_port",
        "outside",
        "outside_v6",
        "dns",
        "udp",
        "raw",
        "netlink",
        "host_abstract_unix",
        "interfaces",
    ):
        assert denied(found[attack]), (attack, found[attack])
    assert found["redis"]["err"] == "PermissionError"  # the seccomp filter: no inet sockets
    assert found["dns"]["err"] == "gaierror"
    assert_finished(match, attacker_forfeits=False)


# ---------------------------------------------------------------------------- 2. host files


def test_the_root_is_the_image_not_the_host(box_made: str) -> None:
    """The box's / is the runtime image, read-only: its /etc is the image's (no host user,
    host name or key), /sys and /root hold nothing of the host."""
    bot = hostile(
        """
        report(
            shadow=attempt(lambda: open("/etc/shadow").read()),
            passwd=attempt(lambda: open("/etc/passwd").read()[:200]),
            runtime=attempt(lambda: open("/etc/grass-runtime").read()),
            ssh=attempt(os.listdir, "/root/.ssh"),
            root=sorted(os.listdir("/")),
            sys=attempt(os.listdir, "/sys"),
            home=attempt(os.listdir, "/home"),
            write=attempt(lambda: open("/etc/x", "w")),
        )
        run(Quiet())
        """
    )
    match = play(bot)
    found = findings(match.seats[0])
    image = runtime.image_dir()
    assert found["runtime"] == {"ok": repr(runtime.identity() + "\n")}
    assert found["passwd"] == {"ok": repr((image / "etc/passwd").read_text()[:200])}
    assert (image / "etc/passwd").read_text() != Path("/etc/passwd").read_text()
    assert found["shadow"]["err"] in ("FileNotFoundError", "PermissionError")
    assert found["ssh"]["err"] in ("FileNotFoundError", "PermissionError")
    assert found["sys"] == {"ok": "[]"} and found["home"] == {"ok": "[]"}
    assert found["write"]["err"] == "OSError" and "Read-only" in found["write"]["msg"]
    assert {"bot", "sandbox", "usr", "etc", "tmp", "proc", "dev"} <= set(found["root"])
    assert_finished(match, attacker_forfeits=False)


# ---------------------------------------------------------------------------- 3. environment


def test_the_runner_environment_and_project_are_invisible(
    box_made: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = f"grass-secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("GRASS_SECRET", secret)
    project = str(home.PROJECT)
    bot = hostile(
        """
        import importlib
        SECRET = {{SECRET_REVERSED}}[::-1]  # not in this file as such: only the env has it
        PROJECT = {{PROJECT}}
        NEEDLES = ["def " + "play_match", "def " + "seccomp_program", "import " + "seccomp"]

        environ_files = {}
        for pid in proc_pids():
            for what in ("environ", "cmdline"):
                environ_files[f"/proc/{pid}/{what}"] = proc_read(pid, what)
        environ_files["/proc/self/environ"] = proc_read("self", "environ")
        environ_files["/proc/self/mountinfo"] = proc_read("self", "mountinfo")
        leaks = [
            path
            for path, data in environ_files.items()
            if SECRET.encode() in data or b"GRASS_SECRET" in data or PROJECT.encode() in data
        ]
        runner_source = [
            path
            for path, data in readable_files("/")
            if any(n.encode() in data for n in NEEDLES)
        ]
        report(
            env=dict(os.environ),
            pid1_environ=proc_read(1, "environ").decode(errors="replace"),
            leaks=leaks,
            project=attempt(os.listdir, PROJECT),
            runner_file=attempt(lambda: open(PROJECT + "/bots/runner/sandbox.py").read()),
            venv=attempt(os.listdir, PROJECT + "/.venv"),
            import_runner=attempt(importlib.import_module, "bots.runner.match"),
            runner_source=runner_source,
            sys_path=sys.path,
            site_packages=attempt(os.listdir, "/usr/lib/python3/dist-packages"),
            usr_local=attempt(os.listdir, "/usr/local"),
            home=attempt(os.listdir, "/root"),
            work=attempt(os.listdir, "/work"),
        )
        run(Quiet())
        """,
        SECRET_REVERSED=secret[::-1],
        PROJECT=project,
    )
    match = play(bot)
    found = findings(match.seats[0])
    assert "GRASS_SECRET" not in found["env"]
    assert secret not in json.dumps(found["env"])
    assert set(found["env"]) <= {"PATH", "HOME", "LANG", "PWD"}
    assert "GRASS_SECRET" not in found["pid1_environ"]
    assert found["leaks"] == []
    for attack in ("project", "runner_file", "venv", "work"):
        assert found[attack]["err"] == "FileNotFoundError", (attack, found[attack])
    assert found["home"]["err"] == "PermissionError"  # the image's own /root
    assert found["import_runner"]["err"] == "ModuleNotFoundError"
    assert found["runner_source"] == []
    assert not any(project in p for p in found["sys_path"])
    # The image's Debian packages (NumPy), not the host's (python3-seccomp is on the host).
    assert "numpy" in found["site_packages"]["ok"] and "seccomp" not in found["site_packages"]["ok"]
    assert found["usr_local"]["ok"].startswith("[")
    assert_finished(match, attacker_forfeits=False)


# ---------------------------------------------------------------------------- 4. the other bot


def test_a_bot_cannot_find_the_other_bots_files(box_made: str) -> None:
    secret = f"victim-secret-{uuid.uuid4().hex}"
    victim = hostile(
        """
        SECRET = {{SECRET}}
        with open("/tmp/victim-notes.txt", "w") as f:  # in the victim's own scratch dir
            f.write(SECRET)
        run(Quiet())
        """,
        name="victim",
        SECRET=secret,
    )
    attacker = hostile(
        """
        SECRET = {{SECRET_REVERSED}}[::-1].encode()
        SELF = b"attacker" + b"-self-mark"  # attacker-self-mark: proves the scan reads files


        def scan():
            hits, own, scanned = [], [], 0
            for path, data in readable_files("/"):
                scanned += 1
                if SECRET in data:
                    hits.append(path)
                if SELF in data:
                    own.append(path)
            links = {}
            for pid in proc_pids():
                for what in ("cmdline", "environ", "maps"):
                    if SECRET in proc_read(pid, what) or b"victim" in proc_read(pid, what):
                        hits.append(f"/proc/{pid}/{what}")
                for what in ("cwd", "root", "exe"):
                    try:
                        links[f"{pid}/{what}"] = os.readlink(f"/proc/{pid}/{what}")
                    except OSError:
                        pass
                for top in (f"/proc/{pid}/cwd", f"/proc/{pid}/root/tmp"):
                    for path, data in readable_files(top):
                        if SECRET in data:
                            hits.append(path)
                try:
                    for fd in os.listdir(f"/proc/{pid}/fd"):
                        target = os.readlink(f"/proc/{pid}/fd/{fd}")
                        if "victim" in target or "grass-bot" in target:
                            hits.append(target)
                except OSError:
                    pass
            return {
                "hits": hits,
                "own": own,
                "scanned": scanned,
                "pids": proc_pids(),
                "links": links,
                "tmp": os.listdir("/tmp"),
            }


        class Snoop(Quiet):
            scanned = False

            def choose(self, obs):
                if not self.scanned:  # on turn: the victim is surely running by now
                    self.scanned = True
                    report(**scan())
                return obs.legal[0]


        run(Snoop())
        """,
        SECRET_REVERSED=secret[::-1],
    )
    match = play(attacker, victim, time_control=ROOMY)
    found = findings(match.seats[0])
    assert found["hits"] == []
    assert "victim-notes.txt" not in found["tmp"]
    assert "/bot/bot.py" in found["own"] and found["scanned"] >= 1
    assert all(
        target in {"/", "/tmp"} or target.startswith("/usr/") for target in found["links"].values()
    )
    assert_finished(match, attacker_forfeits=False)


# ---------------------------------------------------------------------------- 5. /proc


def test_proc_shows_only_the_sandbox(box_made: str) -> None:
    bot = hostile(
        """
        import signal
        HOST_PIDS = {{HOST_PIDS}}
        pids = proc_pids()
        report(
            pids=pids,
            exes={p: attempt(os.readlink, f"/proc/{p}/exe") for p in pids},
            cmdlines=[proc_read(p, "cmdline").decode(errors="replace")[:200] for p in pids],
            ppid=os.getppid(),
            host_proc={p: attempt(os.listdir, f"/proc/{p}") for p in HOST_PIDS},
            host_signal={p: attempt(os.kill, p, 0) for p in HOST_PIDS},
            pid1_fds=[attempt(os.readlink, f"/proc/1/fd/{fd}") for fd in os.listdir("/proc/1/fd")],
            sysrq=attempt(lambda: open("/proc/sysrq-trigger", "w").write("h")),
            proc_sys=attempt(lambda: open("/proc/sys/kernel/core_pattern", "w").write("|/tmp/x")),
        )
        run(Quiet())
        """,
        HOST_PIDS=[os.getpid(), os.getppid()],
    )
    match = play(bot)
    found = findings(match.seats[0])
    assert os.getpid() not in found["pids"] and os.getppid() not in found["pids"]
    assert max(found["pids"]) < 10  # a fresh PID namespace: bwrap's init (1) and the bot
    assert found["ppid"] == 1
    exes = {outcome.get("ok", "") for outcome in found["exes"].values()}
    assert exes <= {"'/usr/bin/bwrap'", "'/usr/bin/python3.11'", ""}, exes
    assert not any("pytest" in cmd for cmd in found["cmdlines"])
    # bwrap's init holds only the bot's pipes: no descriptor of a host file or directory.
    for fd in found["pid1_fds"]:
        assert fd.get("ok", "'pipe:").startswith(("'pipe:", "'anon_inode:", "'/dev/null")), fd
    assert denied(found["sysrq"]) and denied(found["proc_sys"])
    for pid in (os.getpid(), os.getppid()):
        assert found["host_proc"][str(pid)]["err"] == "FileNotFoundError"
        assert found["host_signal"][str(pid)]["err"] == "ProcessLookupError"
    assert_finished(match, attacker_forfeits=False)


# ---------------------------------------------------------------------------- 6. writing


def test_writes_outside_the_scratch_dir_fail_and_scratch_is_bounded(box_made: str) -> None:
    bot = hostile(
        """
        def write(path, size=16):
            with open(path, "wb") as f:
                f.write(b"x" * size)
            return os.path.getsize(path)


        def fill(directory, file_mib):
            written = 0
            try:
                for i in range(64):
                    with open(f"{directory}/fill-{i}", "wb") as f:
                        for _ in range(file_mib):
                            f.write(b"x" * (1 << 20))
                            f.flush()
                            written += 1
            except OSError as exc:
                return {"mib": written, "err": type(exc).__name__, "errno": exc.errno}
            return {"mib": written}


        found = {
            path: attempt(write, path)
            for path in ("/bot/x", "/bot/bot.py", "/usr/x", "/usr/bin/x", "/sandbox/lib/x",
                         "/sandbox/launch.py", "/lib/x", "/proc/x")
        }
        found["tmp"] = attempt(write, "/tmp/ok")
        found["one_big_file"] = fill("/tmp", 64)  # RLIMIT_FSIZE: 8 MiB per file
        for name in os.listdir("/tmp"):
            os.unlink("/tmp/" + name)
        found["many_files"] = fill("/tmp", 2)  # the tmpfs: 16 MiB in all
        for name in os.listdir("/tmp"):
            os.unlink("/tmp/" + name)
        report(**found)
        run(Quiet())
        """
    )
    limits = Limits()
    match = play(bot, resources=limits)
    found = findings(match.seats[0])
    for path in ("/bot/x", "/bot/bot.py", "/usr/x", "/usr/bin/x", "/sandbox/lib/x",
                 "/sandbox/launch.py", "/lib/x", "/proc/x"):  # fmt: skip
        assert denied(found[path]), (path, found[path])
    assert found["tmp"] == {"ok": "16"}
    big = found["one_big_file"]
    assert big["err"] == "OSError" and big["errno"] == 27  # EFBIG
    assert big["mib"] == limits.file_size_mb
    many = found["many_files"]
    assert many["errno"] == 28  # ENOSPC
    assert limits.scratch_mb - 2 <= many["mib"] <= limits.scratch_mb
    assert_finished(match, attacker_forfeits=False)


def test_the_root_and_dev_are_read_only(box_made: str) -> None:
    bot = hostile(
        """
        def write(path):
            with open(path, "wb") as f:
                f.write(b"x" * 16)
            return os.path.getsize(path)


        report(**{p: attempt(write, p) for p in ("/x", "/sandbox/x", "/dev/x")},
               mkdir=attempt(os.mkdir, "/newdir"))
        run(Quiet())
        """
    )
    match = play(bot)
    found = findings(match.seats[0])
    assert_finished(match, attacker_forfeits=False)
    for attack in ("/x", "/sandbox/x", "/dev/x", "mkdir"):
        assert denied(found[attack]), (attack, found[attack])


def test_no_storage_beyond_the_scratch_quota(sandbox_ready: None) -> None:
    bot = hostile(
        """
        written = {}
        for directory in ("/dev/shm", "/"):
            mib = 0
            try:
                for i in range(20):
                    with open(f"{directory}/fill-{i}", "wb") as f:
                        f.write(b"x" * (1 << 20))
                    mib += 1
            except OSError:
                pass
            written[directory] = mib
        report(written=written)
        run(Quiet())
        """
    )
    limits = Limits()
    match = play(bot, resources=limits)
    found = findings(match.seats[0])
    assert_finished(match)
    assert sum(found["written"].values()) <= limits.scratch_mb, found["written"]


# ---------------------------------------------------------------------------- 7-9. bombs


@pytest.mark.cgroups
def test_fork_bomb_is_held_by_the_pids_limit(box_made: str) -> None:
    bot = hostile(
        """
        def bomb():
            while True:  # every process keeps trying to fork
                try:
                    os.fork()
                except OSError:
                    time.sleep(0.005)


        forked, error = 0, None
        for _ in range(10_000):
            try:
                pid = os.fork()
            except OSError as exc:
                error = type(exc).__name__
                break
            if pid == 0:
                bomb()
            forked += 1
        time.sleep(0.1)
        report(forked=forked, error=error, processes=len(proc_pids()))
        run(Quiet())
        """
    )
    limits = Limits()
    match = play(bot, resources=limits)
    found = findings(match.seats[0])
    assert found["error"] == "BlockingIOError"  # EAGAIN from pids.max
    assert found["forked"] < limits.pids
    assert found["processes"] < limits.pids
    assert_finished(match)
    # The host still starts processes.
    assert subprocess.run(["true"], check=False).returncode == 0


@pytest.mark.cgroups
def test_thread_bomb_is_held_by_the_pids_limit(sandbox_ready: None) -> None:
    bot = hostile(
        """
        import threading
        stop = threading.Event()
        started, error = 0, None
        for _ in range(10_000):
            try:
                threading.Thread(target=stop.wait, daemon=True).start()
            except RuntimeError as exc:
                error = str(exc)
                break
            started += 1
        report(started=started, error=error)
        run(Quiet())
        """
    )
    limits = Limits()
    match = play(bot, resources=limits)
    found = findings(match.seats[0])
    assert found["error"] == "can't start new thread"
    assert found["started"] < limits.pids
    assert_finished(match, attacker_forfeits=False)


@pytest.mark.cgroups
def test_memory_bomb_fails_or_is_killed(box_made: str) -> None:
    bot = hostile(
        """
        class Hog(Quiet):
            blocks = []

            def choose(self, obs):
                report(huge=attempt(bytearray, 4 << 30))  # RLIMIT_AS: MemoryError
                try:
                    while True:
                        block = bytearray(16 << 20)
                        block[::4096] = b"x" * len(block[::4096])  # touch every page
                        self.blocks.append(block)
                        report(mib=16 * len(self.blocks))
                except MemoryError:
                    report(stopped="MemoryError", mib=16 * len(self.blocks))
                self.blocks.clear()
                return obs.legal[0]


        run(Hog())
        """
    )
    limits = Limits()
    match = play(bot, resources=limits, time_control=ROOMY)
    attacker = match.seats[0]
    found = findings(attacker)
    assert found["huge"]["err"] == "MemoryError"
    assert found["mib"] <= limits.memory_mb
    if attacker.forfeited:  # killed by the memory cgroup's OOM killer
        assert fault_kinds(attacker) == ["crashed", "forfeit"]
        assert "137" in attacker.forfeit_reason or "SIGKILL" in attacker.forfeit_reason
        assert "memory limit (256 MiB)" in attacker.forfeit_reason
    else:
        assert found["stopped"] == "MemoryError"
    assert_finished(match)


# ---------------------------------------------------------------------------- 10-11. time


@pytest.mark.cgroups
def test_cpu_spin_times_out_and_forfeits(sandbox_ready: None) -> None:
    bot = hostile(
        """
        class Spin(Quiet):
            def choose(self, obs):
                while True:
                    pass


        run(Spin())
        """
    )
    # The wall backstop at 20 x the CPU times, not 3: the CPU clock then decides while the box
    # gets a twentieth of a core (beside two CPU hogs and a 2-job match series, a box got less
    # than the third of a core the default needs, and the backstop struck first).
    match = play(bot, time_control=replace(FAST, wall_factor=20))
    attacker = match.seats[0]
    assert attacker.timeouts == 3 and attacker.strikes == 3
    assert [k for k in fault_kinds(attacker) if k != "restless"] == ["timeout"] * 3 + ["forfeit"]
    assert attacker.forfeit_reason.startswith("3 strikes (last: timeout")
    # The clock is the box's CPU time: 700 ms (decision and bank), then 200 ms twice, each
    # stopped within a few milliseconds of running out, however loaded this machine is.
    timeouts = [f["detail"] for f in attacker.faults if f["kind"] == "timeout"]
    assert all(" ms of CPU time (" in detail for detail in timeouts), timeouts
    budget = FAST.decision_ms * 3 + FAST.bank_ms
    assert budget <= attacker.cpu_ms < budget + 3 * 60
    assert_finished(match, attacker_forfeits=True)


def strike_defaults_are_played(match: MatchResult, seat: int) -> None:
    """Each strike's `played` action is the seat's next action in the log."""
    pending: str | None = None
    for event in match.events:
        if event["e"] == "note" and event["seat"] == seat and "played" in event:
            pending = event["played"]
        elif event["e"] == "act" and event["seat"] == seat and not event.get("auto"):
            if pending is not None:
                assert event["action"] == pending
                pending = None
    assert pending is None


def test_sleeping_past_the_deadline_strikes_then_forfeits(sandbox_ready: None) -> None:
    bot = hostile(
        """
        class Sleepy(Quiet):
            def choose(self, obs):
                time.sleep(2.0)
                return obs.legal[-1]


        run(Sleepy())
        """
    )
    # Sleeping uses no CPU: the wall-clock backstop (3 x 200 ms, plus a wall bank of
    # 3 x 300 ms spent by the first decision) catches it.
    match = play(bot, time_control=TimeControl(decision_ms=200, bank_ms=300))
    attacker = match.seats[0]
    assert fault_kinds(attacker) == ["timeout", "timeout", "timeout", "forfeit"]
    assert all(" ms of wall time" in f["detail"] for f in attacker.faults[:3])
    assert attacker.cpu_ms < 300
    assert [f.get("strike") for f in attacker.faults[:3]] == [1, 2, 3]
    assert attacker.timeouts == 3 and attacker.decisions == 3
    strike_defaults_are_played(match, 0)
    assert_finished(match, attacker_forfeits=True)


def test_a_late_reply_is_not_taken_as_the_next_answer(sandbox_ready: None) -> None:
    # Request 1: the bot answers 300 ms after its (wall-clock) deadline, with an action
    # marked as late. The runner has meanwhile sent request 2; it must skip the late line and
    # take the bot's real answer to request 2. The bot logs what it answered; the game log
    # must agree.
    bot = raw_bot(
        """
        import json, sys, time
        sent = []

        def send(message):
            sys.stdout.write(json.dumps(message) + "\\n")
            sys.stdout.flush()

        for line in sys.stdin:
            message = json.loads(line)
            if message["type"] == "hello":
                send({"type": "ready", "protocol": 1, "name": "late"})
            elif message["type"] == "act":
                legal = message["observation"]["legal"]
                if message["id"] == 1:
                    time.sleep(2.1)  # past the wall-clock backstop: 3 x 600 ms
                    send({"type": "action", "id": 1, "action": "LATE-ANSWER-1"})
                    continue
                action = legal[-1]
                send({"type": "action", "id": message["id"], "action": action})
                if len(sent) < 12:
                    sent.append(action)
                    sys.stderr.write("HOSTILE " + json.dumps({"answers": sent}) + "\\n")
                    sys.stderr.flush()
            elif message["type"] == "game_end":
                break
        """
    )
    match = play(bot, time_control=TimeControl(decision_ms=600, bank_ms=0))
    attacker = match.seats[0]
    found = findings(attacker)
    assert fault_kinds(attacker) == ["timeout"]
    played = [
        e["action"]
        for e in match.events
        if e["e"] == "act" and e["seat"] == 0 and not e.get("auto")
    ]
    answers = found["answers"]
    assert played[0] == attacker.faults[0]["played"]
    assert played[1 : 1 + len(answers)] == answers
    assert "LATE-ANSWER" not in match.log_text()
    assert_finished(match, attacker_forfeits=False)


LATE_FLOOD = """
    import json, sys
    out = sys.stdout.buffer
    def encoded(message):
        return (json.dumps(message) + "\\n").encode()

    # Numbers: the costliest bytes to parse (each one a Python int), written at no cost (the
    # eight lines are made once: a bot pays only to copy them into the pipe).
    LATE = encoded({"type": "action", "id": 1, "action": "x", "pad": [0] * (PAD // 3)}) * 8
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "hello":
            out.write(b'{"type": "ready", "protocol": 1}\\n')
        elif message["type"] == "act":
            if message["id"] > 1:
                out.write(LATE)  # eight late answers to request 1, each read and skipped
            legal = message["observation"]["legal"]
            out.write(encoded({"type": "action", "id": message["id"], "action": legal[0]}))
        elif message["type"] == "game_end":
            break
        out.flush()
"""


@pytest.mark.parametrize("pad", [1_000_000, 30_000], ids=["1MB-lines", "30KB-lines"])
def test_a_flood_of_late_answers_costs_the_referee_little(sandbox_ready: None, pad: int) -> None:
    """Eight ~1 MB late answers at every decision (answers to request 1, skipped as late) were
    each parsed: 86 s of the referee's CPU for a one-hand match whose bot was charged 1.1 s, and
    no strike. A bot's line is at most 64 KiB now (longer: a forfeit), and a request takes at
    most 4 lines and 128 KiB (more: a "flood" strike): the referee's CPU stays within a small
    multiple of the bots' own, whatever a bot sends. Measured in CPU, not wall time."""
    bot = raw_bot(LATE_FLOOD.replace("PAD", str(pad)), name="late-flood")
    before = time.thread_time()
    match = play(bot, time_control=TimeControl(decision_ms=1_000, startup_ms=STARTUP_MS))
    referee_s = time.thread_time() - before
    attacker = match.seats[0]
    bots_s = sum(seat.cpu_ms for seat in match.seats) / 1000
    assert referee_s < 0.5 + 3 * bots_s, (referee_s, bots_s)
    if pad > protocol.MAX_REPLY:
        assert fault_kinds(attacker) == ["protocol", "forfeit"]
        assert "longer than 65536 bytes" in attacker.forfeit_reason
    else:
        assert fault_kinds(attacker) == ["flood"] * 3 + ["forfeit"]
        assert "late answers count" in attacker.faults[0]["detail"]
    assert_finished(match, attacker_forfeits=True)


# ---------------------------------------------------------------------------- 12-13. streams


@pytest.mark.parametrize(
    ("stream", "unit"),
    [
        pytest.param(1, b"x" * (1 << 20), id="stdout-no-newline"),
        pytest.param(1, (b"x" * 1023 + b"\n") * 1024, id="stdout-lines"),
        pytest.param(2, (b"y" * 1023 + b"\n") * 1024, id="stderr-lines"),
        pytest.param(2, b"y" * (1 << 20), id="stderr-no-newline"),
    ],
)
def test_a_1gb_flood_is_capped(sandbox_ready: None, stream: int, unit: bytes) -> None:
    bot = hostile(
        """
        UNIT = {{UNIT}}


        class Flood(Quiet):
            def choose(self, obs):
                while True:  # 1 GiB and more, never a reply
                    os.write({{STREAM}}, UNIT)


        run(Flood())
        """,
        UNIT=unit,
        STREAM=stream,
    )
    match = play(bot)
    attacker = match.seats[0]
    assert_finished(match, attacker_forfeits=True)
    assert len(attacker.stderr) <= 4_000
    assert all(len(f["detail"]) <= 2_000 for f in attacker.faults)
    kinds = [k for k in fault_kinds(attacker) if k != "restless"]
    if stream == 1 and b"\n" not in unit:
        assert kinds == ["protocol", "forfeit"]
        assert "longer than" in attacker.forfeit_reason
    elif stream == 1:
        assert kinds == ["protocol"] * 3 + ["forfeit"]
        assert "not JSON" in attacker.faults[0]["detail"]
    else:
        assert kinds == ["timeout"] * 3 + ["forfeit"]


STDERR_FLOOD = """
    class Flooder(Quiet):
        def choose(self, obs):
            # A debug line's worth of bytes many times over, at every decision, then an answer.
            for _ in range({{CHUNKS}}):
                os.write(2, b"z" * 65535 + b"\\n")
            return obs.legal[0]


    run(Flooder())
    """


def test_a_stderr_flood_at_every_decision_changes_nothing_for_the_others(
    sandbox_ready: None,
) -> None:
    """A bot that writes 4 MiB of stderr at each of its decisions, then answers: the game is
    the same as the same bot's without the flood (its answers, its opponent's, every event),
    nobody is struck, the debug lines kept are the latest 64 KiB with the cut counted, and the
    referee's CPU stays within a small multiple of the bots' own (the flood is read and
    dropped, a memory copy per byte). Measured in CPU, not wall time."""
    quiet = play(hostile(STDERR_FLOOD, CHUNKS=0), time_control=ROOMY)
    before = time.thread_time()
    flooded = play(hostile(STDERR_FLOOD, CHUNKS=64), time_control=ROOMY)
    referee_s = time.thread_time() - before
    bots_s = sum(seat.cpu_ms for seat in flooded.seats) / 1000
    assert referee_s < 0.5 + 3 * bots_s, (referee_s, bots_s)
    assert_finished(flooded, attacker_forfeits=False)
    assert flooded.log_text() == quiet.log_text()
    attacker, opponent = flooded.seats
    assert attacker.faults == [] and attacker.strikes == 0
    assert opponent.debug.entries == [] and opponent.stderr == ""
    assert len(attacker.stderr) <= 4_000
    debug = attacker.debug
    assert debug.size == debug.keep == 64 * 1024
    assert sum(len(entry.data) for entry in debug.entries) == debug.size
    # Every decision that reached `choose` flooded (the SDK answers some without it).
    flooding = debug.cut_entries + len(debug.entries)
    assert attacker.decisions / 2 < flooding <= attacker.decisions
    assert debug.cut_bytes == flooding * 64 * 65536 - debug.size
    # The last flooding decision's lines are its own last 64 KiB, cut at their head: one entry.
    # (It is the seat's last decision unless the SDK answered that one without `choose`.)
    (last,) = debug.entries
    assert last.request <= attacker.decisions and last.cut == 64 * 65536 - debug.size


def test_closing_stdout_is_caught_by_the_deadline(sandbox_ready: None) -> None:
    bot = hostile(
        """
        class Mute(Quiet):
            def choose(self, obs):
                os.close(1)
                time.sleep(3600)


        run(Mute())
        """
    )
    match = play(bot)
    attacker = match.seats[0]
    assert fault_kinds(attacker) == ["timeout"] * 3 + ["forfeit"]
    # Silent and idle: the wall-clock backstop, not the CPU clock, ends each decision.
    assert all("ms of wall time" in f["detail"] for f in attacker.faults[:3])
    assert_finished(match, attacker_forfeits=True)


# ---------------------------------------------------------------------------- 14. protocol


PROTOCOL_ABUSER = """
    import json, sys
    REPLIES = {  # by request id; bytes are sent as they are
        1: b"this is {not json",
        2: {"type": "ready"},
        3: {"type": "action", "action": "fly to the moon"},
        4: {"type": "action", "id": 1000, "action": "end"},  # wrong id
        5: {"type": "action", "action": 5},
        6: [1, 2],
        7: b"\\xff\\xfe{ not UTF-8",
    }
    LAST = {{LAST}}
    out = sys.stdout.buffer
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "hello":
            reply = {"type": "ready", "protocol": 1, "name": "abuser"}
        elif message["type"] == "act":
            n = message["id"]
            reply = REPLIES.get(n) if n <= LAST else None
            if reply is None:
                reply = {"type": "action", "action": message["observation"]["legal"][0]}
            if isinstance(reply, dict) and "id" not in reply:
                reply = dict(reply, id=n)
        elif message["type"] == "game_end":
            break
        else:
            continue  # hand_end: no reply
        out.write(reply if isinstance(reply, bytes) else json.dumps(reply).encode())
        out.write(b"\\n")
        out.flush()
"""


def test_protocol_abuse_is_struck_with_the_right_kinds(sandbox_ready: None) -> None:
    bot = raw_bot(PROTOCOL_ABUSER.replace("{{LAST}}", "7"))
    tc = TimeControl(decision_ms=200, bank_ms=300, max_strikes=10)
    match = play(bot, time_control=tc)
    attacker = match.seats[0]
    strikes = [f for f in attacker.faults if "strike" in f]
    assert [f["kind"] for f in strikes] == [
        "protocol",  # not JSON
        "protocol",  # wrong message type
        "illegal",  # an action the game does not allow
        "protocol",  # a reply naming a request that was never sent
        "protocol",  # a non-string action
        "protocol",  # not an object
        "protocol",  # not UTF-8
    ]
    assert "not JSON" in strikes[0]["detail"]
    assert "'ready'" in strikes[1]["detail"]
    assert "fly to the moon" in strikes[2]["detail"]
    assert attacker.strikes == 7 and attacker.timeouts == 0
    assert "request 1000" in strikes[3]["detail"]
    strike_defaults_are_played(match, 0)
    assert_finished(match, attacker_forfeits=False)
    assert attacker.decisions > 7


def test_three_protocol_strikes_forfeit(sandbox_ready: None) -> None:
    bot = raw_bot(PROTOCOL_ABUSER.replace("{{LAST}}", "3"))
    match = play(bot)
    attacker = match.seats[0]
    assert fault_kinds(attacker) == ["protocol", "protocol", "illegal", "forfeit"]
    assert attacker.forfeit_reason.startswith("3 strikes (last: illegal")
    assert attacker.decisions == 3
    assert_finished(match, attacker_forfeits=True)


# ---------------------------------------------------------------------------- 15. signals


def test_signals_and_ptrace_are_denied_or_harmless(box_made: str) -> None:
    bot = hostile(
        """
        import ctypes, signal
        PTRACE_TRACEME, PTRACE_ATTACH, PTRACE_SEIZE = 0, 16, 0x4206
        HOST_PIDS = {{HOST_PIDS}}
        libc = ctypes.CDLL(None, use_errno=True)
        libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]


        def ptrace(request, pid):
            result = libc.ptrace(request, pid, None, None)
            return result, ctypes.get_errno()


        found = {
            "ppid": os.getppid(),
            "ptrace_attach_1": ptrace(PTRACE_ATTACH, 1),
            "ptrace_seize_1": ptrace(PTRACE_SEIZE, 1),
            "ptrace_attach_parent": ptrace(PTRACE_ATTACH, os.getppid()),
            "ptrace_traceme": ptrace(PTRACE_TRACEME, 0),
            "host": {p: attempt(os.kill, p, 0) for p in HOST_PIDS},
            "kill_parent": attempt(os.kill, os.getppid(), signal.SIGKILL),
        }
        for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGSTOP", "SIGKILL"):
            found["kill_1_" + name] = attempt(os.kill, 1, getattr(signal, name))
        found["kill_all"] = attempt(os.kill, -1, signal.SIGKILL)
        found["killpg_0"] = attempt(os.killpg, 0, signal.SIGCONT)
        report(**found)


        class Killer(Quiet):
            def choose(self, obs):
                for target in (-1, 1, os.getppid()):
                    try:
                        os.kill(target, signal.SIGKILL)
                    except OSError:
                        pass
                return obs.legal[0]


        run(Killer())
        """,
        HOST_PIDS=[os.getpid(), os.getppid()],
    )
    match = play(bot)
    found = findings(match.seats[0])
    eperm = [-1, 1]
    for attack in ("ptrace_attach_1", "ptrace_seize_1", "ptrace_attach_parent", "ptrace_traceme"):
        assert found[attack] == eperm, (attack, found[attack])  # the seccomp filter
    for pid in (os.getpid(), os.getppid()):
        assert found["host"][str(pid)]["err"] == "ProcessLookupError"
    assert found["kill_all"]["err"] == "ProcessLookupError"  # nothing else to kill in the box
    # Signals to the box's init (bwrap) are accepted but ignored, as for any PID-namespace init:
    # the bot keeps playing, nothing happened outside, and this process is alive.
    assert_finished(match, attacker_forfeits=False)
    assert match.seats[0].decisions > 0


# ---------------------------------------------------------------------------- 15b. namespaces


def test_no_new_namespace_or_mount_by_any_way_in(box_made: str) -> None:
    """The attack that worked: clone3 (whose flags the filter cannot see) made a user namespace
    with every capability inside, and the new mount API mounted there. Every way in fails."""
    bot = hostile(
        """
        import ctypes, errno

        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long


        def call(nr, *args):
            ctypes.set_errno(0)
            conv = [ctypes.c_char_p(a) if isinstance(a, bytes) else ctypes.c_long(a) for a in args]
            r = libc.syscall(ctypes.c_long(nr), *conv)
            if r == 0 and nr in (56, 435):
                os._exit(0)  # a child that got through: the parent reports it
            return "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")


        clone_args = (ctypes.c_uint64 * 11)(0x10000000, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0)
        found = {
            "clone3_newuser": call(435, ctypes.addressof(clone_args), 88),
            "clone_newuser": call(56, 0x10000000 | 17, 0, 0, 0, 0),
            "clone_newns": call(56, 0x20000 | 17, 0, 0, 0, 0),
            "unshare_newuser": call(272, 0x10000000),
            "unshare_newns": call(272, 0x20000),
            "setns": call(308, os.open("/proc/self/ns/user", os.O_RDONLY), 0),
            "mount": call(165, b"none", b"/tmp", b"tmpfs", 0, 0),
            "fsopen": call(430, b"tmpfs", 0),
            "open_tree": call(428, -100, b"/tmp", 1),
            "mount_setattr": call(442, -100, b"/tmp", 0, 0, 0),
            "uid_map": attempt(lambda: open("/proc/self/uid_map").read()),
        }
        report(**found)
        run(Quiet())
        """
    )
    match = play(bot)
    found = findings(match.seats[0])
    assert found.pop("clone3_newuser") == "ENOSYS"
    uid_map = found.pop("uid_map")
    assert all(answer == "EPERM" for answer in found.values()), found
    assert "ok" in uid_map  # one uid mapped: the box's own, with no capability outside
    assert_finished(match, attacker_forfeits=False)


# ---------------------------------------------------------------------------- 16. leftovers


@pytest.mark.cgroups
def test_no_grandchild_survives_the_match(box_made: str) -> None:
    marker = f"grass-hostile-sleeper-{uuid.uuid4().hex}"
    bot = hostile(
        """
        MARKER = {{MARKER}}
        child = os.fork()
        if child == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv("/usr/bin/python3",
                         ["python3", "-c", "import time; time.sleep(3600)", MARKER])
            os._exit(0)
        os.waitpid(child, 0)
        # The grandchild's exec takes a moment, seconds in a starved emulated guest: wait for it.
        deadline = time.monotonic() + 20
        while True:
            sleepers = [p for p in proc_pids() if MARKER.encode() in proc_read(p, "cmdline")]
            if sleepers or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        report(sleepers=sleepers)
        run(Quiet())
        """,
        MARKER=marker,
    )
    match = play(bot)
    found = findings(match.seats[0])
    assert len(found["sleepers"]) == 1  # the grandchild did run, detached, in the box
    assert host_processes_with(marker) == []
    assert_finished(match, attacker_forfeits=False)


# ---------------------------------------------------------------------------- start-up


@pytest.mark.parametrize(
    ("source", "expected_reason", "expected_stderr"),
    [
        pytest.param(
            "def broken(:\n    pass\n", "exited with status 1", "SyntaxError", id="syntax"
        ),
        pytest.param(
            "raise RuntimeError('boom at import')\n",
            "exited with status 1",
            "RuntimeError: boom at import",
            id="raises",
        ),
        pytest.param("import sys\nsys.exit(3)\n", "exited with status 3", "", id="exits"),
    ],
)
def test_a_bot_that_cannot_start_forfeits_with_its_traceback(
    sandbox_ready: None, source: str, expected_reason: str, expected_stderr: str
) -> None:
    match = play(raw_bot(source, name="broken"))
    attacker = match.seats[0]
    assert attacker.forfeit_reason == f"did not start: {expected_reason}"
    assert fault_kinds(attacker) == ["forfeit"]
    assert attacker.decisions == 0
    assert expected_stderr in attacker.stderr
    if expected_stderr:
        assert "Traceback" in attacker.stderr or "SyntaxError" in attacker.stderr
    assert_finished(match, attacker_forfeits=True)


# ---------------------------------------------------------------------------- idle CPU

SLOW_OPPONENT = """
    import time
    from bots.sdk import Bot, run


    class Slow(Bot):
        name = "slow"
        turns = 0

        def choose(self, obs):
            if obs.phase == "turn":
                self.turns += 1
                if self.turns <= 8:
                    time.sleep(0.3)  # long turns, without using CPU
            return obs.legal[0]


    run(Slow())
"""

SPINNER = """
    import mmap
    # Shared with the bot: the spinner's iteration count, and the longest pause it has seen
    # in its own progress (microseconds; a frozen process sees the clock jump).
    shared = mmap.mmap(-1, 16)


    def spin():
        n = 0
        last = time.monotonic()
        while True:
            n += 1
            if not n & 1023:
                now = time.monotonic()
                pause = int((now - last) * 1e6)
                last = now
                if pause > int.from_bytes(shared[8:16], "little"):
                    shared[8:16] = pause.to_bytes(8, "little")
                shared[:8] = n.to_bytes(8, "little")


    def spun():
        return int.from_bytes(shared[:8], "little")


    def longest_pause():
        return int.from_bytes(shared[8:16], "little") / 1e6


    class Restless(Quiet):
        last = None
        gaps = []

        def on_game_start(self, hello):
            if os.fork() == 0:
                spin()

        def choose(self, obs):
            now = time.monotonic()
            if self.last is not None:
                wall, count = now - self.last[0], spun() - self.last[1]
                # One of the opponent's long turns (0.3 s each) or more.
                if wall > 0.28:
                    self.gaps.append([round(wall, 3), count])
                    report(gaps=self.gaps, longest_pause=round(longest_pause(), 3))
            result = obs.legal[0]
            self.last = (time.monotonic(), spun())
            return result


    run(Restless())
"""


@pytest.mark.cgroups
def test_a_bot_busy_between_turns_is_frozen(sandbox_ready: None) -> None:
    # Long turns (0.3 s) so that a spinner given a fifth of a core on a loaded machine (or in
    # the emulated cgroup v2 guest) still burns the 50 ms that get it noticed within a turn or
    # two; roomy clocks, so those turns cost the sleeper no strike however slow the machine.
    opponent = raw_bot(SLOW_OPPONENT, name="slow")
    match = play(hostile(SPINNER), opponent, time_control=ROOMY)
    attacker = match.seats[0]
    assert attacker.frozen_between_turns, (attacker.faults, match.seats[1].faults)
    assert fault_kinds(attacker) == ["restless"]
    assert "while not on turn" in attacker.faults[0]["detail"]
    # The spinner ran until noticed, and was stopped while the opponent thought after: during
    # one of the opponent's long turns (0.3 s of sleep) its own progress stood still for most
    # of it (a spinner never frozen sees pauses of milliseconds). Progress compared as rates
    # failed: in the emulated guest on a busy host the spinner unfrozen ran as slowly as in
    # the moments a frozen box is thawed to read a message.
    # Either is proof: a later gap in which it made no progress at all (over 0.28 s an
    # unfrozen spinner counts thousands of times even on a crowded core), or a pause it saw
    # itself. The pause alone raced: the spinner records it only once it runs again after a
    # thaw, and the bot may read it first (CI: gaps [[1.227, 26554368], [1.205, 0]] with a
    # longest pause of 0.014 s read just before the spinner caught up).
    found = findings(attacker)
    gaps = found["gaps"]
    assert len(gaps) >= 2 and gaps[0][1] > 0, found
    stood_still = any(count == 0 for _, count in gaps[1:])
    assert stood_still or found["longest_pause"] >= 0.25, found
    assert_finished(match, attacker_forfeits=False)


THINKER = """
    import time
    from bots.sdk import Bot, run


    class Thinker(Bot):
        name = "thinker"
        decisions = 0

        def choose(self, obs):
            self.decisions += 1
            # Enough gaps of 20 ms of real CPU work that the attacker's spinners pass the
            # 200 ms idle budget even when they share the cores with other work.
            if self.decisions <= 150:
                end = time.process_time() + 0.02
                while time.process_time() < end:
                    pass
            return obs.legal[0]


    run(Thinker())
"""

BURSTS = """
    import struct
    BURST_S = 0.012  # CPU per spinner per reply: 3 x 12 ms stays under the 50 ms rule


    def spinner(fd):
        # Each reply buys a burst of 12 ms of this process's own CPU time (not wall time, so
        # that the attack burns the same whatever else shares the cores).
        budget_end = 0.0
        while True:
            if time.process_time() >= budget_end:
                os.set_blocking(fd, True)
                data = os.read(fd, 4096)
            else:
                os.set_blocking(fd, False)
                try:
                    data = os.read(fd, 4096)
                except BlockingIOError:
                    data = b""
            if len(data) >= 8:
                budget_end = time.process_time() + BURST_S


    class Bursts(Quiet):
        pipes = []

        def on_game_start(self, hello):
            for _ in range(3):
                r, w = os.pipe()
                if os.fork() == 0:
                    spinner(r)
                self.pipes.append(w)

        def choose(self, obs):
            stamp = struct.pack("d", time.monotonic())  # spin from now: through the gap
            for w in self.pipes:
                os.write(w, stamp)
            return obs.legal[0]


    run(Bursts())
"""


@pytest.mark.cgroups
def test_a_bot_busy_in_short_bursts_between_turns_is_frozen(sandbox_ready: None) -> None:
    opponent = raw_bot(THINKER, name="thinker")
    match = play(hostile(BURSTS), opponent)
    assert_finished(match, attacker_forfeits=False)
    assert match.seats[0].frozen_between_turns


@pytest.mark.cgroups
def test_cpu_used_on_turn_before_a_bad_reply_is_not_restless(sandbox_ready: None) -> None:
    bot = raw_bot(
        """
        import json, sys, time
        for line in sys.stdin:
            message = json.loads(line)
            if message["type"] == "hello":
                reply = {"type": "ready", "protocol": 1, "name": "busy"}
            elif message["type"] == "act":
                if message["id"] == 1:
                    end = time.process_time() + 0.15  # think hard, on turn, then blunder
                    while time.process_time() < end:
                        pass
                    reply = {"type": "no-such-message"}
                else:
                    reply = {"type": "action", "id": message["id"],
                             "action": message["observation"]["legal"][0]}
            elif message["type"] == "game_end":
                break
            else:
                continue
            sys.stdout.write(json.dumps(reply) + "\\n")
            sys.stdout.flush()
        """
    )
    match = play(bot, time_control=TimeControl(decision_ms=1_000, bank_ms=0, startup_ms=STARTUP_MS))
    attacker = match.seats[0]
    assert_finished(match, attacker_forfeits=False)
    assert fault_kinds(attacker) == ["protocol"]
    assert not attacker.frozen_between_turns
