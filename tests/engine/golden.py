"""Golden games: a few hundred seeded games recorded by engine 1.1.0 (before issue 14), replayed
by `test_golden.py` to show that the engine still plays them event for event.

Every game is fixed by its spec (ruleset, players, variants, limits, seed); the choices come
from a seeded `random.Random` over the legal actions in the order the engine lists them, so
replaying a spec also checks that order. `python -m tests.engine.golden` wrote the data file
once, with the engine of that time; it is not meant to be run again (a newer engine would
record newer rules).

The replay documents' digests of the seats' views were updated once, by issue 34 (one wording
of hidden events for every view): a hidden deal now reads "X is dealt a hand" instead of "X is
dealt 6 cards"; a script checked that the old documents with only those lines changed digest
to the new ones (the omniscient views did not change).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine import Game, Variants, new_game, observe
from engine.log import dumps
from engine.replay_frames import document

DATA = Path(__file__).parent / "data" / "golden-1.1.0.jsonl.gz"

VARIANT_SETS: tuple[dict[str, bool], ...] = (
    {},
    {"give_me_five": True},
    {"hidden_deals": True},
    {"lucky_or_not": True},
    {"learning_hands": True},
    {"give_me_five": True, "hidden_deals": True},
    {"hidden_deals": True, "lucky_or_not": True, "learning_hands": True},
)


def specs() -> Iterator[dict[str, Any]]:
    """The recorded games: both rulesets, 2-6 seats, every variant alone and in combination,
    1-3 hands each (some with fewer deal proposals allowed per turn), and six games that run to
    the full 30-hand limit."""
    index = 0
    for ruleset in ("modern", "classic"):
        for players in range(2, 7):
            for variants in VARIANT_SETS:
                for _ in range(4):
                    index += 1
                    limits = {"max_hands": 1 + index % 3}
                    if index % 5 == 0:
                        limits["max_deals_per_turn"] = 1 + index % 3
                    yield _spec(ruleset, players, variants, limits, index)
    for ruleset, players, variants in (
        ("modern", 2, {}),
        ("modern", 4, {"hidden_deals": True}),
        ("modern", 6, {"give_me_five": True, "lucky_or_not": True}),
        ("classic", 2, {"learning_hands": True}),
        ("classic", 4, {}),
        ("classic", 5, {"hidden_deals": True, "give_me_five": True}),
    ):
        index += 1
        yield _spec(ruleset, players, variants, {}, index)


def _spec(
    ruleset: str, players: int, variants: dict[str, bool], limits: dict[str, int], index: int
) -> dict[str, Any]:
    return {
        "ruleset": ruleset,
        "players": players,
        "variants": dict(variants, target=(250_000, 500_000)[index % 2]),
        "limits": limits,
        "seed": 1000 + index * 7919,
        "log": index % 4 == 0,
        "frames": index % 16 == 0,
    }


def play(spec: dict[str, Any], game: Game | None = None, views: Any = None) -> tuple[Game, str]:
    """Play a spec's game to the end (or go on with `game`, freshly started as the spec says);
    returns the game and a digest of every decision: seat, phase and legal actions in order.
    With `views` (a hashlib object) it also digests what the seat to act observes at every
    decision, as the bot runner asks for it (`since` its previous view), and every 50th
    decision the whole hand's view."""
    if game is None:
        game = new_game(
            spec["ruleset"],
            spec["players"],
            spec["seed"],
            Variants.from_dict(spec["variants"]),
            spec["limits"],
        )
    rng = random.Random(f"golden:{spec['seed']}")
    digest = hashlib.sha256()
    sent = [0] * game.n
    count = 0
    while not game.over:
        decision = game.decision
        digest.update(
            f"{decision.seat}|{decision.phase.value}|{'|'.join(decision.actions)}\n".encode()
        )
        if views is not None:
            seat = decision.seat
            view = observe(game, seat, since=max(sent[seat], game.hand_start_event))
            sent[seat] = view["history_end"]
            views.update(json.dumps(view, sort_keys=True).encode())
            if count % 50 == 0:
                views.update(json.dumps(observe(game, seat), sort_keys=True).encode())
        count += 1
        game.apply(rng.choice(decision.actions))
    return game, digest.hexdigest()


def log_digest(game: Game) -> str:
    return hashlib.sha256(dumps(game.events).encode()).hexdigest()


def frames_digests(log: list[dict[str, Any]]) -> dict[str, str]:
    """Digests of the replay documents (`engine.replay_frames.document`) of a log: the
    omniscient one (`all`) and each seat's."""
    views: list[int | None] = [None, *range(len(log[0]["players"]))]
    return {
        "all" if view is None else str(view): hashlib.sha256(
            json.dumps(document(log, view), sort_keys=True).encode()
        ).hexdigest()
        for view in views
    }


def load() -> list[dict[str, Any]]:
    """The recorded games, one dict each: `spec`, `header` (the log's first line), `decisions`
    and `events` (sha256 digests of the decisions and of the whole log) and, for one game in
    four, the `log` itself as read from a file with `views` (see `play`); for one in sixteen
    `frames` (see `frames_digests`)."""
    with gzip.open(DATA, "rt") as fh:
        return [json.loads(line) for line in fh]


def record() -> None:
    with gzip.GzipFile(DATA, "wb", mtime=0) as out:
        for spec in specs():
            views = hashlib.sha256() if spec["log"] else None
            game, decisions = play(spec, views=views)
            log = [json.loads(line) for line in dumps(game.events).splitlines()]
            entry = {
                "spec": spec,
                "header": log[0],
                "decisions": decisions,
                "events": log_digest(game),
                "lines": len(log),
            }
            if views is not None:
                entry["views"] = views.hexdigest()
            if spec["frames"]:
                entry["frames"] = frames_digests(log)
            if spec["log"]:
                entry["log"] = log
            out.write((json.dumps(entry, separators=(",", ":")) + "\n").encode())


if __name__ == "__main__":
    record()
