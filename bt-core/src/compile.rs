//! The compile step: `const fn`s that validate a declared decider graph and
//! flatten it into the preorder item stream a [`Tree`](crate::Tree) runs.
//!
//! Both passes run in const evaluation, from the `tree!` expansion. A
//! problem is reported as a const panic from a function named after it
//! (`group_has_no_children`, …), so rustc's note says what went wrong and
//! the message says where:
//!
//! ```text
//! error[E0080]: evaluation panicked: group `GUARD` has no children
//! note: inside `group_has_no_children`
//! ```
//!
//! Shared deciders are inlined at every place they are used, so the stream
//! is a tree even when the declaration is a DAG.

pub(crate) mod errors;
pub(crate) mod fingerprint;
mod references;
mod tuned;

pub use tuned::check_tuned;

use references::{check_target, link_references};

use errors::{
    cooldown_not_positive, decider_cycle, delegate_decide_on_behavior_decider,
    delegating_group_has_decide, duplicate_child_in_group, group_has_no_children,
    group_has_too_many_children, redecide_flag_on_behavior_decider, reference_cycle,
    reference_misuse, reference_path_takes_dblock, reference_target_empty,
    reference_target_missing, reference_target_outside_tree, role_of_one,
    select_outside_slot_group, shuffle_group_has_too_many_children, slot_group_without_select,
    timer_period_not_positive, tree_has_too_many_items, tree_is_too_deep, type_larger_than_block,
    type_over_aligned,
};

use crate::decl::{Decider, DeciderFlags, DeciderKind, Policy};
use crate::raw::{BLOCK_ALIGN, ErasedBehavior, TypeLayout};
use crate::tree::{FlagCheck, Has, Item, NO_PARENT, NO_SLOT};
use crate::tree::{MAX_CHILDREN, MAX_ITEMS, MAX_LEVELS, MAX_SHUFFLE_CHILDREN, Shape};

/// Validates the graph under `root` and counts its shape.
///
/// # Panics
/// In const evaluation, with a message naming the decider or behavior at
/// fault, when the graph is not a valid tree for blocks of `block` bytes and
/// at most `max_depth` levels.
pub const fn shape<A>(root: &'static Decider<A>, block: usize, max_depth: usize) -> Shape {
    count(root, block, max_depth, true)
}

/// Counts the shape like [`shape`], without reporting anything: a graph
/// that is not a valid tree gets some shape. The macros size types with it,
/// so that a bad declaration is reported once, by [`shape`].
pub const fn measure<A>(root: &'static Decider<A>, block: usize, max_depth: usize) -> Shape {
    count(root, block, max_depth, false)
}

const fn count<A>(
    root: &'static Decider<A>,
    block: usize,
    max_depth: usize,
    strict: bool,
) -> Shape {
    let max_depth = if max_depth == 0 || max_depth > MAX_LEVELS {
        MAX_LEVELS
    } else {
        max_depth
    };
    let mut path = [0u32; MAX_LEVELS];
    let mut acc = Shape {
        items: 0,
        levels: 0,
        timers: 0,
        shuffles: 0,
        roles: 0,
        actions: 0,
        gates: 0,
        cooldowns: 0,
        references: 0,
        block: 0,
        fingerprint: fingerprint::SEED,
    };
    walk(root, root, 0, &mut path, &mut acc, block, max_depth, strict);
    acc
}

