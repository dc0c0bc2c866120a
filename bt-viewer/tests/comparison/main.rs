//! Comparing two recordings, with the library and with `bt-compare`, the
//! tunables a recording keeps, a recorded tick read back unchanged, and
//! the screenshots script.
//!
//! One test binary for all of them: each file is a module.

#[path = "../misuse_common/mod.rs"]
mod misuse_common;
#[path = "../tuned/mod.rs"]
mod tuned;

mod compare;
mod compare_cli_misuse;
mod compare_misuse;
mod screenshots_script;
mod tuning;
mod unchanged;
