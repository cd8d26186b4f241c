"""The sandbox's costs against plain processes, and each language's: the figures of
`grass bench --sandbox` and `grass bench --languages`."""

from __future__ import annotations

import contextlib
import json
import os
import random
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bots.runner.botfiles import BotSource
from engine import new_game

if TYPE_CHECKING:
    from bots.runner.process import BotProcess
    from bots.runner.sandbox import Box

# ---------------------------------------------------------------------- sandbox figures

ECHO_BOT = b"""import json, sys
out = sys.stdout
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        out.write('{"type":"ready","protocol":1}\\n')
    elif m["type"] == "act":
        out.write(json.dumps({"type": "action", "id": m["id"],
                              "action": m["observation"]["legal"][0]}) + "\\n")
    elif m["type"] == "game_end":
        break
    out.flush()
"""
"""The smallest protocol bot: no SDK, answers the first legal action."""


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


PROBE_BOT = b"""import sys
sys.stdout.write('{"type":"ready","protocol":1}\\n')
sys.stdout.flush()
sys.stdin.readline()
"""
"""Replies `ready` before importing anything: measures the sandbox's start-up, not Python's
module imports (compare with a bare `python3 -I -S` start)."""


_HELLO = (
    b'{"type":"hello","protocol":1,"seat":0,"players":["a","b","c","d"],"ruleset":"modern",'
    b'"variants":{},"limits":{"max_hands":30,"max_deals_per_turn":3},'
    b'"time":{"decision_ms":1000,"bank_ms":30000,"clock":"cpu","wall_factor":3.0},'
    b'"rng_seed":12345}\n'
)
"""A hello as a runner sends it (bots may read any of its fields)."""


MODES = ("plain", "sandboxed", "ready")
"""How a bot is started: a plain subprocess; sandboxed in a box made as it starts; sandboxed in
a box made ahead of time (`bots.runner.pool`, as a worker between matches)."""


def _ready(source: BotSource, count: int = 1) -> None:
    """Ready boxes for `count` bots like `source`, waited for (made ahead: not timed)."""
    from bots.runner import pool
    from bots.runner.boxes import box_limits
    from bots.runner.languages import detect

    pool.POOL.fill(box_limits(detect(source.files)), count)
    for ready in pool.POOL.ready:
        assert ready.wait_up(), "a ready box did not come up"


def _start(mode: str, source: BotSource) -> tuple[BotProcess, Box | None, Path | None]:
    """`start_bot` as `mode` says (the pool emptied for a box made at start), or "image":
    the image's interpreter outside the sandbox (`_image_plain`)."""
    from bots.runner import pool
    from bots.runner.boxes import start_bot

    if mode == "image":
        return _image_plain(source)
    if mode == "ready":
        _ready(source)
    else:
        pool.POOL.close()
    return start_bot(source, mode != "plain")


def _image_plain(source: BotSource) -> tuple[BotProcess, None, Path]:
    """The bot as a plain process on the image's own interpreters (`grass bench
    --languages`'s "image" baseline): chrooted into the image in a mount namespace of its own,
    with its files and the runtime bound where a box has them, and nothing else of the
    sandbox (no user, PID or network namespace, no cgroup, seccomp filter, uid or rlimit; the
    host's /proc and /dev). The
    machine's own interpreter may be another version (Node.js 20 here, 18 in the image)."""
    import ctypes
    import shutil
    import tempfile

    from bots.runner import home, runtime
    from bots.runner.languages import detect
    from bots.runner.process import BotProcess

    lang = detect(source.files)
    image, lib = runtime.image_dir(), home.plain_runtime_dir()
    folder = Path(tempfile.mkdtemp(prefix="grass-bench-image-"))
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        (folder / "bot").mkdir()
        (folder / "tmp").mkdir()
        for rel, data in source.files.items():
            (folder / "bot" / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / "bot" / rel).write_bytes(data)
        if (folder / "bot" / "bot").is_file():
            (folder / "bot" / "bot").chmod(0o755)
        binds = [
            (Path("/proc"), "proc"),  # the JVM finds its libraries through /proc/self/exe
            (Path("/dev"), "dev"),
            (folder / "bot", "bot"),
            (folder / "tmp", "tmp"),
            (lib / "lib", "sandbox/lib"),
            (lib / "launch.py", "sandbox/launch.py"),
        ]

        def enter() -> None:  # in the child, before exec
            ms_bind, ms_rec, ms_private, clone_newns = 4096, 16384, 1 << 18, 0x20000
            if libc.unshare(clone_newns) != 0:
                raise OSError(ctypes.get_errno(), "unshare")
            libc.mount(None, b"/", None, ms_rec | ms_private, None)
            for source_path, inside in binds:
                target = str(image / inside).encode()
                flags = ms_bind | ms_rec
                if libc.mount(str(source_path).encode(), target, None, flags, None) != 0:
                    raise OSError(ctypes.get_errno(), f"mount {inside}")
            os.chroot(image)
            os.chdir("/tmp")

        env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", **dict(lang.env)}
        return BotProcess(lang.command, env=env, preexec_fn=enter), None, folder
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _startup_ms(mode: str, bot: bytes | BotSource = ECHO_BOT) -> float:
    """Process start (for a ready box: its launch) to the first reply (`ready`)."""
    from bots.runner.botfiles import BotSource
    from bots.runner.boxes import stop_bot

    source = bot if isinstance(bot, BotSource) else BotSource("echo", {"bot.py": bot})
    proc, box, folder = _start(mode, source)
    try:
        deadline = time.perf_counter() + 10
        proc.send(_HELLO, deadline)
        proc.readline(deadline)
        return (time.perf_counter() - proc.started) * 1000
    finally:
        stop_bot(proc, box, folder)


