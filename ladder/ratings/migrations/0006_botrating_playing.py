"""`BotRating.on_ladder` and `.playing`: a bot taken off the ladder leaves the leaderboard's
partial index, and one that cannot play (disabled, or without a valid version) the matchmaker's
(issue 36).

The flags are kept by the database: triggers recompute them from `bots_bot.disabled` and the
bot's valid versions in the statement that changes either, and set them on every new rating row
(and on any write of a flag itself, so a stale in-memory model saved whole cannot undo it). Whoever
writes (a forfeit, a verdict, staff in the admin, another app's action, a shell UPDATE), the
flags are exact in that transaction: no caller can forget it, and the apps below ratings (bots,
matches) need not import it. PostgreSQL (the site, the tests) and SQLite (`make run`) each get
their own dialect of the same triggers.
"""

from django.db import migrations, models


def _on_ladder(bot: str) -> str:
    """SQL: whether bot id `bot` is on the ladder (not disabled): `on_ladder`'s definition."""
    return f"EXISTS (SELECT 1 FROM bots_bot b WHERE b.id = {bot} AND b.disabled IS NULL)"


def _playing(bot: str) -> str:
    """SQL: whether bot id `bot` may be seated now (on the ladder, with a valid version):
    `playing`'s definition."""
    return (
        f"({_on_ladder(bot)} AND EXISTS (SELECT 1 FROM bots_botversion v"
        f" WHERE v.bot_id = {bot} AND v.status = 'valid'))"
    )


POSTGRESQL = [
    f"""
    CREATE FUNCTION ratings_bot_on_ladder(bot bigint) RETURNS boolean
    LANGUAGE sql STABLE AS $$ SELECT {_on_ladder("bot")} $$
    """,
    f"""
    CREATE FUNCTION ratings_bot_playing(bot bigint) RETURNS boolean
    LANGUAGE sql STABLE AS $$ SELECT {_playing("bot")} $$
    """,
    # Sets a bot's rows from the truth, writing only those that differ.
    """
    CREATE FUNCTION ratings_pool_sync(bot bigint) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
        listed boolean := ratings_bot_on_ladder(bot);
        seated boolean := ratings_bot_playing(bot);
    BEGIN
        UPDATE ratings_botrating SET on_ladder = listed, playing = seated
        WHERE bot_id = bot AND (on_ladder, playing) IS DISTINCT FROM (listed, seated);
    END $$
    """,
    # A bot taken off the ladder or put back: its rows follow (only when that changes).
    """
    CREATE FUNCTION ratings_pool_on_bot() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM ratings_pool_sync(NEW.id);
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER ratings_pool_on_bot AFTER UPDATE OF disabled ON bots_bot FOR EACH ROW
    WHEN ((OLD.disabled IS NULL) IS DISTINCT FROM (NEW.disabled IS NULL))
    EXECUTE FUNCTION ratings_pool_on_bot()
    """,
    # A version made, judged, moved or deleted: the bot's rows follow.
    """
    CREATE FUNCTION ratings_pool_on_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP <> 'INSERT' THEN
            PERFORM ratings_pool_sync(OLD.bot_id);
        END IF;
        IF TG_OP <> 'DELETE' THEN
            PERFORM ratings_pool_sync(NEW.bot_id);
        END IF;
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER ratings_pool_on_version
    AFTER INSERT OR DELETE OR UPDATE OF status, bot_id ON bots_botversion
    FOR EACH ROW EXECUTE FUNCTION ratings_pool_on_version()
    """,
    # A new rating row, or any write of the flags: set from the truth, never from the writer.
    """
    CREATE FUNCTION ratings_pool_on_rating() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.on_ladder := ratings_bot_on_ladder(NEW.bot_id);
        NEW.playing := ratings_bot_playing(NEW.bot_id);
        RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER ratings_pool_on_rating_insert BEFORE INSERT ON ratings_botrating
    FOR EACH ROW EXECUTE FUNCTION ratings_pool_on_rating()
    """,
    """
    CREATE TRIGGER ratings_pool_on_rating_update BEFORE UPDATE OF on_ladder, playing, bot_id
    ON ratings_botrating FOR EACH ROW
    WHEN ((NEW.on_ladder, NEW.playing, NEW.bot_id) IS DISTINCT FROM
          (OLD.on_ladder, OLD.playing, OLD.bot_id))
    EXECUTE FUNCTION ratings_pool_on_rating()
    """,
]

