"""Signals of matches: how other apps hear of a match, without matches importing them.

`match_settled` is sent once the transaction that settled a match has committed: the match
finished (with its log and results) or failed for good (no attempts left). Tournaments listen to
move their rounds on, notifications to tell owners; a match that will be retried is not settled.
"""

from __future__ import annotations

from django.dispatch import Signal

match_settled = Signal()
"""Sent with `match_id` and `status` ("finished" or "failed")."""
