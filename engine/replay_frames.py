"""A replay's frames: the table after every event of a log, omniscient or as one seat saw it.

The replay viewer (`ladder/replays`) steps through these frames; the engine computes them, so
the browser never re-implements a rule. A seat's frames hold exactly what that seat could know
(what `observe(game, seat)` shows): the browser is never sent another seat's hidden cards, it
does not merely hide them.

The frames are built in one pass: the log is replayed once (and checked line by line as
`engine.log.replay` does), and the game's event hook (`Game.on_event`) hears of every event as
soon as the table shows its outcome. The hook compares the table with the frame before and
writes down only what changed, so a frame is a *delta* (`deltas`, the form the site stores and
sends); `frames` gives them whole. Two harmless approximations come from the order in which
the engine logs: an action whose effect logs its own events (a Steal and its `move`) shows that
effect already, and while passed cards travel (`pass` events) a hand can show one card short
until its card arrives.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from engine.cards import INFO, ORDER, Card
from engine.game import Event, Game
from engine.log import LogError, replay
from engine.observation import (
    PUBLIC_KEYS,
    PUBLIC_SEAT_KEYS,
    SEAT_FIELDS,
    Sight,
    Viewer,
    event_lines,
    full_view,
    own_fields,
    public_view,
)
from engine.state import PHASE_TEXT, Phase, Seat, Table

Frame = dict[str, Any]
"""One step of a replay, JSON-ready (see `frames`)."""

_TEXT: dict[Card, str] = {card: card.value for card in Card}


def _texts(cards: Iterable[Card]) -> list[str]:
    return [_TEXT[c] for c in cards]


def _sorted(cards: Iterable[Card]) -> list[str]:
    return [_TEXT[c] for c in sorted(cards, key=ORDER.__getitem__)]


_RENAMED = {"hand_number": "hand"}
"""Public fields a frame names otherwise (a frame's `hand` is the hand's number)."""
_FRAME_KEYS = ("dealer", "active", "to_act", "phase", "stack", "wasted", "totals", "hand", "deal")
"""A frame's table fields: the observer's public fields that change as the game goes (`hand`
is the hand number), less the running turn counters and past hands' scores, which the
viewer shows through the lines."""
assert {_RENAMED.get(key, key) for key in PUBLIC_KEYS} >= {*_FRAME_KEYS, "seats"}
_FRAME_SEAT_KEYS = tuple(key for key in PUBLIC_SEAT_KEYS if key != "name")
"""A seat's public entry in a frame: the observer's, but for the name (in the header)."""


def _table(view: dict[str, Any]) -> Frame:
    """A frame's table from the observer's public view, which every seat sees alike."""
    public = {_RENAMED.get(key, key): value for key, value in view.items()}
    table: Frame = {key: public[key] for key in _FRAME_KEYS}
    table["seats"] = [{key: seat[key] for key in _FRAME_SEAT_KEYS} for seat in view["seats"]]
    return table


def seat_state(game: Game, seat: int) -> Frame:
    """The table as `seat` sees it now: the observer's public view plus the seat's own hand
    (and draft cards); other seats' `hand` is None (the browser draws `cards` card backs).
    Replays build the same state faster, change by change (`_Recorder`); the tests check
    that they agree."""
    own = own_fields(game, seat, since=len(game.events))
    state = _table(public_view(game))
    for index, entry in enumerate(state["seats"]):
        entry["hand"] = own["hand"] if index == seat else None
        if index == seat and "packet" in own:
            entry["packet"], entry["kept"] = own["packet"], own["kept"]
    return state


def public_state(game: Game) -> Frame:
    """The table as a spectator sees it now: the observer's public view, every hand hidden."""
    state = _table(public_view(game))
    for entry in state["seats"]:
        entry["hand"] = None
    return state


def omniscient_state(game: Game) -> Frame:
    """The table with every hand (and draft packet) face up: the observer's full view."""
    view = full_view(game, since=len(game.events))
    state = _table(view)
    for entry, own in zip(state["seats"], view["own"], strict=True):
        entry["hand"] = own["hand"]
        if game.packets:
            entry["packet"] = _sorted(game.packets[own["seat"]])
            entry["kept"] = _sorted(game.kept[own["seat"]])
    return state


# ---------------------------------------------------------------------- readable lines


