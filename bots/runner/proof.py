"""Proof that this host runs bots as the ladder does: a known bot of each language (its
starter, `bots/starters`) starts in a box and makes one decision.

A worker proves its sandbox when it starts and from time to time, and the referee proves the
languages of a match whose seats failed the way a broken host makes them fail (a launcher's
exit status, 125-127): if the known bot fails too, the host is at fault, and no bot is charged
for it. A worker whose image had lost `python3` once recorded 16 matches in 30 s with every seat
forfeiting ("exit 127"): 856 Elo points moved and all eight bots were disabled. That verdict on
a match's seats (`check_host`) is here, beside the proof it asks for, so that what makes the
referee suspect its host, and what clears the host, read together.

Compiled starters are built once per host and image, and kept in a folder of the caller's
(`CACHE`, a few seconds of CPU the first time); the languages are proved side by side, since a
proof mostly waits for a bot to start.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bots import protocol
from bots.runner import runtime
from bots.runner.botfiles import BotSource, load_bot
from bots.runner.build import BuildUnavailable, build, build_in_box
from bots.runner.languages import LANGUAGES, detect
from bots.runner.results import InfrastructureFault
from bots.runner.seats import Seat

STARTERS = Path(__file__).resolve().parent.parent / "starters"
STATIC_C = ("/bin/sh", "-c", 'exec gcc -O2 -static -o "$GRASS_BUILD/out/bot" bot.c')
"""How a binary bot is made from the C starter (its author would do it on their machine)."""
STARTUP_S = 60.0
DECISION_S = 30.0
"""Generous: a proof measures whether a bot runs, not how fast, on a host that may be busy."""

CACHE = Path(os.environ.get("GRASS_PROOF_CACHE") or Path(tempfile.gettempdir()) / "grass-proof")
"""Where built known bots are kept, one folder per user (the worker's own, mode 0700)."""

_KNOWN: dict[tuple[str, str], BotSource] = {}

LAUNCHER_FAILURES = ("exited with status 125", "exited with status 126", "exited with status 127")
"""How a seat ends when its box could not start its language's command (the box program's
status, the shell's "cannot execute" and "not found"): the marks of a broken host. A bot can
end the same way on purpose, so these only make the referee prove the host (`check_host`)."""
LAUNCHER_WORDS = ("bwrap: ", "grass-box: ", "setpriv: ")
"""What the box's launchers write when they fail (on the seat's stderr, before its bot ran)."""


class ProofFailed(RuntimeError):
    """The known bot of a language could not run here; the message says how it failed."""


def known_bot(language: str) -> BotSource:
    """The starter of `language`, built if it is compiled (once per host and image)."""
    key = (runtime.identity(), language)
    if key not in _KNOWN:
        _KNOWN[key] = _kept(language) or _built(language)
    return _KNOWN[key]


def _sources(language: str) -> dict[str, bytes]:
    if language == "binary":
        return {"bot.c": (STARTERS / "binary" / "bot.c").read_bytes()}
    return load_bot(STARTERS / language).files


def _kept_path(language: str) -> Path:
    """The kept build of `language`'s starter, named by what it is built from: the image, the
    sources and the build scripts (a change of any makes a new one)."""
    digest = hashlib.sha256(runtime.identity().encode())
    for name, data in sorted(_sources(language).items()):
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    for script in sorted((Path(__file__).parent / "buildscripts").glob("*.sh")):
        digest.update(script.read_bytes())
    return CACHE / f"{os.getuid()}" / f"{language}-{digest.hexdigest()[:16]}"


def _kept(language: str) -> BotSource | None:
    lang = LANGUAGES[language]
    if not lang.build and language != "binary":
        return BotSource(f"proof-{language}", _sources(language))
    try:
        artifact = _kept_path(language).read_bytes()
    except OSError:
        return None
    if language == "binary":
        return BotSource("proof-binary", {"bot": artifact})
    assert lang.artifact is not None
    return BotSource(f"proof-{language}", {**_sources(language), lang.artifact: artifact})


def _built(language: str) -> BotSource:
    files = _sources(language)
    if language == "binary":
        made = build_in_box(files, STATIC_C, "bot", language="binary")
        if not made.ok or made.artifact is None:
            raise ProofFailed(f"the C starter did not build statically: {_excerpt(made.log)}")
        source = BotSource("proof-binary", {"bot": made.artifact})
    else:
        made = build(BotSource(f"proof-{language}", files))
        if not made.ok:
            raise ProofFailed(f"the {language} starter did not build: {_excerpt(made.log)}")
        source = made.source(BotSource(f"proof-{language}", files))
    if made.artifact is not None:
        _keep(_kept_path(language), made.artifact)
    return source


def _excerpt(log: str, each: int = 400) -> str:
    """The head and the tail of a build's log: a JVM's error names its cause on its first line
    and ends with a long stack trace, which alone said nothing (a CI run's worker refused
    matches for a Java build that ended `...va:281)`)."""
    if len(log) <= 2 * each:
        return log
    return f"{log[:each]}\n[...]\n{log[-each:]}"


def _keep(path: Path, data: bytes) -> None:
    """Write `data` at `path` whole or not at all, in a folder only this user may write."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_bytes(data)
        partial.rename(path)
    except OSError:
        pass  # nothing kept: the next process builds again


def prove(languages: Iterable[str] | None = None) -> dict[str, str]:
    """Each language's problem, for those whose known bot cannot make a decision here; an
    empty dict when all of them can. Every box made for it is released."""
    wanted = sorted(set(languages) if languages is not None else LANGUAGES)

    def prove_one(language: str) -> str | None:
        try:
            one_decision(known_bot(language))
        except (ProofFailed, BuildUnavailable, OSError, RuntimeError, ValueError) as exc:
            return str(exc) or type(exc).__name__
        return None

    with ThreadPoolExecutor(max_workers=max(1, len(wanted))) as threads:
        found = dict(zip(wanted, threads.map(prove_one, wanted), strict=True))
    return {language: problem for language, problem in found.items() if problem is not None}


def one_decision(source: BotSource) -> None:
    """Start `source` in a box, greet it, ask for one decision of a fresh game and check the
    answer is legal; ProofFailed saying what went wrong."""
    from bots.runner.boxes import start_bot, stop_bot
    from bots.runner.feed import Feeds
    from bots.runner.process import BotGone, BotTimeout, LineTooLong
    from engine import new_game

    game = new_game("modern", ["proof", "other"], 1)
    try:
        proc, box, folder = start_bot(source, True)
    except InfrastructureFault as exc:
        raise ProofFailed(str(exc)) from None
    try:
        started = time.perf_counter()
        hello = protocol.hello(
            seat=game.to_act,
            players=list(game.names),
            ruleset=game.ruleset.name,
            variants=game.variants.as_dict(),
            limits={},
            decision_ms=int(DECISION_S * 1000),
            bank_ms=0,
            protocols=protocol.PROTOCOLS,
        )
        hello["rng_seed"] = 1
        proc.send(protocol.encode(hello), started + STARTUP_S)
        ready = protocol.parse_reply(proc.readline(started + STARTUP_S), "ready")
        feed = Feeds(game).for_seat(game.to_act, protocol.chosen_version(ready))
        asked = time.perf_counter()
        proc.send(feed.act(1, bank_ms=0, cpu_ms=30_000, wall_ms=30_000), asked + DECISION_S)
        answer = protocol.parse_reply(proc.readline(asked + DECISION_S), "action")
        if answer.get("id") != 1 or answer.get("action") not in game.moves:
            raise ProofFailed(f"{source.name} answered {protocol.shown(answer, 200)}")
    except (BotGone, BotTimeout, LineTooLong, protocol.ProtocolError) as exc:
        raise ProofFailed(
            f"{source.name}: {exc}; stderr: {proc.stderr_text()[-500:].strip()}"
        ) from None
    finally:
        stop_bot(proc, box, folder)


def check_host(seats: Sequence[Seat], proved: set[str]) -> None:
    """Raise InfrastructureFault when the seats' failures are the host's, not the bots':
    no seat could start, or every seat failed the same way, or a seat failed as a broken
    host makes it fail and the known bot of its language fails here too (`prove`). Only
    bots' own play may move a rating. `proved` holds the languages whose known bot has run
    here during this match; it gains those proved now."""
    reports = [seat.report for seat in seats]
    reasons = [report.forfeit_reason for report in reports]
    if all(reason.startswith("did not start") for reason in reasons):
        raise InfrastructureFault("host fault: no seat could start: " + "; ".join(reasons))
    if all(report.forfeited for report in reports) and len(set(reasons)) == 1:
        raise InfrastructureFault(f"host fault: every seat failed the same way: {reasons[0]}")
    suspects = {
        detect(source.files).name
        for seat in seats
        if (source := seat.source) is not None  # a remote seat runs on no host of ours
        and (
            any(mark in seat.report.forfeit_reason for mark in LAUNCHER_FAILURES)
            or (
                seat.report.forfeit_reason.startswith("did not start")
                and any(mark in seat.report.stderr for mark in LAUNCHER_WORDS)
            )
        )
    }
    suspects -= proved
    if suspects:
        problems = prove(suspects)
        proved |= suspects - problems.keys()
        if problems:
            said = "; ".join(f"{lang}: {why}" for lang, why in sorted(problems.items()))
            raise InfrastructureFault(f"host fault: the known bot fails here too: {said}")
