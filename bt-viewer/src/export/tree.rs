//! The tree as a recording describes it: every item, its preconditions
//! and shared checks, and the names of the flag bits.

use alloc_crate::string::String;
use alloc_crate::vec::Vec;

use bt_core::{FlagTest, Tree};
use serde::Serialize;

/// A tree's items as the recording describes them.
#[derive(Clone, Debug, Serialize)]
pub struct TreeInfo {
    /// The tree's name.
    pub name: &'static str,
    /// Its depth levels.
    pub levels: usize,
    /// Every item, in preorder.
    pub items: Vec<ItemInfo>,
    /// Names of the decision and stimuli flag bits, when the recorder was
    /// told them ([`FlightRecorder::name_flags`](crate::FlightRecorder::name_flags)).
    pub flag_names: FlagNamesInfo,
    /// The tree's tunables (`tree!`'s `tunables:` key), in the order
    /// declared; not written when it has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tunables: Vec<super::TunableInfo>,
    /// Per item, its preconditions: what turned each earlier sibling of a
    /// steady tick's path down follows from them and the tick's flags.
    #[serde(skip)]
    pub(crate) preconditions: Vec<bt_core::Preconditions>,
}

/// Names of flag bits, `(bit, name)` for each named single bit.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlagNamesInfo {
    /// The decision flags' bits.
    pub decision: Vec<(u32, &'static str)>,
    /// The stimuli flags' bits.
    pub stimuli: Vec<(u32, &'static str)>,
}

/// One item of the tree.
#[derive(Clone, Debug, Serialize)]
pub struct ItemInfo {
    /// Index in the compiled stream.
    pub index: usize,
    /// The decider's name.
    pub name: &'static str,
    /// Its stable id.
    pub id: u32,
    /// `"group"`, `"behavior"` or `"reference"`.
    pub kind: &'static str,
    /// A reference's target item: the jump edge (`None` for other items).
    pub target: Option<usize>,
    /// A group's policy.
    pub policy: Option<&'static str>,
    /// Decider flag names.
    pub flags: Vec<&'static str>,
    /// The decider flags word.
    pub flags_bits: u8,
    /// Its behavior (the leaf's, or the group behavior).
    pub behavior: Option<&'static str>,
    /// The behavior flags word (hex).
    pub behavior_flags: String,
    /// Whether it has a `decide` function.
    pub decide: bool,
    /// Depth (root 0).
    pub depth: usize,
    /// Index among its parent's children.
    pub child_index: usize,
    /// The parent's index.
    pub parent: Option<usize>,
    /// Children's indices.
    pub children: Vec<usize>,
    /// Its own preconditions.
    pub preconditions: PreInfo,
    /// Checks shared by the crowd.
    pub shared: SharedInfo,
    /// The tunables its fields name (left out when none does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tuned: Option<TunedInfo>,
}

/// An item's preconditions.
#[derive(Clone, Debug, Serialize)]
pub struct PreInfo {
    /// Decision-flag test.
    pub decision: Option<TestInfo>,
    /// Stimuli-flag test.
    pub stimuli: Option<TestInfo>,
    /// Timer period in seconds.
    pub every: Option<f64>,
}

/// A flag-word test, masks in hex.
#[derive(Clone, Debug, Serialize)]
pub struct TestInfo {
    /// All of these set.
    pub all: String,
    /// At least one of these set.
    pub any: String,
    /// None of these set.
    pub none: String,
    /// At least one of these clear.
    pub not_all: String,
}

/// An item's shared checks.
#[derive(Clone, Debug, Serialize)]
pub struct SharedInfo {
    /// Gate: most agents in at once.
    pub gate: Option<u16>,
    /// Global cooldown in seconds.
    pub cooldown: Option<f64>,
    /// Group role: agents that start together.
    pub together: Option<u8>,
}

/// The tunables an item's fields name (`every: tunable(…)` and the
/// like): the numbers in [`PreInfo`] and [`SharedInfo`] are then their
/// defaults, and the values in effect are the recording's tuning.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TunedInfo {
    /// The timer's period.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub every: Option<&'static str>,
    /// The gate's size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<&'static str>,
    /// The global cooldown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cooldown: Option<&'static str>,
}

pub(super) fn hex(x: u64) -> String {
    alloc_crate::format!("{x:#x}")
}

fn test(t: &FlagTest) -> Option<TestInfo> {
    t.is_some().then(|| TestInfo {
        all: hex(t.all),
        any: hex(t.any),
        none: hex(t.none),
        not_all: hex(t.not_all),
    })
}

impl TreeInfo {
    /// Describes `tree`.
    pub fn of<A: 'static, const L: usize, const S: usize, const N: usize>(
        tree: &Tree<A, L, S, N>,
    ) -> Self {
        let items = tree
            .nodes()
            .map(|node| {
                let decider = node.decider();
                let pre = decider.preconditions();
                ItemInfo {
                    index: node.index().get(),
                    name: node.name(),
                    id: node.id(),
                    kind: if node.is_group() {
                        "group"
                    } else if node.is_reference() {
                        "reference"
                    } else {
                        "behavior"
                    },
                    target: node.target().map(|t| t.index().get()),
                    policy: node.policy().map(|p| p.name()),
                    flags: decider.flags().iter_names().map(|(name, _)| name).collect(),
                    flags_bits: decider.flags().bits(),
                    behavior: node.behavior().map(|b| b.name()),
                    behavior_flags: hex(node.behavior_flags()),
                    decide: decider.has_decide(),
                    depth: node.depth(),
                    child_index: node.child_index(),
                    parent: node.parent().map(|p| p.index().get()),
                    children: node.children().map(|c| c.index().get()).collect(),
                    preconditions: PreInfo {
                        decision: test(&pre.decision),
                        stimuli: test(&pre.stimuli),
                        every: (pre.every > 0.0).then_some(pre.every),
                    },
                    shared: SharedInfo {
                        gate: (pre.sync.gate > 0).then_some(pre.sync.gate),
                        cooldown: (pre.sync.cooldown > 0.0).then_some(pre.sync.cooldown),
                        together: (pre.sync.together > 0).then_some(pre.sync.together),
                    },
                    tuned: {
                        let t = decider.tuned_fields();
                        t.is_some().then(|| TunedInfo {
                            every: t.every.map(|x| x.name()),
                            gate: t.gate.map(|x| x.name()),
                            cooldown: t.cooldown.map(|x| x.name()),
                        })
                    },
                }
            })
            .collect();
        TreeInfo {
            name: tree.name(),
            levels: L,
            items,
            flag_names: FlagNamesInfo::default(),
            tunables: super::tuning::table_info(tree.tunables),
            preconditions: tree.nodes().map(|n| *n.decider().preconditions()).collect(),
        }
    }
}
