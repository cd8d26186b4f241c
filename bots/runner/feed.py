"""What the runner writes to one seat's bot during a game: its `act` requests and `hand_end`
messages, in the protocol version the bot chose in `ready` (bots/PROTOCOL.md, section 11).

Version 1 sends the seat's whole observation (`engine.observe`) at every request. Version 2
sends what changed since the bot's previous request, and the bot rebuilds the observation
(`bots.protocol.apply_changes`): hello's fields never again, the table's scalars, the hand and
the turn only when they differ from what this seat was last sent, the seats whose entry
changed, the Wasted pile and the notes as additions, totals and hand scores in `hand_end`.

The runner pays for every request of every seat of every match, so both versions are built
as text: the parts every seat shares (an event as the seats outside or inside its secret see
it, a seat's table entry, the legal actions) are encoded once per game (`TableText`) instead of
once per seat, and version 2 compares each other field with what this seat was last sent. The
bytes are the same JSON a `json.dumps` of the message would give (compact, ASCII): version 1's
are compared with it, and `observe()` is rebuilt from version 2's, at every decision of many
games in the tests.
"""

from __future__ import annotations

import json
import json.encoder
from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from engine.cards import ORDER, Card
from engine.game import Event, Game, Moves
from engine.observation import redact
from engine.rules import ruleset_limits
from engine.state import DealDraft, Phase, Seat

_quote: Callable[[str], str] = json.encoder.encode_basestring_ascii
"""A string as a JSON string literal, non-ASCII escaped as `json.dumps` does (C, fast)."""


