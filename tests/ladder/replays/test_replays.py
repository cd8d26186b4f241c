"""The replay viewer's endpoints: a finished match's frames, an uploaded log's frames, the
pages that embed the viewer; what a seat's view leaves out; tampered and oversized logs."""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
import threading
import time
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.files.base import ContentFile
from django.test import Client

from engine import new_game
from engine.log import dumps
from engine.replay_frames import undelta
from engine.rules import TARGETS, Variants
from ladder.matches.models import Match
from ladder.replays import selectors
from ladder.replays.selectors import LINE_LIMIT, UPLOAD_LIMIT

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache() -> Any:
    """Every test starts with no cached replays and no upload counted."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The views the engine computed a document for, in order (the real computation runs)."""
    calls: list[int | None] = []
    compute = selectors.document

    def counting(events: Any, seat: int | None = None) -> dict[str, Any]:
        calls.append(seat)
        return compute(events, seat)

    monkeypatch.setattr(selectors, "document", counting)
    return calls


EXTERNAL_URL = re.compile(r"https?://(?!testserver[/:\"']|localhost|127\.0\.0\.1)")


def game_log(names: list[str], seed: int = 8, hands: int = 1) -> str:
    """A random game's log as the runner writes it (JSON Lines)."""
    game = new_game("modern", names, seed, limits={"max_hands": hands})
    rng = random.Random(seed)
    while not game.over:
        game.apply(rng.choice(game.legal_actions()))
    return dumps(game.events)


def attach_log(match: Match, text: str) -> Match:
    """Store a log on a finished match as match_run does (gzip, sha256, result)."""
    data = gzip.compress(text.encode(), mtime=0)
    match.log.save(f"match-{match.pk}.jsonl.gz", ContentFile(data), save=False)
    match.log_sha256 = hashlib.sha256(data).hexdigest()
    match.result = json.loads(text.splitlines()[-1])
    match.save()
    return match


@pytest.fixture
def replayed(valid_version: Any, finished_match: Any) -> tuple[Match, str]:
    """A finished three-seat match with a real log, and that log's text."""
    versions = [valid_version("alpha"), valid_version("beta"), valid_version("gamma")]
    match = finished_match(versions, [1, 2, 3])
    text = game_log(["alpha", "beta", "gamma"])
    return attach_log(match, text), text


def frames_of(response: Any) -> list[dict[str, Any]]:
    return undelta(response.json()["frames"])


