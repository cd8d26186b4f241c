"""What `grass login`, `submit`, `status`, `matches` and `logs` do, over `bots.client`.

Each function prints for a person (rich tables, a spinner while a version waits for its
verdict, a progress bar for downloads) and returns the exit status; a `LadderError` raised
inside is the one line `grass` prints before exiting 1.
"""

from __future__ import annotations

import getpass
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bots.client import (
    Credentials,
    Ladder,
    LadderError,
    save_credentials,
    signed_in,
    upload_payload,
)

POLL_S = 1.0
"""How often `grass submit` asks whether the version has its verdict."""


def _ask(prompt: str, secret: bool) -> str:
    """A line from the terminal (hidden if `secret`), or from standard input when it is not a
    terminal (scripts pipe the password or token in)."""
    if sys.stdin.isatty():
        return getpass.getpass(prompt) if secret else input(prompt)
    line = sys.stdin.readline()
    if not line:
        raise LadderError(f"{prompt.strip().rstrip(':')} expected on standard input")
    return line.rstrip("\n")


def login(console: Console, site: str, username: str | None, use_token: bool) -> int:
    """Store a token for `site`: the one given (`--token`), or the one the site gives for the
    username and password (asked once, never stored)."""
    site = site.rstrip("/")
    if use_token:
        token = _ask("API token: ", secret=True).strip()
    else:
        username = username or _ask("Username: ", secret=False).strip()
        password = _ask(f"Password for {username}: ", secret=True)
        anonymous = Ladder(site)
        try:
            token = anonymous.login(username, password)
        finally:
            anonymous.close()
    ladder = Ladder(site, token)
    try:
        me = ladder.me()
    finally:
        ladder.close()
    path = save_credentials(Credentials(site=site, username=me["username"], token=token))
    console.print(f"Logged in to {site} as [bold]{me['username']}[/]; token saved in {path}")
    return 0


def _bot_named(ladder: Ladder, me: str, spec: str) -> dict[str, Any]:
    """`NAME` (one of yours) or `owner/NAME`."""
    owner, _, name = spec.rpartition("/")
    owner = owner or me
    bot = ladder.find_bot(owner, name)
    if bot is None:
        whose = "you have" if owner == me else f"{owner} has"
        raise LadderError(f"{whose} no bot named {name!r}")
    return bot


