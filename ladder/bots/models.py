"""A bot is an owner's named entry on the ladder; each upload is a numbered BotVersion.

The newest *valid* version plays (see `selectors.bot_version_playing`): a broken upload never
takes a working bot off the ladder.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from ladder.bots.names import display_name, validate_bot_name


class Bot(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bots"
    )
    name = models.CharField(max_length=64, validators=[validate_bot_name])
    """Unique per owner only: others see the bot as `display_name` (owner/bot)."""
    created = models.DateTimeField(default=timezone.now)
    disabled = models.DateTimeField(null=True, blank=True)
    """Set when the bot forfeited its last GRASS_DISABLE_AFTER_FORFEITS ladder games in a row:
    the matchmaker leaves it out until its owner uploads a version that passes validation."""
    disabled_reason = models.TextField(blank=True)
    debug_public = models.BooleanField(default=False)
    """Whether everyone may read what the bot writes on stderr while it decides (its debug
    lines, beside each decision in the replays of its matches). Off by default: they may quote
    its private source or strategy; its owner and staff always may."""

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="bot_name_unique_per_owner"),
        ]
        indexes = [
            # The few bots off the ladder, which the leaderboard leaves out by id.
            models.Index(
                fields=["disabled"],
                name="bot_off_ladder",
                condition=models.Q(disabled__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def display_name(self) -> str:
        """`owner/bot`: how the bot is shown to others, unique on the site (select the owner
        with the bot, or this reads it)."""
        return display_name(owner=self.owner.get_username(), bot=self.name)


def _version_path(version: BotVersion, filename: str) -> str:
    # The stored name is ours, never the uploader's: `bots/<bot id>/<number>/bot.py|bot.zip`.
    return f"bots/{version.bot_id}/{version.number}/{filename}"


class BotVersion(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        """Uploaded and stored; its validation game has not been played yet."""
        VALID = "valid", "valid"
        """Played its validation game without forfeiting: may play on the ladder."""
        INVALID = "invalid", "invalid"
        """Forfeited its validation game; `validation_error` says why."""

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    file = models.FileField(upload_to=_version_path, max_length=200)
    sha256 = models.CharField(max_length=64)
    size = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    validation_error = models.TextField(blank=True)
    language = models.CharField(max_length=16, blank=True)
    """What its entry file says it is written in (`bots.runner.languages`): python,
    javascript, cpp, rust, java or binary."""
    build_log = models.TextField(blank=True)
    """What the compiler printed when the version was built for its validation (compiled
    languages only). Only its owner and staff see it."""
    created = models.DateTimeField(default=timezone.now)
    validation_sent = models.DateTimeField(default=timezone.now)
    """When the validation game was last asked for: at the upload, then each time the sweep
    (`services.bot_version_resend_pending`) sends a version still pending to the workers again.
    It is also the sweep's claim: a conditional update on it resends a version only once."""

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["bot", "number"], name="bot_version_number_unique"),
        ]
        indexes = [
            # The per-account upload limits (services.bot_version_upload_check) read an owner's
            # versions of the last hour and their pending ones at every upload; these keep
            # each read to those rows, however many versions the owner had before. The
            # pending one also serves the sweep of versions left pending.
            models.Index(fields=["bot", "created"], name="bot_version_by_created"),
            models.Index(
                fields=["bot"],
                condition=models.Q(status="pending"),
                name="bot_version_pending",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot.name} v{self.number}"


def _artifact_path(build: BotBuild, filename: str) -> str:
    # Content-addressed: the same compiled bytes are stored once, however many builds made them.
    return f"artifacts/{build.artifact_sha256[:2]}/{build.artifact_sha256}"


class BotBuild(models.Model):
    """A compiled version built for one runtime image (`bots.runner.runtime.identity`): what
    the compiler printed and what it made. Every match of the version on that image runs the
    artifact; a new image builds the version again (a build is only good for the image it was
    made on)."""

    version = models.ForeignKey(BotVersion, on_delete=models.CASCADE, related_name="builds")
    runtime = models.CharField(max_length=64)
    ok = models.BooleanField()
    log = models.TextField(blank=True)
    artifact = models.FileField(upload_to=_artifact_path, max_length=200, blank=True)
    artifact_sha256 = models.CharField(max_length=64, blank=True)
    artifact_name = models.CharField(max_length=16, blank=True)
    """Its name beside the sources at /bot: `bot`, or `bot.jar`."""
    cpu_seconds = models.FloatField(default=0.0)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["version", "runtime"], name="bot_build_per_runtime"),
        ]

    def __str__(self) -> str:
        return f"{self.version} built for {self.runtime}"
