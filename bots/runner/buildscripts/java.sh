# Build a Java bot (cwd: its sources; output: $GRASS_BUILD/out/bot.jar): every .java file of
# the upload compiled together; the bot runs as `java -cp bot.jar Bot`.
set -eu
mkdir -p "$GRASS_BUILD/classes"
javac -J-Xmx256m -J-XX:+UseSerialGC -encoding UTF-8 -d "$GRASS_BUILD/classes" $(find . -name '*.java')
exec jar --create --file "$GRASS_BUILD/out/bot.jar" -C "$GRASS_BUILD/classes" .