def _box_ahead_ms() -> float:
    """Making a ready box until its waiter is up: the cost moved off the bot's start-up."""
    from bots.runner import pool
    from bots.runner.sandbox import Limits

    start = time.perf_counter()
    ready = pool.prepare(Limits())
    try:
        assert ready.wait_up()
        return (time.perf_counter() - start) * 1000
    finally:
        ready.discard()


def _bare_python_ms() -> float:
    import subprocess

    from bots.runner.sandbox import PYTHON

    start = time.perf_counter()
    subprocess.run([PYTHON, "-I", "-S", "-c", "pass"], check=True)
    return (time.perf_counter() - start) * 1000


def _act_messages(count: int) -> list[bytes]:
    """The `act` messages a runner sends in a real 4-player game of random play: each with the
    events since that seat's previous request, as in a match."""
    from bots import protocol
    from engine import observe

    messages: list[bytes] = []
    seed = 0
    while len(messages) < count:
        game = new_game("modern", 4, seed)
        rng = random.Random(seed)
        sent = [0] * 4
        while not game.over and len(messages) < count:
            seat = game.to_act
            view = observe(game, seat, since=max(sent[seat], game.hand_start_event))
            sent[seat] = view["history_end"]
            messages.append(
                protocol.encode(
                    protocol.act(
                        len(messages) + 1, view, bank_ms=30_000, cpu_ms=31_000, wall_ms=93_000
                    )
                )
            )
            game.apply(rng.choice(game.legal_actions()))
        seed += 1
    return messages


def _round_trips(
    sandboxed: bool, messages: list[bytes], bot: BotSource | None = None
) -> list[float]:
    """Milliseconds from writing each `act` message to reading its answer."""
    from bots import protocol
    from bots.runner.botfiles import BotSource
    from bots.runner.boxes import stop_bot

    source = bot or BotSource("echo", {"bot.py": ECHO_BOT})
    proc, box, folder = _start("sandboxed" if sandboxed else "plain", source)
    times = []
    try:
        deadline = time.perf_counter() + 10
        proc.send(_HELLO, deadline)
        proc.readline(deadline)
        for message in messages:
            request = json.loads(message)["id"]
            start = time.perf_counter()
            proc.send(message, start + 5)
            protocol.parse_reply(proc.readline(start + 5), "action", request)
            times.append((time.perf_counter() - start) * 1000)
    finally:
        stop_bot(proc, box, folder)
    return times


def _match_figures(mode: str, games: int, players: int, bot: str) -> dict[str, float]:
    from bots.runner import pool
    from bots.runner.botfiles import load_bot
    from bots.runner.match import play_match

    source = load_bot(bot)
    decisions = 0
    setup: list[float] = []
    elapsed = 0.0
    for seed in range(games):
        if mode == "ready":
            _ready(source, players)  # as a worker does between matches (not timed)
        else:
            pool.POOL.close()
        start = time.perf_counter()
        match = play_match([source] * players, seed=seed, sandboxed=mode != "plain",
                           limits={"max_hands": 2})  # fmt: skip
        elapsed += time.perf_counter() - start
        decisions += sum(s.decisions for s in match.seats)
        setup.append(max(s.startup_ms for s in match.seats))
    return {
        "decisions_per_s": round(decisions / elapsed),
        "match_setup_ms_median": round(statistics.median(setup), 1),
    }


