"""Signals of bots: how other apps (notifications) hear that a bot was taken off the ladder."""

from __future__ import annotations

from django.dispatch import Signal

bot_disabled = Signal()
"""Sent with `bot_id` and `reason` after the transaction that disabled the bot commits."""
