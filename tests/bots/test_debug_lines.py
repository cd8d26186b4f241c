"""Debug lines per decision: what a bot writes on stderr is kept by decision, beside the log
event its answer became, bounded per seat and match (the latest 64 KiB, the cut counted), and
the whole-match tail for faults is kept as before."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bots.runner.botfiles import BotSource, load_bot
from bots.runner.match import play_match
from bots.runner.results import DebugEntry, DebugLines

TALKER = textwrap.dedent(
    """\
    import json, os, sys

    PAD = int(os.environ.get("PAD", "0"))
    sys.stderr.write("hello from start-up\\n")
    sys.stderr.flush()
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "hello":
            reply = {"type": "ready", "protocol": 1}
        elif message["type"] == "act":
            action = message["observation"]["legal"][0]
            sys.stderr.write("x" * PAD + f"req {message['id']}: {action}\\n")
            sys.stderr.flush()
            reply = {"type": "action", "id": message["id"], "action": action}
        elif message["type"] == "game_end":
            sys.stderr.write("bye\\n")
            sys.stderr.flush()
            break
        else:
            continue
        sys.stdout.write(json.dumps(reply) + "\\n")
        sys.stdout.flush()
    """
)


def talker(pad: int = 0) -> BotSource:
    """A bot that speaks the protocol itself and writes one line on stderr per request (with
    `pad` bytes before it), one at start-up and one at the game's end."""
    return BotSource("talker", {"bot.py": TALKER.replace('"0"', f'"{pad}"').encode()})


