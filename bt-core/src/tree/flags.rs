//! The flag tests of the compiled stream.

use crate::decl::FlagTest;

/// A [`FlagTest`] as the interpreter runs it.
///
/// The all-set and all-clear tests are one masked compare: the word passes
/// them when `word & care == want`, with `care` the bits either test names
/// and `want` the bits that must be set. A test that names one bit in both
/// can never pass; it becomes `care == 0, want == 1`, which no word meets.
/// The any-set and any-clear tests are rare: they are looked at only when
/// one of them is there (`rest`), after the masked compare passed.
/// "No test" is all zeros and passes every word.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlagCheck {
    care: u64,
    want: u64,
    any: u64,
    not_all: u64,
}

impl FlagCheck {
    /// No test at all.
    pub const NONE: FlagCheck = FlagCheck {
        care: 0,
        want: 0,
        any: 0,
        not_all: 0,
    };

    /// Compiles a declared flag test.
    pub const fn of(t: FlagTest) -> FlagCheck {
        let (care, want) = if t.all & t.none != 0 {
            (0, 1)
        } else {
            (t.all | t.none, t.all)
        };
        FlagCheck {
            care,
            want,
            any: t.any,
            not_all: t.not_all,
        }
    }

    /// Whether `word` passes: the same answer as [`FlagTest::passes`].
    #[inline(always)]
    pub(crate) fn passes(&self, word: u64) -> bool {
        word & self.care == self.want && ((self.any | self.not_all) == 0 || self.rest(word))
    }

    /// The any-set and any-clear tests.
    #[inline(always)]
    fn rest(&self, word: u64) -> bool {
        let any = (self.any == 0) | (word & self.any != 0);
        let not_all = (self.not_all == 0) | ((word & self.not_all) != self.not_all);
        any & not_all
    }
}
