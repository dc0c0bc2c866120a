//! Reading a tunable in a tick.

use crate::decl::tune::{Tunable, TunableValue};

/// The value of `tunable` in effect for the crowd whose tick runs on this
/// thread, if its tree has `tunable`'s table; its default otherwise.
#[inline(always)]
pub(crate) fn read<T: TunableValue>(tunable: Tunable<T>) -> T {
    T::from_bits(crate::raw::tuned_read(
        tunable.table(),
        tunable.index(),
        tunable.decl().default,
    ))
}