def submit(
    console: Console,
    path: Path,
    name: str,
    create: bool,
    wait_s: float,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Upload `path` as a new version of your bot `name` and wait for its verdict."""
    filename, data = upload_payload(path)
    ladder, me = signed_in()
    with ladder:
        bot = ladder.find_bot(me.username, name)
        if bot is None:
            if not create:
                raise LadderError(f"you have no bot named {name!r} (add --create to make it)")
            bot = ladder.create_bot(name)
            console.print(f"Created bot [bold]{bot['display_name']}[/] (id {bot['id']})")
        version = ladder.upload(bot["id"], filename, data)
        language = f", {version['language']}" if version.get("language") else ""
        console.print(
            f"Uploaded {filename} ({len(data):,} bytes{language}) as {bot['display_name']} "
            f"v{version['number']}"
        )
        deadline = time.monotonic() + wait_s
        with console.status(f"v{version['number']} is waiting for its validation game..."):
            while version["status"] == "pending" and time.monotonic() < deadline:
                sleep(POLL_S)
                version = ladder.version(bot["id"], version["id"])
    return _verdict(console, version)


def _verdict(console: Console, version: dict[str, Any]) -> int:
    build_log = version.get("build_log")
    status = version["status"]
    if status == "pending":
        console.print(f"v{version['number']} is still pending; `grass status` will show it")
        return 2
    if build_log and status != "valid":
        console.print("[bold]Build output:[/]")
        console.print(build_log, markup=False, highlight=False)
    if status == "valid":
        console.print(f"[green]v{version['number']} is valid[/]: it plays on the ladder now")
        return 0
    console.print(f"[red]v{version['number']} is invalid[/]:")
    console.print(
        version.get("validation_error") or "(no reason given)", markup=False, highlight=False
    )
    return 1


def status(console: Console, name: str | None) -> int:
    """Your bots (or one): the version playing, rating per ruleset, games and faults."""
    ladder, me = signed_in()
    with ladder:
        bots = [_bot_named(ladder, me.username, name)] if name else ladder.bots(me.username)
        details = [ladder.bot(bot["id"]) for bot in bots]
    if not details:
        console.print(f"{me.username} has no bots yet: `grass submit PATH --bot NAME --create`")
        return 0
    table = Table(title=f"{me.username}'s bots on {me.site}")
    for column in (
        "bot",
        "playing",
        "latest",
        "ruleset",
        "elo",
        "band",
        "games",
        "timed out",
        "crashed",
    ):
        table.add_column(column, justify="left" if column in ("bot", "latest") else "right")
    for bot in details:
        versions = bot["versions"]
        playing = f"v{versions['playing']['number']}" if versions["playing"] else "-"
        latest = versions["latest"]
        latest_text = f"v{latest['number']} {latest['status']}" if latest else "-"
        if bot["disabled"]:
            latest_text += " (off the ladder)"
        games = bot["games"]
        ratings = bot["ratings"] or [None]
        for rating in ratings:
            table.add_row(
                bot["display_name"],
                playing,
                latest_text,
                rating["ruleset"] if rating else "-",
                str(rating["elo"]) if rating else "-",
                f"{rating['band'][0]}-{rating['band'][1]}" if rating else "-",
                str(rating["games"]) if rating else "0",
                str(games["timed_out"]),
                str(games["crashed"]),
            )
    console.print(table)
    return 0


def matches(console: Console, name: str, last: int) -> int:
    """The bot's recent matches: when, ruleset, its place and total, rating change, faults."""
    ladder, me = signed_in()
    with ladder:
        bot = _bot_named(ladder, me.username, name)
        recent = ladder.matches(bot["id"], last)
        details = [ladder.match(m["id"]) if m["status"] == "finished" else m for m in recent]
    table = Table(title=f"{bot['display_name']}: the last {len(details)} matches")
    for column in (
        "match",
        "finished",
        "ruleset",
        "status",
        "place",
        "total",
        "rating",
        "faults",
        "opponents",
    ):
        table.add_column(
            column, justify="left" if column in ("finished", "opponents", "status") else "right"
        )
    for match in details:
        seats = match["seats"]
        mine = [s for s in seats if s["bot_id"] == bot["id"]]
        seat = mine[0] if mine else None
        change = seat.get("rating_change") if seat else None
        faults = sum((seat.get("faults") or {}).values()) if seat else 0
        others = ", ".join(s["display_name"] for s in seats if s is not seat)
        table.add_row(
            str(match["id"]),
            (match.get("finished") or "")[:16].replace("T", " "),
            match["ruleset"],
            match["status"],
            f"{seat['place']}/{len(seats)}" if seat and seat.get("place") else "-",
            f"{seat['total']:,}" if seat and seat.get("total") is not None else "-",
            f"{change['delta']:+.1f}" if change else "-",
            str(faults) + (" forfeit" if seat and seat.get("forfeited") else ""),
            others,
        )
    console.print(table)
    return 0


def logs(console: Console, name: str, last: int, folder: Path) -> int:
    """Download the logs of the bot's `last` finished matches into `folder`, as
    `match-ID.jsonl.gz` (files already there are kept); `grass replay` and `grass verify` read
    them."""
    ladder, me = signed_in()
    folder.mkdir(parents=True, exist_ok=True)
    fetched = kept = waiting = 0
    with ladder:
        bot = _bot_named(ladder, me.username, name)
        finished: list[dict[str, Any]] = []
        for match in ladder.pages("/api/matches/", {"bot": bot["id"], "status": "finished"}):
            finished.append(match)
            if len(finished) >= last:
                break
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task("logs", total=len(finished))
            for match in finished:
                target = folder / f"match-{match['id']}.jsonl.gz"
                if target.exists():
                    kept += 1
                else:
                    try:
                        data = ladder.match_log(match["id"])
                    except LadderError as exc:
                        if "(503)" not in str(exc) and "failed (503)" not in str(exc):
                            raise
                        waiting += 1
                    else:
                        partial = target.with_suffix(".part")
                        partial.write_bytes(data)
                        partial.replace(target)
                        fetched += 1
                progress.advance(task)
    console.print(
        f"{fetched} log(s) downloaded to {folder}"
        + (f", {kept} already there" if kept else "")
        + (f", {waiting} not stored yet on the site (try later)" if waiting else "")
    )
    return 0
