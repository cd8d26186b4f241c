"""A readable, line-per-event account of a game log (for `grass replay`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from engine.cards import INFO
from engine.events import Event

_TITLES: dict[str, str] = {card.value: info.title for card, info in INFO.items()}


def _card(code: str) -> str:
    try:
        return _TITLES[code]
    except (KeyError, TypeError):
        return code


def _cards(codes: Sequence[str]) -> str:
    return ", ".join(_card(c) for c in codes) if codes else "nothing"


def _money(amount: int) -> str:
    sign = "-" if amount < 0 else ""
    return f"{sign}${abs(amount):,}"


def describe_action(action: str, names: Sequence[str]) -> str:
    """An action's text encoding in words: `play felony @1` -> `plays Heat On: Felony on Janis`."""
    words = action.split()
    verb, args = words[0], words[1:]
    parts: list[str] = []
    for arg in args:
        if arg.startswith("@"):
            parts.append(
                f"on {names[int(arg[1:])]}" if verb == "play" else f"with {names[int(arg[1:])]}"
            )
        elif "+" in arg or arg.endswith("(p)") or arg in _TITLES:
            shown = [
                _card(p[:-3]) + " (protected)" if p.endswith("(p)") else _card(p)
                for p in arg.split("+")
            ]
            parts.append(" + ".join(shown))
        else:
            parts.append(arg)
    return " ".join([_PHRASES.get(verb, verb), *parts])


_PHRASES = {
    "play": "plays",
    "discard": "discards",
    "swap": "swaps",
    "deal": "proposes a deal",
    "give": "gives",
    "announce": "announces",
    "want": "asks for",
    "offer": "adds from the stash",
    "ask": "asks for tabled",
    "done": "puts the deal on the table",
    "accept": "accepts",
    "decline": "declines",
    "pass": "passes left",
    "keep": "keeps",
    "waste": "wastes",
    "surrender": "surrenders",
    "end": "ends the turn",
}


def transcript(events: Iterable[Event]) -> Iterator[str]:
    """One line per event of an (omniscient) log (two for a position's header)."""
    names: list[str] = []
    for event in events:
        if event.get("e") == "header":
            names = [str(p) for p in event["players"]]
        yield from describe(event, names)


def describe(event: Event, names: Sequence[str]) -> list[str]:
    """The lines `transcript` writes for one event; `names` are the players, in seat order."""
    kind = event.get("e")
    if kind == "header":
        names = [str(p) for p in event["players"]]
        variants = [k for k, v in event["variants"].items() if v is True]
        lines = [
            f"Grass ({event['ruleset']} rules, target {_money(event['variants']['target'])}"
            f"{', ' + ', '.join(variants) if variants else ''}), seed {event['seed']}: "
            + ", ".join(names)
        ]
        if "position" in event:
            lines.append("  (starting from a set-up position)")
        return lines
    describer = _DESCRIBE.get(kind)  # type: ignore[arg-type]
    if describer is None:
        return [f"  ({kind})"]
    return describer(event, names)


_SECRET_ACTS = {
    "draft": "keeps a card and passes the packet on",
    "pass": "chooses a card to pass left",
    "deal-hand-over": "hands a card over face down",
    "deal-answer": "answers the deal",
}


def describe_hidden(event: Event, names: Sequence[str]) -> list[str] | None:
    """The words for an event read by someone who does not share its secret (None: an event
    that has no such words, which the reader sees redacted instead): the one wording of hidden
    events for every view (`engine.observation.event_lines`). They read nothing under the
    event's `secret`, not even how many cards it holds: a reader who does not share a secret
    gets words that would be the same whatever it held (the tests garble secrets to check)."""
    kind = event.get("e")
    seat = event.get("seat")
    name = names[seat] if isinstance(seat, int) else "?"
    if kind == "dealt":
        return [f"{name} is dealt a hand"]
    if kind == "draw":
        return [f"{name} draws a card"]
    if kind == "pass":
        return [f"{name} passes a card to {names[event['to']]}"]
    if kind == "take":
        return [f"{name} takes a card at random from {names[event['from']]}"]
    if kind == "act":
        return [f"{name} {_SECRET_ACTS.get(event.get('phase', ''), 'makes a secret choice')}"]
    return None


