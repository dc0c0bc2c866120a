#!/bin/sh
# Refreshes the viewer's screenshots under docs/ from the `viewer` example:
# the page it writes (agent values and plots; the overview and a query) and
# its live page stopped at a breakpoint; and the page comparing two runs
# (from the comparison page test in bt-viewer's browser tests). Needs
# Chromium and chromedriver (apt-get install chromium chromium-driver).
# Not run in CI.
#
#   scripts/screenshots.sh
#
# Builds into CARGO_TARGET_DIR when it is set, as cargo does.
set -eu
cd "$(dirname "$0")/.."
cargo run --quiet --example viewer
cargo build --quiet --example viewer
# The example writes its page under the same target directory.
TARGET=$(cd "${CARGO_TARGET_DIR:-target}" && pwd)
PORT=8811
"$TARGET/debug/examples/viewer" --live --port "$PORT" --seconds 300 &
LIVE=$!
trap 'kill "$LIVE" 2>/dev/null || true' EXIT
BT_SHOTS_PAGE="$TARGET/viewer/viewer.html" BT_SHOTS_LIVE="http://127.0.0.1:$PORT/" \
  cargo test -p bt-viewer --test browser shots:: -- --ignored --nocapture
cargo test -p bt-viewer --test browser compare::screenshot -- --ignored --nocapture
ls -l docs/*.png
