"""What the runner writes to one seat's bot during a game: its `act` requests and `hand_end`
messages, in the protocol version the bot chose in `ready` (bots/PROTOCOL.md, section 11).

Version 1 sends the seat's whole observation (`engine.observe`) at every request. Version 2
sends what changed since the bot's previous request, and the bot rebuilds the observation
(`bots.protocol.apply_changes`): hello's fields never again, the table's scalars, the hand and
the turn only when they differ from what this seat was last sent, the seats whose entry
changed, the Wasted pile and the notes as additions, totals and hand scores in `hand_end`.

The runner pays for every request of every seat of every match, so version 2 is built as
text: each field is compared with what this seat was last sent and written as a JSON fragment,
and the parts every seat shares (an event as the seats outside or inside its secret see it, a
seat's table entry) are encoded once per game (`TableText`) instead of once per seat. The bytes
are the same JSON a `json.dumps` of the fields would give (compact, ASCII); the tests rebuild
`observe()` from them at every decision of many games.
"""

from __future__ import annotations

import json
import json.encoder
from bisect import bisect_left
from collections.abc import Callable, Iterable
from typing import Any

from bots import protocol
from engine.cards import ORDER, Card
from engine.game import Event, Game
from engine.observation import observe, redact
from engine.state import Phase, Seat

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
_ORDER_OF = ORDER.__getitem__
_PHASE = {phase: _quote(phase.value) for phase in Phase}
_BOOL = {False: "false", True: "true"}


def _cards(cards: Iterable[Card]) -> str:
    """A list of cards as JSON, in the order given."""
    return "[" + ",".join([_CARD[card] for card in cards]) + "]"


def _card_or_null(card: Card | None) -> str:
    """A card, or no card yet (a deal's `give` or `want`), as JSON."""
    return "null" if card is None else _CARD[card]


def _sorted_cards(cards: list[Card]) -> str:
    """A list of cards as JSON, in canonical order (as `observe` sorts hands and peddles)."""
    return _cards(sorted(cards, key=_ORDER_OF))


class Feed:
    """One seat's messages, whatever the version: where its history stands, and `hand_end`
    (the same in both versions)."""

    def __init__(self, game: Game, seat: int) -> None:
        self.game = game
        self.seat = seat
        self.sent_upto = 0
        """Index in the game's events just after the last event this seat was sent."""

    def act(self, request: int, *, bank_ms: int, cpu_ms: int, wall_ms: int) -> bytes:
        """The line of request number `request` for the game's current decision."""
        raise NotImplementedError

    def hand_end(self, start: int, end: int) -> bytes:
        """The line telling the seat the hand that ran from event `start` to its `hand-end`
        event at `end` was scored, with the rest of that hand's events as it saw them."""
        events = self.game.table.events
        event = events[end]
        since = max(self.sent_upto, start)
        history = [redact(e, self.seat) for e in events[since : end + 1]]
        self.sent_upto = end + 1
        message = {
            "type": "hand_end",
            "hand": event["hand"],
            "scores": event["scores"],
            "totals": event["totals"],
            "held": event["held"],
            "history": history,
        }
        return protocol.encode(message)


class V1Feed(Feed):
    """Version 1: the whole observation in every request, as the runner has always sent it."""

    def act(self, request: int, *, bank_ms: int, cpu_ms: int, wall_ms: int) -> bytes:
        game = self.game
        since = max(self.sent_upto, game.table.hand_start_event)
        view = observe(game, self.seat, since=since)
        self.sent_upto = view["history_end"]
        message = protocol.act(request, view, bank_ms=bank_ms, cpu_ms=cpu_ms, wall_ms=wall_ms)
        return protocol.encode(message)


