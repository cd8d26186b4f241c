"""HTML pages of bots: a bot's page, a new bot, uploading a version, and the "Write a bot" page
with its downloads. Thin: selectors read, services write, the templates show."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from bots.runner.botfiles import BadBot
from ladder.accounts.selectors import signed_in_user
from ladder.bots import kit
from ladder.bots.forms import BotCreateForm, BotUploadForm
from ladder.bots.models import Bot, BotVersion
from ladder.bots.selectors import bot_errors_visible, bot_versions, owner_bots
from ladder.bots.services import (
    UploadLimited,
    bot_create,
    bot_debug_publish,
    bot_version_submit,
)
from ladder.charts.pages import bot_charts
from ladder.matches.selectors import (
    bot_faults,
    bot_game_counts,
    match_keys,
    matches_in_order,
    release,
)
from ladder.ratings.selectors import bot_ratings, ratings_of_bots
from ladder.storage import StorageFull

RECENT_MATCHES = 20
MY_BOTS_PAGE = 50


def _is_owner(request: HttpRequest, bot: Bot) -> bool:
    return request.user.is_authenticated and request.user.pk == bot.owner_id


@login_required
def my_bots_page(request: HttpRequest) -> HttpResponse:
    """The signed-in person's bots, newest first, 50 a page (`?before=` a bot id: the next
    page): each with its newest version's verdict and its ratings. Without it, a bot was found
    again only through the leaderboard, once rated."""
    before = request.GET.get("before", "")
    if before and not (before.isdigit() and len(before) <= 18):
        raise Http404("no such page of bots")
    user = signed_in_user(request)
    bots = owner_bots(
        owner_id=user.pk, before=int(before) if before else None, most=MY_BOTS_PAGE + 1
    )
    more, bots = len(bots) > MY_BOTS_PAGE, bots[:MY_BOTS_PAGE]
    ratings = ratings_of_bots(bot_ids=[bot.pk for bot in bots])
    rows = [(bot, ratings[bot.pk]) for bot in bots]
    context = {"rows": rows, "older": bots[-1].pk if more else None, "first": not before}
    return render(request, "bots/mine.html", context)


def bot_page(request: HttpRequest, bot_id: int) -> HttpResponse:
    """`/bots/<id>/`: owner, versions, ratings with bands, recent matches, faults."""
    bot = get_object_or_404(Bot.objects.select_related("owner"), pk=bot_id)
    ratings = bot_ratings(bot_id=bot.pk)
    matches = matches_in_order(
        [row["key"] for row in match_keys(filters={"bot": bot.pk})[:RECENT_MATCHES]]
    )
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
        "ratings": ratings,
        "provisional": any(rating.provisional for rating in ratings),
        "provisional_games": settings.GRASS_PROVISIONAL_GAMES,
        "matches": matches,
        "counts": bot_game_counts(bot_id=bot.pk),
        "faults": bot_faults(bot_id=bot.pk),
        "charts": bot_charts(bot_id=bot.pk),
    }
    response = render(request, "bots/bot.html", context)
    release(matches)
    return response


@login_required
@require_POST
def bot_debug_page(request: HttpRequest, bot_id: int) -> HttpResponse:
    """`POST /bots/<id>/debug/` (the bot page's form): show the bot's debug lines to everyone
    (`debug_public` checked) or to its owner only; the owner's alone (others get 403)."""
    bot = get_object_or_404(Bot, pk=bot_id)
    if not _is_owner(request, bot):
        raise PermissionDenied("Only the bot's owner may change who reads its debug lines.")
    public = request.POST.get("debug_public") == "on"
    bot_debug_publish(bot=bot, public=public)
    messages.success(
        request,
        "Its debug lines are shown to everyone in its replays now."
        if public
        else "Its debug lines are shown to you only now.",
    )
    return redirect("bot-page", bot_id=bot.pk)


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
    """`/bots/<id>/upload/`: a new version, for the bot's owner only (others get 403); past
    the account's upload limits, 429 with Retry-After and the form again, saying which."""
    bot = get_object_or_404(Bot, pk=bot_id)
    if not _is_owner(request, bot):
        raise PermissionDenied("Only the bot's owner may upload versions.")
    form = BotUploadForm(request.POST or None, request.FILES or None)
    version = None
    status = 200
    retry_after = None
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            version = bot_version_submit(bot=bot, filename=upload.name, data=upload.read())
        except BadBot as exc:
            form.add_error("file", str(exc))
        except UploadLimited as exc:
            form.add_error(None, str(exc))
            status = 429
            retry_after = exc.wait
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
    response = render(request, "bots/upload.html", context, status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def write_a_bot_page(request: HttpRequest) -> HttpResponse:
    """`/write-a-bot/`: everything a newcomer needs to go from nothing to a rated bot, all of it
    downloadable from this site (the rules, the protocol, the starters, the SDKs, `grass`)."""
    context = {
        "site": request.build_absolute_uri("/").rstrip("/"),
        "starters": kit.starters(),
        "kit_name": kit.KIT_NAME,
    }
    return render(request, "bots/write.html", context)


def kit_text_file(request: HttpRequest, name: str) -> HttpResponse:
    """`/write-a-bot/RULES.md`, `/write-a-bot/PROTOCOL.md`: the references as plain text (they
    are Markdown, which reads as it stands), shown in the browser."""
    data = kit.text(name)
    if data is None:
        raise Http404("no such text")
    return HttpResponse(data, content_type="text/plain; charset=utf-8")


def _download(data: bytes, filename: str, content_type: str) -> HttpResponse:
    response = HttpResponse(data, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def kit_starter_file(request: HttpRequest, language: str, filename: str) -> HttpResponse:
    """`/write-a-bot/starters/<language>/<file>`: a starter to save and change."""
    data = kit.starter_file(language, filename)
    if data is None:
        raise Http404("no such starter")
    return _download(data, filename, "text/plain; charset=utf-8")


def kit_javascript_sdk(request: HttpRequest) -> HttpResponse:
    """`/write-a-bot/grass.js`: the JavaScript SDK (in the sandbox, require('grass'))."""
    return _download(kit.javascript_sdk(), "grass.js", "text/javascript; charset=utf-8")


def kit_archive(request: HttpRequest) -> HttpResponse:
    """`/write-a-bot/grass-kit.zip`: `pip install` it for `grass`, the Python SDK and the
    engine."""
    return _download(kit.grass_kit(), kit.KIT_NAME, "application/zip")
