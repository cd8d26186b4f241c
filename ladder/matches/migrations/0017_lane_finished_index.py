"""A lane's latest finished games, newest first (`selectors.lane_typical_seconds`): how long
its games take, for the estimate of when a queued one starts (issue 35); the background
games' (lane null) in an index of their own, as PostgreSQL reads an index in order after an
equality on its first column but not after an IS NULL. Indexes only, so SQLite adds them in
place (no table rebuild, which would drop 0015's trigger)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("matches", "0016_match_lane"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="match",
            index=models.Index(
                condition=models.Q(("lane__isnull", False), ("status", "finished")),
                fields=["lane", "-finished"],
                name="match_lane_finished",
            ),
        ),
        migrations.AddIndex(
            model_name="match",
            index=models.Index(
                condition=models.Q(("lane__isnull", True), ("status", "finished")),
                fields=["-finished"],
                name="match_background_finished",
            ),
        ),
    ]
