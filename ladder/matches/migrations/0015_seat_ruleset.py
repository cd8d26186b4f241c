"""Issue 36: the match list's filters as index ranges. `?ruleset=` gets the matches' (ruleset,
-id) index, `?before=` / `?after=` the `created` index their id bounds come from
(`selectors._id_bounds`), and `?bot=&ruleset=` the seats' copy of their match's ruleset with a
(bot, ruleset, -match) index.

On SQLite, a later migration that adds a column to `matches_match` (which SQLite does by
rebuilding the table) must drop these triggers first and make them again after: a trigger that
names the table breaks its rebuild ("no such table: main.matches_match"). `matches/0014` runs
before this one for that reason.

The copy is kept by the database: a trigger sets it on every seat inserted (whoever inserts: the
match service, a bulk_create, a shell) or moved to another match, and another follows a match
whose ruleset changes. The backfill rewrites every seat once (at 10M matches, 40M seats:
minutes, and the table's size again on disk until VACUUM); the indexes are built after it.
"""

from django.conf import settings
from django.db import migrations, models

POSTGRESQL = [
    """
    CREATE FUNCTION matches_seat_ruleset() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.ruleset := (SELECT ruleset FROM matches_match WHERE id = NEW.match_id);
        RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER matches_seat_ruleset_insert BEFORE INSERT ON matches_matchseat
    FOR EACH ROW EXECUTE FUNCTION matches_seat_ruleset()
    """,
    """
    CREATE TRIGGER matches_seat_ruleset_update BEFORE UPDATE OF ruleset, match_id
    ON matches_matchseat FOR EACH ROW
    WHEN ((NEW.ruleset, NEW.match_id) IS DISTINCT FROM (OLD.ruleset, OLD.match_id))
    EXECUTE FUNCTION matches_seat_ruleset()
    """,
    """
    CREATE FUNCTION matches_match_ruleset() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE matches_matchseat SET ruleset = NEW.ruleset WHERE match_id = NEW.id;
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER matches_match_ruleset AFTER UPDATE OF ruleset ON matches_match
    FOR EACH ROW WHEN (NEW.ruleset IS DISTINCT FROM OLD.ruleset)
    EXECUTE FUNCTION matches_match_ruleset()
    """,
]

POSTGRESQL_REVERSE = [
    "DROP TRIGGER IF EXISTS matches_match_ruleset ON matches_match",
    "DROP TRIGGER IF EXISTS matches_seat_ruleset_update ON matches_matchseat",
    "DROP TRIGGER IF EXISTS matches_seat_ruleset_insert ON matches_matchseat",
    "DROP FUNCTION IF EXISTS matches_match_ruleset()",
    "DROP FUNCTION IF EXISTS matches_seat_ruleset()",
]

_SEAT = (
    "UPDATE matches_matchseat SET ruleset ="
    " (SELECT ruleset FROM matches_match WHERE id = NEW.match_id) WHERE id = NEW.id;"
)

SQLITE = [
    f"CREATE TRIGGER matches_seat_ruleset_insert AFTER INSERT ON matches_matchseat BEGIN {_SEAT} END",
    "CREATE TRIGGER matches_seat_ruleset_update AFTER UPDATE OF ruleset, match_id"
    f" ON matches_matchseat BEGIN {_SEAT} END",
    "CREATE TRIGGER matches_match_ruleset AFTER UPDATE OF ruleset ON matches_match BEGIN"
    " UPDATE matches_matchseat SET ruleset = NEW.ruleset WHERE match_id = NEW.id; END",
]

SQLITE_REVERSE = [
    f"DROP TRIGGER IF EXISTS {name}"
    for name in (
        "matches_seat_ruleset_insert",
        "matches_seat_ruleset_update",
        "matches_match_ruleset",
    )
]

FILL = (
    "UPDATE matches_matchseat SET ruleset ="
    " (SELECT ruleset FROM matches_match WHERE matches_match.id = matches_matchseat.match_id)"
)


def install(apps, schema_editor):
    """The triggers in the database's dialect, then every existing seat's copy."""
    vendor = schema_editor.connection.vendor
    if vendor not in ("postgresql", "sqlite"):
        raise RuntimeError(
            f"MatchSeat.ruleset is kept by triggers for PostgreSQL and SQLite, not {vendor}"
        )
    for sql in POSTGRESQL if vendor == "postgresql" else SQLITE:
        schema_editor.execute(sql)
    schema_editor.execute(FILL)


def uninstall(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for sql in POSTGRESQL_REVERSE if vendor == "postgresql" else SQLITE_REVERSE:
        schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0008_bot_off_ladder_index"),
        ("matches", "0014_match_host_faults"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="matchseat",
            name="ruleset",
            field=models.CharField(blank=True, editable=False, max_length=16),
        ),
        migrations.RunPython(install, uninstall),
        migrations.AddIndex(
            model_name="match",
            index=models.Index(fields=["ruleset", "-id"], name="match_ruleset_newest"),
        ),
        migrations.AddIndex(
            model_name="match",
            index=models.Index(fields=["created"], name="match_created"),
        ),
        migrations.AddIndex(
            model_name="matchseat",
            index=models.Index(fields=["bot", "ruleset", "-match"], name="match_seat_bot_ruleset"),
        ),
    ]
