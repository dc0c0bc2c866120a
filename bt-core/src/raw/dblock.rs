//! DBlocks: the scratch blocks in which a tick's `decide` calls leave
//! values for their behaviors' `activate`, each value's type recorded
//! beside it. Part of the one `unsafe` module ([`raw`](super)), under its
//! rules.

use core::any::TypeId;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr;

use super::{Bytes, DropFn, TypeLayout, drop_thunk};

/// What a live DBlock value is: its type and how to drop it.
#[derive(Clone, Copy)]
struct DKind {
    ty: TypeId,
    drop: DropFn,
}

/// The DBlocks of one tick: `K` scratch blocks of `N` bytes, each empty or
/// holding one value whose type is recorded beside it.
pub(crate) struct DPool<const K: usize, const N: usize> {
    bytes: [Bytes<N>; K],
    /// Valid where the bit of `live` is set.
    kind: [MaybeUninit<DKind>; K],
    live: u32,
}

impl<const K: usize, const N: usize> DPool<K, N> {
    pub(crate) const fn new() -> Self {
        const { assert!(K <= 32, "a DBlock pool holds at most 32 blocks") };
        DPool {
            bytes: [Bytes::UNINIT; K],
            kind: [MaybeUninit::uninit(); K],
            live: 0,
        }
    }

    /// Drops the value of scratch block `slot`, if any.
    pub(crate) fn clear(&mut self, slot: usize) {
        let bit = 1u32 << slot;
        if self.live & bit != 0 {
            // Marked empty before the drop runs: a panicking drop cannot
            // lead to a second one.
            self.live &= !bit;
            // SAFETY: the live bit was set, so `kind[slot]` is initialised
            // and the block holds a live value of that kind.
            unsafe {
                let kind = self.kind[slot].assume_init();
                (kind.drop)(self.bytes[slot].as_mut_ptr());
            }
        }
    }

    /// A handle through which a `decide` may fill scratch block `slot`.
    pub(crate) fn sink(&mut self, slot: usize) -> DSink<'_> {
        self.clear(slot);
        DSink {
            ptr: self.bytes[slot].as_mut_ptr(),
            cap: N,
            kind: &mut self.kind[slot],
            live: &mut self.live,
            bit: 1 << slot,
            _marker: PhantomData,
        }
    }

    /// A handle through which an `activate` takes the value of `slot`.
    pub(crate) fn input(&mut self, slot: Option<usize>) -> DIn<'_> {
        match slot {
            Some(slot) => DIn {
                ptr: self.bytes[slot].as_mut_ptr(),
                state: Some((&self.kind[slot], &mut self.live)),
                bit: 1 << slot,
            },
            None => DIn::EMPTY,
        }
    }
}

impl<const K: usize, const N: usize> Drop for DPool<K, N> {
    fn drop(&mut self) {
        // Most ticks hold no DBlock at the end: one test.
        while self.live != 0 {
            self.clear(self.live.trailing_zeros() as usize);
        }
    }
}

/// Write access to one scratch block, for a `decide`.
pub struct DSink<'a> {
    ptr: *mut u8,
    cap: usize,
    kind: &'a mut MaybeUninit<DKind>,
    live: &'a mut u32,
    bit: u32,
    _marker: PhantomData<&'a mut [u8]>,
}

impl DSink<'_> {
    /// Stores `value`, dropping any value stored before.
    ///
    /// # Panics
    /// If `D` does not fit the block; the compile step rejects trees where
    /// that can happen, so only a hand-made table can get here.
    pub(crate) fn put<D: 'static>(&mut self, value: D) {
        self.clear();
        assert!(
            TypeLayout::of::<D>().fits(self.cap),
            "DBlock type does not fit a {}-byte block",
            self.cap
        );
        // SAFETY: `ptr` is the start of a block of `cap` bytes aligned to
        // `BLOCK_ALIGN` that holds no live value (cleared above), and `D`
        // fits it (asserted above).
        unsafe { self.ptr.cast::<D>().write(value) };
        *self.kind = MaybeUninit::new(DKind {
            ty: TypeId::of::<D>(),
            drop: drop_thunk::<D>,
        });
        *self.live |= self.bit;
    }

    fn clear(&mut self) {
        if *self.live & self.bit != 0 {
            *self.live &= !self.bit;
            // SAFETY: the live bit was set, so `kind` is initialised and the
            // block holds a live value of that kind; it was marked empty first.
            unsafe {
                let kind = self.kind.assume_init();
                (kind.drop)(self.ptr);
            }
        }
    }
}

/// Take access to one scratch block, for an `activate`.
pub(crate) struct DIn<'a> {
    ptr: *mut u8,
    state: Option<(&'a MaybeUninit<DKind>, &'a mut u32)>,
    bit: u32,
}

impl DIn<'_> {
    /// No scratch block: the `activate` receives `None`.
    pub(crate) const EMPTY: DIn<'static> = DIn {
        ptr: ptr::null_mut(),
        state: None,
        bit: 0,
    };

    /// Moves the value out if it is a `D`. A value of another type stays in
    /// the block and is dropped with it (no macro-built tree can get there).
    pub(super) fn take<D: 'static>(self) -> Option<D> {
        let (kind, live) = self.state?;
        if *live & self.bit == 0 {
            return None;
        }
        // SAFETY: the live bit is set, so `kind` is initialised.
        let kind = unsafe { kind.assume_init() };
        if kind.ty != TypeId::of::<D>() {
            return None;
        }
        *live &= !self.bit;
        // SAFETY: the block holds a live `D` (its recorded type is `D`'s) and
        // was marked empty above, so the value is moved out exactly once.
        Some(unsafe { self.ptr.cast::<D>().read() })
    }
}
