"""Writing bots: creating them, storing uploads, and validating a version by playing it."""

from __future__ import annotations

import hashlib
import logging
import math
import secrets
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from bots.runner import runtime
from bots.runner.botfiles import BadBot, BotSource, load_bot, source_from_upload
from bots.runner.build import BuildUnavailable, build
from bots.runner.faults import is_host_fault
from bots.runner.languages import detect
from bots.runner.match import play_match
from bots.runner.results import InfrastructureFault
from ladder.bots.models import Bot, BotBuild, BotVersion
from ladder.bots.names import tidy_spaces
from ladder.bots.runtimes import runtime_refusal
from ladder.bots.selectors import bot_version_source, owner_pending_count, owner_upload_times
from ladder.hourly import in_minutes
from ladder.ratings.services import rating_pool_enter
from ladder.storage import storage_save_addressed, storage_save_whole
from ladder.task_sending import send_now

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

VALIDATION_ERROR_CHARS = 4_000
"""How much of a forfeit reason and stderr an invalid version keeps for its author."""
REASON_CHARS = 1_000
"""At most this much of it is the forfeit reason; the rest is the end of stderr."""
VALIDATION_OPPONENTS = ("random", "greedy")
NEVER_SENT = datetime(2000, 1, 1, tzinfo=UTC)
"""`validation_sent` of a pending version whose task message never reached the broker (Redis
down at the upload, or at a resend): the next sweep (`bot_version_resend_pending`, every 15 s
on beat) sends it whatever the resend period, so it is validated soon after Redis is back."""
"""The example bots (bots/examples) a new version plays its validation game against."""


class BotNameTaken(ValidationError):
    """The owner already has a bot of that name (the API answers 409 Conflict, a page shows it
    beside the field like any other refusal)."""


def bot_create(*, owner: User, name: str) -> Bot:
    """A new bot of `owner`, its name's spaces tidied; raises ValidationError for a name that
    is not allowed (an invisible character, see `ladder.bots.names`) and BotNameTaken if the
    owner already has one so named."""
    name = tidy_spaces(name)
    taken = BotNameTaken({"name": f"You already have a bot named {name!r}."})
    bot = Bot(owner=owner, name=name)
    # validate_constraints=False: the name check below says it in words, and the constraint
    # itself still holds against a concurrent create (the IntegrityError below).
    bot.full_clean(validate_constraints=False)
    if Bot.objects.filter(owner=owner, name=name).exists():
        raise taken
    try:
        with transaction.atomic():
            bot.save()
    except IntegrityError:
        raise taken from None
    return bot


def bot_debug_publish(*, bot: Bot, public: bool) -> Bot:
    """Show `bot`'s debug lines (what it writes on stderr while it decides) to everyone in
    the replays of its matches, past and future, or (False) to its owner and staff only."""
    Bot.objects.filter(pk=bot.pk).update(debug_public=public)
    bot.debug_public = public
    return bot


UPLOAD_WINDOW = timedelta(hours=1)
"""GRASS_UPLOADS_PER_HOUR counts the uploads of the last hour (a sliding window)."""
PENDING_RETRY_SECONDS = 60
"""Retry-After for an owner at GRASS_PENDING_VERSIONS_PER_ACCOUNT: about one validation game
(a build and a one-hand game), after which one of the pending versions usually has its
verdict."""


class UploadLimited(Exception):
    """An upload refused by a per-account limit (GRASS_UPLOADS_PER_HOUR,
    GRASS_PENDING_VERSIONS_PER_ACCOUNT); the message names the limit, `wait` is the seconds
    after which trying again makes sense (the API's Retry-After). Nothing was stored."""

    def __init__(self, message: str, *, wait: int) -> None:
        super().__init__(message)
        self.wait = wait


