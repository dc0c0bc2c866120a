//! The integration tests, in one binary so that it links once.

// `tunables!` takes one step of macro expansion a tunable: the table of
// 130 in `tunables_typed` needs more than the default 128.
#![recursion_limit = "256"]

/// `insta::assert_snapshot!`, except under Miri: insta reads and writes
/// snapshot files through system calls Miri does not support, so there the
/// scenario runs (and its unsafe paths are checked) but the text is not
/// compared.
macro_rules! snapshot {
    ($($args:tt)*) => {
        #[cfg(not(miri))]
        insta::assert_snapshot!($($args)*);
    };
}

mod api;
// Not under Miri: rayon's pool, which several of these tests tick with,
// trips Miri's borrow model inside crossbeam, and each test starts up to
// eight threads.
#[cfg(not(miri))]
mod attack_tuning;
mod blocks;
mod compile_fail;
mod crowd_edges;
mod debug;
mod differential;
mod docs;
mod dsl_forms;
mod guard_nest;
mod herd;
mod load_edges;
mod load_in_place;
mod logging;
mod model;
mod nest_jump;
mod par_shared;
mod persist;
mod policies;
mod preconditions;
mod references;
mod schedule;
mod schedule_differential;
mod schedule_resets;
mod semantics;
mod sync;
mod threads;
mod traces;
mod tunables;
mod tunables_crowds;
mod tunables_typed;
mod tune_file;
mod tuned_fields;
mod world;
