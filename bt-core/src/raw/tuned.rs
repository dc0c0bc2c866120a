//! The values of a crowd's tunables as a tick reads them: one pointer to
//! a block of slots whose first names the table the others are the values
//! of, so a read is a comparison and a load, with no bounds check.
//!
//! Every block a [`TunedHead`] points to has at least [`FAST_SLOTS`] value
//! slots after the first, whatever its table's length: a read of a place
//! below it stays in the block without a check, which is what lets a
//! context typed by its table read a value with one load.

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

use crate::decl::tune::TunableDecl;
use crate::decl::tune::Tunables;

/// The places every block of values has, whatever its table's length:
/// a typed read of a tunable below this place loads it without a check.
pub const FAST_SLOTS: usize = 128;

/// The values of no table: the first slot names none, the others are 0.
static NO_TABLE: [AtomicU64; FAST_SLOTS + 1] = [const { AtomicU64::new(0) }; FAST_SLOTS + 1];

/// What the first slot holds for `table`: its address.
#[inline(always)]
fn address(table: &'static Tunables) -> u64 {
    core::ptr::from_ref(table) as usize as u64
}

/// A crowd's values in effect: slot 0 the address of the table (0 for
/// none), written once when made, then one slot per tunable of the table,
/// then zeros up to [`FAST_SLOTS`] values.
pub(crate) struct TunedSlots {
    slots: Box<[AtomicU64]>,
    /// The table's length.
    len: usize,
}

impl TunedSlots {
    /// `table`'s tunables, each at `bits` of its place.
    pub(crate) fn new(table: Option<&'static Tunables>, bits: impl Fn(usize) -> u64) -> Self {
        let len = table.map_or(0, Tunables::len);
        let head = table.map_or(0, address);
        let slots = core::iter::once(AtomicU64::new(head))
            .chain(
                (0..len.max(FAST_SLOTS)).map(|i| AtomicU64::new(if i < len { bits(i) } else { 0 })),
            )
            .collect();
        TunedSlots { slots, len }
    }

    /// The values, in the table's order.
    #[inline(always)]
    pub(crate) fn values(&self) -> &[AtomicU64] {
        &self.slots[1..=self.len]
    }
}

/// The defaults of a table's tunables, in a block a context typed by the
/// table reads outside a crowd's tick (`tunables!` declares one beside
/// each table). Not for use outside the crate's macros.
#[doc(hidden)]
pub struct TunedDefaults([AtomicU64; FAST_SLOTS + 1]);

impl TunedDefaults {
    /// The block of the defaults of `decls` (a table's, in its order):
    /// the first slot names no table, so a read that checks the table
    /// finds the default it would give anyway; the places past `decls`
    /// are 0. Those past [`FAST_SLOTS`] are not kept: their reads check.
    pub const fn of(decls: &[TunableDecl]) -> Self {
        let mut slots = [const { AtomicU64::new(0) }; FAST_SLOTS + 1];
        let mut i = 0;
        while i < decls.len() && i < FAST_SLOTS {
            slots[1 + i] = AtomicU64::new(decls[i].default);
            i += 1;
        }
        TunedDefaults(slots)
    }
}

/// A tick's view of a crowd's [`TunedSlots`], or of none.
#[derive(Clone, Copy)]
pub(crate) struct TunedHead<'t> {
    /// Slot 0 of a `TunedSlots`'s slice, of a [`TunedDefaults`] or of
    /// [`NO_TABLE`], with the provenance of the whole block: at least
    /// `FAST_SLOTS + 1` slots.
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
        head: match NonNull::new(
            core::ptr::from_ref(&NO_TABLE)
                .cast::<AtomicU64>()
                .cast_mut(),
        ) {
            Some(head) => head,
            None => unreachable!(),
        },
        _slots: PhantomData,
    };
}

