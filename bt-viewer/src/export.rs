//! The recording: what the viewer opens, as a versioned JSON document.
//!
//! ```text
//! {
//!   "format": "bt-viewer-recording", "version": 1,
//!   "tree":   { "name", "levels", "items": [ item, … ] },
//!   "legend": { "events", "rejections", "whys", "actions", "errors" },
//!   "agents": [ { "agent", "first_tick", "ticks": [ tick, … ] }, … ]
//! }
//! ```
//!
//! An item is an object: `index`, `name`, `id`, `kind` (`"group"`,
//! `"behavior"` or `"reference"`), `target` (a reference's target item,
//! where its jump moves the active path: an edge of the tree to draw
//! apart from the parent-child ones; null for other items), `policy` (a group's, else null), `flags` (decider flag
//! names), `flags_bits`, `behavior` (its name or null), `behavior_flags`, `decide`
//! (whether it has a `decide`), `depth`, `child_index`, `parent` (null at
//! the root), `children` (item indices in priority order),
//! `preconditions` (`decision` and `stimuli` tests, each null or an object
//! of hex masks `all`, `any`, `none`, `not_all`; `every`: the timer in
//! seconds or null) and `shared` (`gate`, `cooldown`, `together`, each
//! null when absent).
//!
//! A tick is an array, to keep large recordings small:
//! `[serial, now, leaf, visited, flags, path, events]` where `leaf` is an
//! item index or null, `flags` has bit 0 set when events were dropped and
//! bits 1–3 the error code (1-based index into `legend.errors`), `path` is
//! flat quadruples `item, redecides, time_active, mask` (root first; `mask`
//! 0 or a hex string) and `events` flat quadruples `kind, code, item, arg`:
//! `kind` is a 1-based index into `legend.events`; `code` indexes
//! `legend.rejections` for `reject`, `legend.whys` for `deactivate` and
//! `legend.actions` for `action-reported`; `arg` is the value of `accept`,
//! the child that takes over in `preempt`, the failed child in `redecide`,
//! the action code in `launch` and the ticket serial in `cancel` (whose `code` is the ticket's slot).

use alloc_crate::string::String;
use alloc_crate::vec::Vec;

use bt_core::{FlagTest, Tree};
use serde::Serialize;
use serde_json::Value;

use crate::recorder::{
    ACTION_STATES, ERRORS, FlightRecorder, KIND_NAMES, Kind, REJECTIONS, TickView, WHYS,
};

/// The `format` field of a recording.
pub const FORMAT: &str = "bt-viewer-recording";
/// The version of the recording format this crate writes.
pub const VERSION: u32 = 1;

/// A tree's items as the recording describes them.
#[derive(Clone, Debug, Serialize)]
pub struct TreeInfo {
    /// The tree's name.
    pub name: &'static str,
    /// Its depth levels.
    pub levels: usize,
    /// Every item, in preorder.
    pub items: Vec<ItemInfo>,
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

fn hex(x: u64) -> String {
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
                }
            })
            .collect();
        TreeInfo {
            name: tree.name(),
            levels: L,
            items,
        }
    }
}

/// A recording: the tree and the kept ticks of every watched agent, ready
/// to be written as JSON ([`to_json`](Self::to_json)) for the viewer.
#[derive(Clone, Debug, Serialize)]
pub struct Recording {
    /// Always [`FORMAT`].
    pub format: &'static str,
    /// Always [`VERSION`].
    pub version: u32,
    /// The tree.
    pub tree: TreeInfo,
    /// Names behind the codes of ticks and events.
    pub legend: Legend,
    /// The watched agents.
    pub agents: Vec<AgentTicks>,
}

/// Names behind the numeric codes of a recording.
#[derive(Clone, Debug, Serialize)]
pub struct Legend {
    /// Event kinds, from code 1.
    pub events: Vec<&'static str>,
    /// Rejection reasons, from code 0.
    pub rejections: Vec<&'static str>,
    /// Deactivation reasons, from code 0.
    pub whys: Vec<&'static str>,
    /// Deferred-action states, from code 0.
    pub actions: Vec<&'static str>,
    /// Tick errors, from code 1.
    pub errors: Vec<&'static str>,
}

impl Legend {
    fn new() -> Self {
        Legend {
            events: KIND_NAMES.to_vec(),
            rejections: REJECTIONS.iter().map(|r| r.as_str()).collect(),
            whys: WHYS.iter().map(|w| w.as_str()).collect(),
            actions: ACTION_STATES.to_vec(),
            errors: ERRORS.to_vec(),
        }
    }
}

/// One watched agent's kept ticks.
#[derive(Clone, Debug, Serialize)]
pub struct AgentTicks {
    /// The agent's index in the crowd.
    pub agent: u32,
    /// The serial of its first kept tick (ticks before it were overwritten).
    pub first_tick: u64,
    /// Its ticks, each `[serial, now, leaf, visited, flags, path, events]`.
    pub ticks: Vec<Value>,
}

/// An `f32` as the shortest decimal that reads back as the same `f32`
/// (`0.033333335`, not the `f64` widening `0.03333333507180214`).
fn short(x: f32) -> Value {
    let shortest: f64 = alloc_crate::format!("{x}").parse().unwrap_or(f64::from(x));
    serde_json::Number::from_f64(shortest).map_or(Value::Null, Value::Number)
}

/// One tick in the recording's array form.
pub(crate) fn tick_json(t: &TickView) -> Value {
    let mut path = Vec::with_capacity(t.path.len() * 4);
    for &(item, redecides, active, mask) in &t.path {
        path.push(Value::from(item));
        path.push(Value::from(redecides));
        path.push(short(active));
        path.push(if mask == 0 {
            Value::from(0)
        } else {
            Value::from(hex(mask))
        });
    }
    let mut events = Vec::with_capacity(t.events.len() * 4);
    for &(kind, code, item, arg) in &t.events {
        events.push(Value::from(kind));
        events.push(Value::from(code));
        events.push(Value::from(item));
        events.push(if kind == Kind::Decided as u8 {
            short(f32::from_bits(arg))
        } else {
            Value::from(arg)
        });
    }
    Value::Array(alloc_crate::vec![
        Value::from(t.serial),
        Value::from(t.now),
        t.leaf.map_or(Value::Null, Value::from),
        Value::from(t.visited),
        Value::from(t.flags),
        Value::Array(path),
        Value::Array(events),
    ])
}

impl FlightRecorder {
    /// What the recorder holds now, for the viewer.
    pub fn export(&self) -> Recording {
        let agents = (0..self.watched())
            .map(|slot| {
                let (agent, first_tick, ticks) = self.ticks_of(slot);
                AgentTicks {
                    agent,
                    first_tick,
                    ticks: ticks.map(|t| tick_json(&t.decode())).collect(),
                }
            })
            .collect();
        Recording::of(self.tree.clone(), agents)
    }
}

impl Recording {
    /// The recording of `tree` with these agents' ticks.
    pub(crate) fn of(tree: TreeInfo, agents: Vec<AgentTicks>) -> Self {
        Recording {
            format: FORMAT,
            version: VERSION,
            tree,
            legend: Legend::new(),
            agents,
        }
    }

    /// The recording as JSON text.
    pub fn to_json(&self) -> String {
        // Serializing plain data to a String cannot fail.
        serde_json::to_string(self).expect("a recording serializes")
    }
}
