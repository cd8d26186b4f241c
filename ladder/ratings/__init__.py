"""Ratings of the ladder: multiplayer Elo with an uncertainty band.

The maths imports no Django: :mod:`ladder.ratings.elo` is plain functions over frozen
dataclasses, and :mod:`bench.simulate` (``python -m bench.simulate``) measures
how well they rank bots against OpenSkill and TrueSkill on simulated games. Beside them, the
Django app stores them (``models``, ``services.rating_apply``, ``selectors.leaderboard``); this
``__init__`` imports only the maths, so it loads without Django.
"""

from ladder.ratings.elo import (
    DEFAULT_PARAMS,
    MAX_SEATS,
    MIN_SEATS,
    EloParams,
    Rating,
    RatingChange,
    Recomputation,
    band,
    deviation,
    expected_score,
    k_factor,
    pair_score,
    rate_game,
    recompute,
    update,
)

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
    "rate_game",
    "recompute",
    "update",
]
