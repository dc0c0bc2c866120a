//! `scripts/screenshots.sh` finds what cargo built where cargo put it,
//! `CARGO_TARGET_DIR` set or not. Run with a stand-in for cargo that makes
//! the files a real run makes (the example's page and binary) and checks
//! the page the browser test is given: no build, no browser.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const FAKE_CARGO: &str = r#"#!/bin/sh
# What the script asks of cargo, with the files a real run makes.
target="${CARGO_TARGET_DIR:-target}"
case "$1" in
  run) mkdir -p "$target/viewer" && echo page > "$target/viewer/viewer.html" ;;
  build) mkdir -p "$target/debug/examples" &&
         printf '#!/bin/sh\nexec sleep 30\n' > "$target/debug/examples/viewer" &&
         chmod +x "$target/debug/examples/viewer" ;;
  test) case "$*" in
          *"--test browser shots::"*) test -f "$BT_SHOTS_PAGE" || { echo "no page at $BT_SHOTS_PAGE" >&2; exit 1; } ;;
        esac ;;
esac
"#;

/// A copy of the repository's script in a tree of its own under `dir`,
/// with a stand-in cargo: the script's exit status.
fn run_script(dir: &Path, target: Option<&Path>) -> std::process::Output {
    let _ = std::fs::remove_dir_all(dir);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/screenshots.sh");
    for sub in ["scripts", "docs", "bin"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::copy(&script, dir.join("scripts/screenshots.sh")).unwrap();
    std::fs::write(dir.join("docs/shot.png"), b"").unwrap();
    let cargo = dir.join("bin/cargo");
    std::fs::write(&cargo, FAKE_CARGO).unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("sh");
    cmd.arg(dir.join("scripts/screenshots.sh"))
        .env("PATH", path)
        .env_remove("CARGO_TARGET_DIR");
    if let Some(t) = target {
        cmd.env("CARGO_TARGET_DIR", t);
    }
    cmd.output().expect("running the script")
}

fn scratch(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/viewer-tests")
        .join(name)
}

#[test]
fn the_screenshot_script_follows_cargo_target_dir() {
    let dir = scratch("shots-script");
    let elsewhere = dir.join("elsewhere");
    let out = run_script(&dir, Some(&elsewhere));
    assert!(
        out.status.success(),
        "with CARGO_TARGET_DIR: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(elsewhere.join("viewer/viewer.html").is_file());
    assert!(
        !dir.join("target").exists(),
        "nothing is built under target/"
    );
    let out = run_script(&dir, None);
    assert!(
        out.status.success(),
        "without: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
