"""A game of Grass: the decision it waits on, the actions that answer it, and the log.

A `Game` is always waiting on exactly one `Decision` (a seat, a phase and the legal actions as
text) until it is over. `apply(text)` checks the text against the legal actions *before*
touching anything, so a bad action never half-applies. A decision with a single legal action is
taken by the engine itself (logged with `auto`), which keeps bots from being asked about
nothing.

The game's state is a `Table` (`engine/state.py`); the rules that move it live by topic:
`engine/hands.py` (the flow of a hand: deal, turns, scoring), `engine/effects.py` (what each
card does), `engine/deals.py` (negotiation and the swap). Every rule is cited in
`engine/RULES.md`; rule numbers (R-...) and decisions (D-...) in comments refer to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, NamedTuple, TypeVar, overload

from engine import deals, effects, hands
from engine.cards import Card
from engine.events import ActEvent, Event, GameEvent, HeaderEvent
from engine.moves import Move, parse
from engine.rules import (
    ENGINE_VERSION,
    MAX_PLAYERS,
    MIN_PLAYERS,
    Ruleset,
    Variants,
    learning_stage,
    resolve_ruleset,
    ruleset_limits,
)
from engine.scoring import HandScore
from engine.state import PHASE_TEXT, DealDraft, Phase, Seat, Table

__all__ = [
    "ENGINE_VERSION",
    "Decision",
    "Effect",
    "Event",
    "EventHook",
    "Game",
    "IllegalAction",
    "Moves",
    "Phase",
    "header_event",
]

LOG_FORMAT = "grass-log/1"

Effect = tuple[Callable[..., None], tuple[Any, ...]]
"""What an action does: `(effect, args)`, carried out as `effect(game, *args)`."""
Moves = dict[str, Effect]
"""The legal actions of a decision, by text, in the order they are offered. Once the game
offers a dict (`Game.moves`) it never changes it, and may offer the same dict again for the
same choice. Action texts are short ASCII words, card names and seat numbers (no quote, no
backslash, no control character), so they are JSON strings as they stand; both facts are
tested (tests/engine/test_properties.py) because the bot runner relies on them."""


_checked: list[tuple[Ruleset, Variants]] = []
"""The last ruleset (that very object: `resolve_ruleset` hands out the same one again) and
variants found to match their named edition: a game's clones, its sampled states and
positions pass them again, and a search bot builds thousands of them (the check costs as much
as the rest of a copy)."""


def _check_ruleset(ruleset: Ruleset, variants: Variants) -> None:
    """That `ruleset` is its named edition under `variants`, but for its platform limits and
    target: a log names its ruleset and limits, and anything else could not be replayed."""
    if _checked and _checked[0][0] is ruleset and _checked[0][1] == variants:
        return
    limits = ruleset_limits(ruleset)
    if resolve_ruleset(ruleset.name, variants, limits, ruleset.engine) != ruleset:
        raise ValueError(
            f"ruleset {ruleset.name!r} differs from the named edition in more than "
            "its platform limits and target; use resolve_ruleset()"
        )
    _checked[:] = [(ruleset, variants)]


class Decision(NamedTuple):
    """A point where one seat must choose one of `actions` (their text encodings)."""

    seat: int
    phase: Phase
    actions: tuple[str, ...]


class IllegalAction(ValueError):
    """An action that is not among the legal ones. The game is unchanged."""

    def __init__(self, action: object, decision: Decision) -> None:
        shown = ", ".join(decision.actions[:40])
        more = len(decision.actions) - 40
        if more > 0:
            shown += f", ... ({more} more)"
        super().__init__(
            f"illegal action {action!r} for seat {decision.seat} at decision "
            f"'{decision.phase}'; legal actions are: {shown}"
        )
        self.action = action
        self.decision = decision


def header_event(
    ruleset: Ruleset, variants: Variants, seed: int, names: Sequence[str]
) -> HeaderEvent:
    """A log's first line: what a replay needs to start the same game."""
    return {
        "e": "header",
        "format": LOG_FORMAT,
        "engine": ruleset.engine,
        "ruleset": ruleset.name,
        "limits": ruleset_limits(ruleset),
        "variants": variants.as_dict(),
        "seed": seed,
        "players": list(names),
    }


T = TypeVar("T")


