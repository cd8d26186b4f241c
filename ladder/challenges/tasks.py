"""Celery tasks of challenges: thin, they call one service.

`dispatch_challenges` runs when a challenge is asked for, when a challenge's match settles
(`receivers`), and every 10 s on beat (CELERY_BEAT_SCHEDULE), the safety net.
"""

from __future__ import annotations

from ladder.celery import app
from ladder.challenges.services import challenge_dispatch


@app.task
def dispatch_challenges() -> None:
    challenge_dispatch()