def _hand(event: Event, names: Sequence[str]) -> list[str]:
    return [
        f"--- Hand {event['hand']}: {names[event['dealer']]} deals, "
        f"{event['deck']} cards{'' if event['deals'] else ', no deals'} ---"
    ]


def _dealt(event: Event, names: Sequence[str]) -> list[str]:
    return [f"  {names[event['seat']]} is dealt {_cards(event['secret']['cards'])}"]


def _draw(event: Event, names: Sequence[str]) -> list[str]:
    return [f"{names[event['seat']]} draws {_card(event['secret']['card'])}"]


def _act(event: Event, names: Sequence[str]) -> list[str]:
    auto = " (forced)" if event.get("auto") else ""
    return [f"  {names[event['seat']]} {describe_action(event['action'], names)}{auto}"]


def _skip(event: Event, names: Sequence[str]) -> list[str]:
    return [f"{names[event['seat']]} skips a turn"]


def _extra_turn(event: Event, names: Sequence[str]) -> list[str]:
    return [f"{names[event['seat']]} takes an extra turn"]


def _waste(event: Event, names: Sequence[str]) -> list[str]:
    return [f"    {names[event['seat']]} loses {_cards(event['cards'])} to the Wasted pile"]


def _move(event: Event, names: Sequence[str]) -> list[str]:
    return [
        f"    {_card(event['card'])} moves from {names[event['from']]}'s marketplace "
        f"to {names[event['to']]}'s"
    ]


def _pass(event: Event, names: Sequence[str]) -> list[str]:
    return [
        f"    {names[event['seat']]} passes {_card(event['secret']['card'])} "
        f"to {names[event['to']]}"
    ]


def _take(event: Event, names: Sequence[str]) -> list[str]:
    return [
        f"    {names[event['seat']]} takes {_card(event['secret']['card'])} "
        f"at random from {names[event['from']]}"
    ]


def _offer(event: Event, names: Sequence[str]) -> list[str]:
    give = _card(event["give"]) if event["give"] else "nothing from the hand"
    want = _card(event["want"]) if event["want"] else "nothing from the hand"
    stash = ""
    if event["offer"] or event["ask"]:
        stash = f"; tabled {_cards(event['offer'])} for {_cards(event['ask'])}"
    return [f"    offer to {names[event['partner']]}: {give} for {want}{stash}"]


def _exchange(event: Event, names: Sequence[str]) -> list[str]:
    secret = event.get("secret", event)
    if "gave" in secret:
        return [
            f"    deal done: {names[event['seat']]} gave {_card(secret['gave'])}, "
            f"{names[event['partner']]} gave {_card(secret['got'])}"
        ]
    return ["    deal done"]


def _hand_end(event: Event, names: Sequence[str]) -> list[str]:
    lines = [f"--- Hand {event['hand']} scored ---"]
    for seat, score in enumerate(event["scores"]):
        lines.append(
            f"  {names[seat]:>12}: protected {_money(score['protected'])}, at risk "
            f"{_money(score['at_risk'])}, banker {_money(score['banker'])}, fines "
            f"-{_money(score['fines'])}, best held -{_money(score['best_held'])}, bonus "
            f"{_money(score['bonus'])} = {_money(score['score'])}; total "
            f"{_money(event['totals'][seat])}"
        )
    return lines


def _result(event: Event, names: Sequence[str]) -> list[str]:
    order = sorted(range(len(names)), key=lambda s: event["ranks"][s])
    lines = [f"=== Game over after {event['hands']} hands ({event['reason']}) ==="]
    for seat in order:
        lines.append(f"  {event['ranks'][seat]}. {names[seat]} {_money(event['totals'][seat])}")
    return lines


_DESCRIBE: dict[str, Callable[[Event, Sequence[str]], list[str]]] = {
    "hand": _hand,
    "dealt": _dealt,
    "draw": _draw,
    "act": _act,
    "skip": _skip,
    "extra-turn": _extra_turn,
    "waste": _waste,
    "move": _move,
    "pass": _pass,
    "take": _take,
    "offer": _offer,
    "exchange": _exchange,
    "hand-end": _hand_end,
    "result": _result,
}
