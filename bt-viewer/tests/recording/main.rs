//! The flight recorder and the files it writes, with or without the live
//! server: what a recording keeps, scheduled crowds, values, the JSON
//! export and the lanes' data.
//!
//! One test binary for all of them: each file is a module.

#[path = "../embedded/mod.rs"]
mod embedded;
#[path = "../herd/mod.rs"]
mod herd;
#[path = "../scene/mod.rs"]
mod scene;
#[path = "../webdriver/mod.rs"]
mod webdriver;

mod export_json;
mod lane_data;
mod recorder;
mod scheduled;
mod values;