def bot_version_upload_check(*, owner_id: int, now: datetime | None = None) -> None:
    """Raise UploadLimited if the owner may not upload a version now: they uploaded
    GRASS_UPLOADS_PER_HOUR in the last hour, or GRASS_PENDING_VERSIONS_PER_ACCOUNT of their
    versions still wait for their validation game.

    Every version costs a worker its build and validation game (a build that sleeps held one
    for minutes), so one account must not queue them by the dozen. Both limits count the
    versions stored, rows in the database that every web process sees; an upload refused for
    its file or for a full disk stored nothing and costs nothing. 0 turns a limit off.
    """
    now = now or timezone.now()
    per_hour = settings.GRASS_UPLOADS_PER_HOUR
    if per_hour > 0:
        recent = owner_upload_times(owner_id=owner_id, since=now - UPLOAD_WINDOW, most=per_hour)
        if len(recent) >= per_hour:
            # When the oldest of those leaves the hour, the owner is under the limit again.
            wait = max(1, math.ceil((recent[-1] + UPLOAD_WINDOW - now).total_seconds()))
            raise UploadLimited(
                f"Too many uploads: an account may upload at most {per_hour} version"
                f"{'' if per_hour == 1 else 's'} an hour, and yours has uploaded {per_hour} in "
                f"the last hour. Try again in {in_minutes(wait)}.",
                wait=wait,
            )
    pending_limit = settings.GRASS_PENDING_VERSIONS_PER_ACCOUNT
    if pending_limit > 0:
        pending = owner_pending_count(owner_id=owner_id, most=pending_limit)
        if pending >= pending_limit:
            raise UploadLimited(
                f"Too many versions waiting for validation: an account may have at most "
                f"{pending_limit} pending at once, and yours has {pending}. Try again when one "
                "of them has its verdict (its bot's page shows it).",
                wait=PENDING_RETRY_SECONDS,
            )


def bot_version_upload(
    *, bot: Bot, filename: str, data: bytes, limited: bool = False
) -> BotVersion:
    """Check an upload (size, UTF-8, zip safety), store it and return its pending version.

    Raises BadBot with the reason for the author before anything is stored, and StorageFull
    (nothing stored either) when the media storage has no room for it. `limited` (an upload
    from a client of the site: `bot_version_submit`) applies the owner's upload limits first
    (`bot_version_upload_check`: UploadLimited, nothing stored); fixtures, benchmarks and the
    example bots' command store freely.
    """
    if limited:
        # Said before the file is even looked at: an owner at a limit learns that first.
        bot_version_upload_check(owner_id=bot.owner_id)
    source = source_from_upload(bot.name, filename, data)
    # The stored name is ours: bot.zip, or the single file's entry name (bot.cpp, bot, ...).
    stored_name = "bot.zip" if filename.endswith(".zip") else next(iter(source.files))
    return _version_store(
        bot=bot,
        stored_name=stored_name,
        data=data,
        limited=limited,
        language=detect(source.files).name,
    )


def bot_version_refused(*, bot: Bot, filename: str, data: bytes, reason: str) -> BotVersion:
    """A client's upload that is no bot the ladder can run (its name, encoding or archive: the
    BadBot `reason`), kept as an invalid version that says why, as a failed build is.

    The REST API answers every well-formed upload with a version and its verdict, so a client
    follows one path whatever it sent; the file is kept as sent (named `upload`), never
    unpacked or run. It counts against the owner's uploads of the hour like any other (it is
    never pending): UploadLimited past the limits. Raises StorageFull (nothing stored) when
    the media storage has no room.
    """
    bot_version_upload_check(owner_id=bot.owner_id)
    return _version_store(
        bot=bot,
        stored_name="upload",
        data=data,
        limited=True,
        language="",
        status=BotVersion.Status.INVALID,
        validation_error=f"{filename}: {reason}"[:VALIDATION_ERROR_CHARS],
    )


def _version_store(
    *, bot: Bot, stored_name: str, data: bytes, limited: bool, language: str, **fields: object
) -> BotVersion:
    """The bot's next version of `data`, stored under `stored_name`, with `fields` set;
    `limited`: within the owner's upload limits (UploadLimited otherwise, nothing stored)."""
    with transaction.atomic():
        if limited:
            # Locking the owner serialises their uploads (of all their bots), and the counts
            # are read after the lock, so two uploads at once cannot both take the last place.
            get_user_model().objects.select_for_update().filter(pk=bot.owner_id).get()
            bot_version_upload_check(owner_id=bot.owner_id)
        # Locking the bot serialises concurrent uploads, so version numbers never collide.
        Bot.objects.select_for_update().filter(pk=bot.pk).get()
        last = BotVersion.objects.filter(bot=bot).aggregate(last=Max("number"))["last"]
        version = BotVersion(
            bot=bot,
            number=(last or 0) + 1,
            sha256=hashlib.sha256(data).hexdigest(),
            size=len(data),
            language=language,
            **fields,
        )
        # Whole or not at all: a full disk raises StorageFull, leaving no file and (the
        # transaction rolls back) no version.
        storage_save_whole(version.file, stored_name, data)
        try:
            version.save()
        except BaseException:
            version.file.delete(save=False)
            raise
    return version


