//! The live server: its HTTP endpoints and event stream, the controls,
//! breakpoints, tuning from the page, and what misbehaving clients get.
//!
//! One test binary for all of them: each file is a module.

#[path = "../herd/mod.rs"]
mod herd;
#[path = "../misuse_common/mod.rs"]
mod misuse_common;
#[path = "../scene/mod.rs"]
mod scene;
#[path = "../sse/mod.rs"]
mod sse;
#[path = "../tuned/mod.rs"]
mod tuned;
#[path = "../webdriver/mod.rs"]
mod webdriver;

mod breakpoints_misuse;
mod control;
mod misuse;
mod server;
mod tuning;