def sandbox_figures(rounds: int = 2000, games: int = 3) -> dict[str, Any]:
    """Sandboxed against plain-subprocess bots, measured in the same run."""
    starts = {
        "bare_python_I_S_ms": statistics.median(_bare_python_ms() for _ in range(15)),
        **{
            f"{mode}_{name}_ms": statistics.median(_startup_ms(mode, bot) for _ in range(15))
            for name, bot in (("probe", PROBE_BOT), ("json_bot", ECHO_BOT))
            for mode in MODES
        },
        "box_made_ahead_ms": statistics.median(_box_ahead_ms() for _ in range(15)),
    }
    messages = _act_messages(rounds)
    trips: dict[str, list[float]] = {"plain": [], "sandboxed": []}
    with _one_core():
        for part in (messages[: rounds // 2], messages[rounds // 2 :]):
            for mode, got in trips.items():
                got += _round_trips(mode == "sandboxed", part)
    round_trip = {
        mode: {
            "median_ms": round(statistics.median(t), 3),
            "p99_ms": round(_percentile(t, 0.99), 3),
        }
        for mode, t in trips.items()
    }
    games_figures = {mode: _match_figures(mode, games, 4, "random") for mode in MODES}
    six = {mode: _match_figures(mode, 1, 6, "random")["match_setup_ms_median"] for mode in MODES}
    return {
        "startup_median_ms": {k: round(v, 1) for k, v in starts.items()},
        "startup_sandboxed_probe_vs_bare_python": round(
            starts["sandboxed_probe_ms"] / starts["bare_python_I_S_ms"], 2
        ),
        "startup_ready_probe_vs_bare_python": round(
            starts["ready_probe_ms"] / starts["bare_python_I_S_ms"], 2
        ),
        "round_trip": round_trip,
        "round_trip_sandboxed_vs_plain_median": round(
            round_trip["sandboxed"]["median_ms"] / round_trip["plain"]["median_ms"], 2
        ),
        "four_player_random_game": games_figures,
        "sandboxed_vs_plain_decisions_per_s": round(
            games_figures["sandboxed"]["decisions_per_s"]
            / games_figures["plain"]["decisions_per_s"],
            2,
        ),
        "six_bot_match_setup_ms": six,
    }


# ---------------------------------------------------------------------- languages

STARTERS = Path(__file__).resolve().parent.parent / "bots" / "starters"
LANGUAGES = ("python", "javascript", "cpp", "rust", "java", "binary")
LANGUAGE_MODES = ("plain", "image", *MODES[1:])
"""The start-up baselines: this machine's interpreter, and the image's outside the sandbox."""


def _starter(language: str, sandboxed: bool) -> BotSource:
    """A language's starter bot, built as the mode runs it: in the ladder's image (sandboxed),
    or with this machine's compilers (plain). The binary starter is C built with gcc -static,
    in a build box either way (plain runs the same executable)."""
    from bots.runner.botfiles import load_bot
    from bots.runner.build import build, build_in_box

    if language == "binary":
        built = build_in_box(
            {"bot.c": (STARTERS / "binary" / "bot.c").read_bytes()},
            ("/bin/sh", "-c", 'exec gcc -O2 -static -o "$GRASS_BUILD/out/bot" bot.c'),
            "bot",
        )
        assert built.artifact is not None, built.log
        return BotSource("binary", {"bot": built.artifact})
    source = load_bot(STARTERS / language)
    made = build(source, sandboxed=sandboxed)
    if not made.ok:
        raise RuntimeError(f"{language} did not build: {made.log[-500:]}")
    return made.source(source)


def language_figures(
    rounds: int = 300, starts: int = 7, languages: tuple[str, ...] = LANGUAGES
) -> dict[str, Any]:
    """Per language of the runtime image: process start to `ready` and the median round trip
    of real `act` messages, for the starter bot sandboxed (in a box made as it starts, and
    start-up also from a box made ahead, as a worker starts its bots: `bots.runner.pool`)
    and plain (this machine's own interpreters; start-up also on the image's own interpreter
    outside the sandbox), measured in turn in one run. Goals (issue "Bot runtimes"): start-up
    at most 3x plain, round trip at most 1.5x plain."""
    messages = _act_messages(rounds)
    with _one_core():
        return {language: _language_row(language, messages, starts) for language in languages}


@contextlib.contextmanager
def _one_core() -> Iterator[None]:
    """This process, and the bots it starts, on one core: a round trip is then the two
    processes' own work and the sandbox's, without a VM's wake-ups across cores (which made
    the median of either mode vary fivefold between runs on a 2-core VM)."""
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, cores)


def _language_row(language: str, messages: list[bytes], starts: int) -> dict[str, float]:
    """One language's figures, the modes measured in turn (A B C D A B C D...)."""
    plain, boxed = _starter(language, sandboxed=False), _starter(language, sandboxed=True)
    bots = {mode: plain if mode == "plain" else boxed for mode in LANGUAGE_MODES}
    startups: dict[str, list[float]] = {mode: [] for mode in LANGUAGE_MODES}
    for _ in range(starts):
        for mode in LANGUAGE_MODES:
            startups[mode].append(_startup_ms(mode, bots[mode]))
    trips: dict[str, list[float]] = {"plain": [], "sandboxed": []}
    half = len(messages) // 2
    for part in (messages[:half], messages[half:]):
        for mode, got in trips.items():
            got += _round_trips(mode == "sandboxed", part, bots[mode])
    row = {f"startup_{mode}_ms": round(statistics.median(t), 1) for mode, t in startups.items()}
    for mode in ("sandboxed", "ready"):
        for base in ("plain", "image"):
            row[f"startup_{mode}_vs_{base}"] = round(
                row[f"startup_{mode}_ms"] / row[f"startup_{base}_ms"], 2
            )
    for mode, got in trips.items():
        row[f"round_trip_{mode}_ms"] = round(statistics.median(got), 3)
    row["round_trip_sandboxed_vs_plain"] = round(
        row["round_trip_sandboxed_ms"] / row["round_trip_plain_ms"], 2
    )
    return row
