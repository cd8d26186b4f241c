"""Multiplayer Elo for Grass games of 2-6 seats.

Why Elo: the leaderboard should show a number people already know how to read -- a new bot starts
at 1500, and 400 points of difference mean 10:1 odds in a head-to-head -- and every change should be
explainable from the one game that caused it.

The model, in full (every constant is a field of :class:`EloParams`):

* A game of ``n`` seats is scored as its ``n(n-1)/2`` head-to-head pairs.  For players ``i`` and
  ``j``, the actual score ``S_ij`` is 1 if ``i`` finished ahead of ``j``, 0.5 if they share a place,
  0 if behind.  The expected score is the usual logistic curve of the rating difference::

      E_ij = 1 / (1 + 10 ** ((mu_j - mu_i) / scale))

  Pairs are the right unit for finishing orders: if finishing orders follow Plackett-Luce (each
  place goes to one of the remaining players with probability proportional to their strength),
  then the chance that ``i`` finishes ahead of ``j`` is exactly ``s_i / (s_i + s_j)``, whoever
  else is at the table -- the Elo curve with ``mu = scale * log10(s)``.

* The change for player ``i`` splits its K-factor over its ``n - 1`` opponents, so one game moves a
  rating as much whether it had two seats or six::

      delta_i = K(games_i) / (n - 1) * sum_j (S_ij - E_ij)

* K shrinks with the number of games the player had played *before* this game::

      K(g) = max(k_min, k0 / (1 + g / k_games))

  This is the gain of a running average: with ``k_min = 0`` the rating after ``g`` games weighs
  all of them about equally instead of forgetting old ones, which is what ranks best when a bot's
  strength does not change.  New ("provisional") bots therefore move fast -- their first results
  carry the most information -- and established ones settle.  The floor ``k_min`` keeps an
  established rating able to follow a bot whose results really change.

* The uncertainty band.  Read K as the gain of a Kalman filter on a Gaussian belief about the
  rating: the gain is proportional to the belief's variance, so the standard deviation is::

      deviation(g) = sigma0 * sqrt(K(g) / k0)        (= sigma0 / sqrt(1 + g / k_games) early on)

  ``sigma0`` is how unsure we are about a bot that has not played: roughly the spread of ratings
  on the ladder.  The leaderboard shows ``mu +/- 2 * deviation`` (about a 95% band); the simulation
  in :mod:`bench.simulate` checks how often such bands cover the hidden true skill.

* Provisional.  A rating is marked provisional while it still moves fast (:func:`provisional`):
  fewer than ``threshold`` rated games, the ladder's ``GRASS_PROVISIONAL_GAMES`` (15 by default:
  ``3 * k_games``, the game at which K has fallen to a quarter of ``k0`` and the deviation to half
  of ``sigma0``, so the band is no wider than the spread of the whole ladder any more).  A bot
  whose new version has played fewer than ``threshold`` of them is marked too: its rating is
  still mostly its old version's.

With equal K for everybody (same number of games, or everybody at ``k_min``), the changes of one
game add up to zero, because ``S_ij + S_ji = 1`` and ``E_ij + E_ji = 1``.

Everything here is a pure function over frozen dataclasses.  :func:`update` is the only place
where ratings change; live rating (:func:`rate_game`) and replaying the whole history
(:func:`recompute`) both go through it, so they cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = [
    "DEFAULT_PARAMS",
    "MAX_SEATS",
    "MIN_SEATS",
    "EloParams",
    "Rating",
    "RatingChange",
    "Recomputation",
    "band",
    "deviation",
    "expected_score",
    "k_factor",
    "pair_score",
    "provisional",
    "rate_game",
    "recompute",
    "update",
]

#: Grass is played by 2 to 6 players.
MIN_SEATS = 2
MAX_SEATS = 6

PlayerId = TypeVar("PlayerId", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Rating:
    """One player's rating: the Elo number ``mu`` and how many rated games produced it.

    ``games`` is all the state the K-factor and the uncertainty band need, so a rating is fully
    described by these two numbers and can be stored as two database columns.
    """

    mu: float
    games: int = 0

    def __post_init__(self) -> None:
        if not math.isfinite(self.mu):
            raise ValueError(f"rating must be a finite number, got {self.mu!r}")
        if isinstance(self.games, bool) or not isinstance(self.games, int) or self.games < 0:
            raise ValueError(f"games must be a non-negative integer, got {self.games!r}")


@dataclass(frozen=True, slots=True)
class EloParams:
    """The constants of the rating.  The defaults are tuned with :mod:`bench.simulate`.

    Tuning (50 bots, 2,000 games of 4 or of 2-6 seats, Plackett-Luce finishing orders, 20 seeds
    apart from the reported ones) showed that what matters is the product ``k0 * k_games``, the
    ``c`` in ``K ~ c / games`` once a bot is established: about 800-1,000 ranks as well as TrueSkill
    or slightly better, 400 or 2,400 clearly worse, and a fixed K (classic Elo) worse still, because
    it keeps reacting to the luck of the last few games.  Within that, a smaller ``k0`` keeps the
    first games' swings readable (+100 for winning a first head-to-head) at no cost in ranking.

    ``sigma0`` is calibrated on the same simulation: with 150, ``mu +/- 2 * deviation`` covered the
    true skill for about 95% of bots from 8 to 160 games each.  It is the error of a rating that has
    no games behind it, so it should be about the spread of skills on the ladder (the simulation's
    is 174 Elo points); if the real ladder's spread is much wider, so should ``sigma0`` be.
    """

    #: Rating of a bot that has not played yet.
    initial: float = 1500.0
    #: Points of rating difference that mean 10:1 odds in a head-to-head.
    scale: float = 400.0
    #: K-factor of a bot's first game.
    k0: float = 200.0
    #: K never falls below this, so a rating can still follow a bot whose strength changes.
    k_min: float = 4.0
    #: After ``k_games`` games K has halved; it keeps falling like ``1 / games`` after that.
    k_games: float = 5.0
    #: Deviation (Elo points) of the belief about a bot that has not played.
    sigma0: float = 150.0

    def __post_init__(self) -> None:
        for name in ("initial", "scale", "k0", "k_min", "k_games", "sigma0"):
            value = getattr(self, name)
            if not math.isfinite(value):
                raise ValueError(f"EloParams.{name} must be finite, got {value!r}")
        if self.scale <= 0:
            raise ValueError(f"EloParams.scale must be positive, got {self.scale!r}")
        if self.k0 <= 0:
            raise ValueError(f"EloParams.k0 must be positive, got {self.k0!r}")
        if not 0 <= self.k_min <= self.k0:
            raise ValueError(f"EloParams.k_min must be in [0, k0], got {self.k_min!r}")
        if self.k_games <= 0:
            raise ValueError(f"EloParams.k_games must be positive, got {self.k_games!r}")
        if self.sigma0 <= 0:
            raise ValueError(f"EloParams.sigma0 must be positive, got {self.sigma0!r}")

    def new_rating(self) -> Rating:
        """The rating of a bot that has not played yet."""
        return Rating(self.initial, 0)

    def k_factor(self, games: int) -> float:
        """``max(k_min, k0 / (1 + games / k_games))``: the K for a player's next game."""
        return max(self.k_min, self.k0 / (1.0 + games / self.k_games))

    def deviation(self, games: int) -> float:
        """``sigma0 * sqrt(K(games) / k0)``: K read as a Kalman gain, proportional to variance."""
        return self.sigma0 * math.sqrt(self.k_factor(games) / self.k0)