def test_a_finished_match_replays_with_every_card_revealed(
    client: Client, replayed: tuple[Match, str]
) -> None:
    match, text = replayed
    response = client.get(f"/matches/{match.pk}/replay.json")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    doc = response.json()
    assert doc["format"] == "grass-replay/1" and doc["view"] == "all"
    assert doc["game"]["players"] == ["alpha", "beta", "gamma"] and "seed" in doc["game"]
    assert doc["cards"]["panama"] == {"title": "Panama", "family": "peddle", "value": 50_000}
    assert doc["result"] == match.result
    frames = frames_of(response)
    assert len(frames) == len(text.splitlines())
    assert all(isinstance(s["hand"], list) for f in frames for s in f["seats"])
    assert frames[-1]["event"] == "result" and frames[-1]["totals"] == match.result["totals"]
    # A finished match's log never changes: the answer can be cached and revalidated.
    assert "max-age" in response["Cache-Control"]
    again = client.get(
        f"/matches/{match.pk}/replay.json", headers={"if-none-match": response["ETag"]}
    )
    assert again.status_code == 304
    other_view = client.get(
        f"/matches/{match.pk}/replay.json?view=1", headers={"if-none-match": response["ETag"]}
    )
    assert other_view.status_code == 200
    # Deltas of JSON squeeze well: a browser gets them gzipped, and can still revalidate.
    packed = client.get(f"/matches/{match.pk}/replay.json", headers={"accept-encoding": "gzip"})
    assert packed["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(packed.content)) == doc
    assert len(packed.content) * 5 < len(response.content)
    revalidated = client.get(
        f"/matches/{match.pk}/replay.json",
        headers={"accept-encoding": "gzip", "if-none-match": packed["ETag"]},
    )
    assert revalidated.status_code == 304


def test_a_seats_view_holds_only_what_that_seat_saw(
    client: Client, replayed: tuple[Match, str]
) -> None:
    match, text = replayed
    everything = frames_of(client.get(f"/matches/{match.pk}/replay.json?view=all"))
    response = client.get(f"/matches/{match.pk}/replay.json?view=1")
    assert response.status_code == 200
    body = response.content.decode()
    assert '"secret"' not in body and '"seed"' not in body
    doc = response.json()
    assert doc["view"] == 1
    frames = undelta(doc["frames"])
    assert len(frames) == len(everything)
    for mine, full in zip(frames, everything, strict=True):
        assert mine["seats"][1]["hand"] == full["seats"][1]["hand"]
        assert mine["seats"][0]["hand"] is None and mine["seats"][2]["hand"] is None
        assert [s["cards"] for s in mine["seats"]] == [s["cards"] for s in full["seats"]]
    # The others' deals and draws are words, not cards.
    log = [json.loads(line) for line in text.splitlines()]
    for event, frame in zip(log, frames, strict=True):
        if event["e"] == "dealt" and event["seat"] != 1:
            assert frame["lines"] == [f"{log[0]['players'][event['seat']]} is dealt a hand"]


def test_bad_views_and_unfinished_matches(
    client: Client, replayed: tuple[Match, str], valid_version: Any
) -> None:
    match, _ = replayed
    url = f"/matches/{match.pk}/replay.json"
    bad = client.get(url, {"view": "seven"})
    assert bad.status_code == 400 and "view must be 'all' or a seat number" in bad.json()["error"]
    assert client.get(url, {"view": "9"}).status_code == 400
    missing = client.get(url, {"view": "4"})
    assert missing.status_code == 400 and missing.json()["error"] == "no seat 4 in a 3-player game"
    assert client.get("/matches/999999/replay.json").status_code == 404
    queued = Match.objects.create(ruleset="modern")
    response = client.get(f"/matches/{queued.pk}/replay.json")
    assert response.status_code == 404 and "error" in response.json()
    no_log = Match.objects.create(ruleset="modern", status=Match.Status.FINISHED)
    assert client.get(f"/matches/{no_log.pk}/replay.json").status_code == 404
    assert client.post(url).status_code == 405


def test_a_stored_log_that_no_longer_replays_is_reported(
    client: Client, replayed: tuple[Match, str]
) -> None:
    match, text = replayed
    lines = text.splitlines()
    header = json.loads(lines[0])
    header["engine"] = "0.1.0"
    attach_log(match, "\n".join([json.dumps(header), *lines[1:]]) + "\n")
    response = client.get(f"/matches/{match.pk}/replay.json")
    assert response.status_code == 422
    assert response.json()["error"].startswith("line 1: log written by engine 0.1.0")


def _csrf_client() -> tuple[Client, str]:
    client = Client(enforce_csrf_checks=True)
    page = client.get("/replay/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    assert token is not None
    return client, token.group(1)


def _upload(client: Client, token: str, data: bytes, name: str, view: str = "all") -> Any:
    return client.post(
        f"/replay/upload.json?view={view}",
        {"log": ContentFile(data, name=name), "csrfmiddlewaretoken": token},
    )


def test_an_uploaded_log_replays_like_a_stored_one(
    client: Client, replayed: tuple[Match, str]
) -> None:
    match, text = replayed
    stored = client.get(f"/matches/{match.pk}/replay.json?view=2").json()
    uploader, token = _csrf_client()
    gz = _upload(uploader, token, gzip.compress(text.encode()), "match.jsonl.gz", view="2")
    assert gz.status_code == 200 and gz.json() == stored
    # The very file the site offers for download opens as the same replay.
    download = client.get(f"/api/matches/{match.pk}/log/")
    assert download.status_code == 200
    downloaded = b"".join(download.streaming_content)
    again = _upload(uploader, token, downloaded, f"match-{match.pk}.jsonl.gz", view="2")
    assert again.status_code == 200 and again.json() == stored
    plain = _upload(uploader, token, text.encode(), "game-8.jsonl")
    assert plain.status_code == 200 and plain.json()["view"] == "all"
    # The raw file as the body, the token in the header, as a script would send it.
    raw = uploader.post(
        "/replay/upload.json?view=0",
        gzip.compress(text.encode()),
        content_type="application/gzip",
        headers={"x-csrftoken": token},
    )
    assert raw.status_code == 200 and raw.json()["view"] == 0


def test_an_upload_needs_the_csrf_token() -> None:
    client = Client(enforce_csrf_checks=True)
    response = client.post("/replay/upload.json", {"log": ContentFile(b"{}", name="x.jsonl")})
    assert response.status_code == 403


def test_a_tampered_upload_is_refused_at_its_line(replayed: tuple[Match, str]) -> None:
    _, text = replayed
    lines = text.splitlines()
    number = next(i for i, line in enumerate(lines, start=1) if '"e":"draw"' in line and i > 10)
    event = json.loads(lines[number - 1])
    card = event["secret"]["card"]
    event["secret"]["card"] = "mexico" if card != "mexico" else "panama"
    lines[number - 1] = json.dumps(event, separators=(",", ":"))
    client, token = _csrf_client()
    response = _upload(client, token, gzip.compress("\n".join(lines).encode()), "t.jsonl.gz")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error.startswith(f"line {number}: the engine expected")
    not_json = _upload(client, token, lines[0].encode() + b"\n{oops\n", "t.jsonl")
    assert not_json.status_code == 400 and not_json.json()["error"].startswith("line 2: not JSON")
    broken = _upload(client, token, b"\x1f\x8b\x08\x00garbage", "t.jsonl.gz")
    assert broken.status_code == 400
    assert broken.json()["error"].startswith("line 1: not a readable gzip file")
    missing = client.post("/replay/upload.json", {"csrfmiddlewaretoken": token})
    assert missing.status_code == 400 and "choose a log file" in missing.json()["error"]


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (b"[" * 100_000, "nested too deeply"),
        (b'{"e":"act","seat":0,"action":' + b"9" * 5_000 + b"}", "a number too long"),
        (b"\xff\xfe\xfd", "not UTF-8"),
    ],
)
def test_a_hostile_line_is_a_400_naming_it(
    replayed: tuple[Match, str], bad: bytes, reason: str
) -> None:
    """json.loads raises RecursionError and ValueError too; they answered 500."""
    _, text = replayed
    lines = [line.encode() for line in text.splitlines()]
    lines[4] = bad
    client, token = _csrf_client()
    for name, data in [
        ("t.jsonl", b"\n".join(lines)),
        ("t.jsonl.gz", gzip.compress(b"\n".join(lines))),
    ]:
        response = _upload(client, token, data, name)
        assert response.status_code == 400, response.content[:200]
        error = response.json()["error"]
        assert error.startswith("line 5: not ") and reason in error


