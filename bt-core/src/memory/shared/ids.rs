//! Crowd ids: unique within a process, drawn afresh in every run.

use core::sync::atomic::{AtomicU32, Ordering};

use super::AtomicU64;

/// How many crowd ids the process has drawn.
static CROWDS_MADE: AtomicU32 = AtomicU32::new(0);

/// The process's key for its crowd ids (low 32 bits; 0: not drawn yet) and
/// the id of the process that drew it (high 32 bits), so that a process
/// made by `fork` draws a key of its own.
static CROWD_KEY: AtomicU64 = AtomicU64::new(0);

/// A new crowd id: the next count of the process, through a permutation of
/// the `u32`s keyed once per process. So no two crowds of one process share
/// an id, and the ids of two runs differ: a save of an earlier run (or of
/// another process) names a crowd no running crowd has, except by a chance
/// of about one in four billion per pair of crowds. The key comes from the
/// operating system's random numbers and the process id (feature `std`),
/// and from the addresses the system gave the program and its stack; 0 is
/// never an id.
pub(crate) fn next_crowd() -> u32 {
    let key = crowd_key();
    loop {
        let id = permute(CROWDS_MADE.fetch_add(1, Ordering::Relaxed), key);
        if id != 0 {
            return id;
        }
    }
}

/// The process's key, drawn at its first crowd (and again in a process
/// made by `fork`).
fn crowd_key() -> u32 {
    let pid = process_id();
    let kept = CROWD_KEY.load(Ordering::Acquire);
    if kept != 0 && (kept >> 32) as u32 == pid {
        return kept as u32;
    }
    let local = 0u8;
    let here = core::ptr::addr_of!(CROWDS_MADE).addr() as u64;
    let stack = core::ptr::addr_of!(local).addr() as u64;
    let code = (crowd_key as fn() -> u32 as *const ()).addr() as u64;
    let mixed = splitmix(
        splitmix(here ^ stack.rotate_left(21) ^ system_random())
            ^ code.rotate_left(42)
            ^ u64::from(pid),
    );
    let drawn = ((mixed >> 32) as u32 ^ mixed as u32) | 1;
    let word = u64::from(pid) << 32 | u64::from(drawn);
    match CROWD_KEY.compare_exchange(kept, word, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => drawn,
        Err(first) => first as u32,
    }
}

/// Random bits from the operating system (feature `std`; 0 without it).
fn system_random() -> u64 {
    #[cfg(feature = "std")]
    {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0x6274_2d63_726f_7764);
        h.finish()
    }
    #[cfg(not(feature = "std"))]
    0
}

/// The id of this process (feature `std`, on systems that have one; 0
/// otherwise).
fn process_id() -> u32 {
    #[cfg(all(feature = "std", any(unix, windows), not(miri)))]
    {
        std::process::id()
    }
    #[cfg(not(all(feature = "std", any(unix, windows), not(miri))))]
    0
}

/// SplitMix64's finalizer: every bit of `x` moves every bit of the result.
const fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A permutation of the `u32`s chosen by `key`: an added key, then
/// xor-shifts and odd multiplications, each of them invertible.
const fn permute(n: u32, key: u32) -> u32 {
    let mut x = n.wrapping_add(key);
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^ (x >> 16) ^ key.rotate_left(7)
}
