"""The replay viewer's pages and JSON: a finished match's frames, an uploaded log's frames, and
the page where a visitor opens a log of their own.

The frames come from the engine (`engine.replay_frames`), never from the browser: a seat's view
is filtered here, so another seat's hidden cards are never sent to it.
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.gzip import re_accepts_gzip
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import condition, require_GET, require_POST

from engine.game import ENGINE_VERSION
from engine.log import LogError
from ladder.matches.files import match_viewed
from ladder.replays.selectors import (
    UPLOAD_LIMIT,
    ReplayError,
    Throttled,
    match_log_bytes,
    match_log_etag,
    match_replay_stored,
    parse_view,
    replay_gzip,
)
from ladder.replays.throttle import client_key, compute_wait, upload_wait

MIB = 1024 * 1024


def _minutes(seconds: int) -> str:
    minutes = -(-seconds // 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def _error(message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def _replay(
    request: HttpRequest,
    digest: str,
    load: Callable[[], bytes],
    *,
    bad_log: int = 400,
    before_compute: Callable[[], None] | None = None,
) -> HttpResponse:
    """The viewer's document as JSON (cached: `replay_gzip`), or {"error": ...} with
    `bad_log` for a log that does not replay."""
    try:
        seat = parse_view(request.GET.get("view") or request.POST.get("view"))
        packed = replay_gzip(digest=digest, seat=seat, load=load, before_compute=before_compute)
    except LogError as exc:
        return _error(str(exc), bad_log)
    except Throttled as exc:
        refused = _error(str(exc), exc.status)
        refused["Retry-After"] = str(exc.retry_after)
        return refused
    except ReplayError as exc:
        return _error(str(exc), exc.status)
    return _gzipped_json(request, packed)


def _gzipped_json(request: HttpRequest, packed: bytes) -> HttpResponse:
    # Replays are kept gzipped: sent as they are to a browser that takes gzip (gzip_page
    # leaves an encoded answer alone), unpacked for one that does not.
    if re_accepts_gzip.search(request.META.get("HTTP_ACCEPT_ENCODING", "")):
        response = HttpResponse(packed, content_type="application/json")
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(gzip.decompress(packed), content_type="application/json")
    patch_vary_headers(response, ("Accept-Encoding",))
    return response


def _match_etag(request: HttpRequest, match_id: int) -> str | None:
    sha = match_log_etag(match_id=match_id)
    if sha is None:
        return None
    # The frames depend on the log, the view asked for and the engine that computed them.
    # Weak: the same frames are sent gzipped or not.
    return f'W/"{sha[:32]}-{request.GET.get("view", "all")}-{ENGINE_VERSION}"'


@require_GET
@gzip_page
@condition(etag_func=_match_etag)
def match_replay_json(request: HttpRequest, match_id: int) -> HttpResponse:
    """`/matches/<id>/replay.json?view=all|<seat>`: the frames of a finished match's log.

    404 for a match that has not finished; 400 for a bad view; 422 if the stored log no longer
    replays (say, written by an older major version of the engine).
    """
    sha = match_log_etag(match_id=match_id)
    if sha is None:
        return _error("no finished match with that id", 404)
    # Retention keeps the files of matches watched lately (at most one write a day a match).
    match_viewed(match_id=match_id)
    if request.GET.get("view") in (None, "", "all"):
        stored = match_replay_stored(match_id=match_id)
        if stored is not None:  # stored by a worker of an older version: a file read
            response = _gzipped_json(request, stored)
            response["Cache-Control"] = "public, max-age=3600"
            return response

    def load() -> bytes:
        data = match_log_bytes(match_id=match_id)
        if data is None:
            raise ReplayError("no finished match with that id", status=404)
        return data

    def charge() -> None:
        wait = compute_wait(client=client_key(request))
        if wait:
            limit = settings.GRASS_REPLAY_COMPUTES_PER_HOUR
            raise Throttled(
                f"too many replays computed: at most {limit} an hour for one address or account "
                f"(replays already computed are not counted); try again in {_minutes(wait)}",
                retry_after=wait,
            )

    response = _replay(request, sha, load, bad_log=422, before_compute=charge)
    if response.status_code == 200:
        response["Cache-Control"] = "public, max-age=3600"
    return response


@require_POST
@gzip_page
def upload_replay_json(request: HttpRequest) -> HttpResponse:
    """`POST /replay/upload.json?view=all|<seat>`: the frames of a log sent by the visitor,
    as the file field `log` of a form (CSRF-protected like any form) or as the raw body.

    400 with {"error": "line 12: ..."} for a log the engine does not reproduce; 413 for one
    larger than UPLOAD_LIMIT; 429 past GRASS_REPLAY_UPLOADS_PER_HOUR. Only the computed frames
    are kept, in the cache, so the same log opened again is not replayed again.
    """
    wait = upload_wait(client=client_key(request))
    if wait:
        limit = settings.GRASS_REPLAY_UPLOADS_PER_HOUR
        response = _error(
            f"too many logs opened: at most {limit} an hour from one address or account; "
            f"try again in {_minutes(wait)}",
            429,
        )
        response["Retry-After"] = str(wait)
        return response
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    # Refused before Django reads the body; the slack is the form's own fields and boundaries.
    if length > UPLOAD_LIMIT + 64 * 1024:
        return _error(f"the log is larger than {UPLOAD_LIMIT // MIB} MiB", 413)
    content_type = request.content_type or ""
    if content_type.startswith("multipart/form-data"):
        upload = request.FILES.get("log")
        if upload is None:
            return _error("choose a log file (.jsonl.gz or .jsonl) to open")
        if upload.size is not None and upload.size > UPLOAD_LIMIT:
            return _error(f"the log is larger than {UPLOAD_LIMIT // MIB} MiB", 413)
        data = upload.read(UPLOAD_LIMIT + 1)
    else:
        # Read from the stream, not request.body, so Django's form-data limit does not apply.
        data = request.read(UPLOAD_LIMIT + 1)
    if len(data) > UPLOAD_LIMIT:
        return _error(f"the log is larger than {UPLOAD_LIMIT // MIB} MiB", 413)
    if not data:
        return _error("the log file is empty")
    return _replay(request, hashlib.sha256(data).hexdigest(), lambda: data)


def replay_page(request: HttpRequest) -> HttpResponse:
    """`/replay/`: open a log file (a downloaded match log, or one `grass play` wrote)."""
    return render(
        request,
        "replays/upload.html",
        {"upload_limit": UPLOAD_LIMIT, "upload_limit_mib": UPLOAD_LIMIT // MIB},
    )
