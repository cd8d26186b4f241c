"""Game logs: JSON Lines, one event per line, written by the engine and checked by replay.

The first line is the header (engine version, ruleset, variants, seed, players, and the
position for a game set up mid-hand); the last is the result. Every `act` line is a decision
taken; `auto` marks the ones the engine took because only one action was legal. Replaying feeds
the non-automatic actions back into a fresh engine and compares every line the engine writes
with the log, so an edited log fails at the first line that disagrees.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from engine.game import ENGINE_VERSION, LOG_FORMAT, Event, EventHook, Game, IllegalAction
from engine.rules import Variants, resolve_ruleset, version_tuple


class LogError(ValueError):
    """A log that is unreadable or disagrees with the engine, at a 1-based line number."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.reason = message


def encode(event: Event) -> str:
    """One event as its log line (compact JSON; card kinds become their text encodings)."""
    return json.dumps(event, separators=(",", ":"))


def _normal(event: Event) -> Any:
    return json.loads(encode(event))


def dumps(events: Iterable[Event]) -> str:
    return "".join(encode(event) + "\n" for event in events)


def write_log(game: Game, path: str | Path) -> Path:
    """Write a game's log; a name ending in `.gz` is gzip-compressed."""
    path = Path(path)
    data = dumps(game.events).encode()
    if path.suffix == ".gz":
        # No name and mtime=0: identical games give identical compressed bytes.
        with (
            path.open("wb") as raw,
            gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz,
        ):
            gz.write(data)
    else:
        path.write_bytes(data)
    return path


def _read_bytes(source: str | Path | IO[bytes]) -> bytes:
    data = Path(source).read_bytes() if isinstance(source, (str, Path)) else source.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise LogError(1, f"not a readable gzip file ({exc})") from None
    return data


