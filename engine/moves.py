"""Moves as records: what a legal move does, read from fields instead of its words.

The engine offers each decision's legal moves as texts (`Game.moves`, the protocol's `legal`),
and the texts stay what bots see on the wire. A text is the *encoding* of a `Move`: `parse`
is the one decoder and `Move.text` the one encoder, so a policy, a feature encoder or a
belief tracker asks `move.kind`, `move.card` or `move.target` and never splits a string.

The grammar, every text the engine writes (the action space in `bots/sdk/actions.py` lists
them all):

- bare words: `end`, `done`, `withdraw`, `decline`, `accept` (an open deal's answer);
- `KIND CARD` for `discard`, `give`, `announce`, `want`, `accept` (a hidden deal's answer),
  `pass`, `keep`, `offer`, `ask`, `waste`, `surrender`; `give nothing`, `announce nothing`;
- `deal @SEAT`, `swap MINE @SEAT THEIRS` (a forced swap of tabled peddles);
- `play CARD`, then, by the card: `@SEAT` (Heat On, modern paranoia, steals), a peddle (the
  stolen one after the seat, or the one a modern Pay Fine pays, `PEDDLE(p)` when it comes from
  a protected group), or the group a Protected card covers (`panama+panama`).

Parsed records are kept (a table offers a few thousand distinct texts at most), so reading a
decision's moves costs a dictionary lookup each; `Game.legal_moves` does that.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.cards import FAMILY, Card, Family

__all__ = ["Move", "parse"]

SEATS = 6
"""Seat numbers run 0..5 (`engine.rules.MAX_PLAYERS`, checked by the tests; not imported, so
that a bot reading its moves does not load the rules)."""
_BARE = frozenset({"end", "done", "withdraw", "decline", "accept"})
_ONE_CARD = frozenset(
    {"discard", "give", "announce", "want", "accept", "pass", "keep", "offer"}
    | {"ask", "waste", "surrender"}
)
_NOTHING = frozenset({"give", "announce"})
"""The kinds that may name no card (`give nothing`: a hidden deal's proposer gives none)."""
_CACHE_MAX = 65_536
"""More distinct texts than the action space holds at every seat of every table size."""


class Move(NamedTuple):
    """One legal move. `kind` is its verb; the other fields are its arguments, None or empty
    when the kind has none: `card` (played, discarded, given, passed... or `swap`'s own
    peddle), `target` (the seat it names), `peddle` (the second card: the peddle a steal takes,
    a Pay Fine pays or a swap takes), `group` (the peddles a Protected card covers) and
    `from_protected` (the Pay Fine's peddle comes from a protected group).

    A named tuple rather than a frozen dataclass: a bot reads its moves from its first
    decision, and `dataclasses` (with `inspect`) costs a Python bot's start about twice what
    `typing` does (this module and the cards load in 9 ms without either already loaded)."""

    kind: str
    card: Card | None = None
    target: int | None = None
    peddle: Card | None = None
    group: tuple[Card, ...] = ()
    from_protected: bool = False

    @property
    def text(self) -> str:
        """The move's encoding on the wire: the text `parse` reads back to this record."""
        parts = [self.kind]
        if self.card is not None:
            parts.append(self.card)
        elif self.kind in _NOTHING:
            parts.append("nothing")
        if self.target is not None:
            parts.append(f"@{self.target}")
        if self.group:
            parts.append("+".join(self.group))
        if self.peddle is not None:
            parts.append(self.peddle + "(p)" if self.from_protected else self.peddle)
        return " ".join(parts)


_PARSED: dict[str, Move] = {}


def parse(text: str) -> Move:
    """The record a move's text encodes. Raises ValueError, naming what is wrong, for a text
    that is not a move the engine could write (the texts a bot receives always parse)."""
    move = _PARSED.get(text)
    if move is None:
        move = _decode(text)
        if move.text != text:
            raise ValueError(f"not a move: {text!r} (written {move.text!r})")
        if len(_PARSED) < _CACHE_MAX:
            _PARSED[text] = move
    return move


def _decode(text: str) -> Move:
    words = text.split(" ")
    kind, args = words[0], words[1:]
    if not args and kind in _BARE:
        return Move(kind)
    if len(args) == 1 and kind in _ONE_CARD:
        if args[0] == "nothing" and kind in _NOTHING:
            return Move(kind)
        card = _card(args[0], text)
        if kind in _PEDDLE_ONLY and FAMILY[card] is not Family.PEDDLE:
            raise ValueError(f"not a move: {text!r} ({kind} takes a peddle)")
        return Move(kind, card)
    if kind == "deal" and len(args) == 1:
        return Move(kind, target=_seat(args[0], text))
    if kind == "swap" and len(args) == 3:
        return Move(kind, _peddle(args[0], text), _seat(args[1], text), _peddle(args[2], text))
    if kind == "play" and 1 <= len(args) <= 3:
        return _play(_card(args[0], text), args[1:], text)
    raise ValueError(f"not a move: {text!r}")


_PEDDLE_ONLY = frozenset({"offer", "ask", "waste", "surrender"})
_SHAPES: dict[Family, frozenset[tuple[bool, str]]] = {
    Family.HEAT_ON: frozenset({(True, "")}),
    Family.PARANOIA: frozenset({(False, ""), (True, "")}),
    Family.STEAL: frozenset({(True, ""), (True, "peddle")}),
    Family.PAY_FINE: frozenset({(False, ""), (False, "peddle"), (False, "peddle(p)")}),
    Family.PROTECTED: frozenset({(False, "group")}),
}
"""What may follow `play CARD`, by the card's family: (names a seat, what comes after); any
other family takes nothing (`play market-open`)."""
_PLAIN = frozenset({(False, "")})


def _play(card: Card, args: list[str], text: str) -> Move:
    target = None
    if args and args[0].startswith("@"):
        target = _seat(args[0], text)
        args = args[1:]
    family = FAMILY[card]
    rest = args[0] if len(args) == 1 else ""
    shape = "group" if family is Family.PROTECTED else "peddle" if rest else ""
    if shape == "peddle" and rest.endswith("(p)"):
        shape = "peddle(p)"
    if len(args) > 1 or (target is not None, shape) not in _SHAPES.get(family, _PLAIN):
        raise ValueError(f"not a move: {text!r} (not how {card} is played)")
    if shape == "group":
        return Move("play", card, group=tuple(_peddle(w, text) for w in rest.split("+")))
    if shape == "peddle(p)":
        return Move("play", card, peddle=_peddle(rest[:-3], text), from_protected=True)
    peddle = _peddle(rest, text) if rest else None
    return Move("play", card, target, peddle)


def _peddle(word: str, text: str) -> Card:
    card = _card(word, text)
    if FAMILY[card] is not Family.PEDDLE:
        raise ValueError(f"not a move: {text!r} ({word!r} is not a peddle)")
    return card


def _card(word: str, text: str) -> Card:
    try:
        return Card(word)
    except ValueError:
        raise ValueError(f"not a move: {text!r} (no card {word!r})") from None


def _seat(word: str, text: str) -> int:
    number = word[1:]
    if word[:1] != "@" or not number.isdigit() or len(number) != 1 or int(number) >= SEATS:
        raise ValueError(f"not a move: {text!r} (no seat {word!r})")
    return int(number)
