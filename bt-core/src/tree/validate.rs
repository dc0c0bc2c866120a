//! Checks of a table assembled by hand: what the compile step proves for a
//! tree declared with `tree!`, as a `Result` naming the decider at fault.

use core::fmt;

use super::*;

impl<A: 'static, const L: usize, const S: usize, const N: usize> Tree<A, L, S, N> {
    /// Checks the stream against the memory it will run with. The compile
    /// step already checks all of this for trees declared with `tree!`; this
    /// is for tables assembled by hand.
    ///
    /// # Errors
    /// A [`TreeError`] naming the first decider at fault.
    pub fn validate(&self) -> Result<(), TreeError> {
        if self.items.is_empty() {
            return Err(TreeError::new(self.name, "the tree has no items"));
        }
        if self.items.len() > MAX_ITEMS {
            return Err(TreeError::new(
                self.name,
                "more items than a u16 index holds",
            ));
        }
        for (i, it) in self.items.iter().enumerate() {
            let name = it.decider.name;
            if it.is(Has::DBLOCK) && !self.dblocks {
                return Err(TreeError::new(
                    name,
                    "a DBlock in a tree whose `dblocks` is false",
                ));
            }
            let end = it.end as usize;
            if end <= i || end > self.items.len() {
                return Err(TreeError::new(name, "subtree end out of range"));
            }
            if it.depth as usize >= L {
                return Err(TreeError::new(name, "deeper than the memory's level count"));
            }
            if it.is(Has::TIMER) && it.timer as usize >= S {
                return Err(TreeError::new(name, "timer slot out of range"));
            }
            if it.shuffle != NO_SLOT && it.shuffle as usize >= S {
                return Err(TreeError::new(name, "shuffle slot out of range"));
            }
            let sh = &self.shape;
            if (it.role != NO_SLOT && sh.role_slot(it.role) >= S)
                || (it.action != NO_SLOT && it.action as usize >= S)
                || (it.gate != NO_SLOT && it.gate as usize >= sh.gates)
                || (it.cooldown != NO_SLOT && it.cooldown as usize >= sh.cooldowns)
                || (it.role != NO_SLOT && it.role as usize >= sh.roles)
            {
                return Err(TreeError::new(name, "shared or action slot out of range"));
            }
            if it.policy == Policy::Slot && it.is(Has::GROUP) && it.decider.select.is_none() {
                return Err(TreeError::new(name, "a slot group without `select`"));
            }
            if let Some(b) = it.behavior {
                if b.memory.align > crate::raw::BLOCK_ALIGN {
                    return Err(TreeError::new(
                        b.name,
                        "memory type aligned above the block's 16 bytes",
                    ));
                }
                if !b.memory.fits(N) {
                    return Err(TreeError::new(b.name, "memory type larger than the block"));
                }
                if b.dblock.align > crate::raw::BLOCK_ALIGN {
                    return Err(TreeError::new(
                        b.name,
                        "DBlock type aligned above the block's 16 bytes",
                    ));
                }
                if !b.dblock.fits(N) {
                    return Err(TreeError::new(b.name, "DBlock type larger than the block"));
                }
            }
            if it.is(Has::GROUP) {
                let mut count = 0usize;
                let mut c = i + 1;
                while c < end {
                    let child = &self.items[c];
                    if child.parent as usize != i || child.child_index as usize != count {
                        return Err(TreeError::new(name, "child links do not match the stream"));
                    }
                    if child.end as usize <= c {
                        return Err(TreeError::new(
                            child.decider.name,
                            "subtree end out of range",
                        ));
                    }
                    count += 1;
                    c = child.end as usize;
                }
                if count == 0 || count > MAX_CHILDREN || count != it.child_count as usize {
                    return Err(TreeError::new(name, "bad child count"));
                }
            } else if end != i + 1 {
                return Err(TreeError::new(name, "a behavior decider with children"));
            }
        }
        Ok(())
    }
}

/// A problem found by [`Tree::validate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeError {
    /// The decider or behavior at fault.
    pub name: &'static str,
    /// What is wrong.
    pub problem: &'static str,
}

impl TreeError {
    fn new(name: &'static str, problem: &'static str) -> Self {
        TreeError { name, problem }
    }
}

impl fmt::Display for TreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.name, self.problem)
    }
}

impl core::error::Error for TreeError {}
