"""GET /api/matches/ (filters), /api/matches/{id}/ and /api/matches/{id}/log/."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engine.log import read_log, replay
from ladder.matches.models import Match, MatchSeat
from ladder.matches.services import match_create, match_run
from ladder.ratings.services import rating_apply

pytestmark = pytest.mark.django_db


def ids(response: Any) -> list[int]:
    assert response.status_code == 200, response.json()
    return [match["id"] for match in response.json()["results"]]


def test_the_list_filters_by_bot_ruleset_status_and_time(
    api: Any, valid_version: Any, finished_match: Any
) -> None:
    a, b, c = valid_version("a"), valid_version("b"), valid_version("c")
    ab = finished_match([a, b], [1, 2])
    bc = finished_match([b, c], [2, 1], ruleset="classic")
    queued = match_create(versions=[a, c])
    Match.objects.filter(pk=ab.pk).update(created=datetime(2025, 1, 1, tzinfo=UTC))
    Match.objects.filter(pk=bc.pk).update(created=datetime(2025, 2, 1, tzinfo=UTC))
    Match.objects.filter(pk=queued.pk).update(created=datetime(2025, 3, 1, tzinfo=UTC))
    client = api("anonymous")

    assert ids(client.get("/api/matches/")) == [queued.pk, bc.pk, ab.pk]
    assert ids(client.get("/api/matches/", {"bot": a.bot_id})) == [queued.pk, ab.pk]
    assert ids(client.get("/api/matches/", {"ruleset": "classic"})) == [bc.pk]
    assert ids(client.get("/api/matches/", {"status": "queued"})) == [queued.pk]
    assert ids(client.get("/api/matches/", {"after": "2025-02-01T00:00:00Z"})) == [
        queued.pk,
        bc.pk,
    ]
    assert ids(client.get("/api/matches/", {"before": "2025-02-01T00:00:00Z"})) == [ab.pk]
    assert ids(client.get("/api/matches/", {"bot": b.bot_id, "status": "finished"})) == [
        bc.pk,
        ab.pk,
    ]
    [row] = client.get("/api/matches/", {"ruleset": "classic"}).json()["results"]
    assert [(s["seat"], s["bot"], s["place"]) for s in row["seats"]] == [(0, "b", 2), (1, "c", 1)]


def test_a_bad_filter_value_is_a_bad_request(api: Any) -> None:
    response = api("anonymous").get("/api/matches/", {"status": "lost", "after": "soon"})

    assert response.status_code == 400
    assert set(response.json()) == {"status", "after"}


def test_the_detail_has_seats_and_rating_changes(
    api: Any, valid_version: Any, finished_match: Any
) -> None:
    a, b = valid_version("a"), valid_version("b")
    match = finished_match([a, b], [2, 1])
    MatchSeat.objects.filter(match=match, seat=0).update(
        total=-5,
        forfeited=True,
        forfeit_reason="3 strikes",
        think_ms=12.5,
        strikes=3,
        faults={"timeout": 3},
    )
    rating_apply(match=match)

    response = api("anonymous").get(f"/api/matches/{match.pk}/")

    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["ruleset"]) == ("finished", "modern")
    first, second = body["seats"]
    assert (first["seat"], first["bot"], first["owner"], first["version"]) == (0, "a", "ann", 1)
    assert (first["place"], first["total"], first["forfeited"]) == (2, -5, True)
    assert (first["think_ms"], first["strikes"], first["faults"]) == (12.5, 3, {"timeout": 3})
    assert first["rating_change"]["delta"] < 0 < second["rating_change"]["delta"]
    assert first["rating_change"]["before"] == 1500.0


def test_an_unrated_match_has_no_rating_changes_and_a_missing_one_is_404(
    api: Any, valid_version: Any
) -> None:
    match = match_create(versions=[valid_version("a"), valid_version("b")])

    body = api("anonymous").get(f"/api/matches/{match.pk}/").json()

    assert body["status"] == "queued"
    assert [seat["rating_change"] for seat in body["seats"]] == [None, None]
    assert api("anonymous").get(f"/api/matches/{match.pk + 1}/").status_code == 404


def test_anyone_downloads_a_finished_matchs_log_and_it_replays(
    api: Any, valid_version: Any, sandbox_ready: None, tmp_path: Path
) -> None:
    match = match_create(
        versions=[valid_version("gus", "greedy"), valid_version("ran")], limits={"max_hands": 1}
    )
    assert api("anonymous").get(f"/api/matches/{match.pk}/log/").status_code == 404
    match = match_run(match_id=match.pk)
    assert match.status == Match.Status.FINISHED

    response = api("anonymous").get(f"/api/matches/{match.pk}/log/")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/gzip"
    disposition = f'attachment; filename="match-{match.pk}.jsonl.gz"'
    assert response["Content-Disposition"] == disposition
    packed = b"".join(response.streaming_content)
    text = gzip.decompress(packed)
    game = replay(read_log(io.BytesIO(text)))
    assert game.result == match.result

    # The author's own tool accepts the downloaded file as it is, and refuses an edited copy.
    downloaded = tmp_path / f"match-{match.pk}.jsonl.gz"
    downloaded.write_bytes(packed)
    verify = subprocess.run(
        [sys.executable, "-m", "bots.cli", "verify", str(downloaded)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verify.returncode == 0, verify.stderr
    assert f"OK, {len(game.events)} lines" in verify.stdout
    lines = text.decode().splitlines()
    last = json.loads(lines[-1])
    assert last["e"] == "result", last
    last["totals"][0] += 1000
    lines[-1] = json.dumps(last)
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    refused = subprocess.run(
        [sys.executable, "-m", "bots.cli", "verify", str(edited)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode == 1 and "REJECTED" in refused.stderr


def test_no_log_for_a_match_without_one(api: Any, valid_version: Any, finished_match: Any) -> None:
    match = finished_match([valid_version("a"), valid_version("b")], [1, 2])

    assert api("anonymous").get(f"/api/matches/{match.pk}/log/").status_code == 404
    assert api("anonymous").get("/api/matches/12345/log/").status_code == 404