DEFAULT_PARAMS = EloParams()


def k_factor(rating: Rating, params: EloParams = DEFAULT_PARAMS) -> float:
    """The K-factor that ``rating``'s next game will use (see :meth:`EloParams.k_factor`)."""
    return params.k_factor(rating.games)


def deviation(rating: Rating, params: EloParams = DEFAULT_PARAMS) -> float:
    """One standard deviation of ``rating``, in Elo points (see :meth:`EloParams.deviation`)."""
    return params.deviation(rating.games)


def band(rating: Rating, params: EloParams = DEFAULT_PARAMS, z: float = 2.0) -> tuple[float, float]:
    """``(mu - z * deviation, mu + z * deviation)``: what the leaderboard shows as "how sure".

    ``z = 2`` is about a 95% band for a Gaussian belief.
    """
    if not z >= 0:
        raise ValueError(f"z must be non-negative, got {z!r}")
    half_width = z * deviation(rating, params)
    return (rating.mu - half_width, rating.mu + half_width)


def provisional(games: int, version_games: int | None = None, *, threshold: int) -> bool:
    """Whether a rating is provisional: fewer than ``threshold`` rated ``games`` behind it, or
    fewer than ``threshold`` played by the bot's newest version (``version_games``; None when it
    was not read, and then only ``games`` decides).

    ``version_games`` need not be counted past ``threshold``: any count from it on is settled.
    """
    if threshold < 0:
        raise ValueError(f"threshold must be non-negative, got {threshold!r}")
    return games < threshold or (version_games is not None and version_games < threshold)


def expected_score(mu: float, opponent_mu: float, scale: float = 400.0) -> float:
    """Expected head-to-head score of a player rated ``mu`` against one rated ``opponent_mu``."""
    return 1.0 / (1.0 + math.pow(10.0, (opponent_mu - mu) / scale))


