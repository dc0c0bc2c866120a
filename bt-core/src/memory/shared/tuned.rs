//! The values of a crowd's tunables: those in effect, read by every tick,
//! and the changes staged for the crowd's next tick.

use core::sync::atomic::Ordering;

use super::TreeShared;
use crate::decl::tune::{Tunable, TunableValue, Tunables, TuneError, TuneValue, checked_bits};

impl TreeShared {
    /// The table of the tree's tunables (`tree!`'s `tunables:` key), if it
    /// has one.
    pub fn tunables(&self) -> Option<&'static Tunables> {
        self.tuned.table()
    }

    /// The value of `tunable` in effect: what the crowd's ticks read now.
    /// A tunable of another table reads as its default.
    pub fn tuned<T: TunableValue>(&self, tunable: Tunable<T>) -> T {
        match self.tuned.table() {
            Some(table) if core::ptr::eq(table, tunable.table()) => {
                T::from_bits(self.tuned.current()[tunable.index()].load(Ordering::Relaxed))
            }
            _ => tunable.default_value(),
        }
    }

    /// Changes `tunable` to `value` from the crowd's next tick on: staged
    /// now, in effect for every agent of that tick alike (the crowd ticks
    /// apply what is staged when they start; a game that ticks agent by
    /// agent calls [`apply_tuning`](Self::apply_tuning) at the start of its
    /// frame). No agent's state is reset. Any thread may call it.
    ///
    /// # Errors
    /// [`TuneError::OtherTable`] for a tunable of another table than the
    /// tree's, [`TuneError::OutOfRange`] for a value outside its range;
    /// nothing is changed.
    pub fn tune<T: TunableValue>(&self, tunable: Tunable<T>, value: T) -> Result<(), TuneError> {
        let decl = tunable.decl();
        match self.tuned.table() {
            Some(table) if core::ptr::eq(table, tunable.table()) => {}
            _ => {
                return Err(TuneError::OtherTable {
                    tree: self.tree,
                    name: decl.name,
                    table: tunable.table().name(),
                });
            }
        }
        let bits = value.to_bits();
        if !decl.kind.allows(bits) {
            return Err(TuneError::OutOfRange {
                name: decl.name,
                value: T::tune_value(value),
                kind: decl.kind,
            });
        }
        self.stage(tunable.index(), bits);
        Ok(())
    }

    /// Changes the tunable named `name` to `value` from the crowd's next
    /// tick on, as [`tune`](Self::tune): for values that come as text (a
    /// file, the viewer's page, a console). An int tunable takes a whole
    /// float, a float one an int.
    ///
    /// # Errors
    /// [`TuneError::Unknown`] for a name the tree's table does not have,
    /// [`TuneError::WrongType`] and [`TuneError::OutOfRange`] for a value
    /// it cannot take; nothing is changed.
    pub fn tune_named(&self, name: &str, value: TuneValue) -> Result<(), TuneError> {
        let Some(table) = self.tuned.table() else {
            return Err(TuneError::Unknown {
                tree: self.tree,
                name: name.into(),
            });
        };
        let (index, bits) = checked_bits(self.tree, table, name, value)?;
        self.stage(index, bits);
        Ok(())
    }

    /// Whether [`tune_named`](Self::tune_named) would take `value` for the
    /// tunable `name`: the same checks, nothing staged. For a tool that
    /// answers a request at once and makes the change later, on the game's
    /// thread (the viewer's live page).
    ///
    /// # Errors
    /// As [`tune_named`](Self::tune_named).
    pub fn check_tune_named(&self, name: &str, value: TuneValue) -> Result<(), TuneError> {
        let Some(table) = self.tuned.table() else {
            return Err(TuneError::Unknown {
                tree: self.tree,
                name: name.into(),
            });
        };
        checked_bits(self.tree, table, name, value).map(|_| ())
    }

    /// The value in effect of the tunable at place `index` of the tree's
    /// table ([`tunables`](Self::tunables)), as its bits
    /// ([`TunableValue::to_bits`]; its declaration's `kind` says how to
    /// read them): for a tool that shows or records every tunable, such as
    /// a viewer. `None` past the table's end.
    pub fn tuned_bits(&self, index: usize) -> Option<u64> {
        self.tuned
            .current()
            .get(index)
            .map(|v| v.load(Ordering::Relaxed))
    }

    /// The value in effect of tunable `index` of the tree's table, as
    /// given by name (a choice by its name).
    #[cfg(feature = "serde")]
    pub(crate) fn tuned_value(&self, index: usize) -> TuneValue {
        let bits = self.tuned_bits(index).unwrap_or(0);
        match self.tuned.table().map(|t| t.decls()[index].kind) {
            Some(kind) => crate::decl::tune::value::value_of(kind, bits),
            None => TuneValue::Float(f64::from_bits(bits)),
        }
    }

    /// Stages the checked values `values` (place in the tree's table and
    /// bits) together: the crowd's next tick puts all of them in effect,
    /// or, if it starts while they are being staged, the tick after it.
    #[cfg(feature = "tune-file")]
    pub(crate) fn stage_together(&self, values: &[(usize, u64)]) {
        let v = &self.tuned;
        // `apply_staged` holds the lock only while it moves the staged
        // values, a few stores.
        while v
            .lock
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
        for &(index, bits) in values {
            v.staged[index].store(bits, Ordering::Relaxed);
            v.pending[index].store(true, Ordering::Relaxed);
        }
        v.dirty.store(true, Ordering::Relaxed);
        v.lock.store(false, Ordering::Release);
    }

    /// Puts the saved values `saved` (place and bits) in effect at once,
    /// the others at their defaults, nothing staged: a restore.
    #[cfg(feature = "serde")]
    pub(crate) fn restore_tuned(&self, saved: &[(usize, u64)]) {
        let v = &self.tuned;
        let decls = v.table().map_or(&[][..], Tunables::decls);
        let mut want: alloc::vec::Vec<u64> = decls.iter().map(|d| d.default).collect();
        for &(i, bits) in saved {
            want[i] = bits;
        }
        let mut changed = 0;
        for (i, &bits) in want.iter().enumerate() {
            if v.current()[i].swap(bits, Ordering::Relaxed) != bits {
                changed += 1;
            }
            v.pending[i].store(false, Ordering::Relaxed);
        }
        // A load that changed values counts as changes, so that a tool
        // that watches `tuning_changes` (a recorder) sees it.
        v.changes.fetch_add(changed, Ordering::Relaxed);
        v.dirty.store(false, Ordering::Release);
    }

    /// Stages the bits `bits` for tunable `index`.
    fn stage(&self, index: usize, bits: u64) {
        let v = &self.tuned;
        v.staged[index].store(bits, Ordering::Relaxed);
        v.pending[index].store(true, Ordering::Release);
        v.dirty.store(true, Ordering::Release);
    }

    /// Puts the staged changes in effect; returns whether there were any.
    /// The crowd ticks (`tick_all`, `tick_range`, `par_tick_all`,
    /// `tick_scheduled`) call it when they start, so that every agent of a
    /// tick reads the same values; call it yourself at the start of a
    /// frame whose agents you tick one by one. Call it on the thread that
    /// ticks the crowd, between its ticks: called on another thread while
    /// a crowd tick runs, it puts the changes in effect for the agents
    /// that tick after it only.
    ///
    /// A crowd tick puts in effect the changes of the crowd its first
    /// memory is bound to (`tick_range`: the first of its range): tick each
    /// crowd's agents with a call of their own, not two crowds in one
    /// slice.
    #[inline]
    pub fn apply_tuning(&self) -> bool {
        let v = &self.tuned;
        if !v.dirty.load(Ordering::Relaxed) {
            return false;
        }
        self.apply_staged()
    }

    #[inline(never)]
    fn apply_staged(&self) -> bool {
        let v = &self.tuned;
        // Values staged together are being staged: all of them at the
        // next tick, none now.
        if v.lock.swap(true, Ordering::Acquire) {
            return false;
        }
        if !v.dirty.swap(false, Ordering::Acquire) {
            v.lock.store(false, Ordering::Release);
            return false;
        }
        let mut changed = 0;
        for (i, pending) in v.pending.iter().enumerate() {
            if pending.swap(false, Ordering::Acquire) {
                let bits = v.staged[i].load(Ordering::Relaxed);
                if v.current()[i].swap(bits, Ordering::Relaxed) != bits {
                    changed += 1;
                }
            }
        }
        v.lock.store(false, Ordering::Release);
        v.changes.fetch_add(changed, Ordering::Relaxed);
        changed > 0
    }

    /// How many times a tunable's value in effect has changed so far (by a
    /// staged change put in effect, or by a load).
    pub fn tuning_changes(&self) -> u64 {
        self.tuned.changes.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, feature = "tune-file"))]
