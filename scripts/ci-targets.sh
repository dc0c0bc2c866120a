#!/usr/bin/env bash
# The checks a release needs beyond the host's tests: the builds for the
# targets a game ships to, the oldest Rust the libraries promise, the
# packaging of the published crates, and the generated macro arms.
#
# Run it after `cargo test`: the packaging step reuses the host build.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TERM_COLOR=never

# Each step says when it starts, in seconds since CI (or this script) began.
CI_START=${CI_START:-$(date +%s)}
step() { printf '\n==> %s [%ss]\n' "$*" "$(($(date +%s) - CI_START))"; }

# The pinned toolchain (rust-toolchain.toml) gets the two targets.
step "rustup targets"
rustup target add wasm32-unknown-unknown thumbv7em-none-eabihf

# A warning in a target build is an error, as on the host. RUSTFLAGS with
# `--target` reaches the target's crates only, not build scripts or proc
# macros, so the host build is not redone.
cross() { RUSTFLAGS="-D warnings" cargo build --locked "$@"; }

# 32-bit Arm microcontrollers: no `std`, no 64-bit atomics (portable-atomic
# stands in). `rayon` needs `std`, so it is left out.
step "bt-core for thumbv7em-none-eabihf"
cross -p bt-core --target thumbv7em-none-eabihf --no-default-features
cross -p bt-core --target thumbv7em-none-eabihf --no-default-features --features serde

# Web builds. There `par_tick_all` runs on the calling thread.
step "bt-core and bt-bevy for wasm32-unknown-unknown"
cross -p bt-core --target wasm32-unknown-unknown --all-features
cross -p bt-bevy --target wasm32-unknown-unknown
# `viewer` brings the live server (hyper on tokio's sockets), which a web
# build cannot have: a web game records with the native build's viewer.
cross -p bt-bevy --target wasm32-unknown-unknown --features serde

# The `rust-version` of the workspace: the published libraries but bt-bevy
# (Bevy needs the pinned 1.95) must build with it, bt-core also on the
# embedded target. A check is enough: what an older compiler refuses, it
# refuses before code generation. Its own target directory keeps the two
# compilers' outputs apart.
msrv=$(sed -n '/^\[workspace\.package\]/,/^\[/s/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
if [ -z "$msrv" ]; then
    echo "Cargo.toml: no rust-version in [workspace.package]" >&2
    exit 1
fi
step "rust-version $msrv: bt-macros, bt-core and bt-viewer"
if ! rustup toolchain list | grep -q "^$msrv"; then
    rustup toolchain install "$msrv" --profile minimal
fi
rustup target add --toolchain "$msrv" thumbv7em-none-eabihf
at_msrv() { cargo "+$msrv" check --locked --target-dir target/msrv "$@"; }
at_msrv -p bt-macros -p bt-core -p bt-viewer --all-features
at_msrv -p bt-core --target thumbv7em-none-eabihf --no-default-features --features serde

# `cargo package` of several packages packs them together and builds each
# one from its packed sources, with the other packed crates standing in for
# the crates.io versions they name: bt-core builds against the packed
# bt-macros, bt-viewer and bt-bevy against the packed bt-core, none of them
# published yet. It is what `cargo publish` runs before uploading.
# `--allow-dirty`: this checks what gets packed, not the state of git.
step "cargo package: bt-macros, bt-core, bt-viewer, bt-bevy"
# Cargo unpacks the packed crates into its registry sources (the
# directories named `-<hash>`, one per local registry) and takes a crate
# from a registry as never changing: it neither unpacks a version again
# nor rebuilds it. A run after a change between crates would build
# against the last run's sources and objects; both are dropped first.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/bt-{macros,core,viewer,bevy}-[0-9]*
rm -rf "${CARGO_TARGET_DIR:-target}"/debug/.fingerprint/bt-{macros,core,viewer,bevy}-*
cargo package --locked --allow-dirty -p bt-macros -p bt-core -p bt-viewer -p bt-bevy

# The key arms of `__bt_decider_impl!` are generated: generating them again
# must change nothing.
step "generated decider key arms are up to date"
if command -v python3 >/dev/null; then
    keys=bt-macros/src/decider.rs
    cp "$keys" target/decider.rs.before
    python3 scripts/gen_decider_keys.py
    if ! cmp -s target/decider.rs.before "$keys"; then
        diff -u target/decider.rs.before "$keys" || true
        cp target/decider.rs.before "$keys"
        echo "$keys: the key arms differ from scripts/gen_decider_keys.py's" >&2
        exit 1
    fi
else
    echo "python3 not found: the generated key arms were not checked" >&2
fi
