//! The compile step's errors. Each is a function named after the problem,
//! so that rustc's "inside `…`" note names it; the message names the
//! decider or behavior.

use crate::decl::msg::Msg;
use crate::tree::{MAX_CHILDREN, MAX_ITEMS, MAX_SHUFFLE_CHILDREN};

pub(super) const fn group_has_no_children(group: &str) -> ! {
    let msg = Msg::new().s("group `").s(group).s("` has no children");
    panic!("{}", msg.text())
}

pub(super) const fn group_has_too_many_children(group: &str, n: usize) -> ! {
    let msg = Msg::new()
        .s("group `")
        .s(group)
        .s("` has ")
        .n(n)
        .s(" children; a group holds at most ")
        .n(MAX_CHILDREN)
        .s(" (the width of its redecide mask)");
    panic!("{}", msg.text())
}

pub(super) const fn shuffle_group_has_too_many_children(group: &str, n: usize) -> ! {
    let msg = Msg::new()
        .s("shuffle group `")
        .s(group)
        .s("` has ")
        .n(n)
        .s(" children; a shuffle group holds at most ")
        .n(MAX_SHUFFLE_CHILDREN);
    panic!("{}", msg.text())
}

pub(super) const fn duplicate_child_in_group(group: &str, child: &str) -> ! {
    let msg = Msg::new()
        .s("group `")
        .s(group)
        .s("` lists the child `")
        .s(child)
        .s("` more than once");
    panic!("{}", msg.text())
}

pub(super) const fn decider_cycle(decider: &str) -> ! {
    let msg = Msg::new()
        .s("decider `")
        .s(decider)
        .s("` contains itself: its children lead back to it (a cycle)");
    panic!("{}", msg.text())
}

pub(super) const fn tree_is_too_deep(decider: &str, depth: usize, max: usize) -> ! {
    let msg = Msg::new()
        .s("decider `")
        .s(decider)
        .s("` is at depth ")
        .n(depth)
        .s(", but the tree allows ")
        .n(max)
        .s(" levels (depths 0 to ")
        .n(max - 1)
        .s(")");
    panic!("{}", msg.text())
}

pub(super) const fn tree_has_too_many_items(decider: &str) -> ! {
    let msg = Msg::new()
        .s("the tree grows past ")
        .n(MAX_ITEMS)
        .s(" items at decider `")
        .s(decider)
        .s("` (shared deciders are counted once per place they are used)");
    panic!("{}", msg.text())
}

pub(super) const fn timer_period_not_positive(decider: &str) -> ! {
    let msg = Msg::new()
        .s("decider `")
        .s(decider)
        .s("`: a timer period must be a finite number of seconds above zero");
    panic!("{}", msg.text())
}

pub(super) const fn cooldown_not_positive(decider: &str) -> ! {
    let msg = Msg::new()
        .s("decider `")
        .s(decider)
        .s("`: a global cooldown must be a finite number of seconds above zero");
    panic!("{}", msg.text())
}

pub(super) const fn role_of_one(decider: &str) -> ! {
    let msg = Msg::new().s("decider `").s(decider).s(
        "`: a group role needs at least two agents (`together: 2` or more); use `gate: 1` for one",
    );
    panic!("{}", msg.text())
}

pub(super) const fn slot_group_without_select(group: &str) -> ! {
    let msg = Msg::new()
        .s("slot group `")
        .s(group)
        .s("` has no `select`: it must say which child runs for an agent");
    panic!("{}", msg.text())
}

pub(super) const fn select_outside_slot_group(decider: &str) -> ! {
    let msg = Msg::new()
        .s("decider `")
        .s(decider)
        .s("` has a `select` but is not a slot group; `select` picks the child of a `slot` group");
    panic!("{}", msg.text())
}

pub(super) const fn delegate_decide_on_behavior_decider(decider: &str) -> ! {
    let msg = Msg::new()
        .s("decider `")
        .s(decider)
        .s("` is a behavior decider: DELEGATE_DECIDE needs a group");
    panic!("{}", msg.text())
}

pub(super) const fn redecide_flag_on_behavior_decider(decider: &str) -> ! {
    let msg = Msg::new()
        .s("decider `")
        .s(decider)
        .s("` is a behavior decider: CALL_DECIDE_ON_REDECIDE needs a group");
    panic!("{}", msg.text())
}

pub(super) const fn delegating_group_has_decide(group: &str) -> ! {
    let msg = Msg::new()
        .s("group `")
        .s(group)
        .s("` has DELEGATE_DECIDE and a decide of its own; a delegating group decides through its children only");
    panic!("{}", msg.text())
}

pub(super) const fn type_larger_than_block(
    behavior: &str,
    what: &str,
    size: usize,
    block: usize,
) -> ! {
    let msg = Msg::new()
        .s("behavior `")
        .s(behavior)
        .s("`: its ")
        .s(what)
        .s(" type is ")
        .n(size)
        .s(" bytes, larger than the tree's ")
        .n(block)
        .s("-byte block");
    panic!("{}", msg.text())
}

pub(super) const fn type_over_aligned(behavior: &str, what: &str, align: usize) -> ! {
    let msg = Msg::new()
        .s("behavior `")
        .s(behavior)
        .s("`: its ")
        .s(what)
        .s(" type needs ")
        .n(align)
        .s("-byte alignment; blocks are aligned to ")
        .n(crate::raw::BLOCK_ALIGN)
        .s(" bytes");
    panic!("{}", msg.text())
}

pub(super) const fn reference_target_empty(reference: &str) -> ! {
    let msg = Msg::new()
        .s("reference `")
        .s(reference)
        .s("` names no target: give its path from the tree's root");
    panic!("{}", msg.text())
}

pub(super) const fn reference_target_outside_tree(reference: &str, first: &str, root: &str) -> ! {
    let msg = Msg::new()
        .s("reference `")
        .s(reference)
        .s("`: its target path starts at `")
        .s(first)
        .s("`, but this tree's root is `")
        .s(root)
        .s("` (a reference jumps within its own tree; its path starts at the root)");
    panic!("{}", msg.text())
}

pub(super) const fn reference_target_missing(reference: &str, parent: &str, name: &str) -> ! {
    let msg = Msg::new()
        .s("reference `")
        .s(reference)
        .s("`: its target path goes from `")
        .s(parent)
        .s("` to `")
        .s(name)
        .s("`, which is not a child of `")
        .s(parent)
        .s("`");
    panic!("{}", msg.text())
}

pub(super) const fn reference_path_takes_dblock(reference: &str, group: &str) -> ! {
    let msg = Msg::new()
        .s("reference `")
        .s(reference)
        .s("`: group `")
        .s(group)
        .s("` on the way to its target takes a DBlock; a jump carries only the target's");
    panic!("{}", msg.text())
}

pub(super) const fn reference_cycle(reference: &str) -> ! {
    let msg = Msg::new()
        .s("reference `")
        .s(reference)
        .s("`: its target leads only to references, never to a behavior (a cycle of references)");
    panic!("{}", msg.text())
}

pub(super) const fn reference_misuse(reference: &str, what: &str) -> ! {
    let msg = Msg::new().s("reference `").s(reference).s("` ").s(what);
    panic!("{}", msg.text())
}
