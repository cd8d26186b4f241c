# Build a Rust bot (cwd: its sources; output: $GRASS_BUILD/out/bot), offline: cargo cannot
# fetch crates here, so a Cargo.toml may use only the standard library and path dependencies
# inside the upload.
set -eu
export CARGO_HOME="$GRASS_BUILD/cargo-home" CARGO_TARGET_DIR="$GRASS_BUILD/target"
if [ -f Cargo.toml ]; then
    cargo build --release --offline
    if [ -x "$CARGO_TARGET_DIR/release/bot" ]; then
        exec cp "$CARGO_TARGET_DIR/release/bot" "$GRASS_BUILD/out/bot"
    fi
    found=$(find "$CARGO_TARGET_DIR/release" -maxdepth 1 -type f -perm -u+x)
    if [ "$(echo "$found" | grep -c .)" -ne 1 ]; then
        echo "grass: expected one binary (name it bot: [[bin]] name = \"bot\"); found: $found" >&2
        exit 1
    fi
    exec cp "$found" "$GRASS_BUILD/out/bot"
fi
exec rustc -O --edition 2021 -o "$GRASS_BUILD/out/bot" main.rs
