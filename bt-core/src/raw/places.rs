//! A walk over agents listed by index, scattered in a crowd's two slices,
//! that checks every index once before it starts instead of at each use.

use core::marker::PhantomData;

/// Agents and their memories, in two slices of one length, visited at the
/// places a list names, each index checked once, in one pass over the list
/// that the compiler vectorises: the walk itself indexes without a check.
pub(crate) struct Places<'a, A, M> {
    agents: *mut A,
    memories: *mut M,
    list: &'a [u32],
    _slices: PhantomData<(&'a mut [A], &'a mut [M])>,
}

impl<'a, A, M> Places<'a, A, M> {
    /// The places `list` names in `agents` and `memories`; `None` if the
    /// slices differ in length or an index is not below their length.
    #[inline(always)]
    pub(crate) fn new(list: &'a [u32], agents: &'a mut [A], memories: &'a mut [M]) -> Option<Self> {
        let len = agents.len();
        // Every `u32` is below a length past `u32::MAX`. An `or` of the
        // comparisons, without an early exit, is what vectorises.
        let past = match u32::try_from(len) {
            Ok(len) => list.iter().fold(false, |past, &i| past | (i >= len)),
            Err(_) => false,
        };
        if memories.len() != len || past {
            return None;
        }
        Some(Places {
            agents: agents.as_mut_ptr(),
            memories: memories.as_mut_ptr(),
            list,
            _slices: PhantomData,
        })
    }

    /// Visits the first `count` places of the list in order, each with
    /// `each(index, agent, memory)`; before each, `fetch` is shown the
    /// place `ahead` entries further on (the list must hold `count +
    /// ahead` entries: `None` if it holds fewer), and first the `ahead`
    /// places before the first visit.
    #[inline(always)]
    pub(crate) fn walk(
        self,
        count: usize,
        ahead: usize,
        mut fetch: impl FnMut(&A, &M),
        mut each: impl FnMut(usize, &mut A, &mut M),
    ) -> Option<()> {
        let list = self.list.get(..count.checked_add(ahead)?)?;
        let at = |i: u32| {
            // SAFETY: `new` checked every index of the list against the
            // slices' one length, and `'a` keeps both slices borrowed
            // mutably by this value, so each place is an element of each.
            unsafe { (self.agents.add(i as usize), self.memories.add(i as usize)) }
        };
        for &i in &list[..ahead.min(count)] {
            let (a, m) = at(i);
            // SAFETY: live elements (above), and no reference to any
            // element is held between visits: these end with the call.
            unsafe { fetch(&*a, &*m) };
        }
        for (&i, &next) in list[..count].iter().zip(&list[ahead..]) {
            let (a, m) = at(next);
            // SAFETY: as above.
            unsafe { fetch(&*a, &*m) };
            let (a, m) = at(i);
            // SAFETY: as above; the two references are to elements of two
            // slices, the only ones alive until `each` returns.
            unsafe { each(i as usize, &mut *a, &mut *m) };
        }
        Some(())
    }
}
