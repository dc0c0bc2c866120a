//! Tells the browser test (`tests/browser_pause.rs`) whether this machine
//! has Chromium and chromedriver. Without them, and outside CI (where they
//! must be there), the test is compiled as ignored, with the reason, so
//! that `cargo test` reports it as not run instead of passing without a
//! browser. The library itself does not use the setting.

use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_browser)");
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-env-changed=CI");
    let dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    // Installing a browser adds a file to one of these.
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        println!("cargo::rerun-if-changed={}", dir.display());
    }
    let found = |name: &str| dirs.iter().any(|d| d.join(name).is_file());
    let browser = ["chromium", "chromium-browser"].iter().any(|b| found(b));
    if std::env::var_os("CI").is_none() && !(browser && found("chromedriver")) {
        println!("cargo::rustc-cfg=no_browser");
    }
}
