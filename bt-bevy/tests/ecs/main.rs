//! The plugin in a headless `App`, run for a number of frames.

mod agent_changes;
mod attack_tuning;
mod common;
mod compile_fail;
#[path = "../critters/mod.rs"]
mod critters;
mod crowd;
mod debugging;
mod observing;
mod par_shared;
mod pausing;
#[cfg(feature = "serde")]
mod persist;
mod rates;
mod recording;
mod reports;
#[cfg(feature = "serde")]
mod saved_rates;
mod squad;
#[path = "../../../bt-viewer/tests/sse/mod.rs"]
mod sse;
mod swaying;
mod tuning;
#[cfg(feature = "tune-file")]
mod tuning_file;
#[cfg(feature = "serde")]
mod tuning_saved;
mod tuning_viewer;
mod two_trees;
mod values;

// The W1 creature tree of the benchmarks, the very same source.
#[allow(dead_code, unreachable_pub)]
#[path = "../../../bt-bench/benches/workloads/w1_core.rs"]
mod w1_core;
#[allow(dead_code, unreachable_pub)]
#[path = "../../../bt-bench/benches/workloads/world.rs"]
mod world;
