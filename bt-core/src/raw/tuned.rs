//! The values of a crowd's tunables as a tick reads them.
//!
//! A crowd keeps its values in effect in a [`TunedSlots`]. Each table has
//! a [`TunedSlot`] beside it (`tunables!` declares both): a static copy
//! of the values of the crowd of the table that ticks now, and a word
//! that says whether the copy is the one to read. A tick of a crowd holds
//! a [`TunedScope`] while it runs. The first scope of a table copies its
//! crowd's values (only when they changed since the last copy), and while
//! every scope of the table is of that crowd (one crowd ticking, on any
//! number of threads), a read is a test of the word and a load of the
//! copy: nothing handed from agent to agent, no pointer followed. When
//! another crowd of the table ticks at the same time, reads take the slow
//! way: the crowd of the innermost scope of the thread (with `std`).

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

/// Where the stamps of values come from: each set of values in effect,
/// of any crowd, has its own, so a table's copy tells whether it holds
/// them.
static STAMPS: AtomicU64 = AtomicU64::new(1);

/// The values' slots before the first value: the table's address, the
/// stamp.
const HEAD: usize = 2;

/// A crowd's values in effect: slot 0 the address of the table (0 for
/// none), written once when made, slot 1 the stamp of the values (new at
/// each change), then one slot per tunable of the table.
pub(crate) struct TunedSlots(Box<[AtomicU64]>);

impl TunedSlots {
    /// `table`'s tunables, each at `bits` of its place.
    pub(crate) fn new(table: Option<&'static Tunables>, bits: impl Fn(usize) -> u64) -> Self {
        let n = table.map_or(0, Tunables::len);
        let head = table.map_or(0, address);
        let stamp = STAMPS.fetch_add(1, Ordering::Relaxed);
        TunedSlots(
            [AtomicU64::new(head), AtomicU64::new(stamp)]
                .into_iter()
                .chain((0..n).map(|i| AtomicU64::new(bits(i))))
                .collect(),
        )
    }

    /// The values, in the table's order.
    #[inline(always)]
    pub(crate) fn values(&self) -> &[AtomicU64] {
        &self.0[HEAD..]
    }

