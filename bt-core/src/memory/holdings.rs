//! What an agent's memory holds in its crowd's shared state (gate slots,
//! role places, lobby places, pending deferred actions): given back on
//! every deactivation, and counted again after a restore of the shared
//! state replaced the counts.

use super::AgentMemory;
use super::shared as sync;
use crate::tree::{Has, NO_SLOT};

impl<A: 'static, const L: usize, const S: usize, const N: usize> AgentMemory<A, L, S, N> {
    /// The end of a tick: the agent leaves the lobbies of the group roles
    /// it did not ask again in this tick.
    #[inline(never)]
    pub(crate) fn sweep_roles(&mut self) {
        let shape = self.tree.shape;
        if let Some(shared) = self.shared.as_deref() {
            for r in 0..shape.roles as u16 {
                shared.role_sweep(r, &mut self.slots[shape.role_slot(r)]);
            }
        }
    }

    /// Whether the agent waits in a group role's lobby, or was admitted
    /// and has not entered yet: the sweep that ends its next tick may
    /// leave the lobby.
    #[inline(always)]
    pub(crate) fn in_lobby(&self) -> bool {
        let shape = self.tree.shape;
        (0..shape.roles as u16).any(|r| sync::registered(self.slots[shape.role_slot(r)]))
    }

    /// Gives back, deepest level first, the gate slots, role places and
    /// pending actions of the active path, and leaves every role lobby.
    pub(super) fn release_shared(&mut self) {
        let joined = self.joined();
        let Some(shared) = &self.shared else {
            return;
        };
        let items = self.tree.items;
        for level in self.levels[..self.depth()].iter().rev() {
            let i = level.item;
            sync::release(shared, &items[i as usize], i, &mut self.slots, joined);
        }
        self.leave_lobbies();
    }

    /// Leaves every group-role lobby the agent waits in, and gives up any
    /// admission it has not used (only forgets them when the crowd's
    /// counts no longer include this memory: see [`rejoin`](Self::rejoin)).
    pub(crate) fn leave_lobbies(&mut self) {
        let Some(shared) = &self.shared else {
            return;
        };
        let shape = self.tree.shape;
        let counted = shared.id() == self.joined();
        for r in 0..shape.roles as u16 {
            let slot = &mut self.slots[shape.role_slot(r)];
            if counted {
                shared.role_withdraw(r, slot);
            } else {
                *slot = 0;
            }
        }
    }

    /// Counts what this memory holds in its crowd's shared state again if
    /// a restore of that state replaced the counts since it last did: its
    /// active path's gate slots and role places, and its lobby places
    /// (given up where the restored generations no longer know them). Its
    /// pending deferred actions stay pending; their tickets name the
    /// crowd's new id. Every tick of a tree with shared state starts with
    /// it, and a restore of the memory does the same for what it installs.
    #[inline(always)]
    pub(crate) fn rejoin(&mut self) {
        if !self.joined_now() {
            self.count_in();
        }
    }

    /// Whether the crowd's counts include what this memory holds: true
    /// for a memory without shared state.
    #[inline(always)]
    pub(crate) fn joined_now(&self) -> bool {
        self.shared
            .as_deref()
            .is_none_or(|shared| shared.id() == self.joined())
    }

    /// Counts the active path's holdings and the lobby places in the
    /// crowd's state as it is now; see [`rejoin`](Self::rejoin).
    #[cold]
    #[inline(never)]
    pub(crate) fn count_in(&mut self) {
        let Some(shared) = self.shared.as_deref() else {
            return;
        };
        let items = self.tree.items;
        for level in &self.levels[..self.depth()] {
            let item = &items[level.item as usize];
            if item.is(Has::SYNC) {
                if item.gate != NO_SLOT {
                    shared.gate_count_in(item.gate);
                }
                if item.role != NO_SLOT {
                    shared.role_count_in(item.role);
                }
            }
        }
        let shape = self.tree.shape;
        for item in items.iter().filter(|i| i.role != NO_SLOT) {
            let slot = &mut self.slots[shape.role_slot(item.role)];
            shared.role_count_place(item.role, item.decider.pre.sync.together, slot);
        }
        let id = shared.id();
        self.set_joined(id);
    }
}
