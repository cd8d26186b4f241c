"""Debug lines per decision on the ladder: stored with the match (a file beside its log, only
when a bot wrote something), read by each seat's bot owner (and staff) only, or by everyone
once the owner makes them public; another user and an anonymous visitor see none, in the API
and on the page."""

from __future__ import annotations

import gzip
import hashlib
import json
from typing import Any

import pytest
from django.core.files.base import ContentFile

from bots.runner.results import DebugEntry, SeatReport
from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import bot_create, bot_version_upload
from ladder.matches.debug import debug_pack, debug_unpack
from ladder.matches.decisions import decision_marks
from ladder.matches.models import Match
from ladder.matches.services import match_create, match_run

pytestmark = pytest.mark.django_db

CHATTY = b"""
from bots.sdk import Bot, Observation, debug, run


class Chatty(Bot):
    def choose(self, obs: Observation) -> str:
        debug("secret plan:", obs.phase, obs.legal[0])
        return obs.legal[0]


if __name__ == "__main__":
    run(Chatty())
"""


def uploaded(version: BotVersion, source: bytes) -> BotVersion:
    version.file.save("bot.py", ContentFile(source), save=False)
    version.sha256, version.size = hashlib.sha256(source).hexdigest(), len(source)
    version.save()
    return version


@pytest.fixture
def played(valid_version: Any, stranger: Any, settings: Any, example_file: Any) -> Match:
    """A played match: ann's chatty bot in seat 0, bo's quiet one (the random example) in
    seat 1 (the plain runner: this is about what is stored and who reads it)."""
    settings.GRASS_SANDBOXED = False
    chatty = uploaded(valid_version("chatty"), CHATTY)
    bot = bot_create(owner=stranger, name="quiet")
    quiet = bot_version_upload(bot=bot, filename="bot.py", data=example_file("random"))
    BotVersion.objects.filter(pk=quiet.pk).update(status=BotVersion.Status.VALID)
    match = match_create(versions=[chatty, quiet], limits={"max_hands": 1}, shuffle=False, seed=3)
    match_run(match_id=match.pk)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED, match.failure_reason
    return match


def lines_for(api: Any, persona: str, match: Match) -> list[dict[str, Any]]:
    answer = api(persona).get(f"/api/matches/{match.pk}/debug/")
    assert answer.status_code == 200, answer.content
    assert answer["Cache-Control"] == "private, no-store"
    seats: list[dict[str, Any]] = answer.json()["seats"]
    return seats


def test_a_played_match_stores_its_bots_lines_by_decision_beside_the_log(played: Match) -> None:
    assert played.debug.name.startswith("debug/") and played.debug.name.endswith(".json.gz")
    with played.debug.open("rb") as handle:
        stored = debug_unpack(handle.read())
    assert list(stored) == [0]  # the quiet seat wrote nothing: nothing stored for it
    lines = stored[0].lines
    assert lines and all(line.text.startswith("secret plan: ") for line in lines)
    # Never in the log, which everyone may download.
    with played.log.open("rb") as handle:
        assert b"secret plan" not in gzip.decompress(handle.read())


def test_a_quiet_match_stores_no_file(valid_version: Any, settings: Any) -> None:
    settings.GRASS_SANDBOXED = False
    match = match_create(versions=[valid_version("a"), valid_version("b")], limits={"max_hands": 1})
    match_run(match_id=match.pk)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and not match.debug


def test_only_the_owner_reads_a_seats_lines_in_the_api(
    api: Any, played: Match, django_user_model: Any
) -> None:
    mine = lines_for(api, "owner", played)
    assert [seat["seat"] for seat in mine] == [0]
    seat = mine[0]
    assert seat["display_name"] == "ann/chatty" and seat["public"] is False
    assert seat["cut_bytes"] == seat["cut_entries"] == 0
    events = [e for e in _events(played) if e["e"] != "note"]
    for line in seat["lines"]:
        assert line["text"].startswith("secret plan: ")
        event = events[line["event"]]
        assert event["e"] == "act" and event["seat"] == 0
        assert line["text"] == f"secret plan: {event['phase']} {event['action']}\n"
    assert lines_for(api, "stranger", played) == []
    assert lines_for(api, "anonymous", played) == []
    # The match's own answer says whether there is something to read, per reader.
    detail = {p: api(p).get(f"/api/matches/{played.pk}/").json() for p in ("owner", "stranger")}
    assert detail["owner"]["debug_lines"] is True
    # bo owns the other seat, which kept nothing: the file exists, his seat is readable.
    assert detail["stranger"]["debug_lines"] is True
    assert api("anonymous").get(f"/api/matches/{played.pk}/").json()["debug_lines"] is False
    staff = django_user_model.objects.create_user(username="staff", password="pw", is_staff=True)
    client = api("anonymous")
    client.force_authenticate(staff)
    assert [s["seat"] for s in client.get(f"/api/matches/{played.pk}/debug/").json()["seats"]] == [
        0
    ]