def game_events(match: object) -> list[dict[str, object]]:
    """The log's events without the runner's notes: what the replay's frames are built from."""
    return [e for e in match.events if e["e"] != "note"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("sandboxed", [False, True])
def test_each_decision_keeps_its_own_lines_beside_its_event(
    sandboxed: bool, request: pytest.FixtureRequest
) -> None:
    if sandboxed:
        request.getfixturevalue("sandbox_ready")
    match = play_match(
        [talker(), load_bot("random")], seed=3, limits={"max_hands": 2}, sandboxed=sandboxed
    )
    talking, quiet = match.seats
    assert not talking.forfeited and talking.strikes == 0
    entries = talking.debug.entries
    assert talking.debug.cut_bytes == talking.debug.cut_entries == 0
    events = game_events(match)
    assert entries[0] == DebugEntry(at=0, request=0, data=b"hello from start-up\n")
    assert entries[-1] == DebugEntry(at=len(events) - 1, request=None, data=b"bye\n")
    decisions = entries[1:-1]
    assert [e.request for e in decisions] == list(range(1, talking.decisions + 1))
    for entry in decisions:
        event = events[entry.at]
        assert event["e"] == "act" and event["seat"] == 0 and "auto" not in event
        assert entry.data == f"req {entry.request}: {event['action']}\n".encode()
    # The other seat wrote nothing: nothing is kept for it.
    assert quiet.debug.entries == [] and quiet.debug.size == 0
    # The whole match's tail (for faults) is kept as before.
    assert talking.stderr.endswith("bye\n") and len(talking.stderr) <= 4_000


def test_a_seat_keeps_its_latest_64_kib_and_counts_the_cut() -> None:
    pad = 10_000
    match = play_match(
        [talker(pad), load_bot("random")], seed=3, limits={"max_hands": 2}, sandboxed=False
    )
    debug = match.seats[0].debug
    line = pad + len("req 100: ") + 20
    assert match.seats[0].decisions * line > 2 * debug.keep  # far more was written
    assert debug.size == sum(len(e.data) for e in debug.entries) == debug.keep
    first, *rest = debug.entries
    assert first.cut > 0 and not first.data.startswith(b"x" * pad)  # its head was cut
    assert all(e.cut == 0 for e in rest) and rest[-1] == DebugEntry(
        at=len(game_events(match)) - 1, request=None, data=b"bye\n"
    )
    # Every byte written is either kept or counted as cut.
    assert rest[-2].request == match.seats[0].decisions
    written = sum(pad + len(f"req {k}: ") for k in range(1, match.seats[0].decisions + 1))
    assert written < debug.size + debug.cut_bytes  # (each line also holds its action)
    assert debug.cut_entries == match.seats[0].decisions + 2 - len(debug.entries)


def test_one_decision_longer_than_the_bound_keeps_its_tail() -> None:
    match = play_match(
        [talker(1 << 20), load_bot("random")], seed=3, limits={"max_hands": 1}, sandboxed=False
    )
    debug = match.seats[0].debug
    last = debug.entries[-2]
    assert len(last.data) + len(debug.entries[-1].data) == debug.keep
    assert last.data.endswith(b"\n") and last.data.startswith(b"x")
    line = last.data[last.data.index(b"req ") :]
    assert last.cut == (1 << 20) + len(line) - len(last.data)


def entry(at: int, size: int, cut: int = 0) -> DebugEntry:
    return DebugEntry(at=at, request=at, data=bytes([97 + at]) * size, cut=cut)


def test_debug_lines_drop_whole_entries_then_cut_the_oldest_head() -> None:
    lines = DebugLines(keep=10)
    lines.add(entry(0, 4))
    lines.add(DebugEntry(at=1, request=1, data=b""))  # nothing written: nothing kept
    lines.add(entry(2, 4))
    assert [e.at for e in lines.entries] == [0, 2] and lines.size == 8
    lines.add(entry(3, 5))  # 13 > 10: three bytes cut from the head of entry 0
    assert (lines.entries[0].data, lines.entries[0].cut) == (b"a", 3)
    assert (lines.size, lines.cut_bytes, lines.cut_entries) == (10, 3, 0)
    lines.add(entry(4, 3))  # 13 > 10: entry 0 goes whole (1), then 2 bytes of entry 2
    assert [(e.at, e.data, e.cut) for e in lines.entries] == [
        (2, b"cc", 2),
        (3, b"ddddd", 0),
        (4, b"eee", 0),
    ]
    assert (lines.size, lines.cut_bytes, lines.cut_entries) == (10, 6, 1)
    lines.add(entry(5, 0, cut=7))  # cut before it was taken (the process's own bound)
    assert lines.entries[-1].cut == 7 and lines.cut_bytes == 13
    assert lines.as_json() == {
        "cut_bytes": 13,
        "cut_entries": 1,
        "entries": [[2, 2, "cc", 2], [3, 3, "ddddd"], [4, 4, "eee"], [5, 5, "", 7]],
    }


def test_what_no_database_takes_is_made_visible() -> None:
    lines = DebugLines()
    lines.add(DebugEntry(at=1, request=1, data=b"nul \x00 and bad \xff utf-8"))
    assert lines.as_json()["entries"] == [[1, 1, "nul \\x00 and bad \ufffd utf-8"]]


STARTERS = Path(__file__).resolve().parents[2] / "bots" / "starters"


@pytest.mark.parametrize(("language", "entry"), [("python", "bot.py"), ("javascript", "bot.js")])
def test_the_sdks_debug_lines_go_beside_the_decision_they_were_written_in(
    sandbox_ready: None, language: str, entry: str
) -> None:
    """The starters call the SDK's `debug(...)` once per `choose`: each line is kept with the
    decision whose answer it names, in the sandbox."""
    source = BotSource(f"{language}-starter", {entry: (STARTERS / language / entry).read_bytes()})
    match = play_match([source, load_bot("random")], seed=5, limits={"max_hands": 1})
    starter = match.seats[0]
    assert not starter.forfeited and starter.strikes == 0, starter.stderr[-2000:]
    events = game_events(match)
    said = [e for e in starter.debug.entries if e.data]
    assert len(said) > starter.decisions / 2
    for kept in said:
        phase, _, rest = kept.data.decode().partition(": ")
        chose = rest.removesuffix("\n").split(" chose ")[1]
        event = events[kept.at]
        assert (event["e"], event["seat"], event["phase"], event["action"]) == (
            "act",
            0,
            phase,
            chose,
        ), kept
