"""Match.lane (issue 35, `ladder.matches.lanes`). Nullable without a default, so that SQLite
adds the column in place (a default makes Django rebuild the table, which drops the
`matches_match_ruleset` trigger of 0015). The people's games queued or running when it runs
are put in their lane, so that the sweep resends them to the people's queue; the challenges'
are set by the challenges app's migration, and finished matches need none."""

from django.db import migrations, models

PERSON = 0


def people_games_in_their_lane(apps, schema_editor):
    Match = apps.get_model("matches", "Match")
    Match.objects.filter(status__in=["queued", "running"], seats__player__isnull=False).update(
        lane=PERSON
    )


class Migration(migrations.Migration):
    dependencies = [
        ("matches", "0015_seat_ruleset"),
    ]

    operations = [
        migrations.AddField(
            model_name="match",
            name="lane",
            field=models.PositiveSmallIntegerField(
                blank=True,
                choices=[(0, "a person's game"), (3, "a challenge"), (6, "a first rated game")],
                null=True,
            ),
        ),
        migrations.RunPython(people_games_in_their_lane, migrations.RunPython.noop),
    ]
