//! The `macro_rules!` implementation of bt-core's declaration DSL.
//!
//! Use the macros through `bt-core` (`bt_core::behavior!`, `decider!`,
//! `group!`, `tree!`): each of them forwards its own `$crate` as the first
//! token (`$k`) to an implementation macro here, which writes every path as
//! `$k::…`. That way the expansions name bt-core correctly even though this
//! crate cannot depend on it, and even when a user renames the dependency.
//!
//! The implementation macros are token munchers: an entry arm splits the
//! head (`NAME: Agent …`) from the `key: value` list and starts with every
//! slot empty (`[]`), one middle arm per key fills its slot, and the exit
//! arm emits the `static`. A key whose slot is already full, an unknown key
//! or a malformed list falls through to catch-all arms that say what is
//! wrong.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

// Every macro is `#[macro_export]`, so it lives at the crate root whatever
// its module, and the macros call each other by path (`$crate::__bt_…!`):
// the order of the modules does not matter.
mod behavior;
mod decider;
mod errors;
mod group;
mod helpers;
mod tree;
mod tunables;