class TableText:
    """The public parts of version 2's messages, encoded once per game for all its seats: each
    event as the seats outside its secret see it (and, for an event with a secret, as the seats
    inside it see it: `redact` gives no other views), each seat's table entry, the lists of
    legal actions, the start of each `hand_end`."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.texts: list[str] = []
        """Event by event, the text the seats outside its secret are sent."""
        self.secret: list[int] = []
        """The indices of the events with a secret (`see`), in order."""
        self.inside: dict[int, str] = {}
        self.memos: list[list[Any] | None] = [None] * game.n
        self.entries: list[str] = [""] * game.n
        self.hand_end_text: tuple[int, str] = (-1, "")
        self.legal_texts: dict[tuple[str, ...], str] = {}

    def legal(self, actions: Iterable[str]) -> str:
        """The legal actions as JSON. The same lists come up again and again in a game (a
        turn's actions, a deal's steps), so each list is encoded once."""
        key = tuple(actions)
        text = self.legal_texts.get(key)
        if text is None:
            text = self.legal_texts[key] = "[" + ",".join(map(_quote, key)) + "]"
        return text

    def history(self, since: int, end: int, seat: int) -> str:
        """Events `since` to `end` (excluded) as `seat` saw them: JSON texts, comma-separated."""
        if len(self.texts) < end:
            self._encode(end)
        texts = self.texts[since:end]
        secret = self.secret
        first = bisect_left(secret, since)
        if first < len(secret) and secret[first] < end:
            events = self.game.table.events
            for index in secret[first : bisect_left(secret, end)]:
                if seat in events[index]["see"]:
                    texts[index - since] = self._inside(index, seat)
        return ",".join(texts)

    def _encode(self, end: int) -> None:
        """Encode the events not encoded yet, up to `end`, as the seats outside see them."""
        events = self.game.table.events
        texts = self.texts
        for index in range(len(texts), end):
            event = events[index]
            if "see" in event:
                self.secret.append(index)
            elif event["e"] == "act":  # three events in four: an action every seat sees
                texts.append(_act_text(event))
                continue
            write = _OUTSIDE.get(tuple(event))
            texts.append(_dumps(redact(event, None)) if write is None else write(event))

    def _inside(self, index: int, seat: int) -> str:
        """Event `index` as a seat inside its secret saw it (the same for all of them)."""
        text = self.inside.get(index)
        if text is None:
            event = self.game.table.events[index]
            if tuple(event) == _SECRET and event["secret"]:  # a draw, a deal: who, and what
                text = (
                    f'{{"e":{_quote(event["e"])},"seat":{event["seat"]},'
                    + _dumps(event["secret"])[1:]
                )
            else:
                text = _dumps(redact(event, seat))
            self.inside[index] = text
        return text

    def seat_entries(self) -> list[str]:
        """Each seat's entry in `seats` as JSON, as the table is now: the seat's cards and
        counters are compared with copies of what its entry was built from (cheaper than
        building the entry), and only a seat that differs is encoded again."""
        memos = self.memos
        for index, s in enumerate(self.game.table.seats):
            now: list[Any] = [
                len(s.hand),
                s.market_open,
                s.skips,
                s.extra_turns,
                s.heat,
                s.unprotected,
                s.hassle_under,
                s.protected,
            ]
            if now == memos[index]:
                continue
            now[4:7] = [s.heat[:], s.unprotected[:], s.hassle_under[:]]
            now[7] = [(p, group[:]) for p, group in s.protected]
            memos[index] = now
            self.entries[index] = _seat_text(s)
        return self.entries

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
# them for a seat outside their secret, but three to four times faster. Three events in four
# are plain actions.


def _act_text(event: Event) -> str:
    """An action every seat sees: an `act` event without `see` (`engine.events.ActEvent`),
    and without `auto`, which `redact` drops."""
    phase, action = _quote(event["phase"]), _quote(event["action"])
    return f'{{"e":"act","seat":{event["seat"]},"phase":{phase},"action":{action}}}'


def _who_text(event: Event) -> str:
    """A draw or a deal of cards, for the other seats: its kind and whose it was."""
    return f'{{"e":{_quote(event["e"])},"seat":{event["seat"]}}}'


def _offer_text(event: Event) -> str:
    """A deal put to a partner (public)."""
    give, want = _card_or_null(event["give"]), _card_or_null(event["want"])
    return (
        f'{{"e":"offer","seat":{event["seat"]},"partner":{event["partner"]},"give":{give},'
        f'"want":{want},"offer":{_cards(event["offer"])},"ask":{_cards(event["ask"])}}}'
    )


_SECRET = ("e", "seat", "secret", "see")
_OUTSIDE: dict[tuple[str, ...], Callable[[Event], str]] = {
    _SECRET: _who_text,
    ("e", "seat", "partner", "give", "want", "offer", "ask"): _offer_text,
}


def _seat_text(s: Seat) -> str:
    """`public_seat(s)` as JSON, written directly (three times faster than building the dict
    and encoding it; the tests compare the two)."""
    protected = ",".join(
        [f'{{"card":{_CARD[p]},"covers":{_sorted_cards(group)}}}' for p, group in s.protected]
    )
    return (
        f'{{"name":{_quote(s.name)},"cards":{len(s.hand)},"market_open":{_BOOL[s.market_open]},'
        f'"heat":{_cards(s.heat)},"hassle_under":{_cards(s.hassle_under)},'
        f'"unprotected":{_sorted_cards(s.unprotected)},"protected":[{protected}],'
        f'"skips":{s.skips},"extra_turns":{s.extra_turns}}}'
    )


_UNSENT: Any = object()
"""What a version 2 feed holds for a field it has not sent yet: equal to no value."""


class V2Feed(Feed):
    """Version 2: each request carries the fields of the observation that changed since this
    seat's previous request (all of them, hello's aside, in the first)."""

    def __init__(self, game: Game, seat: int, text: TableText) -> None:
        super().__init__(game, seat)
        self.text = text
        self.first = True
        self.numbers: tuple[Any, ...] = (_UNSENT,) * len(_NUMBER_KEYS)
        """hand_number, dealer, active, to_act, stack as last sent."""
        self.phase: Any = _UNSENT
        self.turn: Any = _UNSENT
        self.deal: Any = _UNSENT
        """What the deal's entry was last built from (`_turn_and_deal`)."""
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
        new_hand = self._numbers(parts)
        parts.append('"legal":' + self.text.legal(self.game.moves))
        if me.hand != self.hand:
            self.hand = me.hand[:]
            parts.append('"hand":' + _sorted_cards(me.hand))
        self._piles(parts, me.notes, new_hand)
        self._seats(parts)
        self._turn_and_deal(parts)
        since = max(self.sent_upto, t.hand_start_event)
        end = self.sent_upto = len(t.events)
        parts.append(f'"history":[{self.text.history(since, end, self.seat)}],"history_end":{end}')
        if t.phase is Phase.DRAFT and t.packets:
            parts.append('"packet":' + _sorted_cards(t.packets[self.seat]))
            parts.append('"kept":' + _sorted_cards(t.kept[self.seat]))
        if self.first:
            self.first = False
            parts.append('"totals":' + _dumps(t.totals))
            scores = [[score.score for score in hand] for hand in t.hand_scores]
            parts.append('"hand_scores":' + _dumps(scores))
        head = f'{{"type":"act","id":{request},"bank_ms":{bank_ms},"cpu_ms":{cpu_ms},'
        return (head + f'"wall_ms":{wall_ms},"changes":{{' + ",".join(parts) + "}}\n").encode()

    def hand_end(self, start: int, end: int) -> bytes:
        """As version 1's, byte for byte, from the game's shared texts."""
        since = max(self.sent_upto, start)
        self.sent_upto = end + 1
        head = self.text.hand_end(end)
        return (head + self.text.history(since, end + 1, self.seat) + "]}\n").encode()

    def _numbers(self, parts: list[str]) -> bool:
        """hand_number, dealer, active, to_act, stack and phase where they changed; whether
        this is the hand's first request to the seat (its Wasted pile and notes go whole)."""
        t = self.game.table
        now = (t.hand_no, t.dealer, t.active, t.to_act, len(t.stack))
        sent = self.numbers
        if now != sent:
            for key, old, new in zip(_NUMBER_KEYS, sent, now, strict=True):
                if old != new:
                    parts.append(f"{key}{new}")
            self.numbers = now
        if t.phase is not self.phase:
            self.phase = t.phase
            parts.append('"phase":' + _PHASE[t.phase])
        return bool(now[0] != sent[0])

    def _piles(self, parts: list[str], notes: list[tuple[str, ...]], new_hand: bool) -> None:
        """The Wasted pile and the seat's notes: whole at a hand's first request, else what
        was added to them (the engine only adds to either during a hand)."""
        wasted = self.game.table.wasted
        sent, length = self.wasted
        if new_hand or wasted is not sent or len(wasted) < length:
            parts.append('"wasted":' + _cards(wasted))
        elif len(wasted) > length:
            parts.append('"wasted_added":' + _cards(wasted[length:]))
        self.wasted = (wasted, len(wasted))
        if new_hand or len(notes) < self.notes:
            parts.append('"notes":' + _dumps(notes))
        elif len(notes) > self.notes:
            parts.append('"notes_added":' + _dumps(notes[self.notes :]))
        self.notes = len(notes)

    def _seats(self, parts: list[str]) -> None:
        """The seats whose entry differs from the one last sent, in a list with null for the
        others (entries not rebuilt since are the same strings: compared by identity)."""
        entries = self.text.seat_entries()
        sent = self.seats
        if entries == sent:
            return
        shown = ["null" if now == old else now for now, old in zip(entries, sent, strict=True)]
        parts.append('"seats":[' + ",".join(shown) + "]")
        self.seats = entries[:]

    def _turn_and_deal(self, parts: list[str]) -> None:
        """The active seat's turn counters and the deal on the table, when they changed."""
        t = self.game.table
        turn = (t.played, t.swapped, t.deals_made)
        if turn != self.turn:
            self.turn = turn
            played, swapped = _BOOL[t.played], _BOOL[t.swapped]
            parts.append(
                f'"turn":{{"played":{played},"swapped":{swapped},"deals_made":{t.deals_made}}}'
            )
        deal = t.deal
        if deal is None:
            if self.deal is not None:
                self.deal = None
                parts.append('"deal":null')
            return
        # The engine only adds to a deal's offer and ask, and a new deal is a new object.
        drafted = (deal, deal.give, deal.want, len(deal.offer), len(deal.ask))
        if drafted != self.deal:
            self.deal = drafted
            give, want = _card_or_null(deal.give), _card_or_null(deal.want)
            parts.append(
                f'"deal":{{"partner":{deal.partner},"give":{give},"want":{want},'
                f'"offer":{_cards(deal.offer)},"ask":{_cards(deal.ask)}}}'
            )


_NUMBER_KEYS = ('"hand_number":', '"dealer":', '"active":', '"to_act":', '"stack":')


class Feeds:
    """The feeds of one game's seats: they share one `TableText`."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.text: TableText | None = None

    def for_seat(self, seat: int, version: int) -> Feed:
        """The feed of `seat` in protocol `version` (1 or 2)."""
        if version == 2:
            if self.text is None:
                self.text = TableText(self.game)
            return V2Feed(self.game, seat, self.text)
        return V1Feed(self.game, seat)
