//! The compile step's checks and links of reference deciders: each
//! reference's target path is checked against the tree, then resolved to
//! the target's item once the stream is filled.

use super::*;
use crate::tree::{TargetFault, follow_target};

/// Checks a reference's target path: it starts at the tree's root and
/// leads down one child at a time; no group on the way before the target
/// takes a DBlock (a jump carries only the target's).
pub(super) const fn check_target<A>(
    root: &'static Decider<A>,
    r: &'static Decider<A>,
    target: &'static [&'static Decider<A>],
) {
    if target.is_empty() {
        reference_target_empty(r.name);
    }
    if target[0].id != root.id {
        reference_target_outside_tree(r.name, target[0].name, root.name);
    }
    let mut i = 1;
    while i < target.len() {
        let parent = target[i - 1];
        if let Some(b) = parent.behavior()
            && b.has_dblock
        {
            reference_path_takes_dblock(r.name, parent.name);
        }
        if !has_child(parent, target[i]) {
            reference_target_missing(r.name, parent.name, target[i].name);
        }
        i += 1;
    }
}

pub(super) const fn has_child<A>(group: &'static Decider<A>, child: &'static Decider<A>) -> bool {
    let children = group.children();
    let mut c = 0;
    while c < children.len() {
        if children[c].id == child.id {
            return true;
        }
        c += 1;
    }
    false
}

/// Checks that each reference's target is in the stream, and that every
/// reference leads to a behavior: following references and descending
/// into groups from its target reaches a behavior decider.
pub(super) const fn link_references<A>(out: &mut [Item<A>]) {
    // Marks the items that reach a behavior, children before parents,
    // until nothing changes: each pass marks at least one more item.
    let reaches = Has::REACHES_BEHAVIOR.bits();
    let mut changed = true;
    while changed {
        changed = false;
        let mut i = out.len();
        while i > 0 {
            i -= 1;
            let has = out[i].has.bits();
            if has & reaches != 0 {
                continue;
            }
            let yes = if has & Has::REFERENCE.bits() != 0 {
                let t = find_target(out, out[i].decider) as usize;
                out[t].has.bits() & reaches != 0
            } else if has & Has::GROUP.bits() != 0 {
                let end = out[i].end as usize;
                let mut c = i + 1;
                let mut any = false;
                while c < end {
                    any = any || out[c].has.bits() & reaches != 0;
                    c = out[c].end as usize;
                }
                any
            } else {
                true
            };
            if yes {
                out[i].has = Has::from_bits_retain(has | reaches);
                changed = true;
            }
        }
    }
    let mut i = 0;
    while i < out.len() {
        let has = out[i].has.bits();
        if has & Has::REFERENCE.bits() != 0 && has & reaches == 0 {
            reference_cycle(out[i].decider.name);
        }
        out[i].has = Has::from_bits_retain(has & !reaches);
        i += 1;
    }
}

/// The item of reference `r`'s target.
pub(super) const fn find_target<A>(out: &[Item<A>], r: &'static Decider<A>) -> u16 {
    let target = r.target();
    match follow_target(out, target) {
        Ok(i) => i as u16,
        Err(TargetFault::Empty) => reference_target_empty(r.name),
        Err(TargetFault::Outside) => {
            reference_target_outside_tree(r.name, target[0].name, out[0].decider.name)
        }
        Err(TargetFault::Missing { at, k }) => {
            reference_target_missing(r.name, out[at].decider.name, target[k].name)
        }
    }
}
