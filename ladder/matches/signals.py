"""Signals of matches: how other apps hear of a match, without matches importing them.

`match_recorded` is sent inside the transaction that records a finished match, so that what
depends on the result is written with it or not at all: the ratings app rates it there
(`ladder.ratings.receivers`). A receiver that raises rolls the recording back.

`match_settled` is sent once the transaction that settled a match has committed: the match
finished (with its log and results) or failed for good (no attempts left). Tournaments listen to
move their rounds on, notifications to tell owners; a match that will be retried is not settled.
"""

from __future__ import annotations

from django.dispatch import Signal

match_settled = Signal()
"""Sent with `match_id` and `status` ("finished" or "failed")."""

match_recorded = Signal()
"""Sent with `match` (finished, its seats saved) inside the recording transaction."""