#[allow(clippy::too_many_arguments)]
const fn walk<A>(
    root: &'static Decider<A>,
    d: &'static Decider<A>,
    depth: usize,
    path: &mut [u32; MAX_LEVELS],
    acc: &mut Shape,
    block: usize,
    max_depth: usize,
    strict: bool,
) {
    // Outside strict mode every problem just stops the walk, so that it
    // ends even on a cyclic graph.
    let mut i = 0;
    while i < depth {
        if path[i] == d.id {
            if strict {
                decider_cycle(d.name);
            }
            return;
        }
        i += 1;
    }
    if depth >= max_depth {
        if strict {
            tree_is_too_deep(d.name, depth, max_depth);
        }
        return;
    }
    path[depth] = d.id;
    acc.items += 1;
    acc.fingerprint = fingerprint::mix_decider(acc.fingerprint, d, depth);
    if acc.items > MAX_ITEMS {
        if strict {
            tree_has_too_many_items(d.name);
        }
        return;
    }
    if depth + 1 > acc.levels {
        acc.levels = depth + 1;
    }
    if strict {
        check_decider(d, block);
        if let DeciderKind::Reference { target } = d.kind {
            check_target(root, d, target);
        }
    }
    if d.pre.every != 0.0 || d.tuned.every.is_some() {
        acc.timers += 1;
    }
    if d.pre.sync.gate != 0 || d.tuned.gate.is_some() {
        acc.gates += 1;
    }
    if d.pre.sync.cooldown != 0.0 || d.tuned.cooldown.is_some() {
        acc.cooldowns += 1;
    }
    if d.pre.sync.together != 0 {
        acc.roles += 1;
    }
    if d.is_reference() {
        acc.references += 1;
    }
    if let Some(b) = d.behavior() {
        if b.has_launch {
            acc.actions += 1;
        }
        acc.block = fit(acc.block, b.memory);
        acc.block = fit(acc.block, b.dblock);
    }
    if let DeciderKind::Group {
        policy, children, ..
    } = d.kind
    {
        if matches!(policy, Policy::Shuffle) {
            acc.shuffles += 1;
        }
        let mut c = 0;
        while c < children.len() {
            walk(
                root,
                children[c],
                depth + 1,
                path,
                acc,
                block,
                max_depth,
                strict,
            );
            c += 1;
        }
    }
}

/// `block`, grown to hold `layout` in whole [`BLOCK_ALIGN`] units.
const fn fit(block: usize, layout: TypeLayout) -> usize {
    let size = layout.size.div_ceil(BLOCK_ALIGN) * BLOCK_ALIGN;
    if size > block { size } else { block }
}

const fn check_decider<A>(d: &'static Decider<A>, block: usize) {
    let every = d.pre.every;
    // NaN fails every comparison, so it is caught with the negatives.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    if !(every >= 0.0) || every == f64::INFINITY {
        timer_period_not_positive(d.name);
    }
    let cooldown = d.pre.sync.cooldown;
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    if !(cooldown >= 0.0) || cooldown == f64::INFINITY {
        cooldown_not_positive(d.name);
    }
    if d.pre.sync.together == 1 {
        role_of_one(d.name);
    }
    let slot = matches!(
        d.kind,
        DeciderKind::Group {
            policy: Policy::Slot,
            ..
        }
    );
    if slot && d.select.is_none() {
        slot_group_without_select(d.name);
    }
    if !slot && d.select.is_some() {
        select_outside_slot_group(d.name);
    }
    let delegate = d.flags.contains(DeciderFlags::DELEGATE_DECIDE);
    let recheck = d.flags.contains(DeciderFlags::CALL_DECIDE_ON_REDECIDE);
    match d.kind {
        DeciderKind::Reference { .. } => {
            if delegate || recheck {
                reference_misuse(d.name, "takes no decider flags");
            }
            if d.behavior_flags != 0 {
                reference_misuse(d.name, "runs no behavior, so it takes no `behavior_flags`");
            }
        }
        DeciderKind::Behavior(b) => {
            if delegate {
                delegate_decide_on_behavior_decider(d.name);
            }
            if recheck {
                redecide_flag_on_behavior_decider(d.name);
            }
            check_behavior(b, block);
        }
        DeciderKind::Group {
            policy,
            children,
            behavior,
        } => {
            let n = children.len();
            if n == 0 {
                group_has_no_children(d.name);
            }
            if n > MAX_CHILDREN {
                group_has_too_many_children(d.name, n);
            }
            if matches!(policy, Policy::Shuffle) && n > MAX_SHUFFLE_CHILDREN {
                shuffle_group_has_too_many_children(d.name, n);
            }
            if delegate && d.decide.is_some() {
                delegating_group_has_decide(d.name);
            }
            check_unique_children(d.name, children);
            if let Some(b) = behavior {
                check_behavior(b, block);
            }
        }
    }
}

