//! The viewer's page in headless Chromium, one browser at a time: the
//! recorded page, the comparison, the finder, live following, the
//! overview, scale, text, tuning and the screenshots.
//!
//! One test binary for all of them: each file is a module.

#[path = "../embedded/mod.rs"]
mod embedded;
#[path = "../herd/mod.rs"]
mod herd;
#[path = "../misuse_common/mod.rs"]
mod misuse_common;
#[path = "../scene/mod.rs"]
mod scene;
#[path = "../tuned/mod.rs"]
mod tuned;
#[path = "../webdriver/mod.rs"]
mod webdriver;

mod compare;
mod find;
mod finder_misuse;
mod live;
mod overview;
mod page;
mod page_misuse;
mod scale;
mod shots;
mod text;
mod tuning;