def pair_score(place: int, opponent_place: int) -> float:
    """Actual head-to-head score from two places: 1 ahead, 0.5 tied, 0 behind (1 is first)."""
    if place < opponent_place:
        return 1.0
    if place > opponent_place:
        return 0.0
    return 0.5


def _check_places(n_players: int, places: Sequence[int]) -> None:
    """Reject malformed games with messages that say what to fix."""
    if len(places) != n_players:
        raise ValueError(
            f"places must have one entry per player: got {len(places)} places "
            f"for {n_players} players"
        )
    if not MIN_SEATS <= n_players <= MAX_SEATS:
        raise ValueError(f"a rated game needs {MIN_SEATS} to {MAX_SEATS} players, got {n_players}")
    for index, place in enumerate(places):
        if isinstance(place, bool) or not isinstance(place, int):
            raise ValueError(f"place #{index} must be an integer, got {place!r}")
        if not 1 <= place <= n_players:
            raise ValueError(
                f"place #{index} must be between 1 and {n_players} (1 is first), got {place}"
            )


def update(
    ratings: Sequence[Rating], places: Sequence[int], params: EloParams = DEFAULT_PARAMS
) -> list[Rating]:
    """Rate one game: the players' ratings after it, in the same order as ``ratings``.

    ``places[i]`` is where player ``i`` finished, 1 being first.  Players who tie share a place;
    only the order of places matters, so ``[1, 2, 2, 4]`` and ``[1, 2, 2, 3]`` rate the same.
    Every rating is updated from the ratings *before* the game, so seat order does not matter.

    Raises ``ValueError`` if the game has fewer than 2 or more than 6 players, or if ``places`` does
    not give each player a place between 1 and the number of players.
    """
    n = len(ratings)
    _check_places(n, places)
    after: list[Rating] = []
    for i, (rating, place) in enumerate(zip(ratings, places, strict=True)):
        surprise = sum(
            pair_score(place, places[j]) - expected_score(rating.mu, ratings[j].mu, params.scale)
            for j in range(n)
            if j != i
        )
        delta = params.k_factor(rating.games) / (n - 1) * surprise
        after.append(Rating(rating.mu + delta, rating.games + 1))
    return after


@dataclass(frozen=True, slots=True)
class RatingChange(Generic[PlayerId]):
    """What one game did to one player's rating: for the game page and the rating-history chart."""

    player: PlayerId
    place: int
    before: Rating
    after: Rating

    @property
    def delta(self) -> float:
        """Points gained (positive) or lost (negative) in this game."""
        return self.after.mu - self.before.mu


def rate_game(
    table: Mapping[PlayerId, Rating],
    results: Sequence[tuple[PlayerId, int]],
    params: EloParams = DEFAULT_PARAMS,
) -> list[RatingChange[PlayerId]]:
    """Rate one finished game against the current ratings ``table``; the live entry point.

    ``results`` lists ``(player_id, place)`` for each seat.  Players missing from ``table`` start at
    ``params.initial``.  ``table`` is not modified: store each change's ``after``.
    """
    players = [player for player, _ in results]
    if len(set(players)) != len(players):
        raise ValueError(f"a player cannot hold two seats in one game: {players!r}")
    before = [table.get(player, params.new_rating()) for player in players]
    after = update(before, [place for _, place in results], params)
    return [
        RatingChange(player, place, old, new)
        for (player, place), old, new in zip(results, before, after, strict=True)
    ]


@dataclass(frozen=True, slots=True)
class Recomputation(Generic[PlayerId]):
    """The result of replaying a whole history: final table and each game's rating changes."""

    ratings: dict[PlayerId, Rating] = field(default_factory=dict)
    games: list[list[RatingChange[PlayerId]]] = field(default_factory=list)


def recompute(
    history: Iterable[Sequence[tuple[PlayerId, int]]], params: EloParams = DEFAULT_PARAMS
) -> Recomputation[PlayerId]:
    """Replay ``history`` (games in play order, each a list of ``(player_id, place)``) from scratch.

    Everybody starts at ``params.initial`` with no games; each game goes through :func:`rate_game`
    and so through :func:`update`, exactly as when it was rated live.  Lets the ladder rebuild the
    table after a change of parameters or a voided match, and chart each bot's rating history.
    """
    table: dict[PlayerId, Rating] = {}
    games: list[list[RatingChange[PlayerId]]] = []
    for number, results in enumerate(history):
        try:
            changes = rate_game(table, results, params)
        except ValueError as error:
            raise ValueError(f"game #{number} of the history: {error}") from error
        for change in changes:
            table[change.player] = change.after
        games.append(changes)
    return Recomputation(table, games)