    /// Says that the values changed: the next tick copies them.
    pub(crate) fn touched(&self) {
        let stamp = STAMPS.fetch_add(1, Ordering::Relaxed);
        self.0[1].store(stamp, Ordering::Release);
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

/// The word that says when the copy of a table's values (beside it, in
/// the table's static, which `tunables!` declares) holds the values of
/// every tick running, and the stamp of the values copied.
pub struct TunedSlot {
    /// The stamp of the values copied (0 for none).
    stamp: AtomicU64,
    /// [`LIVE`], [`COPYING`], the scopes of the crowd copied (`owners`),
    /// those of other crowds (`others`), and a generation, new at each
    /// copy.
    state: AtomicU64,
}

/// The copy holds the values of every scope alive: some of the crowd
/// copied, none of another.
const LIVE: u64 = 1;
/// A scope is copying its crowd's values.
const COPYING: u64 = 2;
/// One scope of the crowd copied.
const OWNER: u64 = 1 << 2;
/// One scope of another crowd.
const OTHER: u64 = 1 << 24;
/// Each count's mask, shifted down.
const COUNT: u64 = (1 << 22) - 1;
/// The generation's bits.
const GENERATION: u64 = !((1 << 46) - 1);
/// One generation.
const NEXT: u64 = 1 << 46;

/// The scopes of the crowd copied, in `state`.
const fn owners(state: u64) -> u64 {
    (state >> 2) & COUNT
}

/// The scopes of other crowds, in `state`.
const fn others(state: u64) -> u64 {
    (state >> 24) & COUNT
}

/// `state` with [`LIVE`] set as its counts say.
const fn with_live(state: u64) -> u64 {
    if owners(state) > 0 && others(state) == 0 {
        state | LIVE
    } else {
        state & !LIVE
    }
}

impl TunedSlot {
    /// A slot with nothing copied.
    pub const fn new() -> Self {
        TunedSlot {
            stamp: AtomicU64::new(0),
            state: AtomicU64::new(0),
        }
    }
}

impl Default for TunedSlot {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for TunedSlot {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let state = self.state.load(Ordering::Relaxed);
        f.debug_struct("TunedSlot")
            .field("owners", &owners(state))
            .field("others", &others(state))
            .finish()
    }
}

/// The scopes of a thread, innermost last: each one's table and where its
/// crowd's values are, null for a scope dropped while a later one lives.
/// Read only when another crowd of a table ticks at the same time as the
/// one copied.
#[cfg(feature = "std")]
struct Scopes {
    /// Entries in use: the last is alive (dropped ones on top are taken
    /// off).
    depth: core::cell::Cell<usize>,
    entries: [core::cell::Cell<(*const Tunables, *const AtomicU64)>; DEPTH],
}

/// Scopes a thread holds at once, at most: crowd ticks nested in each
/// other's callbacks, and scopes a game holds.
#[cfg(feature = "std")]
const DEPTH: usize = 32;

/// An entry of a scope dropped.
#[cfg(feature = "std")]
const DEAD: (*const Tunables, *const AtomicU64) = (core::ptr::null(), core::ptr::null());

#[cfg(feature = "std")]
std::thread_local! {
    static SCOPES: Scopes = const {
        Scopes {
            depth: core::cell::Cell::new(0),
            entries: [const { core::cell::Cell::new(DEAD) }; DEPTH],
        }
    };
}

#[cfg(feature = "std")]
impl Scopes {
    /// The innermost scope's entry, if any.
    fn innermost(&self) -> (*const Tunables, *const AtomicU64) {
        match self.depth.get() {
            0 => DEAD,
            d => self.entries[d - 1].get(),
        }
    }

    /// Adds `entry` as the innermost; its place.
    fn push(&self, entry: (*const Tunables, *const AtomicU64), table: &Tunables) -> usize {
        let d = self.depth.get();
        assert!(
            d < DEPTH,
            "tunables `{}`: more than {DEPTH} crowd ticks and tuning scopes at once on one thread",
            table.name()
        );
        self.entries[d].set(entry);
        self.depth.set(d + 1);
        d
    }

    /// Drops the entry at `place`, and the dropped ones left on top.
    fn pop(&self, place: usize) {
        self.entries[place].set(DEAD);
        let mut d = self.depth.get();
        while d > 0 && self.entries[d - 1].get() == DEAD {
            d -= 1;
        }
        self.depth.set(d);
    }
}

/// The bits of the value at place `i` of `table`'s values in effect for
/// the crowd whose tick runs on this thread: the copy while it is every
/// tick's, else (with `std`) the values of the innermost scope of the
/// thread if it is of `table`. Else, the copy while a crowd of the table
/// ticks (its values), `default` while none does, and for a table that
/// `tunables!` did not declare.
#[inline(always)]
pub(crate) fn tuned_read(table: &'static Tunables, i: usize, default: u64) -> u64 {
    let Some((slot, copy)) = table.slot() else {
        return default;
    };
    match copy.get(i) {
        Some(value) if slot.state.load(Ordering::Relaxed) & LIVE != 0 => {
            value.load(Ordering::Relaxed)
        }
        _ => tuned_read_slow(table, i, default),
    }
}

/// [`tuned_read`] when the copy is not every tick's: one call, whose
/// result is the value, so that the caller's fast way needs nothing kept
/// across it.
#[cold]
#[inline(never)]
fn tuned_read_slow(table: &'static Tunables, i: usize, default: u64) -> u64 {
    let Some((slot, copy)) = table.slot() else {
        return default;
    };
    #[cfg(feature = "std")]
    {
        let (of, values) = SCOPES.with(Scopes::innermost);
        if core::ptr::eq(of, table) && !values.is_null() && i < table.len() {
            // SAFETY: the innermost entry of `SCOPES` is that of a
            // `TunedScope<'t>` alive on this thread (a scope's drop takes
            // its entry off, in whatever order scopes are dropped, and a
            // scope that is never dropped holds what its values are in
            // alive: see `TunedScope`): slot `HEAD` of a `TunedSlots` of
            // `table`, alive for `'t` (`TunedScope::enter`), which holds
            // `table.len() + HEAD` slots, so slot `HEAD + i`,
            // `i < table.len()`, is in it.
            let value = unsafe { &*values.add(i) };
            return value.load(Ordering::Relaxed);
        }
    }
    match copy.get(i) {
        Some(value) if owners(slot.state.load(Ordering::Acquire)) > 0 => {
            value.load(Ordering::Relaxed)
        }
        _ => default,
    }
}

/// A crowd's tick, for as long as it lives on the thread that made it:
/// its values are what its table's tunables read there. Dropped, it puts
/// back what was there.
pub(crate) struct TunedScope<'t> {
    /// The slot counted in, if the crowd has a table `tunables!` declared.
    slot: Option<&'static TunedSlot>,
    /// Counted as a scope of another crowd than the one copied.
    other: bool,
    /// The place of its entry in the thread's scopes, if it has one.
    #[cfg(feature = "std")]
    place: Option<usize>,
    /// Borrows the values; not `Send`: it is the thread's.
    _values: PhantomData<(&'t [AtomicU64], *const ())>,
}

impl<'t> TunedScope<'t> {
    /// A scope that counts nowhere.
    #[inline(always)]
    pub(crate) fn none() -> Self {
        TunedScope {
            slot: None,
            other: false,
            #[cfg(feature = "std")]
            place: None,
            _values: PhantomData,
        }
    }

    /// The scope of a tick of the crowd whose values `head` views, when
    /// they are `table`'s (for a tree without tunables, or values of
    /// another table, a scope that counts nowhere).
    #[inline(always)]
    pub(crate) fn enter(table: Option<&'static Tunables>, head: TunedHead<'t>) -> Self {
        let (Some(table), Some((slot, copy))) = (table, table.and_then(Tunables::slot)) else {
            return Self::none();
        };
        // SAFETY: as in `tuned_of`: slot 0 of live slots, or `NO_TABLE`.
        let named = unsafe { head.head.as_ref() }.load(Ordering::Relaxed);
        if named != address(table) {
            return Self::none();
        }
        Self::counted(table, slot, copy, head)
    }

    /// [`enter`](Self::enter) for values of `table`: out of line, as a
    /// crowd's tick makes one scope (a single agent's tick, one).
    #[inline(never)]
    fn counted(
        table: &'static Tunables,
        slot: &'static TunedSlot,
        copy: &'static [AtomicU64],
        head: TunedHead<'t>,
    ) -> Self {
        // SAFETY: slot 0 names `table`, so these are slots of a
        // `TunedSlots` made for it, alive for `'t` (`tuned_of`), with
        // `HEAD + table.len()` slots, and the pointer has the provenance
        // of the whole slice.
        let (stamp, values) = unsafe {
            (
                head.head.add(1).as_ref().load(Ordering::Acquire),
                core::slice::from_raw_parts(head.head.add(HEAD).as_ptr().cast_const(), table.len()),
            )
        };
        // A tick of a crowd whose scope is the thread's innermost (a
        // crate ticking the agents of its crowd's run one at a time, under
        // one scope for the run): counted already.
        #[cfg(feature = "std")]
        let entry = (core::ptr::from_ref(table), values.as_ptr());
        #[cfg(feature = "std")]
        if SCOPES.with(Scopes::innermost) == entry {
            return Self::none();
        }
        // The entry first: a scope that cannot have one (too many on the
        // thread) counts nowhere.
        let mut scope = Self::none();
        #[cfg(feature = "std")]
        {
            scope.place = Some(SCOPES.with(|s| s.push(entry, table)));
        }
        scope.other = loop {
            let state = slot.state.load(Ordering::Acquire);
            if state & COPYING != 0 {
                core::hint::spin_loop();
                continue;
            }
            assert!(
                owners(state) < COUNT && others(state) < COUNT,
                "tunables `{}`: over 4 million ticks of its crowds at once",
                table.name()
            );
            if owners(state) == 0 && others(state) == 0 {
                let copying = (state & GENERATION) | COPYING;
                if slot
                    .state
                    .compare_exchange_weak(state, copying, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
                {
                    continue;
                }
                if slot.stamp.load(Ordering::Relaxed) != stamp {
                    for (to, from) in copy.iter().zip(values) {
                        to.store(from.load(Ordering::Relaxed), Ordering::Relaxed);
                    }
                    slot.stamp.store(stamp, Ordering::Relaxed);
                }
                let next = (state & GENERATION).wrapping_add(NEXT) | OWNER | LIVE;
                slot.state.store(next, Ordering::Release);
                break false;
            }
            let (next, other) = if owners(state) > 0 && slot.stamp.load(Ordering::Relaxed) == stamp
            {
                (state + OWNER, false)
            } else {
                (with_live(state + OTHER), true)
            };
            if slot
                .state
                .compare_exchange_weak(state, next, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                break other;
            }
        };
        scope.slot = Some(slot);
        scope
    }
}

impl Drop for TunedScope<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(feature = "std")]
        if let Some(place) = self.place {
            SCOPES.with(|s| s.pop(place));
        }
        if let Some(slot) = self.slot {
            self.leave(slot);
        }
    }
}

impl TunedScope<'_> {
    /// Counts the scope out of `slot`.
    #[inline(never)]
    fn leave(&self, slot: &TunedSlot) {
        let one = if self.other { OTHER } else { OWNER };
        // A scope is counted in: no scope copies meanwhile.
        let _ = slot
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |state| {
                Some(with_live(state - one))
            });
    }
}