POSTGRESQL_REVERSE = [
    "DROP TRIGGER IF EXISTS ratings_pool_on_rating_update ON ratings_botrating",
    "DROP TRIGGER IF EXISTS ratings_pool_on_rating_insert ON ratings_botrating",
    "DROP TRIGGER IF EXISTS ratings_pool_on_version ON bots_botversion",
    "DROP TRIGGER IF EXISTS ratings_pool_on_bot ON bots_bot",
    "DROP FUNCTION IF EXISTS ratings_pool_on_rating()",
    "DROP FUNCTION IF EXISTS ratings_pool_on_version()",
    "DROP FUNCTION IF EXISTS ratings_pool_on_bot()",
    "DROP FUNCTION IF EXISTS ratings_pool_sync(bigint)",
    "DROP FUNCTION IF EXISTS ratings_bot_playing(bigint)",
    "DROP FUNCTION IF EXISTS ratings_bot_on_ladder(bigint)",
]


def _sqlite_sync(bot: str, where: str) -> str:
    return (
        f"UPDATE ratings_botrating SET on_ladder = {_on_ladder(bot)},"
        f" playing = {_playing(bot)} WHERE {where};"
    )


# SQLite's triggers cannot assign NEW, so the rating row is set right after its write (its
# recursive_triggers is off by default: that UPDATE does not fire the trigger again).
SQLITE = [
    "CREATE TRIGGER ratings_pool_on_bot AFTER UPDATE OF disabled ON bots_bot"
    " WHEN (OLD.disabled IS NULL) <> (NEW.disabled IS NULL)"
    f" BEGIN {_sqlite_sync('NEW.id', 'bot_id = NEW.id')} END",
    "CREATE TRIGGER ratings_pool_on_version_insert AFTER INSERT ON bots_botversion"
    f" BEGIN {_sqlite_sync('NEW.bot_id', 'bot_id = NEW.bot_id')} END",
    "CREATE TRIGGER ratings_pool_on_version_update AFTER UPDATE OF status, bot_id"
    " ON bots_botversion"
    f" BEGIN {_sqlite_sync('NEW.bot_id', 'bot_id = NEW.bot_id')}"
    f" {_sqlite_sync('OLD.bot_id', 'bot_id = OLD.bot_id')} END",
    "CREATE TRIGGER ratings_pool_on_version_delete AFTER DELETE ON bots_botversion"
    f" BEGIN {_sqlite_sync('OLD.bot_id', 'bot_id = OLD.bot_id')} END",
    "CREATE TRIGGER ratings_pool_on_rating_insert AFTER INSERT ON ratings_botrating"
    f" BEGIN {_sqlite_sync('NEW.bot_id', 'id = NEW.id')} END",
    "CREATE TRIGGER ratings_pool_on_rating_update AFTER UPDATE OF on_ladder, playing, bot_id"
    f" ON ratings_botrating BEGIN {_sqlite_sync('NEW.bot_id', 'id = NEW.id')} END",
]

SQLITE_REVERSE = [
    f"DROP TRIGGER IF EXISTS {name}"
    for name in (
        "ratings_pool_on_bot",
        "ratings_pool_on_version_insert",
        "ratings_pool_on_version_update",
        "ratings_pool_on_version_delete",
        "ratings_pool_on_rating_insert",
        "ratings_pool_on_rating_update",
    )
]

FILL = _sqlite_sync("ratings_botrating.bot_id", "TRUE").rstrip(";")


def install(apps, schema_editor):
    """The triggers in the database's dialect, then every existing row set from the truth."""
    vendor = schema_editor.connection.vendor
    if vendor not in ("postgresql", "sqlite"):
        raise RuntimeError(
            f"BotRating's pool flags are kept by triggers for PostgreSQL and SQLite, not {vendor}"
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
        ("ratings", "0005_change_indexes_not_repeated"),
    ]

    operations = [
        migrations.AddField(
            model_name="botrating",
            name="on_ladder",
            field=models.BooleanField(default=True, editable=False),
        ),
        migrations.AddField(
            model_name="botrating",
            name="playing",
            field=models.BooleanField(default=True, editable=False),
        ),
        migrations.RunPython(install, uninstall),
        migrations.RemoveIndex(model_name="botrating", name="bot_rating_board"),
        migrations.RemoveIndex(model_name="botrating", name="bot_rating_waiting"),
        migrations.RemoveIndex(model_name="botrating", name="bot_rating_nearest"),
        migrations.AddIndex(
            model_name="botrating",
            index=models.Index(
                condition=models.Q(games__gt=0, on_ladder=True),
                fields=["ruleset", "-mu", "bot"],
                name="bot_rating_board_listed",
            ),
        ),
        migrations.AddIndex(
            model_name="botrating",
            index=models.Index(
                condition=models.Q(playing=True),
                fields=["ruleset", "last_queued", "bot"],
                name="bot_rating_pool_waiting",
            ),
        ),
        migrations.AddIndex(
            model_name="botrating",
            index=models.Index(
                condition=models.Q(playing=True),
                fields=["ruleset", "mu", "bot"],
                name="bot_rating_pool_nearest",
            ),
        ),
    ]
