"""What `grass login`, `submit`, `status`, `matches`, `logs` and `challenge` do, over
`bots.client`.

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
CHALLENGE_POLL_S = 2.0
"""How often `grass challenge --wait` asks how its challenge is going."""
EXAMPLES = "examples"
"""The owner of the ladder's example bots: `greedy` alone means examples/greedy when you have
no bot of that name."""


def _ask(prompt: str, secret: bool) -> str:
    """A line from the terminal (hidden if `secret`), or from standard input when it is not a
    terminal (scripts pipe the password or token in)."""
    if sys.stdin.isatty():
        return getpass.getpass(prompt) if secret else input(prompt)
    line = sys.stdin.readline()
    if not line:
        raise LadderError(f"{prompt.strip().rstrip(':')} expected on standard input")
    return line.rstrip("\n")


def login(console: Console, site: str, username: str | None, token: str | None) -> int:
    """Store a token for `site`: the one given (`--token TOKEN`, or asked for after a bare
    `--token`: "-"), or the one the site gives for the username and password (asked once,
    never stored)."""
    site = site.rstrip("/")
    if token == "-":
        token = _ask("API token: ", secret=True).strip()
    elif token is not None:
        token = token.strip()
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
    if status == "valid":
        console.print(f"[green]v{version['number']} is valid[/]: it plays on the ladder now")
        return 0
    error = version.get("validation_error") or "(no reason given)"
    if build_log:
        console.print("[bold]Build output:[/]")
        console.print(build_log, markup=False, highlight=False)
        error = _without_quoted_build(error, build_log)
    console.print(f"[red]v{version['number']} is invalid[/]:")
    console.print(error, markup=False, highlight=False)
    return 1


def _without_quoted_build(error: str, build_log: str) -> str:
    """A failed build's verdict quotes the end of the compiler's output under its first line
    (the site shows the verdict alone); printed after the whole output, that quote would say
    everything twice, so only the first line is kept."""
    first, _, quoted = error.partition("\n")
    if quoted.strip() and quoted.strip() in build_log:
        return f"{first.rstrip(': ')}: printed above"
    return error


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
                _elo(rating) if rating else "-",
                f"{rating['band'][0]}-{rating['band'][1]}" if rating else "-",
                str(rating["games"]) if rating else "0",
                str(games["timed_out"]),
                str(games["crashed"]),
            )
    console.print(table)
    if any(rating.get("provisional") for bot in details for rating in bot["ratings"]):
        console.print(
            "? provisional: fewer rated games than the site's GRASS_PROVISIONAL_GAMES, of the "
            "bot or of its newest version; the rating still moves fast"
        )
    return 0


def _elo(rating: dict[str, Any]) -> str:
    """The rating's Elo, followed by `?` while it is provisional (a site too old to say is
    taken as not)."""
    return f"{rating['elo']}?" if rating.get("provisional") else str(rating["elo"])


def matches(console: Console, name: str, last: int) -> int:
    """The bot's recent matches: when, ruleset, its place and total, rating change, faults."""
    ladder, me = signed_in()
    with ladder:
        bot = _bot_named(ladder, me.username, name)
        recent = ladder.matches(bot["id"], last)
        details = [ladder.match(m["id"]) if m["status"] == "finished" else m for m in recent]
    if not details:
        console.print(f"{bot['display_name']} has played no match yet")
        return 0
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


def logs(console: Console, name: str, last: int, folder: Path, debug: bool = False) -> int:
    """Download the logs of the bot's `last` finished matches into `folder`, as
    `match-ID.jsonl.gz` (files already there are kept); `grass replay` and `grass verify` read
    them. With `debug`, also what your bots wrote on stderr while deciding, by decision, as
    `match-ID.debug.txt` (for matches where they wrote something)."""
    ladder, me = signed_in()
    folder.mkdir(parents=True, exist_ok=True)
    fetched = kept = waiting = debugged = 0
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
                        _write_whole(target, data)
                        fetched += 1
                if debug and _debug_download(ladder, match["id"], folder):
                    debugged += 1
                progress.advance(task)
    console.print(
        f"{fetched} log(s) downloaded to {folder}"
        + (f", {kept} already there" if kept else "")
        + (f", {waiting} not stored yet on the site (try later)" if waiting else "")
        + (f"; debug lines of {debugged} match(es) in match-ID.debug.txt" if debug else "")
    )
    return 0


def _write_whole(target: Path, data: bytes) -> None:
    """Write `target` whole or not at all (an interrupted download leaves no half file)."""
    partial = target.with_name(target.name + ".part")
    partial.write_bytes(data)
    partial.replace(target)


def _debug_download(ladder: Ladder, match_id: int, folder: Path) -> bool:
    """Write the match's debug lines you may read as `match-ID.debug.txt` (kept if there);
    whether the file is there now."""
    target = folder / f"match-{match_id}.debug.txt"
    if target.exists():
        return True
    body = ladder.match_debug(match_id)
    if not body["seats"]:
        return False
    _write_whole(target, debug_text(body, site=ladder.site).encode())
    return True


def debug_text(body: dict[str, Any], site: str = "") -> str:
    """A match's debug lines (GET /api/matches/{id}/debug/) as a text file, by seat then by
    decision; "event N" is the replay viewer's event N on the match's page."""
    match_id = body["match"]
    lines = [
        f"# Debug lines of match {match_id}: what your bots wrote on stderr while deciding.",
        f'# "event N" is event N of the replay at {site}/matches/{match_id}/',
    ]
    for seat in body["seats"]:
        heading = f"=== seat {seat['seat']}: {seat['display_name']} v{seat['version']}"
        if seat["cut_bytes"]:
            heading += (
                f" ({seat['cut_bytes']:,} bytes cut, with the lines of its first "
                f"{seat['cut_entries']} decision(s): a seat keeps the latest 64 KiB)"
            )
        lines += ["", heading]
        for line in seat["lines"]:
            request = line["request"]
            when = (
                "while starting"
                if request == 0
                else "after the game"
                if request is None
                else f"request {request}"
            )
            lines.append(f"--- {when} (event {line['event'] + 1})")
            if line["cut"]:
                lines.append(f"[... {line['cut']:,} bytes cut ...]")
            lines.append(line["text"].rstrip("\n"))
    return "\n".join(lines) + "\n"


