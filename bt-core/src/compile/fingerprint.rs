//! The structural fingerprint of a tree: a 64-bit FNV-1a hash of what the
//! compile step reads from each decider, in preorder.
//!
//! Two trees with the same fingerprint have the same item stream in every
//! respect an agent's saved state and a crowd's shared state depend on: each
//! item's name (not its id, which hashes the module path too: moving a
//! declaration to another module keeps the fingerprint), depth, kind,
//! policy, child count, decider flags, preconditions (flag tests, timer,
//! shared checks; for one that names a tunable, the tunable's name rather
//! than its value), and its behavior's name, memory type and callbacks (whether a
//! behavior persists its memory is not part of it: see the snapshots). The
//! slot layout (timers, shuffle rounds, roles, actions, gates, cooldowns)
//! follows from these in preorder, so it is covered too. The hash is computed
//! in const evaluation, with the rest of the [`Shape`](crate::Shape).

use crate::decl::{Decider, DeciderKind, FlagTest};
use crate::raw::ErasedBehavior;

/// The fingerprint of an empty walk.
pub(crate) const SEED: u64 = 0xcbf2_9ce4_8422_2325;

const fn byte(h: u64, b: u8) -> u64 {
    (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
}

const fn word(mut h: u64, w: u64) -> u64 {
    let mut i = 0;
    while i < 8 {
        h = byte(h, (w >> (8 * i)) as u8);
        i += 1;
    }
    h
}

const fn text(mut h: u64, s: &str) -> u64 {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        h = byte(h, b[i]);
        i += 1;
    }
    // The length ends the field, so `ab`,`c` and `a`,`bc` differ.
    word(h, b.len() as u64)
}

const fn flags(h: u64, t: FlagTest) -> u64 {
    word(word(word(word(h, t.all), t.any), t.none), t.not_all)
}

const fn behavior<A>(mut h: u64, b: Option<&'static ErasedBehavior<A>>) -> u64 {
    let Some(b) = b else {
        return byte(h, 0);
    };
    h = byte(h, 1);
    h = text(h, b.name);
    h = text(h, b.memory_type);
    h = word(h, b.memory.size as u64);
    h = word(h, b.memory.align as u64);
    h = text(h, b.dblock_type);
    let callbacks = b.has_activate as u8
        | (b.has_tick as u8) << 1
        | (b.has_deactivate as u8) << 2
        | (b.has_launch as u8) << 3
        | (b.has_dblock as u8) << 4;
    byte(h, callbacks)
}

/// Mixes decider `d`, visited at `depth` in the preorder walk, into `h`.
pub(crate) const fn mix_decider<A>(mut h: u64, d: &'static Decider<A>, depth: usize) -> u64 {
    h = text(h, d.name);
    h = word(h, depth as u64);
    h = match d.kind {
        DeciderKind::Behavior(_) => byte(h, 0xB0),
        DeciderKind::Group {
            policy, children, ..
        } => word(byte(byte(h, 0x60), policy as u8), children.len() as u64),
        DeciderKind::Reference { target } => {
            // The target's place: the names of its path from the root.
            let mut h = word(byte(h, 0xAE), target.len() as u64);
            let mut i = 0;
            while i < target.len() {
                h = text(h, target[i].name);
                i += 1;
            }
            h
        }
    };
    h = byte(h, d.flags.bits());
    h = word(h, d.behavior_flags);
    h = byte(
        h,
        d.decide.is_some() as u8 | (d.select.is_some() as u8) << 1,
    );
    h = flags(h, d.pre.decision);
    h = flags(h, d.pre.stimuli);
    // A field that names a tunable: the tunable's name, not its value,
    // which the game may change.
    let tuned = d.tuned;
    h = match tuned.every {
        Some(t) => text(byte(h, 0x7E), t.name()),
        None => word(h, d.pre.every.to_bits()),
    };
    h = match tuned.gate {
        Some(t) => text(byte(h, 0x7E), t.name()),
        None => word(h, d.pre.sync.gate as u64),
    };
    h = match tuned.cooldown {
        Some(t) => text(byte(h, 0x7E), t.name()),
        None => word(h, d.pre.sync.cooldown.to_bits()),
    };
    h = byte(h, d.pre.sync.together);
    behavior(h, d.behavior())
}
