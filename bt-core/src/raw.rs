//! Type-erased storage: the one module of the crate that uses `unsafe`.
//!
//! Three things live here, each a typed value kept in untyped bytes:
//!
//! - [`ErasedBehavior`]: a behavior's callbacks with its memory type erased.
//!   It is built only by [`ErasedBehavior::new`], which takes every callback
//!   and the memory type from one [`BehaviorDef`] implementation, so the
//!   thunks of one behavior always agree on the type they cast to.
//! - [`Blocks`]: one fixed-size block per depth level of an agent's memory.
//!   A level's block holds a value exactly while `owner[level]` is `Some(b)`,
//!   and then that value was written by `b`'s own `init` thunk. Every method
//!   that runs a thunk on a block reads the owner first and calls that owner's
//!   thunk, so the block and the code that casts it can never disagree.
//! - [`DPool`]: the per-tick scratch blocks that carry a `decide` result (a
//!   DBlock) to the `activate` of the same decider. Each live value carries
//!   its `TypeId`, and is read back only under the same type.
//!
//! Besides these, [`prefetch`] wraps the x86-64 cache hint that crowd ticks
//! use to fetch the next agents' memories, and [`Places`] walks agents
//! listed by index in a crowd's slices, each index checked once.
//!
//! Invariants established here are not relied on anywhere else: the rest of
//! the crate is `#![forbid(unsafe_code)]`-clean and can only reach these
//! values through the safe methods below.
#![allow(unsafe_code)]

use core::mem::{self, MaybeUninit};
use core::ptr;

use crate::decl::behavior::{Action, BehaviorDef, Ctx, TunableTable, fnv1a};
use crate::decl::tune::Tunables;

/// Alignment of every memory block and DBlock.
pub const BLOCK_ALIGN: usize = 16;

/// `N` bytes aligned to [`BLOCK_ALIGN`].
#[repr(C, align(16))]
pub(crate) struct Bytes<const N: usize>([MaybeUninit<u8>; N]);

impl<const N: usize> Bytes<N> {
    const UNINIT: Self = Bytes([MaybeUninit::uninit(); N]);

    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.0.as_mut_ptr().cast()
    }
}

/// Size and alignment of a type stored in a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeLayout {
    /// `size_of` the type.
    pub size: usize,
    /// `align_of` the type.
    pub align: usize,
}

impl TypeLayout {
    /// The layout of `T`.
    pub const fn of<T>() -> Self {
        TypeLayout {
            size: mem::size_of::<T>(),
            align: mem::align_of::<T>(),
        }
    }

    /// Whether a value of this layout fits a block of `block` bytes.
    pub const fn fits(&self, block: usize) -> bool {
        self.size <= block && self.align <= BLOCK_ALIGN
    }
}

/// How a behavior's memory block is saved and restored: made by the
/// `persist` key of [`behavior!`](crate::behavior) (which needs the `serde`
/// feature), for a memory type that implements `Serialize` and
/// `Deserialize`.
#[derive(Clone, Copy)]
pub struct PersistFns {
    #[cfg(feature = "serde")]
    save: SaveFn,
    #[cfg(feature = "serde")]
    load: LoadFn,
    _sealed: (),
}

#[cfg(feature = "serde")]
type SaveFn = unsafe fn(*const u8) -> *const dyn erased_serde::Serialize;
#[cfg(feature = "serde")]
type LoadFn =
    unsafe fn(*mut u8, &mut dyn erased_serde::Deserializer<'_>) -> Result<(), erased_serde::Error>;

#[cfg(feature = "serde")]
impl PersistFns {
    /// The save and restore functions of memory type `M`.
    pub(crate) const fn of<M>() -> Self
    where
        M: serde::Serialize + serde::de::DeserializeOwned + 'static,
    {
        PersistFns {
            save: save_thunk::<M>,
            load: load_thunk::<M>,
            _sealed: (),
        }
    }
}

#[cfg(not(feature = "serde"))]
impl PersistFns {
    /// Never called: without the `serde` feature no type can be persisted.
    pub(crate) const fn unavailable() -> Self {
        PersistFns { _sealed: () }
    }
}

/// # Safety
/// `p` points to a live `M` that outlives every use of the result.
#[cfg(feature = "serde")]
unsafe fn save_thunk<M: serde::Serialize + 'static>(
    p: *const u8,
) -> *const dyn erased_serde::Serialize {
    // Only a pointer cast: no access happens here (see `Blocks::saved`).
    p.cast::<M>() as *const dyn erased_serde::Serialize
}

