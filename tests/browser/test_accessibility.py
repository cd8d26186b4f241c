"""Every page a visitor reaches, checked in a real browser for what assistive technology and
keyboard users depend on: a language, one main landmark and one top heading, a site menu
named as such, a label for every form control, a name for every chart, and a first Tab that
offers to skip the menu and shows where the focus is."""

from __future__ import annotations

from typing import Any

import pytest

from ladder.matches.models import Match
from tests.ladder.replays.test_replays import attach_log, game_log
from tests.ladder.tournaments.conftest import make_tournament, organiser  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

AUDIT = """() => {
  const problems = [];
  if (!document.documentElement.lang) problems.push("no lang on <html>");
  if (document.querySelectorAll("main").length !== 1) problems.push("not one <main>");
  if (document.querySelectorAll("h1").length !== 1) problems.push("not one <h1>");
  if (!document.querySelector("nav[aria-label]")) problems.push("no named <nav>");
  for (const el of document.querySelectorAll("input, select, textarea")) {
    if (el.type === "hidden" || el.type === "submit") continue;
    const named = (el.labels && el.labels.length) || el.getAttribute("aria-label") ||
      el.getAttribute("aria-labelledby");
    if (!named) problems.push("unlabelled " + el.tagName + " " + (el.name || el.id));
  }
  for (const el of document.querySelectorAll("[role=img]")) {
    if (!el.getAttribute("aria-label") && !el.getAttribute("aria-labelledby") &&
        !el.querySelector("title")) problems.push("unnamed image " + el.outerHTML.slice(0, 80));
  }
  for (const el of document.querySelectorAll("img")) {
    if (!el.hasAttribute("alt")) problems.push("img without alt " + el.src);
  }
  for (const el of document.querySelectorAll("button, a[href]")) {
    if (!el.textContent.trim() && !el.getAttribute("aria-label")) {
      problems.push("empty " + el.tagName + " " + el.outerHTML.slice(0, 80));
    }
  }
  return problems;
}"""


def test_every_page_has_landmarks_labels_names_and_a_skip_link(
    live_server: Any,
    page: Any,
    owner: Any,
    valid_version: Any,
    finished_match: Any,
    make_tournament: Any,  # noqa: F811
) -> None:
    names = ["alpha", "beta", "gamma"]
    versions = [valid_version(name) for name in names]
    match: Match = attach_log(finished_match(versions, [1, 2, 3]), game_log(names, 3, hands=1))
    tournament = make_tournament()
    # A person's game waiting for a worker: its page holds the live table.
    waiting = Match.objects.create(rated=False)
    waiting.seats.create(seat=0, player=owner)
    waiting.seats.create(seat=1, bot_version=versions[1])
    owner.set_password("pw-for-the-audit")
    owner.save()
    base = live_server.url
    anonymous = [
        "/",
        f"/bots/{versions[0].bot_id}/",
        f"/matches/{match.pk}/",
        f"/matches/{waiting.pk}/",
        "/tournaments/",
        f"/tournaments/{tournament.pk}/",
        "/replay/",
        "/write-a-bot/",
        "/login/",
        "/signup/",
        "/play/",  # signed out: what Play is, and the ways in
        "/no-such-page/",  # the 404 page is a page of the site too
    ]
    for path in anonymous:
        page.goto(base + path)
        page.wait_for_load_state("networkidle")
        assert page.evaluate(AUDIT) == [], path

    page.goto(f"{base}/login/")
    page.get_by_label("Username").fill(owner.username)
    page.get_by_label("Password").fill("pw-for-the-audit")
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("button", name=f"Log out {owner.username}").wait_for()
    signed_in = [
        "/bots/new/",
        f"/bots/{versions[0].bot_id}/upload/",
        f"/bots/{versions[0].bot_id}/",  # the owner's: with the debug lines' setting
        "/account/notifications/",
        "/account/bots/",
        "/challenges/",
        "/play/",
        f"/matches/{waiting.pk}/",
    ]
    for path in signed_in:
        page.goto(base + path)
        assert page.evaluate(AUDIT) == [], path

    # The first Tab lands on the skip link, drawn with a visible outline; following it puts
    # the focus on the page's content, past the menu.
    page.goto(f"{base}/")
    page.keyboard.press("Tab")
    focused = page.evaluate(
        "() => [document.activeElement.textContent.trim(),"
        " getComputedStyle(document.activeElement).outlineStyle]"
    )
    assert focused == ["Skip to the content", "solid"]
    assert page.locator("a.skip").is_visible()
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "content"
