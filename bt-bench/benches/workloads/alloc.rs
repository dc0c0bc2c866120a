//! A counting global allocator: the number of allocations and the live heap
//! bytes, counted only while switched on (so that the timed runs pay one
//! relaxed load per allocation and nothing else).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};

/// The system allocator, counting.
pub struct Counting;

static ON: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static FREES: AtomicU64 = AtomicU64::new(0);
/// Requested bytes allocated minus requested bytes freed while counting
/// (allocator bookkeeping and rounding not included).
static LIVE: AtomicI64 = AtomicI64::new(0);

fn on_alloc(size: usize) {
    if ON.load(Relaxed) {
        ALLOCS.fetch_add(1, Relaxed);
        LIVE.fetch_add(size as i64, Relaxed);
    }
}

fn on_free(size: usize) {
    if ON.load(Relaxed) {
        FREES.fetch_add(1, Relaxed);
        LIVE.fetch_sub(size as i64, Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged; the counting touches only atomics and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        on_alloc(layout.size());
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        on_alloc(layout.size());
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        on_free(layout.size());
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A reallocation counts as one allocation of the new size (and
        // leaves the number of live blocks as it was).
        if ON.load(Relaxed) {
            ALLOCS.fetch_add(1, Relaxed);
            FREES.fetch_add(1, Relaxed);
            LIVE.fetch_add(new_size as i64 - layout.size() as i64, Relaxed);
        }
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// What the allocator counted between [`start`] and [`Counter::stop`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Counted {
    /// Allocations (a reallocation counts as one).
    pub allocs: u64,
    /// Change of the live heap bytes.
    pub live: i64,
    /// Change of the number of live heap blocks.
    pub blocks: i64,
}

/// Counting in progress.
pub struct Counter {
    allocs: u64,
    frees: u64,
    live: i64,
}

/// Switches counting on.
pub fn start() -> Counter {
    let counter = Counter {
        allocs: ALLOCS.load(Relaxed),
        frees: FREES.load(Relaxed),
        live: LIVE.load(Relaxed),
    };
    ON.store(true, Relaxed);
    counter
}

impl Counter {
    /// What was counted so far; counting goes on.
    pub fn read(&self) -> Counted {
        let allocs = ALLOCS.load(Relaxed) - self.allocs;
        let frees = FREES.load(Relaxed) - self.frees;
        Counted {
            allocs,
            live: LIVE.load(Relaxed) - self.live,
            blocks: allocs as i64 - frees as i64,
        }
    }

    /// Switches counting off and returns what was counted.
    pub fn stop(self) -> Counted {
        let counted = self.read();
        ON.store(false, Relaxed);
        counted
    }
}