def bot_version_validate(*, version: BotVersion) -> BotVersion:
    """Build the version if its language is compiled, then play a short sandboxed game
    against the example bots, and record the verdict.

    A build that fails makes the version invalid, with the compiler's output (a failed build
    is the bot's fault, never an infrastructure one). The version takes seat 0 of a one-hand
    game against VALIDATION_OPPONENTS: one hand keeps the answer to an upload quick, and three
    seats catch a bot that only copes with one opponent. Only its own seat counts (an
    opponent's forfeit is not its fault): a version that forfeits is invalid, with the forfeit
    reason and the end of its stderr (a traceback, usually). The game is played outside any
    transaction; the verdict is written in one. A version that is no longer pending is
    returned unchanged. InfrastructureFault (the sandbox or a build could not start, or this
    worker runs another runtime image than the site) propagates and leaves the version
    pending: not the bot's fault.
    """
    refusal = runtime_refusal()
    if refusal is not None:
        raise InfrastructureFault(refusal)
    source = bot_version_source(version=version)
    build_log = ""
    error = ""
    if detect(source.files).build:
        built = bot_version_build(version=version, source=source)
        build_log = built.log
        if built.ok:
            source = _with_artifact(source, built)
        else:
            error = _build_error(built.log)
    if not error:
        played = play_match(
            [source, *(load_bot(name) for name in VALIDATION_OPPONENTS)],
            seed=secrets.randbits(63),
            limits={"max_hands": 1},
            sandboxed=settings.GRASS_SANDBOXED,
        )
        seat = played.seats[0]
        if seat.forfeited:
            error = _validation_error(reason=seat.forfeit_reason, stderr=seat.stderr)
    status = BotVersion.Status.INVALID if error else BotVersion.Status.VALID
    with transaction.atomic():
        locked = BotVersion.objects.select_for_update().get(pk=version.pk)
        if locked.status != BotVersion.Status.PENDING:
            return locked
        locked.status = status
        locked.validation_error = error
        locked.build_log = build_log
        locked.save(update_fields=["status", "validation_error", "build_log"])
        if status == BotVersion.Status.VALID:
            # A version that plays its validation game cleanly puts a disabled bot back.
            Bot.objects.filter(pk=locked.bot_id).update(disabled=None, disabled_reason="")
            # In this transaction: the matchmaker's pool takes the bot with its verdict.
            rating_pool_enter(bot_id=locked.bot_id)
    return locked


def bot_version_build(*, version: BotVersion, source: BotSource | None = None) -> BotBuild:
    """The version's build for this worker's runtime image: the stored one, or built now in a
    build box and stored (the artifact content-addressed). Raises InfrastructureFault when no
    build can run here; a build that fails is stored as failed, with the compiler's output."""
    image = runtime.identity()
    stored = BotBuild.objects.filter(version=version, runtime=image).first()
    if stored is not None:
        return stored
    source = source or bot_version_source(version=version)
    try:
        built = build(source, sandboxed=settings.GRASS_SANDBOXED)
    except BuildUnavailable as exc:
        raise InfrastructureFault(str(exc)) from None
    record = BotBuild(
        version=version,
        runtime=image,
        ok=built.ok,
        log=built.log,
        artifact_name=built.artifact_name or "",
        cpu_seconds=round(built.cpu_seconds, 3),
    )
    if built.artifact is not None:
        record.artifact_sha256 = hashlib.sha256(built.artifact).hexdigest()
        storage_save_addressed(record.artifact, built.artifact)
    try:
        with transaction.atomic():
            record.save()
    except IntegrityError:  # built twice at once: the first one stored stands
        return BotBuild.objects.get(version=version, runtime=image)
    return record


def bot_version_runnable(*, version: BotVersion) -> BotSource:
    """The version as a match runs it: its files, and for a compiled language its build's
    artifact for this worker's image (built now if this image has none yet, as after a new
    image is rolled out). A build that fails leaves the artifact out: the bot then does not
    start, and its seat forfeits saying so."""
    source = bot_version_source(version=version)
    try:
        compiled = detect(source.files).build
    except BadBot:
        return source  # the runner says why it cannot start
    if not compiled:
        return source
    built = bot_version_build(version=version, source=source)
    return _with_artifact(source, built) if built.ok else source


