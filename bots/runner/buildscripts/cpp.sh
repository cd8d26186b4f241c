# Build a C++ bot (cwd: its sources; output: $GRASS_BUILD/out/bot): every .cpp file of the
# upload compiled together. File names are data: find hands each to g++ as one argument,
# starting with "./" (never read as an option), whatever spaces or dashes it holds.
set -eu
exec find . -type f -name '*.cpp' -exec g++ -O2 -std=c++17 -o "$GRASS_BUILD/out/bot" {} +
