"""What each event says: plain JSON-ready dicts built from the ladder's rows.

Payloads name things by id and name and link to the site's pages (GRASS_SITE_URL), so a
receiver can act without calling the API back. Field names are part of the webhook contract
(WEBHOOKS.md): add fields freely, never rename or remove one.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse

from ladder.bots.models import Bot
from ladder.matches.models import Match, MatchSeat
from ladder.ratings.models import RatingChange
from ladder.tournaments.models import Tournament


def site_url(name: str, **kwargs: Any) -> str:
    """The absolute URL of one of the site's pages (`site_url("match-page", match_id=3)`)."""
    return settings.GRASS_SITE_URL.rstrip("/") + reverse(name, kwargs=kwargs)


def _bot(bot: Bot) -> dict[str, Any]:
    return {"id": bot.pk, "name": bot.name, "url": site_url("bot-page", bot_id=bot.pk)}


def _match(match: Match) -> dict[str, Any]:
    return {
        "id": match.pk,
        "ruleset": match.ruleset,
        "rated": match.rated,
        "url": site_url("match-page", match_id=match.pk),
    }


def _rating(change: RatingChange | None) -> dict[str, Any] | None:
    if change is None:
        return None
    return {
        "ruleset": change.ruleset,
        "before": round(change.before, 1),
        "after": round(change.after, 1),
        "delta": round(change.delta, 1),
    }


def match_finished_payload(
    *, match: Match, seat: MatchSeat, seats: int, change: RatingChange | None
) -> dict[str, Any]:
    """`match.finished` for the owner of `seat`'s bot; `change` is its rating change (None in
    an unrated game)."""
    return {
        "match": _match(match),
        "bot": _bot(seat.version.bot),
        "version": seat.version.number,
        "seat": seat.seat,
        "place": seat.place,
        "seats": seats,
        "total": seat.total,
        "forfeited": seat.forfeited,
        "rating": _rating(change),
    }


def bot_crashed_payload(*, match: Match, seat: MatchSeat) -> dict[str, Any]:
    """`bot.crashed`: the seat forfeited; `reason` is the runner's words (`crashed: exit code
    1`, `3 strikes (last: timeout: ...)`), `faults` the counts by kind."""
    return {
        "match": _match(match),
        "bot": _bot(seat.version.bot),
        "version": seat.version.number,
        "reason": seat.forfeit_reason,
        "faults": seat.faults,
    }


def bot_disabled_payload(*, bot: Bot, reason: str) -> dict[str, Any]:
    """`bot.disabled`: the bot forfeited too many ladder games in a row and is off the ladder
    until a new version passes validation (`ladder.matches.recording.bot_disable_if_failing`)."""
    return {"bot": _bot(bot), "reason": reason}


def rating_milestone_payload(
    *, match: Match, change: RatingChange, milestone: int
) -> dict[str, Any]:
    """`rating.milestone`: the bot's rating reached `milestone` for the first time."""
    return {
        "bot": _bot(change.bot),
        "ruleset": change.ruleset,
        "milestone": milestone,
        "rating": round(change.after, 1),
        "match": _match(match),
    }


def tournament_payload(*, tournament: Tournament, bots: list[dict[str, Any]]) -> dict[str, Any]:
    """`tournament.starting` and `tournament.finished`: the event and the recipient's bots in
    it (each with `rank` and `points` once it has finished)."""
    return {
        "tournament": {
            "id": tournament.pk,
            "name": tournament.name,
            "format": tournament.format,
            "ruleset": tournament.ruleset,
            "status": tournament.status,
            "started": tournament.started.isoformat() if tournament.started else None,
            "finished": tournament.finished.isoformat() if tournament.finished else None,
            "url": site_url("tournament-page", tournament_id=tournament.pk),
        },
        "bots": bots,
    }


def ping_payload() -> dict[str, Any]:
    return {"message": "A test delivery from the Grass ladder."}
