//! Counting a memory's holdings again, and the room a restore needs.
//!
//! Gate counts and role places are what the crowd's memories hold. A
//! restore of the shared state sets them to zero and gives the crowd a
//! new id; each memory then counts what it holds again, under the new id,
//! when it is restored or at its next tick (`AgentMemory::rejoin`).

use core::sync::atomic::Ordering;

use super::{
    REGISTERED, ROLE_GEN_SHIFT, ROLE_INSIDE_SHIFT, ROLE_PENDING_SHIFT, ROLE_WAITING, TreeShared,
    role_part,
};

impl TreeShared {
    /// Counts an agent already active in the gated decider of gate `g`,
    /// whatever the limit: it is inside, and the count says so.
    pub(crate) fn gate_count_in(&self, g: u16) {
        self.gates[g as usize].fetch_add(1, Ordering::AcqRel);
    }

    /// Whether gate `g` of `limit` has room for one more agent when the
    /// agent asking gives back a slot it holds there (`held`).
    #[cfg(feature = "serde")]
    pub(crate) fn gate_room(&self, g: u16, limit: u16, held: bool) -> bool {
        let n = self.gates[g as usize].load(Ordering::Acquire);
        n.saturating_sub(u32::from(held)) < u32::from(limit)
    }

    /// Whether role `r` of `size` has room for one more agent inside (its
    /// admitted and inside agents stay under `size`) when the agent asking
    /// gives back a place inside it holds (`held`).
    #[cfg(feature = "serde")]
    pub(crate) fn role_room(&self, r: u16, size: u8, held: bool) -> bool {
        let w = self.roles[r as usize].load(Ordering::Acquire);
        let taken = role_part(w, ROLE_INSIDE_SHIFT).saturating_sub(u64::from(held))
            + role_part(w, ROLE_PENDING_SHIFT);
        taken < u64::from(size)
    }

    /// Counts an agent already inside role `r`.
    pub(crate) fn role_count_in(&self, r: u16) {
        let _ = self.roles[r as usize].fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
            (role_part(w, ROLE_INSIDE_SHIFT) < 0xFF).then(|| w + (1 << ROLE_INSIDE_SHIFT))
        });
    }

    /// Counts the lobby place an agent's role slot `slot` names in role `r`
    /// of `size`: waiting in the current generation, or admitted by the
    /// last one. A place the role's generation no longer knows, or one
    /// that would fill the lobby without forming the group, is given up
    /// (the slot cleared): the agent asks again on its next evaluation.
    pub(crate) fn role_count_place(&self, r: u16, size: u8, slot: &mut u64) {
        if *slot & REGISTERED == 0 {
            *slot = 0;
            return;
        }
        let registered = *slot & 0xFFFF_FFFF;
        let counted = self.roles[r as usize]
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                let generation = w >> ROLE_GEN_SHIFT;
                if generation == registered {
                    ((w & ROLE_WAITING) + 1 < u64::from(size)).then(|| w + 1)
                } else if generation == (registered + 1) & 0xFFFF_FFFF {
                    (role_part(w, ROLE_PENDING_SHIFT) < u64::from(size))
                        .then(|| w + (1 << ROLE_PENDING_SHIFT))
                } else {
                    None
                }
            })
            .is_ok();
        if !counted {
            *slot = 0;
        }
    }
}