class _Lines:
    """Readable lines per event as one viewer may read them (the observer's `event_lines`,
    the one wording of every view): other seats' secrets become words such as "draws a
    card". Lines of the events that repeat a lot are kept and reused."""

    def __init__(self, header: Event, viewer: Viewer) -> None:
        self.viewer = viewer
        self.names = [str(p) for p in header["players"]]
        self.known: dict[tuple[Any, ...], list[str]] = {}
        """Lines of the events that repeat a lot (actions such as "deal @1" or "decline",
        draws, deal offers), by what they depend on."""

    def __call__(self, event: Event) -> list[str]:
        kind = event.get("e")
        if kind == "act":
            see = event.get("see")
            hidden = see is not None and self.viewer not in see
            key: tuple[Any, ...] = (
                event["seat"],
                event["phase"],
                event["action"],
                "auto" in event,
                hidden,
            )
        elif kind == "draw":
            key = ("draw", event["seat"], event["secret"]["card"])
        elif kind == "offer":
            offer, ask = event["offer"], event["ask"]
            key = ("offer", event["seat"], event["partner"], event["give"], event["want"])
            if offer or ask:
                key += (tuple(offer), tuple(ask))
        else:
            return event_lines(event, self.names, self.viewer)
        lines = self.known.get(key)
        if lines is None:
            lines = self.known[key] = event_lines(event, self.names, self.viewer)
        return lines


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


# ---------------------------------------------------------------------- the recorder


class _SeatMemo:
    """What one seat's entry was last built from (copies), to tell cheaply whether it changed:
    hand size, Market Open, skips, extra turns, heat, unprotected, hassle pile underneath,
    protected groups, and the hand and draft cards when they are shown."""

    __slots__ = ("entry", "state")

    def __init__(self) -> None:
        self.entry: Frame | None = None
        self.state: list[Any] = []


_NO_SEATS: tuple[int, ...] = ()
_QUIET_PHASES = frozenset({"deal-give", "deal-want", "deal-stash"})
_NAMED = {
    "draw": ("seat",),
    "skip": ("seat",),
    "extra-turn": ("seat",),
    "waste": ("seat",),
    "move": ("from", "to"),
    "take": ("seat", "from"),
    "pass": ("seat", "to"),
    "exchange": ("seat", "partner"),
    "offer": (),
    "hand-end": (),
    "result": (),
}


def _touched(event: Event) -> tuple[int, ...] | None:
    """The seats whose entries may have changed since the frame before this event's (None:
    any seat). The engine logs its changes to seats as events that name them (a draw, a move,
    a pass...), except the effect of an action, so an action touches any seat but for the deal
    steps, which only draft the deal (`tests/engine/test_replay_frames.py` checks this against
    every seat in many games)."""
    kind = event["e"]
    if kind == "act":
        phase = event["phase"]
        if phase in _QUIET_PHASES:
            return _NO_SEATS
        action = event["action"]
        if action == "decline" or (phase == "turn" and action.startswith("deal ")):
            return _NO_SEATS
        return None
    keys = _NAMED.get(kind)
    if keys is None:
        return None  # the header, a new hand, the cards dealt
    return tuple(event[key] for key in keys)


