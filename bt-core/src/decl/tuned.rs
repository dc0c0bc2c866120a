//! The values of a crowd's tunables as a tick's context holds them.

use core::fmt;

use crate::decl::behavior::TunableTable;
use crate::decl::tune::{Tunable, TunableValue};
use crate::raw::TunedHead;

/// The values of a crowd's tunables in effect for a tick: one pointer,
/// to a static slot that names no table for a tree without tunables, so a
/// tick of such a tree writes one word more than it did, and a read is a
/// comparison and a load.
#[derive(Clone, Copy)]
pub(crate) struct Tuned<'t>(TunedHead<'t>);

impl Tuned<'_> {
    /// No table: every tunable reads as its default.
    pub(crate) const NONE: Tuned<'static> = Tuned(TunedHead::NONE);
}

impl Tuned<'static> {
    /// The defaults of table `Tb` (none for [`AnyTable`]): the values of a
    /// context typed by `Tb` outside a crowd's tick.
    #[inline(always)]
    pub(crate) const fn defaults_of<Tb: TunableTable>() -> Self {
        match Tb::TABLE {
            Some(table) => Tuned(table.default_head()),
            None => Tuned::NONE,
        }
    }
}

impl<'t> Tuned<'t> {
    /// The view `head`.
    #[inline(always)]
    pub(crate) fn of(head: TunedHead<'t>) -> Self {
        Tuned(head)
    }

    /// The value of `tunable`: in effect if it is of this table, else its
    /// default.
    #[inline(always)]
    pub(crate) fn read<T: TunableValue>(&self, tunable: Tunable<T>) -> T {
        match self.0.get(tunable.table(), tunable.index()) {
            Some(bits) => T::from_bits(bits),
            None => tunable.default_value(),
        }
    }

    /// [`read`](Self::read) for values known to be of table `Tb`'s (those
    /// of a context typed by it): a tunable of `Tb` below the fast places
    /// is one load, with no check of the table (the comparison of the
    /// tunable's table with `Tb`'s, of its place with the table's length,
    /// and whether the table has its block of defaults, are of constants),
    /// any other is read as `read` does: a tunable of another table, one
    /// past the table's end (made by hand), or of a table made by hand
    /// without the block of defaults that a context outside a tick reads.
    #[inline(always)]
    pub(crate) fn read_in<Tb: TunableTable, T: TunableValue>(&self, tunable: Tunable<T>) -> T {
        if let Some(table) = Tb::TABLE
            && core::ptr::eq(tunable.table(), table)
            && tunable.index() < table.len()
            && table.has_defaults()
            && let Some(bits) = self.0.at(tunable.index())
        {
            return T::from_bits(bits);
        }
        self.read(tunable)
    }
}

impl fmt::Debug for Tuned<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.same(TunedHead::NONE) {
            f.write_str("none")
        } else {
            f.write_str("a crowd's values")
        }
    }
}

impl PartialEq for Tuned<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.same(other.0)
    }
}
