"""URLs of the ladder site."""

from django.contrib import admin
from django.urls import path

from ladder.ratings.apis import LeaderboardApi

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/leaderboard/", LeaderboardApi.as_view(), name="leaderboard"),
]
