//! The values of a crowd's tunables as a tick reads them: one pointer to
//! a slice whose first slot names the table the others are the values of,
//! so a read is a comparison and a load, with no bounds check.

use alloc::boxed::Box;
use core::marker::PhantomData;
use core::ptr::NonNull;
use core::sync::atomic::Ordering;

// 64-bit atomics where the target has them, else portable-atomic's, as
// for the crowd's other counters.
#[cfg(target_has_atomic = "64")]
use core::sync::atomic::AtomicU64;
#[cfg(not(target_has_atomic = "64"))]
use portable_atomic::AtomicU64;

use crate::decl::tune::Tunables;

/// The first slot of the values of no table: it names none.
static NO_TABLE: AtomicU64 = AtomicU64::new(0);

/// What the first slot holds for `table`: its address.
#[inline(always)]
fn address(table: &'static Tunables) -> u64 {
    core::ptr::from_ref(table) as usize as u64
}

/// A crowd's values in effect: slot 0 the address of the table (0 for
/// none), written once when made, then one slot per tunable of the table.
pub(crate) struct TunedSlots(Box<[AtomicU64]>);

impl TunedSlots {
    /// `table`'s tunables, each at `bits` of its place.
    pub(crate) fn new(table: Option<&'static Tunables>, bits: impl Fn(usize) -> u64) -> Self {
        let n = table.map_or(0, Tunables::len);
        let head = table.map_or(0, address);
        TunedSlots(
            core::iter::once(AtomicU64::new(head))
                .chain((0..n).map(|i| AtomicU64::new(bits(i))))
                .collect(),
        )
    }

    /// The values, in the table's order.
    #[inline(always)]
    pub(crate) fn values(&self) -> &[AtomicU64] {
        &self.0[1..]
    }
}

/// A tick's view of a crowd's [`TunedSlots`], or of none.
#[derive(Clone, Copy)]
pub(crate) struct TunedHead<'t> {
    /// Slot 0 of a `TunedSlots`'s slice (or [`NO_TABLE`]), with the
    /// provenance of the whole slice.
    head: NonNull<AtomicU64>,
    _slots: PhantomData<&'t [AtomicU64]>,
}

// SAFETY: a `TunedHead` is a shared reference to atomics that it only
// loads from, as `&'t [AtomicU64]` would be, which is `Send` and `Sync`.
unsafe impl Send for TunedHead<'_> {}
// SAFETY: as above.
unsafe impl Sync for TunedHead<'_> {}

impl TunedHead<'static> {
    /// No table: every read falls back to the default.
    pub(crate) const NONE: TunedHead<'static> = TunedHead {
        head: match NonNull::new(core::ptr::from_ref(&NO_TABLE).cast_mut()) {
            Some(head) => head,
            None => unreachable!(),
        },
        _slots: PhantomData,
    };
}

impl<'t> TunedHead<'t> {
    /// The value of tunable `i` of `table`, if these are `table`'s values.
    #[inline(always)]
    pub(crate) fn get(self, table: &'static Tunables, i: usize) -> Option<u64> {
        // SAFETY: `head` points to a live `AtomicU64` for `'t`: slot 0 of
        // a `TunedSlots` alive for `'t` (see `tuned_of`), or the static
        // `NO_TABLE`.
        let head = unsafe { self.head.as_ref() };
        if head.load(Ordering::Relaxed) != address(table) || i >= table.len() {
            return None;
        }
        // SAFETY: slot 0 holds `table`'s address only in a `TunedSlots`
        // made for `table` (`NO_TABLE` holds 0, no address), whose slice
        // has `table.len() + 1` slots and is never resized, and the
        // pointer has the provenance of that whole slice: slot `1 + i`,
        // `i < table.len()`, is in it, alive for `'t`.
        let slot = unsafe { self.head.add(1 + i).as_ref() };
        Some(slot.load(Ordering::Relaxed))
    }

    /// Whether two views are of the same values.
    pub(crate) fn same(self, other: TunedHead<'_>) -> bool {
        self.head == other.head
    }
}

/// The values `slots` of the crowd a memory is bound to (those in its
/// `AgentMemory::shared`), for a tick of that memory: `'t` is the tick's.
///
/// Only for a tick: the memory's `shared` is set when the memory is made
/// and never assigned again, so its `Arc` keeps the shared state, and the
/// slots in it, alive as long as the memory; a tick holds the memory
/// (`&mut`) for all of `'t`, so nothing drops or replaces it meanwhile.
/// No reference count is taken: the tick reads the values through one
/// pointer, which is what lets a crowd's loop stay as it is for a tree
/// without tunables.
#[inline(always)]
pub(crate) fn tuned_of<'t>(slots: Option<&TunedSlots>) -> TunedHead<'t> {
    match slots {
        Some(slots) => TunedHead {
            head: NonNull::from(&*slots.0).cast(),
            _slots: PhantomData,
        },
        None => TunedHead::NONE,
    }
}