impl TunedHead<'static> {
    /// The block `defaults`.
    #[inline(always)]
    pub(crate) const fn defaults(defaults: &'static TunedDefaults) -> Self {
        TunedHead {
            head: match NonNull::new(
                core::ptr::from_ref(&defaults.0)
                    .cast::<AtomicU64>()
                    .cast_mut(),
            ) {
                Some(head) => head,
                None => unreachable!(),
            },
            _slots: PhantomData,
        }
    }
}

impl<'t> TunedHead<'t> {
    /// The value of tunable `i` of `table`, if these are `table`'s values.
    #[inline(always)]
    pub(crate) fn get(self, table: &'static Tunables, i: usize) -> Option<u64> {
        // SAFETY: `head` points to a live `AtomicU64` for `'t`: slot 0 of
        // a `TunedSlots` alive for `'t` (see `tuned_of`), or of a static
        // block (`NO_TABLE`, a `TunedDefaults`).
        let head = unsafe { self.head.as_ref() };
        if head.load(Ordering::Relaxed) != address(table) || i >= table.len() {
            return None;
        }
        // SAFETY: slot 0 holds `table`'s address only in a `TunedSlots`
        // made for `table` (the static blocks hold 0, no address), whose
        // slice has at least `table.len() + 1` slots and is never resized,
        // and the pointer has the provenance of that whole slice: slot
        // `1 + i`, `i < table.len()`, is in it, alive for `'t`.
        let slot = unsafe { self.head.add(1 + i).as_ref() };
        Some(slot.load(Ordering::Relaxed))
    }

    /// The value at place `i` of these values, whatever their table, if
    /// `i` is below [`FAST_SLOTS`]: one load. What it is a value of is the
    /// caller's to know (a context typed by its table).
    #[inline(always)]
    pub(crate) fn at(self, i: usize) -> Option<u64> {
        if i >= FAST_SLOTS {
            return None;
        }
        // SAFETY: every block a `TunedHead` points to has at least
        // `FAST_SLOTS + 1` slots (`TunedSlots::new`, `TunedDefaults`,
        // `NO_TABLE`), alive for `'t` (see `get`), and the pointer has the
        // provenance of the whole block: slot `1 + i`, `i < FAST_SLOTS`,
        // is in it.
        let slot = unsafe { self.head.add(1 + i).as_ref() };
        Some(slot.load(Ordering::Relaxed))
    }

    /// Whether two views are of the same values.
    pub(crate) fn same(self, other: TunedHead<'_>) -> bool {
        self.head == other.head
    }
}

/// Where the ticks of a memory find the values of its crowd's tunables,
/// found once when the memory is made: the block in the crowd's shared
/// state the memory holds, or a static block.
#[derive(Clone, Copy)]
pub(crate) struct TunedAt(NonNull<AtomicU64>);

// SAFETY: a `TunedAt` is a pointer to atomics that the views made of it
// only load from, as `&[AtomicU64]` would be, which is `Send` and `Sync`.
unsafe impl Send for TunedAt {}
// SAFETY: as above.
unsafe impl Sync for TunedAt {}

impl TunedAt {
    /// The values `slots` of the crowd a memory is bound to (those in its
    /// `AgentMemory::shared`), or `none` for a memory of no crowd.
    pub(crate) fn of(slots: Option<&TunedSlots>, none: TunedHead<'static>) -> Self {
        TunedAt(match slots {
            Some(slots) => NonNull::from(&*slots.slots).cast(),
            None => none.head,
        })
    }

    /// The view of these values for a tick of the memory that holds them:
    /// `'t` is the tick's.
    ///
    /// Only for a tick: the memory's `shared` is set when the memory is
    /// made and never assigned again, so its `Arc` keeps the shared state,
    /// and the slots in it, alive as long as the memory; a tick holds the
    /// memory (`&mut`) for all of `'t`, so nothing drops or replaces it
    /// meanwhile. No reference count is taken: the tick reads the values
    /// through one pointer, loaded from the memory, which is what lets a
    /// crowd's loop stay as it is for a tree without tunables.
    #[inline(always)]
    pub(crate) fn head<'t>(self) -> TunedHead<'t> {
        TunedHead {
            head: self.0,
            _slots: PhantomData,
        }
    }
}
