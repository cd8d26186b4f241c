# Build a Java bot (cwd: its sources; output: $GRASS_BUILD/out/bot.jar): every .java file of
# the upload compiled together; the bot runs as `java -cp bot.jar Bot`. File names reach javac
# one each, starting with "./" (never an option or an @argfile); -proc:none: no annotation
# processor of the upload runs, and nothing but the sources is on the class path.
set -eu
mkdir -p "$GRASS_BUILD/classes"
find . -type f -name '*.java' -exec javac -J-Xmx256m -J-XX:+UseSerialGC -proc:none \
    -implicit:none -encoding UTF-8 -cp "$GRASS_BUILD/classes" -d "$GRASS_BUILD/classes" {} +
# jar is a JVM too: the same bounded heap and serial collector as javac's, in the box's 1 GiB.
exec jar -J-Xmx256m -J-XX:+UseSerialGC --create --file "$GRASS_BUILD/out/bot.jar" \
    -C "$GRASS_BUILD/classes" .
