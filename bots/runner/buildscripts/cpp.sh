# Build a C++ bot (cwd: its sources; output: $GRASS_BUILD/out/bot): every .cpp file of the
# upload compiled together.
set -eu
exec g++ -O2 -std=c++17 -o "$GRASS_BUILD/out/bot" $(find . -name '*.cpp')