def test_oversized_and_bomb_uploads_are_refused() -> None:
    client, token = _csrf_client()
    big = _upload(client, token, b"x" * (UPLOAD_LIMIT + 1), "big.jsonl")
    assert big.status_code == 413 and "larger than 5 MiB" in big.json()["error"]
    # 40 MiB of newlines gzip to about 40 KiB: refused once unpacked past the limit.
    bomb = _upload(client, token, gzip.compress(b"\n" * (40 * 1024 * 1024)), "bomb.jsonl.gz")
    assert bomb.status_code == 413 and "once decompressed" in bomb.json()["error"]


def test_the_match_page_embeds_the_viewer(
    client: Client, replayed: tuple[Match, str], valid_version: Any
) -> None:
    match, _ = replayed
    html = client.get(f"/matches/{match.pk}/").content.decode()
    assert f'data-src="/matches/{match.pk}/replay.json"' in html
    assert "/static/ladder/replay.js" in html and "/static/ladder/replay.css" in html
    assert 'aria-live="polite"' in html and 'role="alert"' in html
    assert 'aria-keyshortcuts="PageDown n"' in html
    # A log of the visitor's own can be dropped here too; it is sent to the upload URL.
    assert 'data-upload="/replay/upload.json"' in html and "data-replay-form" in html
    assert 'name="csrfmiddlewaretoken"' in html and f'data-limit="{UPLOAD_LIMIT}"' in html
    assert "Back to this match's replay" in html
    assert not EXTERNAL_URL.search(html)
    queued = Match.objects.create(ruleset="modern")
    assert "data-replay" not in client.get(f"/matches/{queued.pk}/").content.decode()