def iter_events(source: str | Path | IO[bytes]) -> Iterator[Event]:
    """Parse a log (plain or gzip) into events; raises LogError naming the bad line, and
    nothing else whatever the file holds (logs come from visitors too)."""
    lines = _read_bytes(source).split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    for number, raw in enumerate(lines, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LogError(number, f"not UTF-8 text ({exc.reason})") from None
        if not line.strip():
            raise LogError(number, "empty line")
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LogError(number, f"not JSON ({exc.msg})") from None
        # json.loads raises these too: hostile input must still name its line.
        except RecursionError:
            raise LogError(number, "not JSON (nested too deeply)") from None
        except ValueError:  # an integer past Python's 4,300-digit limit
            raise LogError(number, "not JSON (a number too long to read)") from None
        except MemoryError:
            raise LogError(number, "not JSON (too large to decode)") from None
        if not isinstance(event, dict) or "e" not in event:
            raise LogError(number, "not an event object with an 'e' field")
        yield event


def read_log(source: str | Path | IO[bytes]) -> list[Event]:
    return list(iter_events(source))


def game_from_header(header: Event, on_event: EventHook | None = None) -> Game:
    """A fresh game as the header describes it (line 1 of a log), under the rules of the engine
    version that wrote it (`engine.rules.rules_as_of`). `on_event` is the game's event hook
    (`Game.on_event`) from its start; a game set up from a position calls it, once set up, for
    the events it logged meanwhile (they all show the position)."""
    if header.get("e") != "header":
        raise LogError(1, "the first line must be the header")
    if header.get("format") != LOG_FORMAT:
        raise LogError(1, f"unknown log format {header.get('format')!r}, expected {LOG_FORMAT}")
    written_by = header.get("engine")
    try:
        version = version_tuple(written_by) if isinstance(written_by, str) else None
    except ValueError:
        version = None
    if version is None:
        raise LogError(1, f"bad header: engine {written_by!r} is not an engine version")
    if version[0] != version_tuple(ENGINE_VERSION)[0] or version > version_tuple(ENGINE_VERSION):
        raise LogError(1, f"log written by engine {written_by}, this is engine {ENGINE_VERSION}")
    variants_given = header.get("variants")
    if version < (1, 1) and isinstance(variants_given, dict):
        if variants_given.get("lucky_or_not"):
            raise LogError(
                1,
                f"log written by engine {written_by}, which drew Lucky or not's takes from the "
                f"dealing stream; engine {ENGINE_VERSION} draws them apart, so this game "
                "cannot be replayed here",
            )
    try:
        variants = Variants.from_dict(header.get("variants", {}))
        players = header["players"]
        seed = header["seed"]
        if not isinstance(seed, int) or not isinstance(players, list):
            raise TypeError("seed must be an integer and players a list")
        if "position" in header:
            from engine.position import Position, game_from_position

            position = Position.from_dict(header["position"])
            game = game_from_position(
                position, header["ruleset"], variants, seed, header.get("limits"), written_by
            )
        else:
            rules = resolve_ruleset(header["ruleset"], variants, header.get("limits"), written_by)
            return Game(rules, variants, seed, [str(p) for p in players], on_event=on_event)
    except (KeyError, TypeError, ValueError) as exc:
        raise LogError(1, f"bad header: {exc}") from None
    if on_event is not None:
        for event in game.events:
            on_event(game, event)
        game.on_event = on_event
    return game


def replay(events: Iterable[Event], on_event: EventHook | None = None) -> Game:
    """Replay a log through the engine; returns the finished game.

    Raises LogError at the first line where the log and the engine disagree: an edited card,
    action, score or result, a missing line, or lines after the result. `note` lines (written
    by the bot runner: faults, strikes, forfeits) are commentary, not game events: they are
    skipped and not verified. `on_event` watches the game as it is replayed (see
    `game_from_header`); it may hear of an event before the log's line is compared with it.
    """
    events = list(events)
    if not events:
        raise LogError(1, "the log is empty")
    if events[0].get("e") != "header":
        raise LogError(1, "the first line must be the header")
    numbered = [(n, e) for n, e in enumerate(events, start=1) if e.get("e") != "note"]
    log = [e for _, e in numbered]
    line_of = [n for n, _ in numbered] + [numbered[-1][0] + 1]
    try:
        return _replay(log, on_event)
    except LogError as exc:
        # Report the line number in the file, counting the runner's notes.
        raise LogError(line_of[exc.line - 1], exc.reason) from None


HEADER_NOTES = ("runtime",)
"""Header fields about where a game was played, not how: the bot runner records the runtime
image its bots ran on. A replay copies them from the log's header; they change nothing."""


def _replay(log: list[Event], on_event: EventHook | None) -> Game:
    game = game_from_header(log[0], on_event)
    events = game.events
    for key in HEADER_NOTES:
        if key in log[0]:
            events[0][key] = log[0][key]
    checked = 0
    while True:
        while checked < len(events):
            # The engine's event equals the line as read back from JSON (cards are strings):
            # compare directly, and through JSON only when that fails (a tuple for a list).
            event = events[checked]
            if checked >= len(log):
                raise LogError(checked + 1, f"log ends early; the engine expected {_normal(event)}")
            if log[checked] != event and log[checked] != _normal(event):
                raise LogError(
                    checked + 1,
                    f"the engine expected {encode(event)}, the log has {encode(log[checked])}",
                )
            checked += 1
        if game.over:
            break
        if checked >= len(log):
            decision = game.decision
            raise LogError(
                checked + 1,
                f"log ends early; seat {decision.seat} still has a '{decision.phase}' decision",
            )
        line = log[checked]
        if line.get("e") != "act" or line.get("auto"):
            raise LogError(
                checked + 1,
                f"the engine expected an action by seat {game.to_act}, the log has {encode(line)}",
            )
        if line.get("seat") != game.table.to_act:
            raise LogError(
                checked + 1, f"seat {line.get('seat')} acts, but it is seat {game.to_act}'s turn"
            )
        try:
            game.apply(line.get("action"))  # type: ignore[arg-type]
        except IllegalAction as exc:
            raise LogError(checked + 1, str(exc)) from None
    if checked < len(log):
        raise LogError(checked + 1, "lines after the result")
    return game


def verify(source: str | Path | IO[bytes]) -> Game:
    """Read and replay a log file; the finished game if every line agrees."""
    return replay(read_log(source))
