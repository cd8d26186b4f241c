"""GET/POST /api/bots/ and GET /api/bots/{id}/."""

from __future__ import annotations

from typing import Any

import pytest

from ladder.bots.services import bot_create
from ladder.matches.models import MatchSeat
from ladder.matches.records import bot_records_rebuild
from ladder.ratings.services import rating_apply

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("persona", "code"), [("owner", 201), ("anonymous", 401)])
def test_creating_a_bot_needs_an_account(api: Any, persona: str, code: int) -> None:
    response = api(persona).post("/api/bots/", {"name": "mine"}, format="json")

    assert response.status_code == code
    if code == 201:
        assert response.json()["name"] == "mine" and response.json()["owner"] == "ann"


def test_a_bot_name_is_unique_per_owner(api: Any) -> None:
    assert api("owner").post("/api/bots/", {"name": "mine"}).status_code == 201

    again = api("owner").post("/api/bots/", {"name": "mine"})

    # 409 Conflict: the request is well formed, it clashes with a bot that exists.
    assert again.status_code == 409
    assert again.json() == {"name": ["You already have a bot named 'mine'."]}
    # Another owner may use the name.
    assert api("stranger").post("/api/bots/", {"name": "mine"}).status_code == 201


def test_a_bot_needs_a_name(api: Any) -> None:
    response = api("owner").post("/api/bots/", {"name": ""})
    assert response.status_code == 400
    assert "name" in response.json()


def test_the_list_filters_by_owner_and_name(owner: Any, stranger: Any, api: Any) -> None:
    for user, name in [(owner, "alpha"), (owner, "beta"), (stranger, "alphabet")]:
        bot_create(owner=user, name=name)
    client = api("anonymous")

    def names(**query: str) -> list[str]:
        response = client.get("/api/bots/", query)
        assert response.status_code == 200
        return [bot["name"] for bot in response.json()["results"]]

    assert names() == ["alpha", "beta", "alphabet"]
    assert names(owner="ann") == ["alpha", "beta"]
    assert names(name="alpha") == ["alpha", "alphabet"]
    assert names(owner="bo", name="ALPHA") == ["alphabet"]
    assert names(owner="nobody") == []
    assert client.get("/api/bots/").json()["count"] == 3


def test_the_detail_has_versions_ratings_and_fault_counts(
    api: Any, valid_version: Any, finished_match: Any
) -> None:
    mine, other = valid_version("mine"), valid_version("other")
    first = finished_match([mine, other], [1, 2])
    rating_apply(match=first)
    second = finished_match([mine, other], [2, 1])
    MatchSeat.objects.filter(match=second, bot_version=mine).update(
        faults={"timeout": 2, "crashed": 1}
    )
    MatchSeat.objects.filter(match=first, bot_version=mine).update(faults={"timeout": 1})
    bot_records_rebuild()  # the counts are the records recording keeps: as if played so

    response = api("stranger").get(f"/api/bots/{mine.bot_id}/")

    assert response.status_code == 200
    body = response.json()
    assert (body["name"], body["owner"]) == ("mine", "ann")
    versions = body["versions"]
    assert versions["count"] == 1
    assert versions["latest"]["number"] == versions["playing"]["number"] == 1
    assert versions["playing"]["status"] == "valid"
    [rating] = body["ratings"]
    assert rating["ruleset"] == "modern" and rating["games"] == 1
    assert rating["band"][0] < rating["elo"] < rating["band"][1]
    assert body["games"] == {"finished": 2, "timed_out": 2, "crashed": 1}


def test_a_new_bot_has_no_versions_and_an_unknown_one_is_404(api: Any, owner: Any) -> None:
    bot = bot_create(owner=owner, name="fresh")

    body = api("anonymous").get(f"/api/bots/{bot.pk}/").json()

    assert body["versions"] == {"count": 0, "latest": None, "playing": None}
    assert body["ratings"] == []
    assert body["games"] == {"finished": 0, "timed_out": 0, "crashed": 0}
    assert api("anonymous").get(f"/api/bots/{bot.pk + 1}/").status_code == 404


def test_the_list_is_walked_by_key_oldest_first_and_never_counts_every_bot(
    owner: Any, api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Page numbers sorted every bot up to the page and counted them all on each request;
    a cursor page is a range of the primary key from the last id seen, so a bot created
    while a client walks the list never shifts a page, and the count stops at a bound."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ladder.bots.apis import BotListApi
    from ladder.pagination import ESTIMATE_FROM, keyset_cursor

    monkeypatch.setattr(BotListApi.Pagination, "page_size", 2)
    made = [bot_create(owner=owner, name=f"b{i}").pk for i in range(5)]
    client = api("anonymous")
    seen: list[int] = []
    response = client.get("/api/bots/")
    assert (response.json()["count"], response.json()["count_exact"]) == (5, True)
    made.append(bot_create(owner=owner, name="late").pk)  # while the client walks
    while True:
        body = response.json()
        seen += [bot["id"] for bot in body["results"]]
        if not body["next"]:
            break
        response = client.get(body["next"])
    assert seen == made  # each once, oldest first, the late one at the end

    with CaptureQueriesContext(connection) as captured:
        body = client.get("/api/bots/", {"cursor": keyset_cursor(position=made[2])}).json()
    assert [bot["id"] for bot in body["results"]] == made[3:5]
    sqls = [q["sql"] for q in captured if '"bots_bot"' in q["sql"]]
    page = [sql for sql in sqls if "COUNT" not in sql and "EXPLAIN" not in sql]
    assert page and all(f'"bots_bot"."id" > {made[2]}' in sql for sql in page), page
    assert all("OFFSET" not in sql for sql in page), page
    counts = [sql for sql in sqls if "COUNT" in sql]
    assert counts and all(f"LIMIT {ESTIMATE_FROM + 1}" in sql for sql in counts), counts
    # Older clients' page numbers still work, up to a bound.
    assert [b["id"] for b in client.get("/api/bots/", {"page": 2}).json()["results"]] == made[2:4]
    assert client.get("/api/bots/", {"page": 201}).status_code == 400
