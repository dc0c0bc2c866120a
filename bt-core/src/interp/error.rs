//! Why a tick stopped without finishing.

use core::fmt;

use crate::decl::ItemIdx;

/// Why a tick stopped without finishing.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum TickError {
    /// The tick made more masked redecides than the tree's budget allows.
    /// Every active behavior was deactivated; the agent is idle.
    RedecideLimit {
        /// The group that was about to redecide once too often.
        group: &'static str,
        /// Its item in the stream.
        item: ItemIdx,
        /// The budget.
        limit: u32,
    },
    /// The memory was made by another tree. Nothing ran.
    WrongTree {
        /// The tree the memory belongs to.
        memory: &'static str,
        /// The tree given to the tick.
        tree: &'static str,
    },
    /// The tree has gates, global cooldowns, group roles or deferred
    /// actions, and the memory was not made with a
    /// [`TreeShared`](crate::TreeShared) ([`Tree::new_memory_in`](crate::Tree::new_memory_in)). Nothing
    /// ran.
    NotShared {
        /// The tree.
        tree: &'static str,
    },
    /// A time value is unusable. Nothing ran.
    InvalidInput {
        /// `now` or `dt`.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// In a crowd tick ([`tick_all`](crate::tick_all)), the agent was
    /// given an id under which another agent of the crowd has a deferred
    /// action pending ([`CrowdIds`](crate::CrowdIds) says which are seen):
    /// requests of both would name the same agent, and an outcome reported
    /// back by it would reach only one of them. Nothing ran for this agent.
    AgentIdTaken {
        /// The agent id given.
        id: u32,
        /// The index of the agent ticked.
        agent: usize,
        /// The index of the agent whose action is pending under `id`.
        holder: usize,
    },
}

impl fmt::Display for TickError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TickError::RedecideLimit { group, limit, .. } => write!(
                f,
                "group `{group}`: more than {limit} masked redecides in one tick; \
                 every behavior was deactivated"
            ),
            TickError::WrongTree { memory, tree } => write!(
                f,
                "agent memory made by tree `{memory}` ticked with tree `{tree}`"
            ),
            TickError::NotShared { tree } => write!(
                f,
                "tree `{tree}` has gates, cooldowns, group roles or deferred actions; \
                 make its agents' memories with `new_memory_in`"
            ),
            TickError::InvalidInput { field, value } => {
                write!(
                    f,
                    "tick input `{field}` is {value}; it must be finite and not negative"
                )
            }
            TickError::AgentIdTaken { id, agent, holder } => write!(
                f,
                "agent {agent} ticked under agent id {id}, under which agent {holder} has a \
                 deferred action pending; give each agent its own id"
            ),
        }
    }
}

impl core::error::Error for TickError {}
