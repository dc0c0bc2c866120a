//! The integration tests, in one binary so that it links once.

mod blocks;
mod compile_fail;
mod debug;
mod dsl_forms;
mod guard_nest;
mod logging;
mod policies;
mod preconditions;
mod semantics;
mod traces;
mod world;
