"""Challenges' matches queued or running when Match.lane came (matches 0016) are put in the
challenge lane, so that the sweep resends them to the `now` queue."""

from django.db import migrations

CHALLENGE = 3


def challenges_in_their_lane(apps, schema_editor):
    Match = apps.get_model("matches", "Match")
    Match.objects.filter(status__in=["queued", "running"], challenge__isnull=False).update(
        lane=CHALLENGE
    )


class Migration(migrations.Migration):
    dependencies = [
        ("challenges", "0001_initial"),
        ("matches", "0016_match_lane"),
    ]

    operations = [
        migrations.RunPython(challenges_in_their_lane, migrations.RunPython.noop),
    ]
