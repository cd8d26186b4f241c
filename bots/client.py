"""A client of the ladder's REST API, for the `grass` command line (login, submit, status,
matches, logs, challenge, table). It uses only the public API (`/api/schema/` describes it)
and httpx.

Every failure a user can meet becomes a `LadderError` whose message is one line meant for
them: the site unreachable, a token the site refuses, an upload it refuses (the server's own
words, field by field), too many failed logins (with when to retry). The credentials live in
`$XDG_CONFIG_HOME/grass/credentials.json` (default `~/.config/grass/`), readable by their
owner only and written atomically, so a crash never leaves half a file or a moment when
others could read it.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

DEFAULT_SITE = "http://127.0.0.1:8000"
"""Where `make run` serves the ladder."""
TIMEOUT = httpx.Timeout(30.0, connect=10.0)


class LadderError(Exception):
    """Something the user must know, in one line (no traceback)."""


# ---------------------------------------------------------------------- credentials


@dataclass(frozen=True)
class Credentials:
    site: str
    username: str
    token: str


def credentials_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "grass" / "credentials.json"


def save_credentials(credentials: Credentials, path: Path | None = None) -> Path:
    """Write the file with mode 0600 from its first byte, then rename it into place."""
    path = path or credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    body = json.dumps(
        {"site": credentials.site, "username": credentials.username, "token": credentials.token},
        indent=2,
    )
    handle, temporary = tempfile.mkstemp(prefix=".credentials-", dir=path.parent)
    try:
        os.fchmod(handle, 0o600)
        with os.fdopen(handle, "w") as sink:
            sink.write(body + "\n")
            sink.flush()
            os.fsync(sink.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def load_credentials(path: Path | None = None) -> Credentials:
    path = path or credentials_path()
    try:
        data = json.loads(path.read_text())
        return Credentials(site=data["site"], username=data["username"], token=data["token"])
    except FileNotFoundError:
        raise LadderError("not logged in: run `grass login` first") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise LadderError(f"{path} is unreadable ({exc}): run `grass login` again") from None


# ---------------------------------------------------------------------- uploads


SKIPPED = ("__pycache__", ".git")


def upload_payload(path: Path) -> tuple[str, bytes]:
    """The file name and bytes to upload for `path`: a file as it is, a folder as a .zip of
    its files (without caches), named after the folder."""
    if path.is_dir():
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for item in sorted(path.rglob("*")):
                relative = item.relative_to(path)
                if item.is_file() and not any(p in SKIPPED for p in relative.parts):
                    if item.suffix != ".pyc":
                        archive.write(item, relative.as_posix())
        return f"{path.resolve().name}.zip", buffer.getvalue()
    try:
        return path.name, path.read_bytes()
    except OSError as exc:
        raise LadderError(f"{path}: {exc.strerror or exc}") from None


# ---------------------------------------------------------------------- the API


def _message(body: Any) -> str:
    """DRF's error body as one line: `detail`, or each field's messages."""
    if isinstance(body, dict):
        if set(body) == {"detail"}:
            return str(body["detail"])
        parts = []
        for field, value in body.items():
            texts = value if isinstance(value, list) else [value]
            joined = " ".join(str(t) for t in texts)
            parts.append(
                joined if field in ("non_field_errors", "detail") else f"{field}: {joined}"
            )
        return "; ".join(parts)
    if isinstance(body, list):
        return " ".join(str(t) for t in body)
    return str(body)


class Ladder:
    """The API of one site, as one user (or anonymously, without a token)."""

    def __init__(self, site: str, token: str | None = None, transport: Any = None) -> None:
        self.site = site.rstrip("/")
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Token {token}"
        self.http = httpx.Client(
            base_url=self.site, headers=headers, timeout=TIMEOUT, transport=transport
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Ladder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            answer = self.http.request(method, path, **kwargs)
        except httpx.TimeoutException:
            raise LadderError(f"{self.site} did not answer in time") from None
        except httpx.HTTPError as exc:
            reason = str(exc) or type(exc).__name__
            raise LadderError(f"cannot reach {self.site}: {reason}") from None
        if answer.is_success:
            return answer
        raise self._refusal(answer)

    def _refusal(self, answer: httpx.Response) -> LadderError:
        status = answer.status_code
        try:
            said = _message(answer.json())
        except ValueError:
            said = answer.reason_phrase or "no explanation"
        if status == 401:
            return LadderError(
                f"the site refused the credentials ({said}): log in again with `grass login`, "
                "with your password or a token from the site's API token page"
            )
        if status == 429:
            # A limit of the site (uploads, pending versions, failed logins): its message names
            # the limit and usually says when to try again; Retry-After is added when not.
            wait = answer.headers.get("Retry-After", "")
            told = any(words in said.lower() for words in ("try again", "expected available"))
            later = f" (try again in {wait} s)" if wait.isdigit() and not told else ""
            return LadderError(f"refused (429, too many requests): {said}{later}")
        if status >= 500:
            return LadderError(f"the site failed ({status}): {said}")
        return LadderError(f"refused ({status}): {said}")

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        answer = self.request(method, path, **kwargs)
        try:
            return answer.json()
        except ValueError:
            raise LadderError(
                f"{self.site}{path} did not answer JSON: is it a Grass ladder?"
            ) from None

    def pages(self, path: str, params: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        """Every item of a paginated list, following `next`."""
        page = 1
        while True:
            body = self.json("GET", path, params={**(params or {}), "page": page})
            yield from body["results"]
            if not body.get("next"):
                return
            page += 1

    # ------------------------------------------------------------------ operations

    def login(self, username: str, password: str) -> str:
        body = self.json(
            "POST", "/api/auth/token/", json={"username": username, "password": password}
        )
        return str(body["token"])

    def me(self) -> dict[str, Any]:
        body: dict[str, Any] = self.json("GET", "/api/auth/me/")
        return body

    def bots(self, owner: str) -> list[dict[str, Any]]:
        return list(self.pages("/api/bots/", {"owner": owner}))

    def find_bot(self, owner: str, name: str) -> dict[str, Any] | None:
        """The bot `name` of `owner` (names are unique per owner), or None."""
        for bot in self.pages("/api/bots/", {"owner": owner, "name": name}):
            if bot["name"] == name and bot["owner"] == owner:
                return bot
        return None

    def bot(self, bot_id: int) -> dict[str, Any]:
        body: dict[str, Any] = self.json("GET", f"/api/bots/{bot_id}/")
        return body

    def create_bot(self, name: str) -> dict[str, Any]:
        body: dict[str, Any] = self.json("POST", "/api/bots/", json={"name": name})
        return body

    def upload(self, bot_id: int, filename: str, data: bytes) -> dict[str, Any]:
        files = {"file": (filename, data, "application/octet-stream")}
        body: dict[str, Any] = self.json("POST", f"/api/bots/{bot_id}/versions/", files=files)
        return body

    def version(self, bot_id: int, version_id: int) -> dict[str, Any]:
        """A version of the bot by id (the versions list is newest first)."""
        for version in self.pages(f"/api/bots/{bot_id}/versions/"):
            if version["id"] == version_id:
                return version
        raise LadderError(f"version {version_id} of bot {bot_id} is gone")

    def matches(self, bot_id: int, last: int) -> list[dict[str, Any]]:
        """The bot's `last` most recent matches (newest first), finished or not."""
        found: list[dict[str, Any]] = []
        for match in self.pages("/api/matches/", {"bot": bot_id}):
            found.append(match)
            if len(found) >= last:
                break
        return found

    def match(self, match_id: int) -> dict[str, Any]:
        body: dict[str, Any] = self.json("GET", f"/api/matches/{match_id}/")
        return body

    def match_log(self, match_id: int) -> bytes:
        return self.request("GET", f"/api/matches/{match_id}/log/").content

    def match_debug(self, match_id: int) -> dict[str, Any]:
        """The match's debug lines you may read (`seats`: [] when none)."""
        body: dict[str, Any] = self.json("GET", f"/api/matches/{match_id}/debug/")
        return body

    def challenge(self, body: dict[str, Any]) -> dict[str, Any]:
        """Ask for a challenge (POST /api/challenges/); its answer, state `waiting`."""
        answer: dict[str, Any] = self.json("POST", "/api/challenges/", json=body)
        return answer

    def challenge_get(self, challenge_id: int) -> dict[str, Any]:
        body: dict[str, Any] = self.json("GET", f"/api/challenges/{challenge_id}/")
        return body

    def game_create(self, body: dict[str, Any]) -> dict[str, Any]:
        """Start a game of yours against bots (POST /api/games/): `opponents` (bot ids),
        `ruleset`, `seat`, `hands`. The answer names its `socket_url`."""
        answer: dict[str, Any] = self.json("POST", "/api/games/", json=body)
        return answer

    def games(self) -> list[dict[str, Any]]:
        """Your latest games, newest first (GET /api/games/)."""
        answer: list[dict[str, Any]] = self.json("GET", "/api/games/")
        return answer


def signed_in(credentials: Credentials | None = None) -> tuple[Ladder, Credentials]:
    """A client of the site the user logged in to, with their token."""
    credentials = credentials or load_credentials()
    return Ladder(credentials.site, credentials.token), credentials