class _Recorder:
    """The game's event hook during a replay: one delta frame per event (see `deltas`).

    For each event it compares the table with what the previous frame was built from: plain
    numbers directly, the Wasted pile and the totals by size and identity (the engine only
    adds to the pile and replaces the totals), the deal being drafted by its fields, and
    the seats the event may have touched (`_touched`) first by the lists their entries are
    built from (kept as copies); only a seat that differs there gets its entry rebuilt and
    compared. With `check`, every seat is compared at every event and the shortcuts verified
    (for the tests).
    """

    def __init__(
        self,
        seat: Viewer,
        lines: _Lines,
        line_of: list[int],
        notes: list[list[str] | None],
        check: bool = False,
    ) -> None:
        self.seat = seat
        self.lines = lines
        self.line_of = line_of
        self.notes = notes
        self.check = check
        self.frames: list[Frame] = []
        self.last: Frame = {}
        """The previous frame's value of every key (seats aside)."""
        self.numbers: tuple[Any, ...] = ()
        self.wasted: tuple[list[Card] | None, int] = (None, -1)
        self.totals: list[int] | None = None
        self.deal: tuple[Any, ...] = (False,)
        self.memos: list[_SeatMemo] = []

    def __call__(self, game: Game, event: Event) -> None:
        index = len(self.frames)
        if index >= len(self.line_of):
            return  # more events than the log has: the replay reports where it ends
        t = game.table
        last = self.last
        delta: Frame = {
            "index": index,
            "line": self.line_of[index],
            "event": event["e"],
            "lines": self.lines(event),
        }
        notes = self.notes[index]
        if notes is not None:
            delta["notes"] = notes
        numbers = (t.dealer, t.active, t.to_act, PHASE_TEXT[t.phase], len(t.stack))
        if numbers != self.numbers:
            for key, old, new in zip(_NUMBERS, self.numbers or _UNSET, numbers, strict=True):
                if old != new:
                    delta[key] = new
            self.numbers = numbers
        wasted = t.wasted
        if self.wasted[0] is not wasted or self.wasted[1] != len(wasted):
            self.wasted = (wasted, len(wasted))
            shown = _texts(wasted)
            if index == 0 or last["wasted"] != shown:
                delta["wasted"] = last["wasted"] = shown
        elif self.check:
            assert _texts(wasted) == last["wasted"], "the Wasted pile changed but for additions"
        if t.totals is not self.totals:
            self.totals = t.totals
            if index == 0 or last["totals"] != t.totals:
                delta["totals"] = last["totals"] = t.totals[:]
        elif self.check:
            assert t.totals == last["totals"], "the totals changed in place"
        if index == 0 or last["hand"] != t.hand_no:
            delta["hand"] = last["hand"] = t.hand_no
        deal = t.deal
        drafted = (
            (None,)
            if deal is None
            else (deal, deal.give, deal.want, len(deal.offer), len(deal.ask))
        )
        if drafted != self.deal:
            self.deal = drafted
            public = None if deal is None else deal.public()
            if index == 0 or last["deal"] != public:
                delta["deal"] = last["deal"] = public
        seats = self._seats(t, _touched(event) if index and not self.check else None)
        if seats:
            delta["seats"] = seats
        self.frames.append(delta)

    def _seats(self, t: Table, touched: tuple[int, ...] | None) -> dict[str, Frame] | None:
        memos = self.memos
        if not memos:
            memos = self.memos = [_SeatMemo() for _ in t.seats]
        changed: dict[str, Frame] | None = None
        viewer = self.seat
        drafting = bool(t.packets) and (viewer is Sight.FULL or t.phase is Phase.DRAFT)
        for index in range(len(memos)) if touched is None else touched:
            seat = t.seats[index]
            memo = memos[index]
            hand = seat.hand
            now: list[Any] = [
                len(hand),
                seat.market_open,
                seat.skips,
                seat.extra_turns,
                seat.heat,
                seat.unprotected,
                seat.hassle_under,
                seat.protected,
            ]
            if viewer is Sight.FULL or index == viewer:
                now.append(hand)
                if drafting:
                    now.append(t.packets[index])
                    now.append(t.kept[index])
            if now == memo.state:
                continue
            for at in range(4, len(now)):
                now[at] = now[at][:]
            now[7] = [(p, g[:]) for p, g in seat.protected]
            memo.state = now
            entry = _entry(seat, now)
            if entry != memo.entry:
                memo.entry = entry
                if changed is None:
                    changed = {}
                changed[str(index)] = entry
        return changed


_NUMBERS = ("dealer", "active", "to_act", "phase", "stack")
_UNSET = (None,) * len(_NUMBERS)


_FRAME_SEAT = tuple((f.name, f.value) for f in SEAT_FIELDS if f.name in _FRAME_SEAT_KEYS)


def _entry(seat: Seat, state: list[Any]) -> Frame:
    """A seat's entry in a frame: its public entry (the observer's `SEAT_FIELDS`, read from
    the seat as it is now) and the cards the viewer sees, from its memo's state."""
    entry: Frame = {name: value(seat) for name, value in _FRAME_SEAT}
    shown = state[8:]
    entry["hand"] = _sorted(shown[0]) if shown else None
    if len(shown) == 3:
        entry["packet"] = _sorted(shown[1])
        entry["kept"] = _sorted(shown[2])
    return entry


View = int | None | Literal["public"]
"""Whose replay: a seat number, None (omniscient, every hand face up) or "public" (what a
spectator saw: no hand, every secret in words)."""


def _viewer(view: View) -> Viewer:
    if view is None:
        return Sight.FULL
    if view == "public":
        return Sight.PUBLIC
    if isinstance(view, int):
        return view
    raise ValueError(f"no view {view!r}: a seat number, None or 'public'")


