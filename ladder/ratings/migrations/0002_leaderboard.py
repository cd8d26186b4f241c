"""The leaderboard without counting: BotRating.wins (first places, denormalised from
RatingChange, computed here for existing rows) and an index in the board's full order,
(ruleset, -mu, bot), in place of (ruleset, -mu)."""

from django.db import migrations, models


def count_wins(apps, schema_editor):
    from ladder.ratings.services import rating_wins_recount

    rating_wins_recount(
        rating_model=apps.get_model("ratings", "BotRating"),
        change_model=apps.get_model("ratings", "RatingChange"),
    )


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0001_initial"),
        ("ratings", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="botrating",
            name="wins",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(count_wins, migrations.RunPython.noop, elidable=True),
        migrations.AddIndex(
            model_name="botrating",
            index=models.Index(fields=["ruleset", "-mu", "bot"], name="bot_rating_board"),
        ),
        migrations.RemoveIndex(
            model_name="botrating",
            name="ratings_bot_ruleset_9912be_idx",
        ),
    ]
