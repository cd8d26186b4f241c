"""What the broker holds for matches: the ids of the matches whose `run_match` message waits in
the matches queue.

The sweep sends a queued match again only when its message is gone (`recovery.
match_resend_lost`); a match that merely waits its turn behind running ones must not be sent
twice a minute, or the queue would grow with copies. Celery has no call that lists a queue's
messages, so this reads Redis, where kombu keeps each queue as a list of JSON messages (one
list per priority step: `matches`, and `matches\\x06\\x163`... when priorities are used). The
list is short, since the matchmaker keeps queued matches to about two per worker process; a
queue longer than LIMIT is not read (the caller then falls back to time alone).

A message a worker has taken is no longer in the list (kombu moves it to its `unacked` hash
until the task ends): its match is then claimed within moments, or the worker died with it,
and either way sending it again is right (the claim lets one run play it).
"""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

from django.conf import settings

logger = logging.getLogger(__name__)

LIMIT = 10_000
"""Messages read at most from one list; past this the queue is not read at all."""
RUN_MATCH = "ladder.matches.tasks.run_match"


def match_queue() -> str:
    """The queue `run_match` is routed to (CELERY_TASK_ROUTES)."""
    return str(settings.CELERY_TASK_ROUTES[RUN_MATCH]["queue"])


def match_queues() -> list[str]:
    """Every queue a match's message may wait in: the matches queue, and the others beside the
    quick work's (authors' challenges are sent to one of their own)."""
    names = {str(queue.name) for queue in settings.CELERY_TASK_QUEUES}
    others = names - {settings.CELERY_TASK_DEFAULT_QUEUE, match_queue()}
    return [match_queue(), *sorted(others, key=lambda name: (name != "challenges", name))]


def matches_waiting() -> set[int] | None:
    """The ids of the matches whose message waits in a match queue, or None when the broker
    cannot tell (not Redis, unreachable, or a queue longer than LIMIT)."""
    from ladder.celery import app

    raw: list[bytes] = []
    try:
        with app.connection_for_read() as connection:
            if connection.transport.driver_type != "redis":
                return None
            channel: Any = connection.default_channel
            keys = {
                channel._q_for_pri(queue, step)
                for queue in match_queues()
                for step in channel.priority_steps
            }
            for key in sorted(keys):
                if channel.client.llen(key) > LIMIT:
                    logger.warning("more than %d messages in %s: not read", LIMIT, key)
                    return None
                raw += channel.client.lrange(key, 0, LIMIT - 1)
    except Exception as exc:  # the broker down: nothing can be said
        logger.warning("could not read the matches queue in the broker: %s", exc)
        return None
    return {match_id for item in raw if (match_id := message_match_id(item)) is not None}


def message_match_id(raw: bytes | str) -> int | None:
    """The match id a raw kombu Redis message of `run_match` carries (None for anything else:
    another task, a message that does not parse)."""
    try:
        message = json.loads(raw)
        if message["headers"]["task"] != RUN_MATCH:
            return None
        body = message["body"]
        if message.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args = json.loads(body)[0]
        return int(args[0])
    except (ValueError, KeyError, IndexError, TypeError):
        return None