class TableField(Generic[T]):
    """A `Table` field read through the game (`game.seats` is `game.table.seats`)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, game: None, owner: type) -> TableField[T]: ...
    @overload
    def __get__(self, game: Game, owner: type) -> T: ...
    def __get__(self, game: Game | None, owner: type) -> TableField[T] | T:
        if game is None:
            return self
        value: T = getattr(game.table, self.name)
        return value


EventHook = Callable[["Game", Event], None]
"""`on_event(game, event)`: see `Game.on_event`."""

_DEFERRED = frozenset({"act", "dealt", "offer", "exchange", "result"})
"""Events logged before (some of) their outcome is on the table (see `Game.on_event`)."""


class Game:
    """One game of Grass from the first deal to the final result.

    `on_event(game, event)`, if set, is called once for every event the game logs, in log
    order, as soon as the table shows the event's outcome: right after most events are logged;
    for an `act` (and `dealt`, `offer`, `exchange`, `result`, which the engine logs before it
    has finished with them) once that is done: before the next event other than a `dealt`, the
    start of a turn, the scoring of a hand, or when `apply` (or the game's start) returns.
    Replay frames (`engine.replay_frames`) are built this way. A hook set after the game
    started sees the events from then on; copies (`clone`) have none.
    """

    __slots__ = (
        "_decision",
        "_pending",
        "_stage_deals",
        "_stage_hand",
        "_stage_kinds",
        "moves",
        "n",
        "names",
        "on_event",
        "others",
        "ruleset",
        "secret_phases",
        "seed",
        "table",
        "variants",
    )

    def __init__(
        self,
        ruleset: Ruleset,
        variants: Variants,
        seed: int,
        names: Sequence[str],
        *,
        on_event: EventHook | None = None,
    ) -> None:
        """A new game, dealt and waiting on its first decision."""
        self._setup(ruleset, variants, seed, names, Table.new(list(names), seed), on_event)
        self._emit(header_event(ruleset, variants, seed, self.names))
        hands.start_hand(self)
        self._refresh()
        self._settle()
        self._flush()

    @classmethod
    def from_table(
        cls,
        ruleset: Ruleset,
        variants: Variants,
        seed: int,
        names: Sequence[str],
        table: Table,
        *,
        first_turn: int | None = None,
        on_event: EventHook | None = None,
    ) -> Game:
        """A game that goes on from `table` (which it takes over, not copies): at the table's
        decision as it stands (even one with a single legal action), or with `first_turn`, at
        the start of that seat's turn, which the game then starts (skips, the draw) as it
        would after the previous turn. Copies, positions and sampled states are built so."""
        game = cls.__new__(cls)
        game._setup(ruleset, variants, seed, names, table, on_event)
        if first_turn is None:
            game._refresh()
        else:
            hands.start_turn(game, first_turn)
            game._refresh()
            game._settle()
            game._flush()
        return game

    def _setup(
        self,
        ruleset: Ruleset,
        variants: Variants,
        seed: int,
        names: Sequence[str],
        table: Table,
        on_event: EventHook | None,
    ) -> None:
        n = len(names)
        if not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise ValueError(f"Grass is for {MIN_PLAYERS} to {MAX_PLAYERS} players, not {n}")
        _check_ruleset(ruleset, variants)
        if len(table.seats) != n:
            raise ValueError(f"the table has {len(table.seats)} seats for {n} players")
        self.ruleset = ruleset
        self.variants = variants
        self.seed = seed
        self.names = tuple(names)
        self.n = n
        self.table = table
        self.on_event = on_event
        self.others = tuple(tuple((s + k) % n for k in range(1, n)) for s in range(n))
        """Every other seat, clockwise from the left-hand neighbour, by seat."""
        secret = {Phase.DRAFT, Phase.PASS, Phase.DEAL_HAND_OVER}
        if variants.hidden_deals:
            secret.add(Phase.DEAL_ANSWER)
        self.secret_phases = frozenset(secret)
        """Phases whose choice only the deciding seat learns (R-INFO-PASS, D-HIDDEN-DEALS)."""
        self.moves: Moves = {}
        """The legal actions now, by text (in order), with what each does."""
        self._decision: Decision | None = None
        self._pending: list[Event] = []
        self._stage_hand = -1
        self._stage_kinds: tuple[Card, ...] = ()
        self._stage_deals = True

    # ------------------------------------------------------------------ public API

    seats: TableField[list[Seat]] = TableField()
    stack: TableField[list[Card]] = TableField()
    wasted: TableField[list[Card]] = TableField()
    out_of_play: TableField[list[Card]] = TableField()
    hand_no: TableField[int] = TableField()
    dealer: TableField[int] = TableField()
    active: TableField[int] = TableField()
    to_act: TableField[int] = TableField()
    phase: TableField[Phase] = TableField()
    totals: TableField[list[int]] = TableField()
    hand_scores: TableField[list[tuple[HandScore, ...]]] = TableField()
    events: TableField[list[Event]] = TableField()
    hand_start_event: TableField[int] = TableField()
    played: TableField[bool] = TableField()
    swapped: TableField[bool] = TableField()
    deals_made: TableField[int] = TableField()
    deal: TableField[DealDraft | None] = TableField()
    packets: TableField[list[list[Card]]] = TableField()
    kept: TableField[list[list[Card]]] = TableField()
    result: TableField[dict[str, Any] | None] = TableField()

    @property
    def over(self) -> bool:
        return self.table.phase is Phase.OVER

    @property
    def decision(self) -> Decision:
        decision = self._decision
        if decision is None:
            t = self.table
            decision = self._decision = Decision(t.to_act, t.phase, tuple(self.moves))
        return decision

    def legal_actions(self) -> list[str]:
        return list(self.moves)

    def legal_moves(self) -> list[Move]:
        """The legal actions as records (`engine.moves`), in the same order."""
        return [parse(text) for text in self.moves]

    def apply(self, action: str) -> None:
        """Take one legal action for the seat to act; raises IllegalAction and changes
        nothing if `action` is not one of `legal_actions()`."""
        move = self.moves.get(action) if isinstance(action, str) else None
        if move is None:
            raise IllegalAction(action, self.decision)
        self._take(action, move, False)
        self._refresh()
        self._settle()
        if self._pending:
            self._flush()

    def clone(self) -> Game:
        """An independent copy (for search in bots). Shares nothing mutable."""
        return Game.from_table(
            self.ruleset, self.variants, self.seed, self.names, self.table.copy()
        )

    def deals_allowed(self) -> bool:
        """Whether this hand allows negotiation (not learning hand 1)."""
        if self._stage_hand != self.table.hand_no:
            self._learn_stage()
        return self._stage_deals

    def deck_kinds(self) -> tuple[Card, ...]:
        """Kinds of card in this hand's deck (all of them but in learning hands 1-3)."""
        if self._stage_hand != self.table.hand_no:
            self._learn_stage()
        return self._stage_kinds

    def _learn_stage(self) -> None:
        hand = self.table.hand_no
        stage = learning_stage(self.variants, hand)
        removed = stage.removed if stage else frozenset()
        self._stage_kinds = tuple(card for card, _ in self.ruleset.deck if card not in removed)
        self._stage_deals = stage is None or stage.deals
        self._stage_hand = hand

    # ------------------------------------------------------------------ plumbing

    def _emit(self, event: GameEvent) -> None:
        """Log an event (see `on_event` for when the hook hears of it)."""
        if self.on_event is None:
            self.table.events.append(event)  # type: ignore[arg-type]
            return
        if event["e"] != "dealt":
            # The dealt hands are picked up after the last `dealt` line: those wait for it.
            self._flush()
        self.table.events.append(event)  # type: ignore[arg-type]
        if event["e"] in _DEFERRED:
            self._pending.append(event)  # type: ignore[arg-type]
        else:
            self.on_event(self, event)  # type: ignore[arg-type]

    def _flush(self) -> None:
        """Tell the hook about the events whose outcome is now on the table."""
        pending = self._pending
        if pending and self.on_event is not None:
            self._pending = []
            for event in pending:
                self.on_event(self, event)

    def _take(self, action: str, move: Effect, auto: bool) -> None:
        t = self.table
        phase = t.phase
        event: ActEvent = {
            "e": "act",
            "seat": t.to_act,
            "phase": PHASE_TEXT[phase],
            "action": action,
        }
        if auto:
            event["auto"] = True
        if phase in self.secret_phases:
            event["see"] = [t.to_act]
        if self.on_event is None:
            t.events.append(event)  # type: ignore[arg-type]
        else:
            self._emit(event)
        effect, args = move
        effect(self, *args)

    def _settle(self) -> None:
        """Take the decision at once while only one action is legal (D-AUTO)."""
        moves = self.moves
        while len(moves) == 1:
            ((action, move),) = moves.items()
            self._take(action, move, True)
            self._refresh()
            moves = self.moves

    def _refresh(self) -> None:
        self._decision = None
        self.moves = _LISTERS[self.table.phase](self)


def _turn_moves(game: Game) -> Moves:
    """The active player's turn: play or discard one card, deal, swap, then end."""
    moves: Moves = {}
    played = game.table.played
    if not played:
        effects.card_moves(game, moves)
    deals.turn_moves(game, moves)
    if played:
        moves["end"] = _END
    return moves


_END: Effect = (hands.end, ())


def _nothing(game: Game) -> Moves:
    return {}


_LISTERS: Mapping[Phase, Callable[[Game], Moves]] = {
    Phase.TURN: _turn_moves,
    Phase.DRAFT: hands.draft_moves,
    Phase.PASS: effects.pass_moves,
    Phase.WASTE: effects.waste_moves,
    Phase.SURRENDER: effects.surrender_moves,
    Phase.DEAL_GIVE: deals.give_moves,
    Phase.DEAL_WANT: deals.want_moves,
    Phase.DEAL_STASH: deals.stash_moves,
    Phase.DEAL_ANSWER: deals.answer_moves,
    Phase.DEAL_HAND_OVER: deals.hand_over_moves,
    Phase.OVER: _nothing,
}
"""For each phase, the function that lists the legal actions of its decision."""