def _with_artifact(source: BotSource, built: BotBuild) -> BotSource:
    with built.artifact.open("rb") as handle:
        data = handle.read()
    if hashlib.sha256(data).hexdigest() != built.artifact_sha256:
        raise RuntimeError(f"stored artifact of {built} does not match its sha256")
    return BotSource(source.name, {**source.files, built.artifact_name: data})


def _build_error(log: str) -> str:
    """A failed build's verdict: the end of the compiler's output (its last lines say what
    failed; the whole output is the version's build_log)."""
    tail = log[-(VALIDATION_ERROR_CHARS - 100) :]
    return f"the build failed; the compiler's output (last lines):\n{tail}"


def _validation_error(*, reason: str, stderr: str) -> str:
    """The forfeit reason, then as much of the end of stderr as fits in VALIDATION_ERROR_CHARS:
    a traceback's last lines (the exception) are the ones its author needs most."""
    error = reason[:REASON_CHARS]
    if stderr.strip():
        error += "\n\nstderr (last lines):\n"
        error += stderr[-(VALIDATION_ERROR_CHARS - len(error)) :]
    return error


def bot_version_submit(*, bot: Bot, filename: str, data: bytes) -> BotVersion:
    """Store a client's upload (raises UploadLimited past the owner's upload limits, BadBot,
    or StorageFull if the media storage has no room, each before storing anything) and have it
    validated.

    With GRASS_VALIDATE_INLINE (development, tests) the validation game is played here and the
    version comes back with its verdict; otherwise the `validate_version` task is enqueued
    once the upload is committed and the version comes back pending.

    If the host fails (the sandbox, the image, the media: `bots.runner.faults`; not the bot's
    fault) the version stays pending, and
    `bot_version_resend_pending` sends it to the workers later.
    """
    version = bot_version_upload(bot=bot, filename=filename, data=data, limited=True)
    if not settings.GRASS_VALIDATE_INLINE:
        _enqueue_validation_on_commit(version_id=version.pk)
        return version
    try:
        return bot_version_validate(version=version)
    except Exception as exc:
        if not is_host_fault(exc):  # any of the host's, not only the sandbox's
            raise
        logger.exception("validation of %s could not run; it stays pending", version)
        return version


def bot_version_resend_pending(*, older_than: timedelta | None = None) -> list[int]:
    """Send the versions still pending to the workers again, once their validation was last
    asked for longer than `older_than` ago (default GRASS_VALIDATION_RESEND_SECONDS); returns
    their ids.

    A version stays pending when its task message was lost (a Redis restart without
    persistence), when the task used up its retries because the sandbox would not start, or
    when an inline validation could not start the sandbox. Each version is claimed with a
    conditional update on `validation_sent`, so two sweeps at once send it once, and it is
    sent at most once per period. A duplicate message is harmless: `bot_version_validate`
    records the verdict of a pending version only. A version whose message could not be sent
    at all (NEVER_SENT) is sent by the first sweep that runs.
    """
    if older_than is None:
        older_than = timedelta(seconds=settings.GRASS_VALIDATION_RESEND_SECONDS)
    now = timezone.now()
    pending = BotVersion.objects.filter(
        status=BotVersion.Status.PENDING, validation_sent__lt=now - older_than
    )
    resent = []
    for version_id, sent in pending.values_list("id", "validation_sent"):
        with transaction.atomic():
            claimed = BotVersion.objects.filter(
                pk=version_id, status=BotVersion.Status.PENDING, validation_sent=sent
            ).update(validation_sent=now)
            if claimed:
                _enqueue_validation_on_commit(version_id=version_id)
                resent.append(version_id)
    if resent:
        logger.warning("sent again versions pending since before %s: %s", now - older_than, resent)
    return resent


def _enqueue_validation_on_commit(*, version_id: int) -> None:
    # Sent once the version is committed (a worker must find its row): delay_on_commit would
    # do that too, but would raise a broker outage into the upload's request, after the
    # version was stored.
    transaction.on_commit(lambda: _validation_send(version_id=version_id))


def _validation_send(*, version_id: int) -> None:
    """Send the version's validation task; if the broker cannot take it, say so and mark the
    version NEVER_SENT for the sweep. The upload is stored: an outage of Redis is no reason to
    answer it with an error, nor to make its author wait the whole resend period."""
    # Imported here: tasks import services, not the other way round at import time.
    from ladder.bots.tasks import validate_version

    if not send_now(validate_version, version_id, recovery="the next validation sweep sends it"):
        BotVersion.objects.filter(pk=version_id, status=BotVersion.Status.PENDING).update(
            validation_sent=NEVER_SENT
        )