def test_the_open_a_log_page(client: Client) -> None:
    response = client.get("/replay/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'enctype="multipart/form-data"' in html and 'type="file"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert 'data-upload="/replay/upload.json"' in html
    assert f'data-limit="{UPLOAD_LIMIT}"' in html
    assert "Open a log file</a>" not in html  # this is the page
    assert "Back to this match" not in html
    assert not EXTERNAL_URL.search(html)


def test_a_match_replay_is_computed_once_per_view(
    client: Client, replayed: tuple[Match, str], computed: list[int | None]
) -> None:
    match, _ = replayed
    url = f"/matches/{match.pk}/replay.json"
    first = client.get(url)
    assert first.status_code == 200 and computed == [None]
    # Another browser, no ETag to revalidate with: answered from the cache, gzipped or not.
    again = Client().get(url)
    packed = Client().get(url, headers={"accept-encoding": "gzip, br"})
    assert computed == [None]
    assert again.content == first.content
    assert packed["Content-Encoding"] == "gzip" and gzip.decompress(packed.content) == first.content
    assert "Accept-Encoding" in packed["Vary"]
    seat = client.get(url, {"view": "2"})
    assert seat.status_code == 200 and seat.json()["view"] == 2
    assert client.get(url, {"view": "2"}).content == seat.content
    assert computed == [None, 2]


def test_a_replaced_log_is_computed_again(
    client: Client, replayed: tuple[Match, str], computed: list[int | None]
) -> None:
    match, _ = replayed
    url = f"/matches/{match.pk}/replay.json"
    before = client.get(url).json()
    attach_log(match, game_log(["alpha", "beta", "gamma"], seed=9))
    after = client.get(url).json()
    assert computed == [None, None] and after["frames"] != before["frames"]


def test_a_request_waits_for_the_same_document_being_computed(
    replayed: tuple[Match, str], computed: list[int | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, text = replayed
    data = text.encode()
    digest = hashlib.sha256(data).hexdigest()
    key = selectors.replay_cache_key(digest=digest, seat=None)
    cache.add(f"{key}:computing", 1, 60)  # another worker has started on it

    def other_worker() -> None:
        time.sleep(0.5)
        cache.set(key, gzip.compress(b'{"from": "the other worker"}'))
        cache.delete(f"{key}:computing")

    thread = threading.Thread(target=other_worker)
    thread.start()
    packed = selectors.replay_gzip(digest=digest, seat=None, load=lambda: data)
    thread.join()
    assert json.loads(gzip.decompress(packed)) == {"from": "the other worker"}
    assert computed == []
    # A claim that is not finished in time (its worker died) does not stop the next request.
    monkeypatch.setattr(selectors, "WAIT_SECONDS", 0.3)
    cache.add(f"{selectors.replay_cache_key(digest=digest, seat=1)}:computing", 1, 60)
    packed = selectors.replay_gzip(digest=digest, seat=1, load=lambda: data)
    assert json.loads(gzip.decompress(packed))["view"] == 1 and computed == [1]


def test_an_uploaded_log_is_computed_once_per_view(
    replayed: tuple[Match, str], computed: list[int | None]
) -> None:
    _, text = replayed
    data = gzip.compress(text.encode())
    client, token = _csrf_client()
    first = _upload(client, token, data, "a.jsonl.gz")
    second = _upload(client, token, data, "renamed.jsonl.gz")
    assert first.status_code == second.status_code == 200
    assert second.json() == first.json() and computed == [None]
    assert _upload(client, token, data, "a.jsonl.gz", view="1").json()["view"] == 1
    # Another log (here the same game, unpacked) is another computation.
    assert _upload(client, token, text.encode(), "a.jsonl").status_code == 200
    assert computed == [None, 1, None]


def test_uploads_past_the_hourly_limit_are_refused(
    replayed: tuple[Match, str], settings: Any, computed: list[int | None]
) -> None:
    _, text = replayed
    settings.GRASS_REPLAY_UPLOADS_PER_HOUR = 2
    data = gzip.compress(text.encode())
    client, token = _csrf_client()
    assert _upload(client, token, data, "a.jsonl.gz").status_code == 200
    assert _upload(client, token, data, "a.jsonl.gz", view="0").status_code == 200
    refused = _upload(client, token, data, "a.jsonl.gz", view="1")
    assert refused.status_code == 429
    assert refused.json()["error"].startswith("too many logs opened: at most 2 an hour")
    assert "try again in" in refused.json()["error"]
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert computed == [None, 0]
    # Behind nginx every request comes from loopback: the address nginx appended counts, not
    # what the client wrote before it.
    proxied, proxied_token = _csrf_client()
    behind = {"HTTP_X_FORWARDED_FOR": "203.0.113.9"}
    for view in ("all", "0"):
        ok = proxied.post(
            f"/replay/upload.json?view={view}",
            {"log": ContentFile(data, name="a.jsonl.gz"), "csrfmiddlewaretoken": proxied_token},
            **behind,
        )
        assert ok.status_code == 200
    forged = proxied.post(
        "/replay/upload.json",
        {"log": ContentFile(data, name="a.jsonl.gz"), "csrfmiddlewaretoken": proxied_token},
        HTTP_X_FORWARDED_FOR="198.51.100.1, 203.0.113.9",
    )
    assert forged.status_code == 429
    # A signed-in user has a count of their own.
    user = User.objects.create_user("viewer", password="pw-viewer-12345")
    member = Client()
    member.force_login(user)
    mine = member.post("/replay/upload.json", data, content_type="application/gzip")
    assert mine.status_code == 200


def test_match_replays_computed_past_the_hourly_limit_are_refused_cached_ones_are_free(
    client: Client, replayed: tuple[Match, str], settings: Any, computed: list[int | None]
) -> None:
    match, _ = replayed
    settings.GRASS_REPLAY_COMPUTES_PER_HOUR = 2
    url = f"/matches/{match.pk}/replay.json"
    assert client.get(url).status_code == 200
    assert client.get(url, {"view": "0"}).status_code == 200
    refused = client.get(url, {"view": "1"})
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error.startswith("too many replays computed: at most 2 an hour")
    assert "(replays already computed are not counted)" in error
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert computed == [None, 0]
    # What is in the cache is served whatever the count, to this client and to others.
    assert client.get(url, {"view": "0"}).status_code == 200
    assert client.get(url).status_code == 200
    other = Client(REMOTE_ADDR="198.51.100.7")
    assert other.get(url, {"view": "1"}).status_code == 200  # a count of its own
    assert client.get(url, {"view": "1"}).status_code == 200  # ...and now it is cached
    assert computed == [None, 0, 1]
    settings.GRASS_REPLAY_COMPUTES_PER_HOUR = 0  # no limit
    assert client.get(url, {"view": "2"}).status_code == 200


def test_a_log_longer_than_any_game_is_refused_unread(computed: list[int | None]) -> None:
    client, token = _csrf_client()
    lines = b'{"e":"x"}\n' * (LINE_LIMIT + 1)
    response = _upload(client, token, gzip.compress(lines), "long.jsonl.gz")
    assert response.status_code == 413
    assert response.json()["error"] == f"the log has more than {LINE_LIMIT:,} lines"
    assert computed == []


def test_the_line_limit_leaves_room_for_the_longest_game() -> None:
    """Two seats that propose every deal they may and decline every offer, with every variant
    on, make about the longest game the 30-hand limit allows (about 50,000 events)."""
    variants = Variants(
        give_me_five=True, hidden_deals=True, lucky_or_not=True, target=max(TARGETS)
    )
    game = new_game("modern", ["a", "b"], 0, variants)
    rng = random.Random(0)
    while not game.over:
        actions = game.decision.actions
        deals = [a for a in actions if a.startswith("deal @")]
        slow = [a for a in actions if a != "withdraw" and not a.startswith("play")]
        if deals:
            game.apply(rng.choice(deals))
        elif "decline" in actions:
            game.apply("decline")
        else:
            game.apply(rng.choice(slow or actions))
    assert game.hand_no == game.ruleset.max_hands == 30
    assert len(game.events) > 45_000  # still the long game it is meant to be
    assert len(game.events) * 1.4 < LINE_LIMIT