/// # Safety
/// `p` is valid for writes of `M`, aligned for it, and holds no live value.
#[cfg(feature = "serde")]
unsafe fn load_thunk<M: serde::de::DeserializeOwned>(
    p: *mut u8,
    d: &mut dyn erased_serde::Deserializer<'_>,
) -> Result<(), erased_serde::Error> {
    // A failing `Deserialize` drops whatever it built before it returns
    // the error; nothing is written then.
    let value = erased_serde::deserialize::<M>(d)?;
    // SAFETY: guaranteed by the caller (see `Blocks::load`).
    unsafe { p.cast::<M>().write(value) };
    Ok(())
}

type InitFn = unsafe fn(*mut u8);
type DropFn = unsafe fn(*mut u8);
type ActivateFn<A> = unsafe fn(&mut A, *mut u8, DIn<'_>, &Ctx) -> bool;
type TickFn<A> = unsafe fn(&mut A, *mut u8, &Ctx) -> bool;
type DeactivateFn<A> = unsafe fn(&mut A, *mut u8, &Ctx);
type LaunchFn<A> = unsafe fn(&mut A, *mut u8, &Ctx) -> Option<Action>;
type EnterFn<A> = unsafe fn(
    *mut u8,
    &mut Option<&'static ErasedBehavior<A>>,
    &'static ErasedBehavior<A>,
    &mut A,
    &Ctx,
) -> Entered;

/// How entering a behavior with [`Blocks::enter`] went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entered {
    /// `activate` succeeded and the first `tick` goes on running.
    Running,
    /// `activate` returned false; nothing ticked.
    ActivateFailed,
    /// `activate` succeeded and the first `tick` ended the behavior.
    Ended,
}

/// A behavior with its memory type erased: what deciders and the compiled
/// tree point to. Made only by [`Behavior`](crate::Behavior) declarations.
pub struct ErasedBehavior<A: 'static> {
    pub(crate) name: &'static str,
    pub(crate) id: u32,
    pub(crate) has_activate: bool,
    pub(crate) has_tick: bool,
    pub(crate) has_deactivate: bool,
    pub(crate) has_launch: bool,
    pub(crate) has_dblock: bool,
    /// Whether the memory type has drop glue: without it, releasing a
    /// block calls nothing.
    needs_drop: bool,
    pub(crate) memory: TypeLayout,
    pub(crate) memory_type: &'static str,
    pub(crate) dblock: TypeLayout,
    pub(crate) dblock_type: &'static str,
    pub(crate) persist: Option<PersistFns>,
    /// The table of tunables its context is typed by (`tunables:`).
    pub(crate) table: Option<&'static Tunables>,
    init: InitFn,
    drop: DropFn,
    activate: ActivateFn<A>,
    tick: TickFn<A>,
    deactivate: DeactivateFn<A>,
    launch: LaunchFn<A>,
    enter: EnterFn<A>,
}

impl<A: 'static> ErasedBehavior<A> {
    /// Erases the behavior `T`: every thunk stored here is instantiated with
    /// the same `T`, so all of them cast a block to `T::Memory`.
    pub(crate) const fn new<T: BehaviorDef<A>>() -> Self {
        ErasedBehavior {
            name: T::NAME,
            id: fnv1a(T::MODULE, T::NAME),
            has_activate: T::HAS_ACTIVATE,
            has_tick: T::HAS_TICK,
            has_deactivate: T::HAS_DEACTIVATE,
            has_launch: T::HAS_LAUNCH,
            has_dblock: T::HAS_DBLOCK,
            needs_drop: mem::needs_drop::<T::Memory>(),
            memory: TypeLayout::of::<T::Memory>(),
            memory_type: T::MEMORY_TYPE,
            dblock: TypeLayout::of::<T::DBlock>(),
            dblock_type: T::DBLOCK_TYPE,
            persist: T::PERSIST,
            table: <T::Table as TunableTable>::TABLE,
            init: init_thunk::<T::Memory>,
            drop: drop_thunk::<T::Memory>,
            activate: activate_thunk::<A, T>,
            tick: tick_thunk::<A, T>,
            deactivate: deactivate_thunk::<A, T>,
            launch: launch_thunk::<A, T>,
            enter: enter_thunk::<A, T>,
        }
    }
}

