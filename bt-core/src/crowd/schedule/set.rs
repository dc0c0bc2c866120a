//! A set of agent indexes that hands them out in index order: the agents
//! woken for a frame, and those of an earlier frame's woken the budget
//! left waiting.
//!
//! A bit per agent, and above it a bit per word of the level below, up to
//! one word: adding, removing and finding the smallest each touch one
//! word a level (four levels for a million agents), whatever the set
//! holds. So a million wakes cost a million small steps at the calls, and
//! the frames after them take the budget's share in index order without
//! sorting, or even looking at, the rest.

use alloc::vec::Vec;

/// Agent indexes below a bound, smallest first.
#[derive(Clone, Debug)]
pub(super) struct IndexSet {
    /// `levels[0]`: a bit per index; each level above, a bit per word of
    /// the one below that is not zero; the last has one word.
    levels: Vec<Vec<u64>>,
    len: usize,
}

impl IndexSet {
    /// An empty set of indexes below `n`.
    pub(super) fn new(n: usize) -> Self {
        let mut levels = Vec::new();
        let mut words = n.div_ceil(64).max(1);
        loop {
            levels.push(alloc::vec![0; words]);
            if words == 1 {
                break;
            }
            words = words.div_ceil(64);
        }
        IndexSet { levels, len: 0 }
    }

    /// How many indexes the set holds.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Whether the set holds no index.
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the set holds `i`.
    pub(super) fn contains(&self, i: u32) -> bool {
        let at = i as usize;
        self.levels[0][at / 64] & 1 << (at % 64) != 0
    }

    /// Adds `i`, which the set does not hold.
    pub(super) fn insert(&mut self, i: u32) {
        let mut at = i as usize;
        debug_assert_eq!(self.levels[0][at / 64] & 1 << (at % 64), 0);
        for level in &mut self.levels {
            let word = &mut level[at / 64];
            let was = *word;
            *word = was | 1 << (at % 64);
            if was != 0 {
                break;
            }
            at /= 64;
        }
        self.len += 1;
    }

    /// The smallest index, if any.
    #[inline]
    pub(super) fn first(&self) -> Option<u32> {
        let top = self.levels.len() - 1;
        let word = self.levels[top][0];
        if word == 0 {
            return None;
        }
        let mut at = word.trailing_zeros() as usize;
        for level in self.levels[..top].iter().rev() {
            at = at * 64 + level[at].trailing_zeros() as usize;
        }
        Some(at as u32)
    }

    /// Empties the set, handing `f` each index it held, smallest first: a
    /// step per index and per word that holds one, whatever the set's
    /// size.
    pub(super) fn drain(&mut self, mut f: impl FnMut(u32)) {
        if self.len == 0 {
            return;
        }
        let top = self.levels.len() - 1;
        drain_word(&mut self.levels, top, 0, &mut f);
        self.len = 0;
    }

    /// Removes and returns the smallest index, if any.
    pub(super) fn pop(&mut self) -> Option<u32> {
        let i = self.first()?;
        let mut at = i as usize;
        for level in &mut self.levels {
            let word = &mut level[at / 64];
            *word &= !(1 << (at % 64));
            if *word != 0 {
                break;
            }
            at /= 64;
        }
        self.len -= 1;
        Some(i)
    }

    /// The indexes, smallest first (for snapshots; a frame pops them).
    #[cfg(feature = "serde")]
    pub(super) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.levels[0].iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            core::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros();
                    bits &= bits - 1;
                    (w * 64) as u32 + b
                })
            })
        })
    }
}

/// Clears word `w` of level `level` and, below it, every word its bits
/// mark, handing `f` each index of level 0 found.
fn drain_word(levels: &mut [Vec<u64>], level: usize, w: usize, f: &mut impl FnMut(u32)) {
    let mut bits = core::mem::take(&mut levels[level][w]);
    while bits != 0 {
        let at = w * 64 + bits.trailing_zeros() as usize;
        bits &= bits - 1;
        if level == 0 {
            f(at as u32);
        } else {
            drain_word(levels, level - 1, at, f);
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::IndexSet;

    /// Indexes added in any order come out smallest first, at each size
    /// of set (one word, two levels, three).
    #[test]
    fn indexes_come_out_smallest_first() {
        // Under Miri, the sizes up to three levels, not the large one.
        let sizes: &[usize] = if cfg!(miri) {
            &[1, 63, 64, 65, 4096, 4097]
        } else {
            &[1, 63, 64, 65, 4096, 4097, 300_000]
        };
        for &n in sizes {
            let mut set = IndexSet::new(n);
            let mut added: Vec<u32> = (0..n as u32).filter(|i| i % 7 == 3 || *i == 0).collect();
            added.push(n as u32 - 1);
            added.sort_unstable();
            added.dedup();
            for &i in added.iter().rev() {
                set.insert(i);
            }
            assert_eq!(set.len(), added.len());
            let mut out = Vec::new();
            while let Some(i) = set.pop() {
                out.push(i);
            }
            assert_eq!(out, added, "n = {n}");
            assert!(set.is_empty() && set.first().is_none());
            // Emptied, it fills again.
            set.insert(n as u32 / 2);
            assert_eq!(set.pop(), Some(n as u32 / 2));
            // Drained, it hands over each index once, smallest first, and
            // is empty at every level: it fills and drains again.
            for _ in 0..2 {
                for &i in &added {
                    set.insert(i);
                }
                let mut drained = Vec::new();
                set.drain(|i| drained.push(i));
                assert_eq!(drained, added, "n = {n}");
                assert!(set.is_empty() && set.first().is_none());
                assert!(!added.iter().any(|&i| set.contains(i)));
            }
        }
    }
}
