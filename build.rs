//! Tells the compile-fail cases whether the toolchain has its `rust-src`
//! component. With it (rust-analyzer installs it), rustc quotes the
//! standard library's source in the notes of a failed constant evaluation,
//! which the cases' `.stderr` files, made without it, do not hold: outside
//! CI (where the toolchain has no `rust-src` and the cases must run) they
//! are then compiled as ignored, with the reason, so that `cargo test`
//! reports them as not run instead of failing. Nothing else uses it.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(rust_src)");
    println!("cargo::rerun-if-env-changed=CI");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Some(sysroot) = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
    else {
        return;
    };
    // rustup rewrites this list when a component is added or removed.
    let rustlib = sysroot.join("lib").join("rustlib");
    println!(
        "cargo::rerun-if-changed={}",
        rustlib.join("components").display()
    );
    let source = rustlib.join("src/rust/library/core/src/panic.rs");
    if source.is_file() && std::env::var_os("CI").is_none() {
        println!("cargo::rustc-cfg=rust_src");
    }
}
