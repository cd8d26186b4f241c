"""A readable, line-per-event account of a game log (for `grass replay`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from engine.cards import INFO, Card
from engine.game import Event


def _card(code: str) -> str:
    try:
        return INFO[Card(code)].title
    except ValueError:
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
        elif "+" in arg or arg.endswith("(p)") or arg in {c.value for c in Card}:
            shown = [
                _card(p[:-3]) + " (protected)" if p.endswith("(p)") else _card(p)
                for p in arg.split("+")
            ]
            parts.append(" + ".join(shown))
        else:
            parts.append(arg)
    phrases = {
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
    return " ".join([phrases.get(verb, verb), *parts])


def transcript(events: Iterable[Event]) -> Iterator[str]:
    """One line per event of an (omniscient) log."""
    names: list[str] = []
    for event in events:
        kind = event.get("e")
        if kind == "header":
            names = [str(p) for p in event["players"]]
            variants = [k for k, v in event["variants"].items() if v is True]
            yield (
                f"Grass ({event['ruleset']} rules, target {_money(event['variants']['target'])}"
                f"{', ' + ', '.join(variants) if variants else ''}), seed {event['seed']}: "
                + ", ".join(names)
            )
            if "position" in event:
                yield "  (starting from a set-up position)"
        elif kind == "hand":
            yield (
                f"--- Hand {event['hand']}: {names[event['dealer']]} deals, "
                f"{event['deck']} cards{'' if event['deals'] else ', no deals'} ---"
            )
        elif kind == "dealt":
            yield f"  {names[event['seat']]} is dealt {_cards(event['secret']['cards'])}"
        elif kind == "draw":
            yield f"{names[event['seat']]} draws {_card(event['secret']['card'])}"
        elif kind == "act":
            auto = " (forced)" if event.get("auto") else ""
            yield f"  {names[event['seat']]} {describe_action(event['action'], names)}{auto}"
        elif kind == "skip":
            yield f"{names[event['seat']]} skips a turn"
        elif kind == "extra-turn":
            yield f"{names[event['seat']]} takes an extra turn"
        elif kind == "waste":
            yield f"    {names[event['seat']]} loses {_cards(event['cards'])} to the Wasted pile"
        elif kind == "move":
            yield (
                f"    {_card(event['card'])} moves from {names[event['from']]}'s marketplace "
                f"to {names[event['to']]}'s"
            )
        elif kind == "pass":
            yield (
                f"    {names[event['seat']]} passes {_card(event['secret']['card'])} "
                f"to {names[event['to']]}"
            )
        elif kind == "take":
            yield (
                f"    {names[event['seat']]} takes {_card(event['secret']['card'])} "
                f"at random from {names[event['from']]}"
            )
        elif kind == "offer":
            give = _card(event["give"]) if event["give"] else "nothing from the hand"
            want = _card(event["want"]) if event["want"] else "nothing from the hand"
            stash = ""
            if event["offer"] or event["ask"]:
                stash = f"; tabled {_cards(event['offer'])} for {_cards(event['ask'])}"
            yield f"    offer to {names[event['partner']]}: {give} for {want}{stash}"
        elif kind == "exchange":
            secret = event.get("secret", event)
            if "gave" in secret:
                yield (
                    f"    deal done: {names[event['seat']]} gave {_card(secret['gave'])}, "
                    f"{names[event['partner']]} gave {_card(secret['got'])}"
                )
            else:
                yield "    deal done"
        elif kind == "hand-end":
            yield f"--- Hand {event['hand']} scored ---"
            for seat, score in enumerate(event["scores"]):
                yield (
                    f"  {names[seat]:>12}: protected {_money(score['protected'])}, at risk "
                    f"{_money(score['at_risk'])}, banker {_money(score['banker'])}, fines "
                    f"-{_money(score['fines'])}, best held -{_money(score['best_held'])}, bonus "
                    f"{_money(score['bonus'])} = {_money(score['score'])}; total "
                    f"{_money(event['totals'][seat])}"
                )
        elif kind == "result":
            order = sorted(range(len(names)), key=lambda s: event["ranks"][s])
            yield f"=== Game over after {event['hands']} hands ({event['reason']}) ==="
            for seat in order:
                yield f"  {event['ranks'][seat]}. {names[seat]} {_money(event['totals'][seat])}"
        else:
            yield f"  ({kind})"
