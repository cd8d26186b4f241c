"""Simulated people at the site's tables, over the real API and socket (issue 35, the table host).

A person here is what `grass table` is, without the terminal: it starts a game with its API
token (`POST /api/games/`), opens the game's socket with the same token, and at each request of
its seat waits its thinking time and answers one of the legal actions at random. What it
measures is what a person feels: from the moment its answer leaves to the moment the next
request for its seat arrives (the referee's turn of the answer, the bots' moves in between, the
frames' way through the channel layer and the ASGI server).

Many people run at once in one event loop (`websockets`' asyncio client, `httpx`): a person is
a coroutine, so 200 of them cost the measuring process little. Used by `manage.py
bench_tables` and by the table host's end-to-end test (tests/e2e/test_table_host.py).

`process_memory` and `tree_memory` read resident memory from /proc (no psutil on the servers):
the table host's process, and the processes it started (its bots in their boxes).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SILENCE_S = 60.0
"""A person's socket silent this long (the game waits on nobody that long: its bots answer in
seconds, a person's request is sent again every 10 s) is opened again."""


@dataclass
class PersonRun:
    """What one simulated person saw."""

    name: str
    match_id: int | None = None
    status: str | None = None
    """The socket's `end` status ("finished", "failed", ...), or None if it never came."""
    requests: int = 0
    latencies: list[float] = field(default_factory=list)
    """Seconds from each answer sent to the next request of the seat (answers followed by
    the game's end are not counted)."""
    error: str | None = None
    reconnects: int = 0
    """Sockets opened again after SILENCE_S without a message."""


async def play_person(
    *,
    site: str,
    token: str,
    name: str,
    opponents: list[int],
    hands: int = 1,
    think: Callable[[], float] = lambda: 0.0,
    started: Callable[[int], None] | None = None,
    timeout: float = 600.0,
    seed: int = 0,
) -> PersonRun:
    """One person's whole game; never raises (an error is kept in the result)."""
    run = PersonRun(name=name)
    try:
        await asyncio.wait_for(
            _play(run, site, token, opponents, hands, think, started, seed), timeout
        )
    except Exception as exc:  # kept for the report: one person's failure is not the bench's
        run.error = f"{type(exc).__name__}: {exc}"[:300]
    return run


async def _play(
    run: PersonRun,
    site: str,
    token: str,
    opponents: list[int],
    hands: int,
    think: Callable[[], float],
    started: Callable[[int], None] | None,
    seed: int,
) -> None:
    import httpx
    from websockets.asyncio.client import connect

    from bots.table import socket_url

    headers = {"Authorization": f"Token {token}"}
    async with httpx.AsyncClient(timeout=60) as client:
        answer = await client.post(
            f"{site}/api/games/",
            json={"opponents": opponents, "hands": hands, "seat": 0},
            headers=headers,
        )
    if answer.status_code != 201:
        raise RuntimeError(f"POST /api/games/ answered {answer.status_code}: {answer.text[:200]}")
    game = answer.json()
    run.match_id = int(game["id"])
    if started is not None:
        started(run.match_id)
    rng = random.Random(seed)
    answered: set[Any] = set()
    sent_at: float | None = None
    url = socket_url(site, game["socket_url"])
    opened = 0
    while True:
        # Opened again after SILENCE_S without a message, as a person would reload the page:
        # an end the channel layer dropped is then told by the socket's hello.
        run.reconnects, opened = opened, opened + 1
        async with connect(url, additional_headers=headers, max_size=2**22) as socket:
            while True:
                try:
                    text = await asyncio.wait_for(socket.recv(), SILENCE_S)
                except TimeoutError:
                    break
                message = json.loads(text)
                kind = message.get("type")
                if kind == "end":
                    run.status = str(message.get("status"))
                    return
                if kind != "frame" or not isinstance(message.get("frame"), dict):
                    continue
                request = message["frame"].get("request")
                if not isinstance(request, dict) or request.get("id") in answered:
                    continue
                if sent_at is not None:
                    run.latencies.append(time.monotonic() - sent_at)
                    sent_at = None
                run.requests += 1
                await asyncio.sleep(think())
                answered.add(request["id"])
                action = rng.choice(request["legal"])
                reply = {"type": "act", "request": request["id"], "action": action}
                await socket.send(json.dumps(reply))
                sent_at = time.monotonic()


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def process_memory(pids: Iterable[int]) -> int:
    """Resident bytes of the processes `pids` (those gone meanwhile count 0)."""
    total = 0
    for pid in pids:
        total += _rss(Path(f"/proc/{pid}/status"))
    return total


def tree_memory(root: int) -> tuple[int, int]:
    """Resident bytes and number of the processes descended from `root` (itself not
    counted): a table host's bots in their boxes, with the box program and its helpers."""
    parents: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: the command may hold spaces and parentheses.
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    total = found = 0
    stack = list(parents.get(root, []))
    while stack:
        pid = stack.pop()
        total += _rss(Path(f"/proc/{pid}/status"))
        found += 1
        stack.extend(parents.get(pid, []))
    return total, found


def _rss(status: Path) -> int:
    try:
        return _rss_of(status.read_text())
    except OSError:
        return 0


def _rss_of(text: str) -> int:
    value = _field(text, "VmRSS:")
    return int(value.split()[0]) * 1024 if value else 0


def _field(text: str, name: str) -> str | None:
    for line in text.splitlines():
        if line.startswith(name):
            return line[len(name) :].strip()
    return None
