"""HTML pages of bots: a bot's page, a new bot, uploading a version. Thin: selectors read,
services write, the templates show."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from bots.runner.botfiles import BadBot
from ladder.accounts.selectors import signed_in_user
from ladder.bots.forms import BotCreateForm, BotUploadForm
from ladder.bots.models import Bot, BotVersion
from ladder.bots.selectors import bot_errors_visible, bot_versions
from ladder.bots.services import bot_create, bot_version_submit
from ladder.charts.pages import bot_charts
from ladder.matches.selectors import bot_faults, bot_game_counts, match_list
from ladder.ratings.selectors import bot_ratings
from ladder.storage import StorageFull

RECENT_MATCHES = 20


def _is_owner(request: HttpRequest, bot: Bot) -> bool:
    return request.user.is_authenticated and request.user.pk == bot.owner_id


def bot_page(request: HttpRequest, bot_id: int) -> HttpResponse:
    """`/bots/<id>/`: owner, versions, ratings with bands, recent matches, faults."""
    bot = get_object_or_404(Bot.objects.select_related("owner"), pk=bot_id)
    context = {
        "bot": bot,
        "is_owner": _is_owner(request, bot),
        # Validation errors quote the bot's stderr (lines of its private source).
        "show_errors": bot_errors_visible(user=request.user, bot=bot),
        "versions": bot_versions(bot=bot),
        # Versions whose validation game has not been played yet: the page waits for them.
        "pending": list(
            bot_versions(bot=bot)
            .filter(status=BotVersion.Status.PENDING)
            .values_list("number", flat=True)
        ),
        "ratings": bot_ratings(bot_id=bot.pk),
        "matches": match_list(filters={"bot": bot.pk})[:RECENT_MATCHES],
        "counts": bot_game_counts(bot_id=bot.pk),
        "faults": bot_faults(bot_id=bot.pk),
        "charts": bot_charts(bot_id=bot.pk),
    }
    return render(request, "bots/bot.html", context)


@login_required
def bot_create_page(request: HttpRequest) -> HttpResponse:
    """`/bots/new/`: a new bot of the signed-in user, then its upload form."""
    form = BotCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            bot = bot_create(owner=signed_in_user(request), name=form.cleaned_data["name"])
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            return redirect("bot-upload", bot_id=bot.pk)
    return render(request, "bots/new.html", {"form": form})


@login_required
def bot_upload_page(request: HttpRequest, bot_id: int) -> HttpResponse:
    """`/bots/<id>/upload/`: a new version, for the bot's owner only (others get 403)."""
    bot = get_object_or_404(Bot, pk=bot_id)
    if not _is_owner(request, bot):
        raise PermissionDenied("Only the bot's owner may upload versions.")
    form = BotUploadForm(request.POST or None, request.FILES or None)
    version = None
    status = 200
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            version = bot_version_submit(bot=bot, filename=upload.name, data=upload.read())
        except BadBot as exc:
            form.add_error("file", str(exc))
        except StorageFull as exc:
            # The server's trouble, said as such (507), with the form kept for a retry.
            form.add_error(None, str(exc))
            status = 507
        else:
            if version.status == BotVersion.Status.PENDING:
                messages.success(
                    request,
                    f"Version {version.number} uploaded: pending. Its validation game is being "
                    "played; this page shows the verdict when it is in.",
                )
                return redirect("bot-page", bot_id=bot.pk)
            if version.status == BotVersion.Status.VALID:
                messages.success(request, f"Version {version.number} uploaded: valid.")
                return redirect("bot-page", bot_id=bot.pk)
    context = {"bot": bot, "form": form, "version": version}
    return render(request, "bots/upload.html", context, status=status)