def _events(match: Match) -> list[dict[str, Any]]:
    with match.log.open("rb") as handle:
        return [json.loads(line) for line in gzip.decompress(handle.read()).splitlines()]


def test_public_lines_are_everyones_once_the_owner_says_so(api: Any, played: Match) -> None:
    bot = Bot.objects.get(name="chatty")
    refused = api("stranger").patch(f"/api/bots/{bot.pk}/", {"debug_public": True}, format="json")
    assert refused.status_code == 403
    assert api("anonymous").patch(f"/api/bots/{bot.pk}/", {"debug_public": True}).status_code == 401
    assert lines_for(api, "anonymous", played) == []
    answer = api("owner").patch(f"/api/bots/{bot.pk}/", {"debug_public": True}, format="json")
    assert answer.status_code == 200 and answer.json()["debug_public"] is True
    seen = lines_for(api, "anonymous", played)
    assert [seat["seat"] for seat in seen] == [0] and seen[0]["public"] is True
    assert lines_for(api, "stranger", played)[0]["lines"] == seen[0]["lines"]
    api("owner").patch(f"/api/bots/{bot.pk}/", {"debug_public": False}, format="json")
    assert lines_for(api, "anonymous", played) == []


def test_unknown_and_unfinished_matches_are_404(api: Any, valid_version: Any) -> None:
    assert api("owner").get("/api/matches/999999/debug/").status_code == 404
    queued = match_create(versions=[valid_version("a"), valid_version("b")])
    assert api("owner").get(f"/api/matches/{queued.pk}/debug/").status_code == 404


def test_the_match_page_gives_the_viewer_the_lines_only_for_readers(
    client: Any, played: Match, owner: Any, stranger: Any
) -> None:
    url = f"/matches/{played.pk}/"
    assert b"data-debug=" not in client.get(url).content
    client.force_login(owner)
    assert f'data-debug="/api/matches/{played.pk}/debug/"'.encode() in client.get(url).content
    client.force_login(stranger)  # bo's seat is readable to him (it wrote nothing)
    assert b"data-debug=" in client.get(url).content


def test_the_bot_page_form_makes_the_lines_public_for_the_owner_only(
    client: Any, played: Match, owner: Any, stranger: Any
) -> None:
    bot = Bot.objects.get(name="chatty")
    url = f"/bots/{bot.pk}/debug/"
    client.force_login(stranger)
    assert client.post(url, {"debug_public": "on"}).status_code == 403
    assert b'action="/bots/' not in client.get(f"/bots/{bot.pk}/").content
    client.force_login(owner)
    page = client.get(f"/bots/{bot.pk}/").content.decode()
    assert f'action="{url}"' in page
    assert client.post(url, {"debug_public": "on"}).status_code == 302
    assert Bot.objects.get(pk=bot.pk).debug_public is True
    client.post(url, {})
    assert Bot.objects.get(pk=bot.pk).debug_public is False


def test_the_stored_file_is_compact_and_only_for_seats_that_wrote() -> None:
    quiet, talking = SeatReport("quiet"), SeatReport("talking")
    assert debug_pack([quiet, SeatReport("other")]) is None
    talking.debug.add(DebugEntry(at=5, request=1, data=b"x" * 1000 + b"\n"))
    packed = debug_pack([quiet, talking])
    assert packed is not None and len(packed) < 200  # gzip
    stored = debug_unpack(packed)
    assert list(stored) == [1] and stored[1].lines[0].at == 5


def test_decisions_leave_out_forced_moves_that_a_view_may_know_of() -> None:
    events: list[dict[str, Any]] = [
        {"e": "header"},
        {"e": "act", "seat": 0, "action": "end"},
        {"e": "note", "seat": 1, "kind": "timeout"},
        {"e": "act", "seat": 1, "action": "end", "auto": True},
        {"e": "draw", "seat": 1},
        {"e": "act", "seat": 1, "action": "decline"},
    ]
    # Every card face up: a forced move is no one's decision.
    assert decision_marks(events, None) == [[1, 0], [4, 1]]
    # Seat 1's own view: it knows its move was forced.
    assert decision_marks(events, 1) == [[1, 0], [4, 1]]
    # Seat 0's view: seat 1's forced move looks like any other (as its lines do).
    assert decision_marks(events, 0) == [[1, 0], [2, 1], [4, 1]]
