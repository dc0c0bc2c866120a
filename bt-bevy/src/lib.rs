//! stub
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod adapter;
mod agent;
mod brain;
mod debug;
mod plugin;

pub use adapter::TreeMemory;
pub use agent::BrainAgent;
pub use brain::{Brain, Decisions, NoSenses, SenseSource, Senses, agent_id};
pub use debug::DebugBrain;
pub use plugin::{
    ActionMessage, ActionOutcome, BrainPlugin, BrainShared, BrainStats, BrainSystems,
};

#[doc(hidden)]
pub mod __private {
    pub use bevy_ecs::query::QueryData;
}
