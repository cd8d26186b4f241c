"""A replay's frames: the table after every event of a log, omniscient or as one seat saw it.

The replay viewer (`ladder/replays`) steps through these frames; the engine computes them, so
the browser never re-implements a rule. A seat's frames are built from `observe(game, seat)`
only, so they hold exactly what that seat could know: the browser is never sent another seat's
hidden cards, it does not merely hide them.

One `apply` can log several events (a card played, the turn ended, the next seat's draw), and
the engine changes its state around its `_emit` calls in two orders: most events are logged
*after* their change (a draw, a move, a hand's end), but an `act` is logged *before* its effect,
and `dealt` before the hands are picked up. So the frames come from a game that watches its own
`_emit`: an event of the first kind is snapshotted when it is logged; one of the second kind
when the engine next reaches a checkpoint (the next event, the start of a turn, the scoring of a
hand, or the end of the decision). The few remaining approximations are harmless: an action
whose effect logs its own events (a Steal and its `move`) shows that effect already, and while
passed cards travel (`pass` events) a hand can show one card short until its card arrives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from engine.cards import INFO, ORDER, Card
from engine.game import Event, Game
from engine.log import LogError, game_from_header, replay
from engine.observation import observe, redact
from engine.transcript import transcript

Frame = dict[str, Any]
"""One step of a replay, JSON-ready (see `frames`)."""

_DEFERRED = frozenset({"act", "dealt", "offer", "exchange", "result"})
"""Events logged before (part of) their effect: snapshotted at the next checkpoint."""

_TABLE_KEYS = ("hand_number", "dealer", "active", "to_act", "phase", "stack", "wasted", "totals")
_SEAT_KEYS = (
    "cards",
    "market_open",
    "heat",
    "hassle_under",
    "unprotected",
    "protected",
    "skips",
    "extra_turns",
)


def _sorted(cards: Iterable[Card]) -> list[str]:
    return [c.value for c in sorted(cards, key=ORDER.__getitem__)]


def _table(view: dict[str, Any]) -> Frame:
    """The public part of an observation, which every seat sees alike."""
    table: Frame = {key: view[key] for key in _TABLE_KEYS}
    table["hand"] = table.pop("hand_number")
    table["deal"] = view["deal"]
    table["seats"] = [{key: seat[key] for key in _SEAT_KEYS} for seat in view["seats"]]
    return table


def seat_state(game: Game, seat: int) -> Frame:
    """The table as `seat` sees it now: public facts plus its own hand (and draft cards).

    Built from `observe` alone, so the engine's secrecy rules decide what is in it; other
    seats' `hand` is None (the browser draws `cards` card backs).
    """
    view = observe(game, seat, since=len(game.events))
    state = _table(view)
    for index, entry in enumerate(state["seats"]):
        entry["hand"] = view["hand"] if index == seat else None
        if index == seat and "packet" in view:
            entry["packet"], entry["kept"] = view["packet"], view["kept"]
    return state


def omniscient_state(game: Game) -> Frame:
    """The table with every hand (and draft packet) face up."""
    state = _table(observe(game, 0, since=len(game.events)))
    for index, entry in enumerate(state["seats"]):
        entry["hand"] = _sorted(game.seats[index].hand)
        if game.packets:
            entry["packet"] = _sorted(game.packets[index])
            entry["kept"] = _sorted(game.kept[index])
    return state


class _Recorder(Game):
    """A Game that snapshots its table after every event it logs (see the module docstring).

    `states[i]` is the snapshot after `events[i]`, None while it waits for a checkpoint.
    """

    def __init__(self, game: Game, snapshot: Callable[[Game], Frame]) -> None:
        self.snapshot = snapshot
        self.pending: list[int] = []
        self.states: list[Frame | None] = []
        super().__init__(game.ruleset, game.variants, game.seed, game.names)

    @classmethod
    def adopt(cls, game: Game, snapshot: Callable[[Game], Frame]) -> _Recorder:
        """Record from an already started game (one set up from a position): the events it
        has logged so far all show its state now."""
        recorder = cls.__new__(cls)
        recorder.__dict__.update(game.__dict__)
        recorder.snapshot = snapshot
        recorder.pending = []
        recorder._refresh()  # The legal moves were bound to the other game's methods.
        state = snapshot(recorder)
        recorder.states = [state for _ in game.events]
        return recorder

    def checkpoint(self) -> None:
        if self.pending:
            state = self.snapshot(self)
            for index in self.pending:
                self.states[index] = state
            self.pending = []

    def _emit(self, event: Event) -> None:
        if event.get("e") != "dealt":
            # Dealt cards are picked up after the last `dealt` line: those frames wait for it.
            self.checkpoint()
        super()._emit(event)
        self.states.append(None)
        if event.get("e") in _DEFERRED:
            self.pending.append(len(self.events) - 1)
        else:
            self.states[-1] = self.snapshot(self)

    def _start_turn(self, seat: int) -> None:
        self.checkpoint()
        super()._start_turn(seat)

    def _end_hand(self) -> None:
        self.checkpoint()
        super()._end_hand()


def _record(log: list[Event], snapshot: Callable[[Game], Frame]) -> _Recorder:
    """Play a verified log again, recording a snapshot per event."""
    header = log[0]
    started = game_from_header(header)
    if "position" in header:
        recorder = _Recorder.adopt(started, snapshot)
    else:
        recorder = _Recorder(started, snapshot)
    recorder.checkpoint()
    for event in log[len(recorder.events) :]:
        if event.get("e") == "act" and not event.get("auto"):
            recorder.apply(event["action"])
            recorder.checkpoint()
    return recorder


# ---------------------------------------------------------------------- readable lines

_SECRET_ACTS = {
    "draft": "keeps a card and passes the packet on",
    "pass": "chooses a card to pass left",
    "deal-hand-over": "hands a card over face down",
    "deal-answer": "answers the deal",
}


def _hidden_line(event: Event, names: Sequence[str]) -> list[str] | None:
    """Words for an event whose secret part this seat does not see (None: not such an event)."""
    kind = event.get("e")
    name = names[event["seat"]] if "seat" in event else ""
    if kind == "dealt":
        return [f"{name} is dealt {len(event['secret']['cards'])} cards"]
    if kind == "draw":
        return [f"{name} draws a card"]
    if kind == "pass":
        return [f"{name} passes a card to {names[event['to']]}"]
    if kind == "take":
        return [f"{name} takes a card at random from {names[event['from']]}"]
    if kind == "act":
        return [f"{name} {_SECRET_ACTS.get(event['phase'], 'makes a secret choice')}"]
    return None


class _Lines:
    """Readable lines per event, by `engine.transcript`, as one seat (or everyone) may read
    them: other seats' secrets become words such as "draws a card"."""

    def __init__(self, header: Event, seat: int | None) -> None:
        self.seat = seat
        self.header = header
        self.names = [str(p) for p in header["players"]]
        self.skip = len(list(transcript([header])))

    def __call__(self, event: Event) -> list[str]:
        kind = event.get("e")
        if kind == "header":
            shown = event if self.seat is None else {**event, "seed": "(hidden)"}
            return list(transcript([shown]))
        if self.seat is not None:
            see = event.get("see")
            if see is not None and self.seat not in see:
                hidden = _hidden_line(event, self.names)
                if hidden is not None:
                    return hidden
                event = redact(event, self.seat)
            else:
                # As `redact` does: "forced" would tell that a seat had no choice.
                event = {k: v for k, v in event.items() if k != "auto"}
        lines = list(transcript([self.header, event]))[self.skip :]
        return [line.strip() for line in lines]