/// The tick's context `cx` as behavior `T`'s callbacks take it: typed by
/// `T`'s table. The values it holds are the tree's crowd's (or the
/// table's defaults), and the tree's compile step checked that a behavior
/// typed by a table runs only in a tree of that table: they are `T`'s
/// table's. (What a typed read relies on for memory safety is only what
/// every context's values hold, see `TunedHead::at`.)
#[inline(always)]
fn typed<'c, 't, A, T: BehaviorDef<A>>(cx: &'c Ctx<'t>) -> &'c Ctx<'t, T::Table> {
    // SAFETY: `Ctx` is `repr(C)` and the one field whose type depends on
    // the table type is a `PhantomData`, a zero-sized field of alignment
    // 1: `Ctx<'t, AnyTable>` and `Ctx<'t, T::Table>` have the same layout
    // and the same valid values, and the reference keeps `cx`'s lifetime.
    unsafe { &*ptr::from_ref(cx).cast::<Ctx<'t, T::Table>>() }
}

/// # Safety
/// `p` is valid for writes of `M` and aligned for it.
unsafe fn init_thunk<M: Default>(p: *mut u8) {
    // SAFETY: guaranteed by the caller (see `Blocks::init`).
    unsafe { p.cast::<M>().write(M::default()) }
}

/// # Safety
/// `p` points to a live `M` that is not used again.
unsafe fn drop_thunk<M>(p: *mut u8) {
    // SAFETY: guaranteed by the caller (see `Blocks::release`, `DPool::clear`).
    unsafe { ptr::drop_in_place(p.cast::<M>()) }
}

/// # Safety
/// `p` points to a live `T::Memory`, not aliased for the duration of the call.
unsafe fn activate_thunk<A, T: BehaviorDef<A>>(
    agent: &mut A,
    p: *mut u8,
    din: DIn<'_>,
    cx: &Ctx,
) -> bool {
    // SAFETY: guaranteed by the caller (see `Blocks::activate`).
    let memory = unsafe { &mut *p.cast::<T::Memory>() };
    let dblock = din.take::<T::DBlock>();
    T::activate(agent, memory, dblock, typed::<A, T>(cx))
}

/// # Safety
/// `p` points to a live `T::Memory`, not aliased for the duration of the call.
unsafe fn tick_thunk<A, T: BehaviorDef<A>>(agent: &mut A, p: *mut u8, cx: &Ctx) -> bool {
    // SAFETY: guaranteed by the caller (see `Blocks::tick`).
    let memory = unsafe { &mut *p.cast::<T::Memory>() };
    T::tick(agent, memory, typed::<A, T>(cx))
}

/// # Safety
/// `p` points to a live `T::Memory`, not aliased for the duration of the call.
unsafe fn deactivate_thunk<A, T: BehaviorDef<A>>(agent: &mut A, p: *mut u8, cx: &Ctx) {
    // SAFETY: guaranteed by the caller (see `Blocks::deactivate`).
    let memory = unsafe { &mut *p.cast::<T::Memory>() };
    T::deactivate(agent, memory, typed::<A, T>(cx))
}

/// # Safety
/// `p` points to a live `T::Memory`, not aliased for the duration of the call.
unsafe fn launch_thunk<A, T: BehaviorDef<A>>(
    agent: &mut A,
    p: *mut u8,
    cx: &Ctx,
) -> Option<Action> {
    // SAFETY: guaranteed by the caller (see `Blocks::launch`).
    let memory = unsafe { &mut *p.cast::<T::Memory>() };
    T::launch(agent, memory, typed::<A, T>(cx))
}

/// `init`, then `activate` with no DBlock, then the first `tick`, in one
/// call: what entering a leaf does when nothing between these steps
/// needs to see them apart. The owner is set as soon as the value is
/// written, as [`Blocks::init`] does, so a panic in `activate` or `tick`
/// leaves a block that is dropped exactly once.
///
/// # Safety
/// `p` is valid for writes of `T::Memory`, aligned for it, holds no live
/// value, and is not aliased for the duration of the call; `owner` is
/// its block's owner and `b` was erased from `T`.
unsafe fn enter_thunk<A, T: BehaviorDef<A>>(
    p: *mut u8,
    owner: &mut Option<&'static ErasedBehavior<A>>,
    b: &'static ErasedBehavior<A>,
    agent: &mut A,
    cx: &Ctx,
) -> Entered {
    // SAFETY: guaranteed by the caller (see `Blocks::enter`).
    unsafe { p.cast::<T::Memory>().write(T::Memory::default()) };
    *owner = Some(b);
    // SAFETY: the value was written just above and `p` is not aliased.
    let memory = unsafe { &mut *p.cast::<T::Memory>() };
    let cx = typed::<A, T>(cx);
    if T::HAS_ACTIVATE && !T::activate(agent, memory, None, cx) {
        return Entered::ActivateFailed;
    }
    if T::HAS_TICK && !T::tick(agent, memory, cx) {
        return Entered::Ended;
    }
    Entered::Running
}

/// The memory blocks of one agent: `L` levels of `N` bytes each.
pub(crate) struct Blocks<A: 'static, const L: usize, const N: usize> {
    bytes: [Bytes<N>; L],
    /// `Some(b)` exactly while the level's block holds a live value written
    /// by `b.init`.
    owner: [Option<&'static ErasedBehavior<A>>; L],
}

impl<A: 'static, const L: usize, const N: usize> Blocks<A, L, N> {
    pub(crate) const fn new() -> Self {
        Blocks {
            bytes: [Bytes::UNINIT; L],
            owner: [None; L],
        }
    }

    /// Starts fetching the owners' cache line of the blocks `bytes` after
    /// these (see [`prefetch_after`]).
    #[inline(always)]
    pub(crate) fn prefetch_owners_after(&self, bytes: usize) {
        prefetch_after(&self.owner, bytes);
    }

    /// Starts fetching the first cache line of `level`'s block.
    #[inline(always)]
    pub(crate) fn prefetch_block(&self, level: usize) {
        if let Some(bytes) = self.bytes.get(level) {
            prefetch(bytes);
        }
    }

    /// The behavior whose value the block of `level` holds.
    pub(crate) fn owner(&self, level: usize) -> Option<&'static ErasedBehavior<A>> {
        self.owner[level]
    }

    /// Builds `b`'s memory value (its `Default`) in the block of `level`,
    /// first dropping whatever the block held.
    ///
    /// # Panics
    /// If `b`'s memory type does not fit the block (the compile step rejects
    /// such trees, so only a hand-made table can get here), or if the memory
    /// type's `Default` panics; the block is left empty in both cases.
    pub(crate) fn init(&mut self, level: usize, b: &'static ErasedBehavior<A>) {
        self.make_room(level, b);
        // SAFETY: the block is `N` bytes aligned to `BLOCK_ALIGN` and
        // `make_room` checked that `b`'s memory type fits both; the block
        // holds no live value (`make_room` released it). The owner is set only after
        // the value is written, so a panicking `Default` leaves it empty.
        unsafe { (b.init)(self.bytes[level].as_mut_ptr()) };
        self.owner[level] = Some(b);
    }

    /// Makes the block of `level` ready for a value of `b`: drops what it
    /// holds, and checks that `b`'s memory type fits it.
    ///
    /// # Panics
    /// If `b`'s memory type does not fit the block (the compile step rejects
    /// such trees, so only a hand-made table can get here).
    #[inline(always)]
    fn make_room(&mut self, level: usize, b: &'static ErasedBehavior<A>) {
        if self.owner[level].is_some() {
            self.release(level);
        }
        assert!(
            b.memory.fits(N),
            "behavior `{}`: memory type does not fit a {N}-byte block",
            b.name
        );
    }

    /// Enters `b` at `level`: builds its memory value in the block (first
    /// dropping whatever the block held), runs its `activate` with no
    /// DBlock and then its first `tick`, exactly as [`init`](Self::init),
    /// [`activate`](Self::activate) with [`DIn::EMPTY`] and
    /// [`tick`](Self::tick) would in turn, in one call through `b`.
    ///
    /// # Panics
    /// As [`init`](Self::init), or if a callback panics; the block then
    /// holds the value, to be released as usual.
    #[inline(always)]
    pub(crate) fn enter(
        &mut self,
        level: usize,
        b: &'static ErasedBehavior<A>,
        agent: &mut A,
        cx: &Ctx,
    ) -> Entered {
        self.make_room(level, b);
        // SAFETY: as in `init`: the block is `N` bytes aligned to
        // `BLOCK_ALIGN`, `b`'s memory type fits both and the block holds no
        // live value (both seen to by `make_room`). `owner[level]` is the
        // block's owner, and `&mut self` makes both exclusive.
        unsafe {
            (b.enter)(
                self.bytes[level].as_mut_ptr(),
                &mut self.owner[level],
                b,
                agent,
                cx,
            )
        }
    }

    /// Runs the owner's `activate` on its block. An empty block means a
    /// level with no behavior: there is nothing to run and it succeeds.
    pub(crate) fn activate(&mut self, level: usize, agent: &mut A, din: DIn<'_>, cx: &Ctx) -> bool {
        match self.owner[level] {
            // SAFETY: `owner[level] == Some(b)` means the block holds a live
            // value written by `b.init`, i.e. a `T::Memory` for the `T` that
            // `b`'s thunks were instantiated with; `&mut self` makes the
            // access exclusive.
            Some(b) => unsafe { (b.activate)(agent, self.bytes[level].as_mut_ptr(), din, cx) },
            None => true,
        }
    }

    /// Runs the owner's `tick` on its block.
    pub(crate) fn tick(&mut self, level: usize, agent: &mut A, cx: &Ctx) -> bool {
        match self.owner[level] {
            // SAFETY: as in `activate`.
            Some(b) => unsafe { (b.tick)(agent, self.bytes[level].as_mut_ptr(), cx) },
            None => true,
        }
    }

    /// Runs the owner's `deactivate` on its block.
    pub(crate) fn deactivate(&mut self, level: usize, agent: &mut A, cx: &Ctx) {
        if let Some(b) = self.owner[level] {
            // SAFETY: as in `activate`.
            unsafe { (b.deactivate)(agent, self.bytes[level].as_mut_ptr(), cx) }
        }
    }

    /// Runs the owner's `launch` on its block (`None` for an empty block).
    pub(crate) fn launch(&mut self, level: usize, agent: &mut A, cx: &Ctx) -> Option<Action> {
        let b = self.owner[level]?;
        // SAFETY: as in `activate`.
        unsafe { (b.launch)(agent, self.bytes[level].as_mut_ptr(), cx) }
    }

    /// Drops the value in the block of `level`, if any.
    pub(crate) fn release(&mut self, level: usize) {
        // The owner is cleared before the value is dropped: if the drop
        // panics, the block already counts as empty and is never dropped again.
        if let Some(b) = self.owner[level].take()
            && b.needs_drop
        {
            // SAFETY: the owner was `Some(b)`, so the block held a live value
            // written by `b.init`; clearing the owner above ends its life.
            unsafe { (b.drop)(self.bytes[level].as_mut_ptr()) }
        }
    }

    /// The value in the block of `level` as something serde can write, if
    /// it holds one whose behavior persists its memory.
    #[cfg(feature = "serde")]
    pub(crate) fn saved(&self, level: usize) -> Option<&dyn erased_serde::Serialize> {
        let persist = self.owner[level]?.persist?;
        let p = self.bytes[level].0.as_ptr().cast::<u8>();
        // SAFETY: `owner[level] == Some(b)` means the block holds a live
        // value written by `b.init` or `b`'s `load`, i.e. a `T::Memory` for
        // the `T` whose `PersistFns::of::<T::Memory>()` is `persist`; so the
        // cast in `save_thunk` names the value's own type. The reference
        // borrows `self`, so the value outlives it and is not mutated
        // meanwhile.
        Some(unsafe { &*(persist.save)(p) })
    }

    /// Builds `b`'s memory value in the block of `level` from `d`, first
    /// dropping whatever the block held. On an error the block is left
    /// empty.
    ///
    /// # Panics
    /// If `b` does not persist its memory, or its memory type does not fit
    /// the block (callers check both first).
    #[cfg(feature = "serde")]
    pub(crate) fn load(
        &mut self,
        level: usize,
        b: &'static ErasedBehavior<A>,
        d: &mut dyn erased_serde::Deserializer<'_>,
    ) -> Result<(), erased_serde::Error> {
        self.release(level);
        let persist = b.persist.expect("a behavior that persists its memory");
        assert!(
            b.memory.fits(N),
            "behavior `{}`: memory type does not fit a {N}-byte block",
            b.name
        );
        // SAFETY: the block is `N` bytes aligned to `BLOCK_ALIGN`, `b`'s
        // memory type fits both (asserted above), and it holds no live value
        // (released above). `persist.load` writes a `T::Memory` of the same
        // `T` as `b.init` (both come from one `BehaviorDef`), and writes
        // nothing when it fails; the owner is set only after a success.
        unsafe { (persist.load)(self.bytes[level].as_mut_ptr(), d)? };
        self.owner[level] = Some(b);
        Ok(())
    }

    /// Drops every value, deepest level first.
    pub(crate) fn release_all(&mut self) {
        self.release_from(0);
    }

    /// Drops the values of level `from` and every level below it, deepest
    /// first.
    pub(crate) fn release_from(&mut self, from: usize) {
        // If one drop panics, the guard goes on with the levels above it, so
        // a panicking `Drop` does not leak the other blocks.
        struct Rest<'a, A: 'static, const L: usize, const N: usize>(&'a mut Blocks<A, L, N>, usize);
        impl<A: 'static, const L: usize, const N: usize> Drop for Rest<'_, A, L, N> {
            fn drop(&mut self) {
                for level in (self.1..L).rev() {
                    self.0.release(level);
                }
            }
        }
        let rest = Rest(self, from);
        for level in (from..L).rev() {
            rest.0.release(level);
        }
        mem::forget(rest);
    }
}