const fn check_behavior<A>(b: &'static ErasedBehavior<A>, block: usize) {
    check_layout(b.name, "memory", b.memory, block);
    check_layout(b.name, "DBlock", b.dblock, block);
}

const fn check_layout(name: &str, what: &str, layout: TypeLayout, block: usize) {
    if layout.size > block {
        type_larger_than_block(name, what, layout.size, block);
    }
    if layout.align > crate::raw::BLOCK_ALIGN {
        type_over_aligned(name, what, layout.align);
    }
}

/// Checks that no decider appears twice among the children of `group`.
///
/// # Panics
/// In const evaluation, naming the group and the repeated child.
pub const fn check_unique_children<A>(group: &str, children: &[&'static Decider<A>]) {
    let mut i = 0;
    while i < children.len() {
        let mut j = i + 1;
        while j < children.len() {
            if children[i].id == children[j].id {
                duplicate_child_in_group(group, children[i].name);
            }
            j += 1;
        }
        i += 1;
    }
}

/// Flattens the graph under `root` into its preorder item stream. `shape`
/// is what [`shape`] returned for the same root; `N` must be its `items`.
pub const fn flatten<A, const N: usize>(root: &'static Decider<A>, shape: Shape) -> [Item<A>; N] {
    let mut out = [Item::placeholder(root); N];
    fill_root(root, shape, &mut out);
    out
}

/// [`flatten`] at run time, into a `Vec`: for decider tables assembled at
/// run time (the differential tests build random trees this way). `shape`
/// is what [`shape`] returned for the same root.
#[doc(hidden)]
pub fn flatten_vec<A>(root: &'static Decider<A>, shape: Shape) -> alloc::vec::Vec<Item<A>> {
    let mut out = alloc::vec![Item::placeholder(root); shape.items];
    fill_root(root, shape, &mut out);
    out
}

/// Fills `out` with the stream under `root`; `out` has `shape.items` items.
const fn fill_root<A>(root: &'static Decider<A>, shape: Shape, out: &mut [Item<A>]) {
    let mut slots = Slots {
        timer: 0,
        shuffle: shape.timers,
        role: 0,
        action: shape.first_action_slot(),
        gate: 0,
        cooldown: 0,
    };
    let end = fill(root, out, 0, NO_PARENT, 0, 0, &mut slots);
    if end != out.len() {
        // Only reachable by calling `flatten` with a shape of another root.
        panic!("flatten: the item count does not match the shape");
    }
    if shape.references > 0 {
        link_references(out);
    }
}

/// The next free index of each kind, while the stream is filled.
struct Slots {
    timer: usize,
    shuffle: usize,
    role: usize,
    action: usize,
    gate: usize,
    cooldown: usize,
}

const fn fill<A>(
    d: &'static Decider<A>,
    out: &mut [Item<A>],
    at: usize,
    parent: u16,
    depth: usize,
    child_index: usize,
    slots: &mut Slots,
) -> usize {
    let mut has = 0u32;
    let mut policy = Policy::Prioritized;
    let mut child_count = 0;
    let mut timer = NO_SLOT;
    let mut shuffle = NO_SLOT;
    let behavior = d.behavior();
    if d.pre.decision.is_some() {
        has |= Has::DECISION.bits();
    }
    if d.pre.stimuli.is_some() {
        has |= Has::STIMULI.bits();
    }
    // A field that names a tunable is there whatever its value in
    // effect (see `TunedFields`).
    let tuned = d.tuned;
    if tuned.is_some() {
        has |= Has::TUNED.bits();
    }
    if d.pre.every != 0.0 || tuned.every.is_some() {
        has |= Has::TIMER.bits();
        timer = slots.timer as u16;
        slots.timer += 1;
    }
    if d.decide.is_some() {
        has |= Has::DECIDE.bits();
    }
    let (mut gate, mut cooldown, mut role, mut action) = (NO_SLOT, NO_SLOT, NO_SLOT, NO_SLOT);
    if d.pre.sync.is_some() || tuned.gate.is_some() || tuned.cooldown.is_some() {
        has |= Has::SYNC.bits();
    }
    if d.pre.sync.gate != 0 || tuned.gate.is_some() {
        gate = slots.gate as u16;
        slots.gate += 1;
    }
    if d.pre.sync.cooldown != 0.0 || tuned.cooldown.is_some() {
        cooldown = slots.cooldown as u16;
        slots.cooldown += 1;
    }
    if d.pre.sync.together != 0 {
        role = slots.role as u16;
        slots.role += 1;
    }
    if d.flags.contains(DeciderFlags::DELEGATE_DECIDE) {
        has |= Has::DELEGATE.bits();
    }
    if d.flags.contains(DeciderFlags::CALL_DECIDE_ON_REDECIDE) {
        has |= Has::RECHECK.bits();
    }
    if let Some(b) = behavior {
        has |= Has::BEHAVIOR.bits();
        if b.has_activate {
            has |= Has::ACTIVATE.bits();
        }
        if b.has_tick {
            has |= Has::TICK.bits();
        }
        if b.has_deactivate {
            has |= Has::DEACTIVATE.bits();
        }
        if b.has_dblock {
            has |= Has::DBLOCK.bits();
        }
        if b.has_launch {
            // A deferred action ticks even without a `tick` of its own: it
            // runs until the game system reports back.
            has |= Has::LAUNCH.bits() | Has::TICK.bits();
            action = slots.action as u16;
            slots.action += 1;
        }
    }
    if d.is_reference() {
        has |= Has::REFERENCE.bits();
    }
    if let DeciderKind::Group {
        policy: p,
        children,
        ..
    } = d.kind
    {
        has |= Has::GROUP.bits();
        policy = p;
        child_count = children.len();
        if matches!(p, Policy::Shuffle) {
            shuffle = slots.shuffle as u16;
            slots.shuffle += 1;
        }
        if matches!(p, Policy::Slot) {
            has |= Has::SLOT.bits();
        }
    }
    out[at] = Item {
        end: 0,
        parent,
        child_index: child_index as u8,
        child_count: child_count as u8,
        depth: depth as u8,
        policy,
        has: Has::from_bits_retain(has),
        timer,
        shuffle,
        gate,
        cooldown,
        role,
        action,
        // A tuned timer's period is read where `TUNED` is set.
        every: if tuned.every.is_some() {
            0.0
        } else {
            d.pre.every
        },
        decision: FlagCheck::of(d.pre.decision),
        stimuli: FlagCheck::of(d.pre.stimuli),
        decide: d.decide,
        behavior,
        behavior_flags: d.behavior_flags,
        decider: d,
    };
    let mut next = at + 1;
    let children = d.children();
    let mut c = 0;
    while c < children.len() {
        next = fill(children[c], out, next, at as u16, depth + 1, c, slots);
        c += 1;
    }
    out[at].end = next as u16;
    if has & Has::GROUP.bits() != 0 {
        if plain_children(out, at, next) {
            mark_plain(out, at, next);
        }
        let quick = quick_group(out, at, next);
        if quick != 0 {
            let marks = out[at].has.bits() | quick;
            out[at].has = Has::from_bits_retain(marks);
        }
    }
    next
}

/// The marks of the group at `at` (its subtree ends at `end`) if it picks
/// without the step machine in an untraced tick (see [`Has::QUICK_GROUP`]
/// and [`Has::SYNC_CHILDREN`]), or none.
const fn quick_group<A>(out: &[Item<A>], at: usize, end: usize) -> u32 {
    if out[at].has.bits() & Has::RECHECK.bits() != 0 {
        return 0;
    }
    match out[at].policy {
        Policy::Prioritized | Policy::Sequential => {}
        // The random draw of a timed child is not a quick one.
        Policy::Random if plain_children(out, at, end) => return Has::QUICK_GROUP.bits(),
        Policy::Random | Policy::Shuffle | Policy::Scored | Policy::Slot => return 0,
    }
    let calls = Has::DECIDE
        .union(Has::DBLOCK)
        .union(Has::DELEGATE)
        .union(Has::SLOT)
        .union(Has::REFERENCE);
    if !no_child_has(out, at, end, calls) || tuned_timer_child(out, at, end) {
        0
    } else if no_child_has(out, at, end, Has::SYNC) {
        Has::QUICK_GROUP.bits()
    } else {
        Has::QUICK_GROUP.union(Has::SYNC_CHILDREN).bits()
    }
}

/// Whether a child of the group at `at` (its subtree ends at `end`) has
/// a timer whose period a tunable gives: the quick steps test a timer by
/// its number alone.
const fn tuned_timer_child<A>(out: &[Item<A>], at: usize, end: usize) -> bool {
    let mut c = at + 1;
    while c < end {
        if out[c].decider.tuned.every.is_some() {
            return true;
        }
        c = out[c].end as usize;
    }
    false
}

/// Marks the group at `at` (its subtree ends at `end`), whose children are
/// plain: `PLAIN_CHILDREN` on it, `BARE_LEAVES` on it if its children are
/// leaves with no test, and `QUICK_END` on each child whose end it can
/// redecide without the step machine (see [`Has`]).
const fn mark_plain<A>(out: &mut [Item<A>], at: usize, end: usize) {
    let group = out[at].has.bits();
    let quick = group & Has::RECHECK.bits() == 0
        && matches!(
            out[at].policy,
            Policy::Random | Policy::Prioritized | Policy::Sequential
        );
    // What keeps a child from being entered by the quick redecide, and
    // what it needs no more than the redecide mask to pick it.
    let not_quick = Has::GROUP.union(Has::SYNC).union(Has::LAUNCH);
    let tested = not_quick.union(Has::DECISION).union(Has::STIMULI);
    let mut bare = true;
    let mut c = at + 1;
    while c < end {
        let has = out[c].has.bits();
        bare = bare && has & tested.bits() == 0;
        if quick && has & not_quick.bits() == 0 {
            out[c].has = Has::from_bits_retain(has | Has::QUICK_END.bits());
        }
        c = out[c].end as usize;
    }
    let mut marks = group | Has::PLAIN_CHILDREN.bits();
    if bare {
        marks |= Has::BARE_LEAVES.bits();
    }
    out[at].has = Has::from_bits_retain(marks);
}

/// Whether every child of the group at `at` (its subtree ends at `end`)
/// is decided by its flag tests alone.
const fn plain_children<A>(out: &[Item<A>], at: usize, end: usize) -> bool {
    let calls = Has::TIMER
        .union(Has::DECIDE)
        .union(Has::DBLOCK)
        .union(Has::DELEGATE)
        .union(Has::SYNC)
        .union(Has::SLOT)
        .union(Has::REFERENCE);
    no_child_has(out, at, end, calls)
}

/// Whether no child of the group at `at` (its subtree ends at `end`) has
/// any of `has`.
const fn no_child_has<A>(out: &[Item<A>], at: usize, end: usize, has: Has) -> bool {
    let mut c = at + 1;
    while c < end {
        if out[c].has.bits() & has.bits() != 0 {
            return false;
        }
        c = out[c].end as usize;
    }
    true
}