def _note_line(note: Event, names: Sequence[str], full: bool) -> str:
    """A runner's note (a bot's fault); only the kind for a seat that is not the note's own,
    since the detail can name the card a default played in secret."""
    seat = note.get("seat")
    who = names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else "?"
    text = f"{who}: {note.get('kind', 'note')}"
    if full:
        extra = [str(note[k]) for k in ("detail",) if note.get(k)]
        if "strike" in note:
            extra.append(f"strike {note['strike']}")
        if "played" in note:
            extra.append(f"played {note['played']}")
        if extra:
            text += f" ({'; '.join(extra)})"
    return text


# ---------------------------------------------------------------------- frames


def frames(events: Iterable[Event], seat: int | None = None) -> list[Frame]:
    """The replay of a log, one frame per game event (runner notes are attached to the frame
    of the event that follows them, not frames of their own).

    `seat` None: omniscient, every hand face up; a seat number: what that seat saw. Raises
    LogError, naming the line, for a log the engine does not reproduce (`engine.log.replay`
    checks it first); ValueError for a seat that is not in the game.

    A frame: `index` (among game events), `line` (in the file, counting notes), `event` (its
    kind), `lines` (readable), `notes`; the table after the event: `hand`, `dealer`,
    `active` (whose turn), `to_act` (who decides; -1 when nobody does), `phase`, `stack` (a
    count), `wasted`, `totals`, `deal` (being proposed), and `seats`, one entry per seat:
    `cards` (hand size), `hand` (None if hidden), `market_open`, `heat` (top last),
    `hassle_under`, `unprotected`, `protected` ([{card, covers}]), `skips`, `extra_turns`,
    and during a Give me five draft `packet` and `kept`.
    """
    numbered = list(enumerate(events, start=1))
    game = replay(event for _, event in numbered)
    if seat is not None and not 0 <= seat < game.n:
        raise ValueError(f"no seat {seat} in a {game.n}-player game")
    log = [event for _, event in numbered if event.get("e") != "note"]
    snapshot: Callable[[Game], Frame]
    if seat is None:
        snapshot = omniscient_state
    else:
        viewer = seat
        snapshot = lambda g: seat_state(g, viewer)  # noqa: E731
    recorder = _record(log, snapshot)
    if len(recorder.events) != len(log):
        raise LogError(len(numbered), "the replay did not reproduce the log")
    lines = _Lines(log[0], seat)
    names = lines.names
    result: list[Frame] = []
    notes: list[str] = []
    index = 0
    for number, event in numbered:
        if event.get("e") == "note":
            full = seat is None or event.get("seat") == seat
            notes.append(_note_line(event, names, full))
            continue
        state = recorder.states[index]
        assert state is not None, f"no snapshot after event {index}"
        frame: Frame = {
            "index": index,
            "line": number,
            "event": event["e"],
            "lines": lines(event),
            "notes": notes,
            **state,
        }
        result.append(frame)
        notes = []
        index += 1
    if notes:
        result[-1]["notes"] = result[-1]["notes"] + notes
    return result