def opponent_spec(ladder: Ladder, me: str, spec: str, examples: bool = True) -> dict[str, Any]:
    """An opponent as `grass challenge` takes it: `owner/NAME` (a bot as it plays on the
    ladder), `NAME` or `NAME@vN` (yours; `NAME` alone is the example bot when you have none so
    named), `owner/NAME@vN` for one of your own versions. An exact name wins over a suffix."""
    owner, slash, name = spec.partition("/")
    if not slash:
        owner, name = me, spec
    readings: list[tuple[str, str, int | None]] = [(owner, name, None)]
    head, at, number = name.rpartition("@v")
    if at and head and number.isdigit():
        readings.append((owner, head, int(number)))
    if not slash and examples:
        readings.append((EXAMPLES, name, None))
    for who, bot_name, version in readings:
        bot = ladder.find_bot(who, bot_name)
        if bot is not None:
            return {"bot": bot["id"], **({} if version is None else {"version": version})}
    if slash:
        raise LadderError(
            f"{owner} has no bot named {name!r} (names are as the leaderboard shows them)"
        )
    raise LadderError(f"no bot is named {spec!r} (write owner/NAME for another owner's bot)")


def challenge(
    console: Console,
    bot: str,
    opponents: list[str],
    *,
    ruleset: str,
    seating: str,
    hands: int | None,
    wait_s: float | None,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Ask for an unrated match now between your bot (`NAME` or `NAME@vN`) and `opponents`;
    with `wait_s`, follow it until it is played (or that many seconds pass) and show how it
    went. Exit 0 once asked (or played), 1 if its match failed, 2 if still not over."""
    ladder, me = signed_in()
    with ladder:
        mine = opponent_spec(ladder, me.username, bot, examples=False)
        body: dict[str, Any] = {
            "bot": mine["bot"],
            "opponents": [opponent_spec(ladder, me.username, spec) for spec in opponents],
            "ruleset": ruleset,
            "seating": seating,
        }
        if "version" in mine:
            body["version"] = mine["version"]
        if hands is not None:
            body["max_hands"] = hands
        asked = ladder.challenge(body)
        seats = ", ".join(f"{s['display_name']} v{s['version']}" for s in asked["seats"])
        console.print(f"Challenge {asked['id']} asked: {seats} ({asked['ruleset']}, unrated)")
        if wait_s is None:
            console.print("`grass challenge ... --wait` follows it; its page is on the site")
            return 0
        deadline = time.monotonic() + wait_s
        state = asked["state"]
        told = _told_place(console, asked, None)
        with console.status(f"challenge {asked['id']} is {state}...") as shown:
            while state in ("waiting", "queued", "running") and time.monotonic() < deadline:
                sleep(CHALLENGE_POLL_S)
                asked = ladder.challenge_get(asked["id"])
                told = _told_place(console, asked, told)
                if asked["state"] != state:
                    state = asked["state"]
                    shown.update(f"challenge {asked['id']} is {state}...")
        if state != "finished":
            where = f" (match {asked['match']})" if asked["match"] else ""
            console.print(f"Challenge {asked['id']} is {state}{where}")
            return 1 if state in ("failed", "cancelled") else 2
        match = ladder.match(asked["match"])
    _challenge_result(console, match, ladder.site)
    return 0


def queue_line(challenge: dict[str, Any]) -> str | None:
    """Where a challenge stands while it waits (or its match waits for a worker), from its
    `queue`: "waiting: 3rd in the queue, about 40 s"; None once it no longer waits."""
    queue = challenge.get("queue")
    if not queue:
        return None
    position = int(queue["position"])
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(position % 10, "th")
    if 11 <= position % 100 <= 13:
        suffix = "th"
    line = f"{challenge['state']}: {position}{suffix} in the queue"
    estimate = queue.get("estimate_seconds")
    if estimate == 0:
        return line + ", starting in a moment"
    if estimate is None:
        return line
    if estimate < 90:
        return line + f", about {estimate} s"
    return line + f", about {round(estimate / 60)} min"


def _told_place(console: Console, challenge: dict[str, Any], told: str | None) -> str | None:
    """Print where the challenge stands when it changed since `told` (the line printed
    last), so that polling every few seconds does not repeat it; returns the line now."""
    line = queue_line(challenge)
    if line is not None and line != told:
        console.print(line)
    return line


def _challenge_result(console: Console, match: dict[str, Any], site: str) -> None:
    table = Table(title=f"Match {match['id']} ({match['ruleset']}, unrated)")
    for column in ("seat", "bot", "place", "total", "faults"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for seat in match["seats"]:
        faults = sum((seat.get("faults") or {}).values())
        table.add_row(
            str(seat["seat"]),
            f"{seat['display_name']} v{seat['version']}",
            str(seat["place"]),
            f"{seat['total']:,}",
            str(faults) + (" forfeit" if seat["forfeited"] else ""),
        )
    console.print(table)
    console.print(f"Replay: {site}/matches/{match['id']}/")
    if match.get("debug_lines"):
        console.print("Your bots' debug lines: `grass logs NAME DIR --debug`, or beside the replay")