def _record(events: Iterable[Event], view: View, check: bool = False) -> list[Frame]:
    """Replay a log once, checking it, and return its frames as deltas."""
    seat = _viewer(view)
    numbered = list(enumerate(events, start=1))
    header = numbered[0][1] if numbered else {}
    players = header.get("players")
    names = [str(p) for p in players] if isinstance(players, list) else []
    line_of: list[int] = []
    notes: list[list[str]] = [[]]
    for number, event in numbered:
        if event.get("e") == "note":
            full = seat is Sight.FULL or event.get("seat") == seat
            notes[-1].append(_note_line(event, names, full))
        else:
            line_of.append(number)
            notes.append([])
    if len(notes) > 1:
        notes[-2].extend(notes.pop())  # notes after the last event join its frame
    if isinstance(seat, int) and names and not 0 <= seat < len(names):
        raise ValueError(f"no seat {seat} in a {len(names)}-player game")
    # A frame shows its notes only when they differ from the frame before's (None: the same).
    changes: list[list[str] | None] = [
        None if k and notes[k] == notes[k - 1] else notes[k] for k in range(len(notes))
    ]
    recorder = _Recorder(seat, _Lines({"players": names}, seat), line_of, changes, check)
    collecting = gc.isenabled()
    # The frames are tens of thousands of small containers with no cycles among them: the
    # cyclic collector would walk them over and over as they pile up (about half the cost of
    # building them), so it waits until they are built.
    gc.disable()
    try:
        replay((event for _, event in numbered), on_event=recorder)
    finally:
        if collecting:
            gc.enable()
    if len(recorder.frames) != len(line_of):
        raise LogError(len(numbered), "the replay did not reproduce the log")
    return recorder.frames


# ---------------------------------------------------------------------- frames


def frames(events: Iterable[Event], seat: View = None) -> list[Frame]:
    """The replay of a log, one frame per game event (runner notes are attached to the frame
    of the event that follows them, not frames of their own).

    `seat` None: omniscient, every hand face up; a seat number: what that seat saw; "public":
    what a spectator saw (as the live table's watchers, `ladder.relay`). Raises
    LogError, naming the line, for a log the engine does not reproduce (as `engine.log.replay`
    does); ValueError for a seat that is not in the game.

    A frame: `index` (among game events), `line` (in the file, counting notes), `event` (its
    kind), `lines` (readable), `notes`; the table after the event: `hand`, `dealer`,
    `active` (whose turn), `to_act` (who decides; -1 when nobody does), `phase`, `stack` (a
    count), `wasted`, `totals`, `deal` (being proposed), and `seats`, one entry per seat:
    `cards` (hand size), `hand` (None if hidden), `market_open`, `heat` (top last),
    `hassle_under`, `unprotected`, `protected` ([{card, covers}]), `skips`, `extra_turns`,
    and during a Give me five draft `packet` and `kept`.
    """
    return undelta(_record(events, seat))


_ALWAYS = frozenset({"index", "line", "event", "lines"})
"""Keys every delta keeps, changed or not."""


def deltas(full: Sequence[Frame]) -> list[Frame]:
    """Frames as changes: each holds the keys whose value differs from the frame before
    (always `index`, `line`, `event` and `lines`), and `seats` as {seat: entry} for the seats
    that changed; the first frame is complete. A full 30-hand game (tens of thousands of
    events) is tens of megabytes of full frames (66 MB for a 50,000-event one) and still
    several megabytes of deltas (about 7 to 10 MB of JSON, well under 1 MB gzipped, which is
    how the site caches and sends them); the viewer rebuilds the frames as it loads.
    `document` builds its deltas directly, without the full frames."""
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
    """The frames again from `deltas` (what the viewer's script does)."""
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


def document(events: Iterable[Event], seat: View = None) -> dict[str, Any]:
    """Everything the viewer loads: the game's description, the card table, the frames (as
    `deltas`) and the result. As `frames`, with the seed left out of a seat's view (it decides
    every shuffle, so it would give every hidden card away)."""
    log = list(events)
    changes = _record(log, seat)
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
        "view": "all" if seat is None else seat,  # "public" for the public view
        "game": game,
        "cards": cards_info(),
        "result": next((e for e in log if e.get("e") == "result"), None),
        "frames": changes,
    }