_ALWAYS = frozenset({"index", "line", "event", "lines"})
"""Keys every delta keeps, changed or not."""


def deltas(full: Sequence[Frame]) -> list[Frame]:
    """Frames as changes: each holds the keys whose value differs from the frame before
    (always `index`, `line`, `event` and `lines`), and `seats` as {seat: entry} for the seats
    that changed; the first frame is complete. A full 30-hand game (tens of thousands of
    events) is tens of megabytes of full frames (66 MB for a 50,000-event one) and still
    several megabytes of deltas (about 7 to 10 MB of JSON, well under 1 MB gzipped, which is
    how the site caches and sends them); the viewer rebuilds the frames as it loads."""
    result: list[Frame] = []
    previous: Frame = {}
    for frame in full:
        delta: Frame = {}
        for key, value in frame.items():
            if key in _ALWAYS or key not in previous or previous[key] != value:
                delta[key] = value
        if "seats" in delta:
            before = previous.get("seats") or []
            delta["seats"] = {
                str(i): entry
                for i, entry in enumerate(frame["seats"])
                if i >= len(before) or before[i] != entry
            }
        result.append(delta)
        previous = frame
    return result


def undelta(changes: Sequence[Frame]) -> list[Frame]:
    """The frames again from `deltas` (what the viewer's script does; used by the tests)."""
    result: list[Frame] = []
    current: Frame = {}
    for delta in changes:
        frame = {**current, **delta}
        if "seats" in delta:
            seats = list(current.get("seats", []))
            for key, entry in sorted(delta["seats"].items(), key=lambda item: int(item[0])):
                index = int(key)
                if index < len(seats):
                    seats[index] = entry
                else:
                    seats.append(entry)
            frame["seats"] = seats
        result.append(frame)
        current = frame
    return result


def cards_info() -> dict[str, dict[str, Any]]:
    """Every card's title, family and value, so the viewer can name cards without a table of
    its own."""
    return {
        card.value: {"title": info.title, "family": info.family.value, "value": info.value}
        for card, info in INFO.items()
    }


def document(events: Iterable[Event], seat: int | None = None) -> dict[str, Any]:
    """Everything the viewer loads: the game's description, the card table, the frames (as
    `deltas`) and the result. As `frames`, with the seed left out of a seat's view (it decides
    every shuffle, so it would give every hidden card away)."""
    log = list(events)
    shown = frames(log, seat)
    header = log[0]
    game: dict[str, Any] = {
        "players": [str(p) for p in header["players"]],
        "ruleset": header["ruleset"],
        "variants": header["variants"],
        "limits": header.get("limits", {}),
    }
    if seat is None:
        game["seed"] = header["seed"]
    return {
        "format": "grass-replay/1",
        "view": "all" if seat is None else seat,
        "game": game,
        "cards": cards_info(),
        "result": next((e for e in log if e.get("e") == "result"), None),
        "frames": deltas(shown),
    }
