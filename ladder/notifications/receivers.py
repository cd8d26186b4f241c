"""What notifications do when a match settles or a tournament starts or finishes: build each
owner's events and record them (`services.notify`).

Receivers run in the worker that settled the match, after its commit. A failure here is
logged and swallowed: a notification must never break the ladder (nor keep the tournaments'
receiver of the same signal from running).
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.db.models import Max

from ladder.bots.models import Bot
from ladder.matches.models import Match
from ladder.matches.selectors import match_detail
from ladder.notifications.events import Event, milestone_reached
from ladder.notifications.payloads import (
    bot_crashed_payload,
    bot_disabled_payload,
    match_finished_payload,
    rating_milestone_payload,
    tournament_payload,
)
from ladder.notifications.services import notify
from ladder.ratings.models import RatingChange
from ladder.tournaments.models import Tournament
from ladder.tournaments.selectors import tournament_detail

logger = logging.getLogger(__name__)


def on_match_settled(sender: Any, match_id: int, status: str, **_: Any) -> None:
    if status != Match.Status.FINISHED:
        return
    try:
        with transaction.atomic():
            match_events(match_id=match_id)
    except Exception:
        logger.exception("notifications of match %s failed", match_id)


def match_events(*, match_id: int) -> None:
    """Every owner's events of a finished match: `match.finished` per seat, `bot.crashed` per
    forfeit, `rating.milestone` per bot whose rating reached a new hundred."""
    detail = match_detail(match_id=match_id)
    match = detail.match
    for row in detail.seats:
        seat, change = row.seat, row.rating_change
        if seat.bot_version is None:
            continue  # a person's seat: people get no webhook of their own games
        owner = seat.bot_version.bot.owner
        payload = match_finished_payload(
            match=match, seat=seat, seats=len(detail.seats), change=change
        )
        notify(event=Event.MATCH_FINISHED, owner=owner, payload=payload)
        if seat.forfeited:
            notify(
                event=Event.BOT_CRASHED,
                owner=owner,
                payload=bot_crashed_payload(match=match, seat=seat),
            )
        if change is not None:
            milestone = milestone_reached(peak_before=_peak_before(change), after=change.after)
            if milestone is not None:
                notify(
                    event=Event.RATING_MILESTONE,
                    owner=owner,
                    payload=rating_milestone_payload(
                        match=match, change=change, milestone=milestone
                    ),
                )


def _peak_before(change: RatingChange) -> float:
    """The best rating the bot had in this ruleset before `change`: kept on the change by
    `rating_apply` (`peak_before`). A change written before it was kept falls back on the
    bot's earlier changes (ids follow the order ratings were applied in)."""
    if change.peak_before is not None:
        return change.peak_before
    earlier: dict[str, float | None] = RatingChange.objects.filter(
        bot_id=change.bot_id, ruleset=change.ruleset, id__lt=change.pk
    ).aggregate(after=Max("after"), before=Max("before"))
    return max([change.before, *(value for value in earlier.values() if value is not None)])


TOURNAMENT_EVENTS: dict[str, Event] = {
    Tournament.Status.RUNNING: Event.TOURNAMENT_STARTING,
    Tournament.Status.FINISHED: Event.TOURNAMENT_FINISHED,
}


def on_bot_disabled(sender: Any, bot_id: int, reason: str, **_: Any) -> None:
    try:
        with transaction.atomic():
            bot = Bot.objects.select_related("owner").get(pk=bot_id)
            notify(
                event=Event.BOT_DISABLED,
                owner=bot.owner,
                payload=bot_disabled_payload(bot=bot, reason=reason),
            )
    except Exception:
        logger.exception("notifications of disabled bot %s failed", bot_id)


def on_tournament_status_changed(sender: Any, tournament_id: int, status: str, **_: Any) -> None:
    event = TOURNAMENT_EVENTS.get(status)
    if event is None:
        return
    try:
        with transaction.atomic():
            tournament_events(tournament_id=tournament_id, event=event)
    except Exception:
        logger.exception("notifications of tournament %s failed", tournament_id)


def tournament_events(*, tournament_id: int, event: Event) -> None:
    """`event` for every owner of a bot still entered (not withdrawn), listing their bots;
    once finished, with each bot's rank and points."""
    tournament = Tournament.objects.get(pk=tournament_id)
    entries = list(
        tournament.entries.filter(withdrawn__isnull=True)
        .select_related("bot__owner")
        .order_by("id")
    )
    ranks: dict[int, tuple[int, float]] = {}
    if event is Event.TOURNAMENT_FINISHED:
        for standing in tournament_detail(tournament=tournament).standings:
            ranks[standing.entry.pk] = (standing.rank, standing.points)
    by_owner: dict[int, tuple[Any, list[dict[str, Any]]]] = {}
    for entry in entries:
        bot = {"id": entry.bot_id, "name": entry.bot.name}
        if entry.pk in ranks:
            bot["rank"], bot["points"] = ranks[entry.pk]
        by_owner.setdefault(entry.bot.owner_id, (entry.bot.owner, []))[1].append(bot)
    for owner, bots in by_owner.values():
        notify(
            event=event, owner=owner, payload=tournament_payload(tournament=tournament, bots=bots)
        )
