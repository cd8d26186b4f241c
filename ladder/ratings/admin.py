from django.contrib import admin

from ladder.ratings.models import BotRating, RatingChange


@admin.register(BotRating)
class BotRatingAdmin(admin.ModelAdmin):
    list_display = ["bot", "ruleset", "mu", "games", "updated"]
    list_filter = ["ruleset"]
    # Ratings change only through rating_apply; the admin shows them.
    readonly_fields = ["bot", "ruleset", "mu", "games", "updated"]


@admin.register(RatingChange)
class RatingChangeAdmin(admin.ModelAdmin):
    list_display = ["match", "bot", "ruleset", "place", "before", "after", "delta"]
    list_filter = ["ruleset"]
    readonly_fields = [
        "match",
        "bot",
        "ruleset",
        "place",
        "before",
        "after",
        "delta",
        "games_before",
        "created",
    ]
