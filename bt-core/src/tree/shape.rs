//! The limits of a compiled stream, and what the compile step counts of
//! a tree.

/// Most depth levels a tree may have (the root is level 0).
pub const MAX_LEVELS: usize = 32;
/// Most children of one group: the width of the redecide mask.
pub const MAX_CHILDREN: usize = 64;
/// Most children of one shuffle group: the width of its round mask.
pub const MAX_SHUFFLE_CHILDREN: usize = 32;
/// Most items of one compiled tree (indices are `u16`).
pub const MAX_ITEMS: usize = u16::MAX as usize;
/// Block size [`Tree`](crate::Tree) and [`AgentMemory`](crate::AgentMemory)
/// default to in their types: 128 bytes, as in Spore. A tree declared with
/// [`tree!`](crate::tree) and no `block:` gets blocks fitted to its
/// largest memory type instead ([`Shape::block`]).
pub const DEFAULT_BLOCK: usize = 128;

/// What the validation pass counts: it sizes the item stream and the agent
/// memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Items in the flattened stream.
    pub items: usize,
    /// Depth levels (the deepest item's depth plus one).
    pub levels: usize,
    /// Timer preconditions (one memory slot each).
    pub timers: usize,
    /// Shuffle groups (one memory slot each).
    pub shuffles: usize,
    /// Group roles (one memory slot each, and one shared lobby).
    pub roles: usize,
    /// Behaviors with a deferred action (one memory slot each).
    pub actions: usize,
    /// Gates (shared counters, no memory slot).
    pub gates: usize,
    /// Global cooldowns (shared stamps, no memory slot).
    pub cooldowns: usize,
    /// Reference deciders (places in the tree that jump elsewhere).
    pub references: usize,
    /// The largest memory type or DBlock of any behavior, rounded up to
    /// [`BLOCK_ALIGN`](crate::BLOCK_ALIGN): the block size of a tree
    /// declared without `block:`.
    pub block: usize,
    /// A hash of the tree's structure: every decider's name, kind, policy,
    /// children, preconditions and behavior, in preorder (so the slot
    /// layout too). Saved agent state names it, and restores only into a
    /// tree with the same fingerprint. Renaming a decider changes it;
    /// moving declarations to another module does not (a decider's
    /// [`id`](crate::Node::id) hashes its module path too, and is not part
    /// of it).
    pub fingerprint: u64,
}

impl Shape {
    /// Memory slots an agent needs: timers first, then shuffle groups,
    /// group roles and deferred actions, and for a tree with shared state
    /// one last slot naming the crowd whose counts include what the agent
    /// holds ([`crowd_slot`](Self::crowd_slot)).
    pub const fn slots(&self) -> usize {
        self.crowd_slot() + self.needs_shared() as usize
    }

    /// The memory slot, after the deferred actions, that a tree with
    /// shared state keeps the id of the crowd whose gate counts and role
    /// places include what the agent holds (a restore of the crowd's
    /// shared state gives it a new id: the agent counts its holdings again).
    /// Only meaningful when [`needs_shared`](Self::needs_shared).
    pub const fn crowd_slot(&self) -> usize {
        self.first_action_slot() + self.actions
    }

    /// Whether the tree has gates, global cooldowns, group roles or
    /// deferred actions: state its crowd shares in a `TreeShared`.
    pub const fn needs_shared(&self) -> bool {
        self.gates + self.cooldowns + self.roles + self.actions > 0
    }

    /// The memory slot of group role `role`.
    pub const fn role_slot(&self, role: u16) -> usize {
        self.timers + self.shuffles + role as usize
    }

    /// The memory slot of the first deferred action; the others follow.
    pub const fn first_action_slot(&self) -> usize {
        self.role_slot(0) + self.roles
    }

    /// The memory slots of the deferred actions.
    pub const fn action_slots(&self) -> core::ops::Range<usize> {
        self.first_action_slot()..self.crowd_slot()
    }
}