mod tests {
    use alloc::boxed::Box;

    use super::*;
    use crate::decl::tune::{TunableDecl, TunedValues};

    static TABLE: Tunables = Tunables::new(
        "T",
        &[
            TunableDecl::int("A", "", 0, 0, 9),
            TunableDecl::int("B", "", 0, 0, 9),
        ],
    );

    fn shared() -> TreeShared {
        let mut s = TreeShared::with("T", Box::new([0]), (0, 0, 0), 0);
        s.tuned = TunedValues::new(Some(&TABLE));
        s
    }

    fn values(s: &TreeShared) -> (u64, u64) {
        (s.tuned_bits(0).unwrap(), s.tuned_bits(1).unwrap())
    }

    /// A tick that starts while values staged together are being staged
    /// puts none of them in effect; the next tick puts all of them.
    #[test]
    fn values_staged_together_take_effect_together() {
        let s = shared();
        s.stage_together(&[(0, 1), (1, 1)]);
        assert!(s.apply_tuning());
        assert_eq!(values(&s), (1, 1));
        // Halfway through staging (2, 2): the first value is staged, the
        // lock is held.
        s.tuned.lock.store(true, Ordering::Relaxed);
        s.tuned.staged[0].store(2, Ordering::Relaxed);
        s.tuned.pending[0].store(true, Ordering::Relaxed);
        s.tuned.dirty.store(true, Ordering::Relaxed);
        assert!(!s.apply_tuning());
        assert_eq!(values(&s), (1, 1));
        s.tuned.staged[1].store(2, Ordering::Relaxed);
        s.tuned.pending[1].store(true, Ordering::Relaxed);
        s.tuned.lock.store(false, Ordering::Release);
        assert!(s.apply_tuning());
        assert_eq!(values(&s), (2, 2));
        assert_eq!(s.tuning_changes(), 4);
    }
}
