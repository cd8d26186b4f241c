"""Signals of bots: how other apps (notifications) hear that a bot was taken off the ladder."""

from __future__ import annotations

from django.dispatch import Signal

bot_disabled = Signal()
"""Sent with `bot_id` and `reason` after the transaction that disabled the bot commits."""

bot_version_validated = Signal()
"""Sent with `bot_id` inside the transaction that marks one of the bot's versions valid: the
bot may play. The ratings app gives it its rows in the matchmaker's pool there, so a bot is
never valid without them."""