impl<A: 'static, const L: usize, const N: usize> Drop for Blocks<A, L, N> {
    fn drop(&mut self) {
        self.release_all();
    }
}

/// Asks the CPU to start loading the cache line that holds `value`, so a
/// crowd tick can fetch the next agents' memories while it ticks this one.
/// A hint only: nothing is read, and it does nothing off x86-64 (or under
/// Miri).
///
/// The line goes to the second-level cache (`T1`), not the first: a frame
/// of scattered agents keeps dozens of lines on their way, more than the
/// first level's few miss buffers hold, and hints into the first level
/// then wait for one another (a tenth of a W1 crowd each frame: 2.2× to
/// 2.9× the prepared slice's time with `T0`, 1.3× to 1.5× with `T1`, on
/// a Zen 4 host; the figures are in `bt-bench/README.md`).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    prefetch_after(value, 0);
}

/// [`prefetch`] of the cache line `bytes` after `value`'s address: that of
/// the same place in the element `k` places on in a slice of elements of
/// `bytes / k` bytes. Nothing is read: the address may be past any slice.
#[inline(always)]
pub(crate) fn prefetch_after<T>(value: &T, bytes: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has (it is
    // in the target's baseline features). The instruction does not access
    // memory architecturally and cannot fault, wherever it points;
    // `wrapping_add` makes the address without assuming it is in bounds.
    unsafe {
        use core::arch::x86_64::{_MM_HINT_T1, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T1>(ptr::from_ref(value).cast::<i8>().wrapping_add(bytes));
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = (value, bytes);
}

/// [`prefetch`] of every cache line `value` spans, for a value of a few
/// lines.
#[inline(always)]
pub(crate) fn prefetch_lines<T>(value: &T) {
    prefetch_lines_after(value, 0);
}

/// [`prefetch_lines`] of a value of `T` `bytes` after `value`'s address
/// (see [`prefetch_after`]).
#[inline(always)]
pub(crate) fn prefetch_lines_after<T>(value: &T, bytes: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        // The most lines a value of `T`'s size can span at `T`'s
        // alignment: from the last place in a line it can start at. One
        // hint per line from the value's first: lines follow one another,
        // so these cover every line it spans, and no more than one past it.
        const LINE: usize = 64;
        let lines = (LINE - mem::align_of::<T>().min(LINE) + mem::size_of::<T>()).div_ceil(LINE);
        let start = ptr::from_ref(value).cast::<i8>().wrapping_add(bytes);
        for k in 0..lines {
            // SAFETY: as in `prefetch_after`: a prefetch neither reads nor
            // faults, wherever it points, and `wrapping_add` makes the
            // address without assuming it is in bounds.
            unsafe {
                use core::arch::x86_64::{_MM_HINT_T1, _mm_prefetch};
                _mm_prefetch::<_MM_HINT_T1>(start.wrapping_add(k * LINE));
            }
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = (value, bytes);
}

mod dblock;
mod places;
mod tuned;

pub(crate) use dblock::{DIn, DPool, DSink};
pub(crate) use places::Places;
pub use tuned::{FAST_SLOTS, TunedDefaults};
pub(crate) use tuned::{TunedAt, TunedHead, TunedSlots};

#[cfg(test)]
mod tests;
