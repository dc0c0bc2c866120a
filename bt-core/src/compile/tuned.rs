//! The check of the tunables a tree's deciders name (`cooldown:
//! tunable(X)`) and of the tables its behaviors name (`tunables: X`):
//! each must be the tree's table.

use crate::decl::msg::Msg;
use crate::decl::tune::{Tunables, with_places};
use crate::decl::tune_field::check_field;
use crate::decl::{Decider, DeciderKind};
use crate::tree::{MAX_ITEMS, MAX_LEVELS};

/// Checks that every tunable a decider under `root` names is of the table
/// `table` (`tree!`'s `tunables:` key) of tree `tree`, and that every
/// behavior that names a table (its context typed by it) names that one.
/// Each decider is checked where it is declared for the tunable's kind and
/// range; this is what only the tree knows.
///
/// # Panics
/// In const evaluation, naming the decider, the key and the tunable (or
/// the behavior and its table), when a decider names a tunable or a
/// behavior a table and the tree has no table, or another table.
pub const fn check_tuned<A>(
    root: &'static Decider<A>,
    tree: &'static str,
    table: Option<&'static Tunables>,
) {
    let mut budget = MAX_ITEMS + 1;
    walk(root, tree, table, 0, &mut budget);
}

/// Checks `d` and the deciders under it. A graph that is not a valid tree
/// (a cycle, too deep, too many items) is walked only as far as the
/// compile step's own limits: the compile step reports it.
const fn walk<A>(
    d: &'static Decider<A>,
    tree: &'static str,
    table: Option<&'static Tunables>,
    depth: usize,
    budget: &mut usize,
) {
    if depth >= MAX_LEVELS || *budget == 0 {
        return;
    }
    *budget -= 1;
    let f = d.tuned;
    if let Some(t) = f.every {
        check_field(tree, table, d.name, "every", (t.table(), t.name()));
    }
    if let Some(t) = f.gate {
        check_field(tree, table, d.name, "gate", (t.table(), t.name()));
    }
    if let Some(t) = f.cooldown {
        check_field(tree, table, d.name, "cooldown", (t.table(), t.name()));
    }
    let behavior = match d.kind {
        DeciderKind::Behavior(b) => Some(b),
        DeciderKind::Group { behavior, .. } => behavior,
        DeciderKind::Reference { .. } => None,
    };
    if let Some(b) = behavior
        && let Some(of) = b.table
    {
        match table {
            None => behavior_table_in_tree_without_tunables(tree, d.name, b.name, of.name()),
            Some(table) => {
                if !table.is(of) {
                    behavior_of_another_table(tree, d.name, b.name, of, table);
                }
            }
        }
    }
    if let DeciderKind::Group { children, .. } = d.kind {
        let mut c = 0;
        while c < children.len() {
            walk(children[c], tree, table, depth + 1, budget);
            c += 1;
        }
    }
}

const fn behavior_table_in_tree_without_tunables(
    tree: &str,
    decider: &str,
    behavior: &str,
    of: &str,
) -> ! {
    let msg = Msg::new()
        .s("tree `")
        .s(tree)
        .s("` has no `tunables:` key, but the behavior `")
        .s(behavior)
        .s("` of its decider `")
        .s(decider)
        .s("` reads table `")
        .s(of)
        .s("` (`tunables: ")
        .s(of)
        .s("`): name the table in `tree!`");
    panic!("{}", msg.text())
}

const fn behavior_of_another_table(
    tree: &str,
    decider: &str,
    behavior: &str,
    of: &Tunables,
    table: &Tunables,
) -> ! {
    let msg = Msg::new()
        .s("decider `")
        .s(decider)
        .s("`: its behavior `")
        .s(behavior)
        .s("` reads table `")
        .s(of.name())
        .s("` (`tunables: ")
        .s(of.name())
        .s("`), not tree `")
        .s(tree)
        .s("`'s table `")
        .s(table.name())
        .s("`");
    panic!("{}", with_places(msg, of, table).text())
}