def _compact_encoder() -> Callable[[Any], str]:
    """JSON text as `protocol.encode` writes it (compact separators, ASCII), without the
    set-up `json.dumps` repeats at every call (about 2 µs, as much as encoding a small
    message): CPython's C encoder made once; elsewhere a reused JSONEncoder."""
    fallback = json.JSONEncoder(separators=(",", ":"), check_circular=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return fallback.encode
    chunks = make(None, fallback.default, _quote, None, ":", ",", False, False, True)

    def dumps(value: Any) -> str:
        return "".join(chunks(value, 0))

    return dumps


_dumps = _compact_encoder()
_CARD = {card: _quote(card.value) for card in Card}
_CARD_OR_NULL: dict[Card | None, str] = {None: "null"} | {card: _CARD[card] for card in Card}
"""A card, or no card yet (a deal's `give` or `want`), as JSON."""
_ORDER_OF = ORDER.__getitem__
_PHASE = {phase: '"phase":' + _quote(phase.value) for phase in Phase}
_BOOL = {False: "false", True: "true"}
_DRAFT = Phase.DRAFT


def _cards(cards: list[Card]) -> str:
    """A list of cards as JSON, in the order given. A card is a `str` whose text is its name,
    which is JSON-safe as it stands (lowercase words and hyphens, tested), so one `join` in C
    writes the list."""
    return '["' + '","'.join(cards) + '"]' if cards else "[]"


def _notes(notes: list[tuple[str, ...]]) -> str:
    """A seat's notes as JSON: lists of words, card names and seat numbers, JSON-safe as they
    stand (`engine.state.Seat.notes`, tested)."""
    return "[" + ",".join(['["' + '","'.join(note) + '"]' for note in notes]) + "]"


def _sorted_cards(cards: list[Card]) -> str:
    """A list of cards as JSON, in canonical order (as `observe` sorts hands and peddles)."""
    return _cards(sorted(cards, key=_ORDER_OF))


class Feed:
    """One seat's messages, whatever the version: where its history stands, and `hand_end`
    (the same in both versions), from the texts the game's feeds share."""

    __slots__ = ("game", "seat", "sent_upto", "text")

    def __init__(self, game: Game, seat: int, text: TableText | None = None) -> None:
        self.game = game
        self.seat = seat
        self.text = TableText(game) if text is None else text
        self.sent_upto = 0
        """Index in the game's events just after the last event this seat was sent."""

    def act(self, request: int, *, bank_ms: int, cpu_ms: int, wall_ms: int) -> bytes:
        """The line of request number `request` for the game's current decision."""
        raise NotImplementedError

    def hand_end(self, start: int, end: int) -> bytes:
        """The line telling the seat the hand that ran from event `start` to its `hand-end`
        event at `end` was scored, with the rest of that hand's events as it saw them: byte for
        byte `protocol.encode` of the message (the tests compare the two)."""
        since = max(self.sent_upto, start)
        self.sent_upto = end + 1
        head = self.text.hand_end(end)
        return (head + self.text.history(since, end + 1, self.seat) + "]}\n").encode()


class V1Feed(Feed):
    """Version 1: the whole observation in every request, as the runner has always sent it:
    byte for byte `protocol.encode(protocol.act(..., observe(game, seat, since)))`, written
    from the game's shared texts (`TableText`) instead of building the observation and
    encoding it (the tests compare the two at every decision of many games)."""

    __slots__ = ("head",)

    def __init__(self, game: Game, seat: int, text: TableText | None = None) -> None:
        super().__init__(game, seat, text)
        ruleset = game.ruleset
        fixed = {
            "seat": seat,
            "players": list(game.names),
            "ruleset": ruleset.name,
            "variants": game.variants.as_dict(),
            "target": ruleset.target,
            "limits": ruleset_limits(ruleset),
        }
        self.head = _dumps(fixed)[:-1]
        """The observation's fields that never change, up to where the others follow."""

    def act(self, request: int, *, bank_ms: int, cpu_ms: int, wall_ms: int) -> bytes:
        game = self.game
        t = game.table
        text = self.text
        seat = self.seat
        me = t.seats[seat]
        since = max(self.sent_upto, t.hand_start_event)
        end = self.sent_upto = len(t.events)
        deal = t.deal
        turn = (t.played, t.swapped, t.deals_made)
        view = (
            f'{self.head},"hand_number":{t.hand_no},"dealer":{t.dealer},"active":{t.active},'
            f'"to_act":{t.to_act},{_PHASE[t.phase]},'
            f"{text.legal(game.moves) if t.to_act == seat else _NO_LEGAL},"
            f'"hand":{_sorted_cards(me.hand)},"stack":{len(t.stack)},'
            f'"wasted":{_cards(t.wasted)},"seats":[{",".join(text.seat_entries())}],'
            f'"totals":{_dumps(t.totals)},"hand_scores":{text.hand_scores()},'
            f'"notes":{_notes(me.notes)},{_TURN.get(turn) or _turn_text(turn)},'
            f'"deal":{"null" if deal is None else _deal_text(deal)},'
            f'"history":[{text.history(since, end, seat)}],"history_end":{end}'
        )
        if t.phase is _DRAFT and t.packets:
            view += (
                f',"packet":{_sorted_cards(t.packets[seat])},"kept":{_sorted_cards(t.kept[seat])}'
            )
        return (
            f'{{"type":"act","id":{request},"bank_ms":{bank_ms},"cpu_ms":{cpu_ms},'
            f'"wall_ms":{wall_ms},"observation":{view}}}}}\n'
        ).encode()


_NO_LEGAL = '"legal":[]'


def _deal_text(deal: DealDraft) -> str:
    """The deal being drafted, as `DealDraft.public()` gives it, as JSON."""
    give, want = _CARD_OR_NULL[deal.give], _CARD_OR_NULL[deal.want]
    return (
        f'{{"partner":{deal.partner},"give":{give},"want":{want},'
        f'"offer":{_cards(deal.offer)},"ask":{_cards(deal.ask)}}}'
    )


class TableText:
    """The public parts of version 2's messages, encoded once per game for all its seats: each
    event as the seats outside its secret see it (and, for an event with a secret, as the seats
    inside it see it: `redact` gives no other views), each seat's table entry, the lists of
    legal actions, the start of each `hand_end`."""

    __slots__ = (
        "counts",
        "entries",
        "game",
        "hand_end_text",
        "heads",
        "inside",
        "legal_moves",
        "legal_text",
        "memos",
        "mine",
        "rests",
        "scores_of",
        "scores_text",
        "texts",
    )

    def __init__(self, game: Game) -> None:
        self.game = game
        self.texts: list[str] = []
        """Event by event, the text the seats outside its secret are sent."""
        self.mine: list[list[int]] = [[] for _ in range(game.n)]
        """By seat, the indices of the events with a secret it is inside of (`see`), in
        order: the events whose text for that seat is not the others' (`_inside`)."""
        self.inside: dict[int, str] = {}
        self.heads = [f'{{"name":{_quote(s.name)},"cards":' for s in game.table.seats]
        self.counts = [-1] * game.n
        self.memos: list[tuple[Any, ...] | None] = [None] * game.n
        """What each seat's entry after its card count was written from (copies)."""
        self.rests = [""] * game.n
        self.entries = [""] * game.n
        """Each seat's entry: its head, its card count and the rest (`seat_entries`)."""
        self.hand_end_text: tuple[int, str] = (-1, "")
        self.legal_moves: Moves | None = None
        self.legal_text = ""
        self.scores_of: tuple[list[Any] | None, int] = (None, -1)
        self.scores_text = ""

    def legal(self, moves: Moves) -> str:
        """The `legal` field. The engine builds some lists of moves once and hands out the
        same dict again (a deal's 28 `want` steps, and it never changes a moves dict), so the
        last list's text is kept for as long as its dict comes back; action texts are
        JSON-safe as they stand (`engine.game.Moves`, tested)."""
        if moves is not self.legal_moves:
            self.legal_moves = moves
            self.legal_text = '"legal":["' + '","'.join(moves) + '"]'
        return self.legal_text

    def hand_scores(self) -> str:
        """The scores of the hands played so far, as JSON (they change at a hand's end)."""
        scores = self.game.table.hand_scores
        if self.scores_of != (scores, len(scores)):
            self.scores_of = (scores, len(scores))
            self.scores_text = _dumps([[score.score for score in hand] for hand in scores])
        return self.scores_text

    def history(self, since: int, end: int, seat: int) -> str:
        """Events `since` to `end` (excluded) as `seat` saw them: JSON texts, comma-separated."""
        if len(self.texts) < end:
            self._encode(end)
        texts = self.texts[since:end]
        mine = self.mine[seat]
        for index in mine[bisect_left(mine, since) : bisect_left(mine, end)]:
            texts[index - since] = self._inside(index, seat)
        return ",".join(texts)

    def _encode(self, end: int) -> None:
        """Encode the events not encoded yet, up to `end`, as the seats outside see them."""
        texts = self.texts
        for index, event in enumerate(self.game.table.events[len(texts) : end], len(texts)):
            if "see" in event:
                for seat in event["see"]:
                    self.mine[seat].append(index)
            elif event["e"] == "act":  # three events in four: `_act_text`, inlined
                texts.append(
                    f'{{"e":"act","seat":{event["seat"]},"phase":"{event["phase"]}",'
                    f'"action":"{event["action"]}"}}'
                )
                continue
            write = _OUTSIDE.get(tuple(event))
            texts.append(_dumps(redact(event, None)) if write is None else write(event))

    def _inside(self, index: int, seat: int) -> str:
        """Event `index` as a seat inside its secret saw it (the same for all of them): what
        the others see, and its secret (`redact`)."""
        text = self.inside.get(index)
        if text is None:
            event = self.game.table.events[index]
            key = tuple(event)
            write = _OUTSIDE.get(key)
            secret = event.get("secret")
            if key == _HIDDEN_ACT:  # a secret choice: the chooser sees its action
                text = _act_text(event)
            elif write is None or (secret and secret.keys() & event.keys()):
                text = _dumps(redact(event, seat))
            elif secret:  # a draw, a deal, a pass: as the others see it, and what it was
                text = write(event)[:-1] + "," + _dumps(secret)[1:]
            else:
                text = write(event)
            self.inside[index] = text
        return text

    def seat_entries(self) -> list[str]:
        """Each seat's entry in `seats` as JSON, as the table is now. A seat's card count
        changes at almost every action, the rest of its entry seldom (one request in fifty):
        the rest is compared with copies of what its text was built from, field by field
        (cheaper than building the entry), and written again only when it differs."""
        counts, memos, rests, entries = self.counts, self.memos, self.rests, self.entries
        for index, s in enumerate(self.game.table.seats):
            # One tuple of the live fields against the copies (fastest of the ways measured).
            fields = (
                s.market_open,
                s.skips,
                s.extra_turns,
                s.heat,
                s.unprotected,
                s.hassle_under,
                s.protected,
            )
            if fields != memos[index]:
                memos[index] = (
                    s.market_open,
                    s.skips,
                    s.extra_turns,
                    s.heat[:],
                    s.unprotected[:],
                    s.hassle_under[:],
                    [(p, group[:]) for p, group in s.protected],
                )
                rests[index] = _seat_rest(s)
            elif len(s.hand) == counts[index]:
                continue
            counts[index] = len(s.hand)
            entries[index] = f"{self.heads[index]}{counts[index]}{rests[index]}"
        return entries

    def hand_end(self, end: int) -> str:
        """The start of the `hand_end` message of the hand whose `hand-end` event is at `end`,
        up to its history: the same for every seat."""
        if self.hand_end_text[0] != end:
            event = self.game.table.events[end]
            text = (
                f'{{"type":"hand_end","hand":{event["hand"]},"scores":{_dumps(event["scores"])},'
                f'"totals":{_dumps(event["totals"])},"held":{_dumps(event["held"])},"history":['
            )
            self.hand_end_text = (end, text)
        return self.hand_end_text[1]


# Events written directly, by their keys in order: as `_dumps(redact(event, seat))` writes
# them for a seat outside their secret, but three to four times faster (plain actions, three
# events in four, in `TableText._encode`).


def _act_text(event: Event) -> str:
    """An action as the seats that see it see it (`engine.events.ActEvent`; `auto`, which
    `redact` drops, aside). Phase and action are JSON-safe texts as they stand."""
    return (
        f'{{"e":"act","seat":{event["seat"]},"phase":"{event["phase"]}",'
        f'"action":"{event["action"]}"}}'
    )


def _hidden_act_text(event: Event) -> str:
    """A secret choice (a pass, a draft pick, a hidden hand-over), for the other seats: that
    it was made."""
    return f'{{"e":"act","seat":{event["seat"]},"phase":"{event["phase"]}"}}'


def _pass_text(event: Event) -> str:
    """A card passed face down, for the other seats: who passed to whom."""
    return f'{{"e":"pass","seat":{event["seat"]},"to":{event["to"]}}}'


def _who_text(event: Event) -> str:
    """A draw or a deal of cards, for the other seats: its kind and whose it was."""
    return f'{{"e":"{event["e"]}","seat":{event["seat"]}}}'


def _offer_text(event: Event) -> str:
    """A deal put to a partner (public)."""
    give, want = _CARD_OR_NULL[event["give"]], _CARD_OR_NULL[event["want"]]
    return (
        f'{{"e":"offer","seat":{event["seat"]},"partner":{event["partner"]},"give":{give},'
        f'"want":{want},"offer":{_cards(event["offer"])},"ask":{_cards(event["ask"])}}}'
    )


_HIDDEN_ACT = ("e", "seat", "phase", "action", "see")
_OUTSIDE: dict[tuple[str, ...], Callable[[Event], str]] = {
    ("e", "seat", "secret", "see"): _who_text,
    _HIDDEN_ACT: _hidden_act_text,
    ("e", "seat", "to", "secret", "see"): _pass_text,
    ("e", "seat", "partner", "give", "want", "offer", "ask"): _offer_text,
}


def _seat_rest(s: Seat) -> str:
    """`public_seat(s)` as JSON after its card count, written directly (three times faster
    than building the dict and encoding it; the tests rebuild `observe()` from it)."""
    protected = ",".join(
        [f'{{"card":{_CARD[p]},"covers":{_sorted_cards(group)}}}' for p, group in s.protected]
    )
    return (
        f',"market_open":{_BOOL[s.market_open]},'
        f'"heat":{_cards(s.heat)},"hassle_under":{_cards(s.hassle_under)},'
        f'"unprotected":{_sorted_cards(s.unprotected)},"protected":[{protected}],'
        f'"skips":{s.skips},"extra_turns":{s.extra_turns}}}'
    )


_TURN: dict[tuple[bool, bool, int], str] = {}
"""The `turn` field by (played, swapped, deals_made): a handful of texts per game."""


def _turn_text(turn: tuple[bool, bool, int]) -> str:
    played, swapped, deals_made = turn
    text = _TURN[turn] = (
        f'"turn":{{"played":{_BOOL[played]},"swapped":{_BOOL[swapped]},"deals_made":{deals_made}}}'
    )
    return text


_UNSENT: Any = object()
"""What a version 2 feed holds for a field it has not sent yet: equal to no value."""


class V2Feed(Feed):
    """Version 2: each request carries the fields of the observation that changed since this
    seat's previous request (all of them, hello's aside, in the first).

    `act` runs at every request of every match, so it is written flat: each field is read
    once, compared with what this seat was last sent and written as a JSON fragment only when
    it differs (measured: a method call per field cost a tenth of the request)."""

    __slots__ = (
        "deal",
        "first",
        "hand",
        "notes",
        "numbers",
        "phase",
        "seats",
        "turn",
        "wasted",
    )

    def __init__(self, game: Game, seat: int, text: TableText) -> None:
        super().__init__(game, seat, text)
        self.first = True
        self.numbers: tuple[Any, ...] = (_UNSENT,) * 5
        """hand_number, dealer, active, to_act, stack as last sent."""
        self.phase: Any = _UNSENT
        self.turn: Any = _UNSENT
        self.deal: Any = _UNSENT
        """What the deal's entry was last built from (see `act`)."""
        self.hand: list[Card] | None = None
        self.wasted: tuple[list[Card] | None, int] = (None, 0)
        """The Wasted pile's list and its length when last sent."""
        self.notes = 0
        self.seats = [""] * game.n
        """Each seat's entry as last sent."""

    def act(self, request: int, *, bank_ms: int, cpu_ms: int, wall_ms: int) -> bytes:
        t = self.game.table
        me = t.seats[self.seat]
        parts: list[str] = []

        # The table's numbers, its phase and this seat's hand, where they changed.
        now = (t.hand_no, t.dealer, t.active, t.to_act, len(t.stack))
        sent = self.numbers
        new_hand = False
        if now != sent:
            if now[0] != sent[0]:  # the hand's first request: piles and notes go whole
                new_hand = True
                parts.append(f'"hand_number":{now[0]}')
            if now[1] != sent[1]:
                parts.append(f'"dealer":{now[1]}')
            if now[2] != sent[2]:
                parts.append(f'"active":{now[2]}')
            if now[3] != sent[3]:
                parts.append(f'"to_act":{now[3]}')
            if now[4] != sent[4]:
                parts.append(f'"stack":{now[4]}')
            self.numbers = now
        if t.phase is not self.phase:
            self.phase = t.phase
            parts.append(_PHASE[t.phase])
        if me.hand != self.hand:
            self.hand = me.hand[:]
            parts.append('"hand":' + _sorted_cards(me.hand))

        # The Wasted pile and the seat's notes: whole at a hand's first request, else what was
        # added to them (the engine only adds to either during a hand).
        wasted = t.wasted
        pile, length = self.wasted
        if wasted is not pile or len(wasted) != length or new_hand:
            if new_hand or wasted is not pile or len(wasted) < length:
                parts.append('"wasted":' + _cards(wasted))
            else:
                parts.append('"wasted_added":' + _cards(wasted[length:]))
            self.wasted = (wasted, len(wasted))
        notes = me.notes
        if len(notes) != self.notes or new_hand:
            if new_hand or len(notes) < self.notes:
                parts.append('"notes":' + _notes(notes))
            else:
                parts.append('"notes_added":' + _notes(notes[self.notes :]))
            self.notes = len(notes)

        # The seats whose entry differs from the one last sent, null for the others (an entry
        # not rebuilt since is the same string: compared by identity first).
        entries = self.text.seat_entries()
        if entries != self.seats:
            shown = [
                "null" if entry == old else entry
                for entry, old in zip(entries, self.seats)  # noqa: B905 (both n long)
            ]
            parts.append('"seats":[' + ",".join(shown) + "]")
            self.seats = entries[:]

        # The active seat's turn so far, and the legal actions.
        turn = (t.played, t.swapped, t.deals_made)
        if turn != self.turn:
            self.turn = turn
            parts.append(_TURN.get(turn) or _turn_text(turn))
        parts.append(self.text.legal(self.game.moves))

        # The deal on the table.
        deal = t.deal
        if deal is None:
            if self.deal is not None:
                self.deal = None
                parts.append('"deal":null')
        else:
            # The engine only adds to a deal's offer and ask, and a new deal is a new object.
            drafted = (deal, deal.give, deal.want, len(deal.offer), len(deal.ask))
            if drafted != self.deal:
                self.deal = drafted
                parts.append('"deal":' + _deal_text(deal))

        # The events since the seat's last message, as it saw them.
        text = self.text
        since = max(self.sent_upto, t.hand_start_event)
        end = self.sent_upto = len(t.events)
        texts = text.texts
        if len(texts) < end:
            text._encode(end)
        mine = text.mine[self.seat]
        if mine and mine[-1] >= since:
            history = text.history(since, end, self.seat)
        else:  # no secret of this seat's among the new events: most requests
            history = ",".join(texts[since:end])
        parts.append(f'"history":[{history}],"history_end":{end}')

        if t.phase is _DRAFT and t.packets:
            parts.append('"packet":' + _sorted_cards(t.packets[self.seat]))
            parts.append('"kept":' + _sorted_cards(t.kept[self.seat]))
        if self.first:
            self.first = False
            parts.append('"totals":' + _dumps(t.totals))
            scores = [[score.score for score in hand] for hand in t.hand_scores]
            parts.append('"hand_scores":' + _dumps(scores))
        return (
            f'{{"type":"act","id":{request},"bank_ms":{bank_ms},"cpu_ms":{cpu_ms},'
            f'"wall_ms":{wall_ms},"changes":{{{",".join(parts)}}}}}\n'
        ).encode()


class Feeds:
    """The feeds of one game's seats: they share one `TableText`."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.text: TableText | None = None

    def for_seat(self, seat: int, version: int) -> Feed:
        """The feed of `seat` in protocol `version` (1 or 2)."""
        if self.text is None:
            self.text = TableText(self.game)
        if version == 2:
            return V2Feed(self.game, seat, self.text)
        return V1Feed(self.game, seat, self.text)
