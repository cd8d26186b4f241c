"""URLs of the ladder site: the HTML pages, the admin, the REST API under /api/, its schema
and docs."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

import ladder.converters  # noqa: F401  (registers <id:...>)
from ladder.accounts.apis import MeApi, SignupApi, TokenApi
from ladder.accounts.views import signup_page, tokens_page
from ladder.api import api_not_found
from ladder.bots.apis import (
    BotDetailApi,
    BotsApi,
    BotVersionDetailApi,
    BotVersionsApi,
    BotVersionSourceApi,
)
from ladder.bots.views import (
    bot_create_page,
    bot_debug_page,
    bot_page,
    bot_upload_page,
    kit_archive,
    kit_javascript_sdk,
    kit_starter_file,
    kit_text_file,
    my_bots_page,
    write_a_bot_page,
)
from ladder.challenges import apis as challenge_apis
from ladder.challenges import views as challenge_views
from ladder.favicon import favicon
from ladder.live.apis import GamesApi
from ladder.live.views import play_page
from ladder.matches.apis import MatchDebugApi, MatchDetailApi, MatchListApi, MatchLogApi
from ladder.matches.views import match_page, seat_stderr_page
from ladder.notifications import apis as notification_apis
from ladder.notifications import views as notification_views
from ladder.ratings.apis import LeaderboardApi
from ladder.ratings.views import leaderboard_page
from ladder.tournaments import apis as tournament_apis
from ladder.tournaments import views as tournament_views

api = [
    path("auth/signup/", SignupApi.as_view(), name="signup"),
    path("auth/token/", TokenApi.as_view(), name="token"),
    path("auth/me/", MeApi.as_view(), name="me"),
    path("bots/", BotsApi.as_view(), name="bots"),
    path("bots/<id:bot_id>/", BotDetailApi.as_view(), name="bot-detail"),
    path("bots/<id:bot_id>/versions/", BotVersionsApi.as_view(), name="bot-versions"),
    path("versions/<id:version_id>/", BotVersionDetailApi.as_view(), name="version-detail"),
    path(
        "versions/<id:version_id>/source/",
        BotVersionSourceApi.as_view(),
        name="version-source",
    ),
    path("matches/", MatchListApi.as_view(), name="matches"),
    path("matches/<id:match_id>/", MatchDetailApi.as_view(), name="match-detail"),
    path("matches/<id:match_id>/log/", MatchLogApi.as_view(), name="match-log"),
    path("matches/<id:match_id>/debug/", MatchDebugApi.as_view(), name="match-debug"),
    path("leaderboard/", LeaderboardApi.as_view(), name="leaderboard"),
    path("games/", GamesApi.as_view(), name="games"),
    path("challenges/", challenge_apis.ChallengesApi.as_view(), name="challenges"),
    path(
        "challenges/<id:challenge_id>/",
        challenge_apis.ChallengeDetailApi.as_view(),
        name="challenge-detail",
    ),
    path(
        "challenges/<id:challenge_id>/rematch/",
        challenge_apis.ChallengeRematchApi.as_view(),
        name="challenge-rematch",
    ),
    path(
        "challenges/<id:challenge_id>/cancel/",
        challenge_apis.ChallengeCancelApi.as_view(),
        name="challenge-cancel",
    ),
    path("tournaments/", tournament_apis.TournamentsApi.as_view(), name="tournaments"),
    path(
        "tournaments/<id:tournament_id>/",
        tournament_apis.TournamentDetailApi.as_view(),
        name="tournament-detail",
    ),
    path(
        "tournaments/<id:tournament_id>/entries/",
        tournament_apis.TournamentEntriesApi.as_view(),
        name="tournament-entries",
    ),
    path(
        "tournaments/<id:tournament_id>/entries/<id:entry_id>/",
        tournament_apis.TournamentEntryApi.as_view(),
        name="tournament-entry",
    ),
    # One path per action (not one pattern with an {action} parameter): each is an operation
    # of its own in the schema, with an integer id like every other tournament path.
    *(
        path(
            f"tournaments/<id:tournament_id>/{action}/",
            view.as_view(),
            {"action": action},
            name=f"tournament-{action}",
        )
        for action, view in tournament_apis.ACTION_APIS.items()
    ),
    path(
        "tournaments/<id:tournament_id>/archive/",
        tournament_apis.TournamentArchiveApi.as_view(),
        name="tournament-archive",
    ),
    path("webhooks/", notification_apis.WebhooksApi.as_view(), name="webhooks"),
    path(
        "webhooks/<id:webhook_id>/",
        notification_apis.WebhookDeleteApi.as_view(),
        name="webhook-detail",
    ),
    path(
        "webhooks/<id:webhook_id>/deliveries/",
        notification_apis.WebhookDeliveriesApi.as_view(),
        name="webhook-deliveries",
    ),
    path(
        "webhooks/<id:webhook_id>/test/",
        notification_apis.WebhookTestApi.as_view(),
        name="webhook-test",
    ),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI's scripts and styles come from drf-spectacular-sidecar through staticfiles:
    # the page loads nothing from another site.
    # Under a header that leads back to the site (ladder/templates/api_docs.html).
    path(
        "docs/",
        SpectacularSwaggerView.as_view(url_name="schema", template_name="api_docs.html"),
        name="docs",
    ),
    # Last: any other path under /api/ (a non-integer id, a typo) is a JSON 404.
    re_path(r"^(?P<rest>.*)$", api_not_found),
]

# The HTML pages' names differ from the API's ("signup" is the API's sign-up).
pages = [
    path("", leaderboard_page, name="home"),
    path("write-a-bot/", write_a_bot_page, name="write-a-bot"),
    re_path(r"^write-a-bot/(?P<name>RULES\.md|PROTOCOL\.md)$", kit_text_file, name="kit-text"),
    path(
        "write-a-bot/starters/<slug:language>/<str:filename>",
        kit_starter_file,
        name="kit-starter",
    ),
    path("write-a-bot/grass.js", kit_javascript_sdk, name="kit-grass-js"),
    path("write-a-bot/grass-kit.zip", kit_archive, name="kit-archive"),
    path("bots/new/", bot_create_page, name="bot-new"),
    path("account/bots/", my_bots_page, name="my-bots"),
    path("bots/<id:bot_id>/", bot_page, name="bot-page"),
    path("bots/<id:bot_id>/upload/", bot_upload_page, name="bot-upload"),
    path("bots/<id:bot_id>/debug/", bot_debug_page, name="bot-debug"),
    path("matches/<id:match_id>/", match_page, name="match-page"),
    path("play/", play_page, name="play-page"),
    path(
        "matches/<id:match_id>/seats/<id:seat>/stderr/",
        seat_stderr_page,
        name="seat-stderr",
    ),
    path("challenges/", challenge_views.challenges_page, name="challenges-page"),
    path(
        "challenges/<id:challenge_id>/",
        challenge_views.challenge_page,
        name="challenge-page",
    ),
    path(
        "challenges/<id:challenge_id>/rematch/",
        challenge_views.challenge_rematch_page,
        name="challenge-rematch-page",
    ),
    path(
        "challenges/<id:challenge_id>/cancel/",
        challenge_views.challenge_cancel_page,
        name="challenge-cancel-page",
    ),
    path("tournaments/", tournament_views.tournament_list_page, name="tournament-list"),
    path("tournaments/new/", tournament_views.tournament_create_page, name="tournament-new"),
    path(
        "tournaments/<id:tournament_id>/",
        tournament_views.tournament_page,
        name="tournament-page",
    ),
    path(
        "tournaments/<id:tournament_id>/enter/",
        tournament_views.tournament_enter,
        name="tournament-enter",
    ),
    path(
        "tournaments/<id:tournament_id>/entries/<id:entry_id>/withdraw/",
        tournament_views.tournament_withdraw,
        name="tournament-withdraw",
    ),
    re_path(
        r"^tournaments/(?P<tournament_id>[0-9]+)/(?P<action>pause|resume|cancel)/$",
        tournament_views.tournament_control,
        name="tournament-control",
    ),
    path(
        "account/notifications/",
        notification_views.notifications_page,
        name="notifications-page",
    ),
    path(
        "account/notifications/email/",
        notification_views.notifications_email,
        name="notifications-email",
    ),
    path(
        "account/notifications/webhooks/<id:webhook_id>/delete/",
        notification_views.webhook_delete_page,
        name="notifications-webhook-delete",
    ),
    path(
        "account/notifications/webhooks/<id:webhook_id>/test/",
        notification_views.webhook_test_page,
        name="notifications-webhook-test",
    ),
    path("signup/", signup_page, name="signup-page"),
    path("account/tokens/", tokens_page, name="tokens-page"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]

# Errors under /api/ are JSON even where no API view answers (ladder/api.py).
handler404 = "ladder.api.page_not_found"
handler500 = "ladder.api.server_error"

urlpatterns = [
    *pages,
    path("favicon.ico", favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path("api/", include(api)),
    # The replay viewer: /matches/<id>/replay.json, /replay/, /replay/upload.json.
    path("", include("ladder.replays.urls")),
]
