//! A read-only view of one item of a compiled tree.

use core::fmt;

use super::{Has, Item, NO_PARENT, NO_SLOT};
use crate::decl::{Decider, ItemIdx, Policy};
use crate::raw::ErasedBehavior;

/// A read-only view of one item of a compiled tree.
pub struct Node<'t, A: 'static> {
    pub(super) items: &'t [Item<A>],
    pub(super) idx: ItemIdx,
}

impl<A: 'static> Clone for Node<'_, A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A: 'static> Copy for Node<'_, A> {}

impl<'t, A: 'static> Node<'t, A> {
    fn item(&self) -> &'t Item<A> {
        &self.items[self.idx.get()]
    }

    /// The item's index in the stream.
    pub fn index(&self) -> ItemIdx {
        self.idx
    }

    /// The declared decider.
    pub fn decider(&self) -> &'static Decider<A> {
        self.item().decider
    }

    /// The decider's name.
    pub fn name(&self) -> &'static str {
        self.item().decider.name
    }

    /// The decider's stable id.
    pub fn id(&self) -> u32 {
        self.item().decider.id
    }

    /// Depth in the tree (the root is 0).
    pub fn depth(&self) -> usize {
        self.item().depth as usize
    }

    /// Index among its parent's children.
    pub fn child_index(&self) -> usize {
        self.item().child_index as usize
    }

    /// Whether this is a group decider.
    pub fn is_group(&self) -> bool {
        self.item().is(Has::GROUP)
    }

    /// The group's policy (`None` for a behavior decider).
    pub fn policy(&self) -> Option<Policy> {
        self.is_group().then_some(self.item().policy)
    }

    /// The behavior it runs (leaf behavior or group behavior).
    pub fn behavior(&self) -> Option<&'static ErasedBehavior<A>> {
        self.item().behavior
    }

    /// The behavior flags word.
    pub fn behavior_flags(&self) -> u64 {
        self.item().behavior_flags
    }

    /// Whether this is a reference decider.
    pub fn is_reference(&self) -> bool {
        self.item().has.contains(Has::REFERENCE)
    }

    /// A reference's target, the item its jump moves the active path to
    /// (`None` for other deciders).
    pub fn target(&self) -> Option<Node<'t, A>> {
        if !self.item().has.contains(Has::REFERENCE) {
            return None;
        }
        super::target_of(self.items, self.idx.get()).map(|i| Node {
            items: self.items,
            idx: ItemIdx(i as u16),
        })
    }

    /// The parent group.
    pub fn parent(&self) -> Option<Node<'t, A>> {
        let p = self.item().parent;
        (p != NO_PARENT).then_some(Node {
            items: self.items,
            idx: ItemIdx(p),
        })
    }

    /// The children, in declaration order.
    pub fn children(&self) -> impl Iterator<Item = Node<'t, A>> + 't {
        let items = self.items;
        let i = self.idx.get();
        let end = items[i].end as usize;
        let mut c = i + 1;
        core::iter::from_fn(move || {
            (c < end).then(|| {
                let node = Node {
                    items,
                    idx: ItemIdx(c as u16),
                };
                c = items[c].end as usize;
                node
            })
        })
    }

    /// The timer slot of its timer precondition.
    pub fn timer_slot(&self) -> Option<usize> {
        self.item()
            .is(Has::TIMER)
            .then_some(self.item().timer as usize)
    }

    /// The slot of a shuffle group's round.
    pub fn shuffle_slot(&self) -> Option<usize> {
        (self.item().shuffle != NO_SLOT).then_some(self.item().shuffle as usize)
    }

    /// What the item has (preconditions, callbacks, …).
    pub fn has(&self) -> Has {
        self.item().has
    }

    /// The agent-memory slot of its behavior's deferred action.
    pub fn action_slot(&self) -> Option<usize> {
        let a = self.item().action;
        (a != NO_SLOT).then_some(a as usize)
    }
}

impl<A: 'static> fmt::Debug for Node<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}/{:#x}", self.idx, self.name(), self.id())
    }
}
