"""Every language's starter bot builds (if it is compiled) and plays a clean sandboxed game in
the runtime image, as the ladder runs it: the languages are a property of the ladder, the
same on every host."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots.runner.botfiles import BotSource, load_bot
from bots.runner.build import Build, build, build_in_box
from bots.runner.languages import check_upload
from bots.runner.match import play_match
from bots.runner.seats import TimeControl
from tests.bots.boxes import own_leftovers

STARTERS = Path(__file__).resolve().parents[2] / "bots" / "starters"
COMPILED = ("cpp", "rust", "java")


def static_c_binary() -> BotSource:
    """The binary starter as an author makes it: its C source built with `gcc -static` (in
    a build box here, so the test needs nothing on the host)."""
    source = load_c_source()
    built = build_in_box(
        source.files,
        ("/bin/sh", "-c", 'exec gcc -O2 -static -o "$GRASS_BUILD/out/bot" bot.c'),
        "bot",
    )
    assert built.ok and built.artifact is not None, built.log
    check_upload({"bot": built.artifact})  # a static x86-64 executable, as uploads must be
    return BotSource("binary", {"bot": built.artifact})


def load_c_source() -> BotSource:
    return BotSource("binary", {"bot.c": (STARTERS / "binary" / "bot.c").read_bytes()})


@pytest.fixture(scope="module")
def starters(sandbox_ready: None) -> dict[str, tuple[BotSource, Build | None]]:
    found: dict[str, tuple[BotSource, Build | None]] = {}
    for language in ("python", "javascript", *COMPILED):
        source = load_bot(STARTERS / language)
        built = build(source)
        assert built.ok, f"{language}: {built.log}"
        found[language] = (built.source(source), built)
    found["binary"] = (static_c_binary(), None)
    return found


@pytest.mark.parametrize("language", ["python", "javascript", *COMPILED, "binary"])
def test_the_starter_plays_a_clean_sandboxed_game(
    starters: dict[str, tuple[BotSource, Build | None]], language: str, box_made: str
) -> None:
    source, built = starters[language]
    if language in COMPILED:
        assert built is not None and built.artifact is not None and built.cpu_seconds > 0
    match = play_match(
        [source, load_bot("random")],
        seed=3,
        limits={"max_hands": 1},
        time_control=TimeControl(startup_ms=20_000),
    )
    bot = match.seats[0]
    assert not bot.forfeited, (bot.forfeit_reason, bot.stderr[-2000:])
    assert bot.strikes == 0 and bot.decisions > 0, bot.faults
    assert match.result["e"] == "result"
    # Python and JavaScript through their SDKs, which speak version 2; the rest version 1.
    assert bot.protocol == (2 if language in ("python", "javascript") else 1)


def test_the_same_seed_gives_the_same_game(
    starters: dict[str, tuple[BotSource, Build | None]],
) -> None:
    """Every starter seeds its generator with hello.rng_seed: a game can be replayed."""
    for language, (source, _) in starters.items():
        logs = [
            play_match([source, load_bot("greedy")], seed=9, limits={"max_hands": 1}).log_text()
            for _ in range(2)
        ]
        assert logs[0] == logs[1], language


def test_a_build_that_fails_keeps_the_compiler_output(sandbox_ready: None) -> None:
    broken = BotSource("broken", {"bot.cpp": b"int main( { return 0; }\n"})
    built = build(broken)
    assert not built.ok and built.artifact is None
    assert "bot.cpp:1" in built.log and "error" in built.log
    assert built.log.rstrip().endswith("the build failed (exit status 1)")


def test_a_build_is_held_by_its_limits(sandbox_ready: None) -> None:
    """A compiler (or a build script) that runs away is stopped: the build fails, nothing
    of it is left, and the host is untouched."""
    spin = build_in_box(
        {"x": b""},
        ("/bin/sh", "-c", "yes > /dev/null & yes > /dev/null & wait"),
        "bot",
        cpu_seconds=2,  # 60 s on the ladder; the same rule
    )
    assert not spin.ok and "more than 2 s of CPU" in spin.log
    assert spin.cpu_seconds < 2 + 1  # stopped within half a second of looking
    assert own_leftovers() == []
