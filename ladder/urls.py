"""URLs of the ladder site: the admin, the REST API under /api/, its schema and docs."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from ladder.accounts.apis import SignupApi, TokenApi
from ladder.bots.apis import BotDetailApi, BotsApi, BotVersionsApi, BotVersionSourceApi
from ladder.matches.apis import MatchDetailApi, MatchListApi, MatchLogApi
from ladder.ratings.apis import LeaderboardApi

api = [
    path("auth/signup/", SignupApi.as_view(), name="signup"),
    path("auth/token/", TokenApi.as_view(), name="token"),
    path("bots/", BotsApi.as_view(), name="bots"),
    path("bots/<int:bot_id>/", BotDetailApi.as_view(), name="bot-detail"),
    path("bots/<int:bot_id>/versions/", BotVersionsApi.as_view(), name="bot-versions"),
    path(
        "versions/<int:version_id>/source/",
        BotVersionSourceApi.as_view(),
        name="version-source",
    ),
    path("matches/", MatchListApi.as_view(), name="matches"),
    path("matches/<int:match_id>/", MatchDetailApi.as_view(), name="match-detail"),
    path("matches/<int:match_id>/log/", MatchLogApi.as_view(), name="match-log"),
    path("leaderboard/", LeaderboardApi.as_view(), name="leaderboard"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI's scripts and styles come from drf-spectacular-sidecar through staticfiles:
    # the page loads nothing from another site.
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include(api)),
]
