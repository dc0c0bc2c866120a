//! Comparing two recordings of one tree: which agents decided otherwise,
//! from which tick, and how.
//!
//! A team changes a tree's closure, a number or the game around it, plays
//! the same scenario again and wants to know what changed in behavior.
//! [`compare`] takes the two recordings (the JSON the viewer opens) and
//! returns a [`Comparison`]: per agent recorded in both, the first tick
//! whose decisions differ and what differs there (another decider runs,
//! a decider accepted with another value, a decider was turned down for
//! another reason, or another step), and how many agents had diverged by
//! each tick. A test can assert on it ("no agent's decisions changed before
//! tick 100"); the `bt-compare` command does the same for two files.
//!
//! Ticks are matched by their serial (the frame count of the recorder),
//! agents by their index. What is compared is what the tick decided: the
//! leaf, the path's items and every decision step with its value or
//! reason. The clock, times active and the agents' own values are not.

use alloc_crate::string::{String, ToString};
use alloc_crate::vec::Vec;
use core::fmt;

use serde::Serialize;
mod read;
mod tuning;

use read::{Doc, Event, Quads, Scalar, Segment, read};

/// What [`compare`] found. It serializes (serde) as the comparison page
/// reads it: divergences as `{"tick", "leaf": [first, second], "what"}`,
/// each difference tagged by its `"kind"` (`"decide-value"`,
/// `"rejection"`, `"step"`, `"path"`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The tree's name.
    pub tree: String,
    /// Each agent recorded in both runs, in index order, with its first
    /// divergence (`None`: it decided alike at every tick both kept).
    pub agents: Vec<AgentComparison>,
    /// Ticks kept by both runs, by serial: `(serial, agents diverged at
    /// or before it)`, for every serial where that count grows.
    pub diverged_by_tick: Vec<(u64, usize)>,
    /// Agents recorded in one run only.
    pub unmatched: Vec<u32>,
    /// The tree's tunables whose values in effect differ between the two
    /// runs, at the start or after a change, in the order of the first
    /// recording's table. A recording that holds no tunables (its tree
    /// has none, or it was made before recordings held them) counts as
    /// having none.
    pub tuning: Vec<TunableDifference>,
}

/// A tunable's changes in one run, oldest first: the tick each took effect
/// at, and the value from that tick on.
pub type TunedChanges = Vec<(u64, serde_json::Value)>;

/// A tunable whose values in effect differ between two runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TunableDifference {
    /// The tunable.
    pub name: String,
    /// Its value at the first frame of each recording (`None`: that
    /// recording has no such tunable).
    pub start: (Option<serde_json::Value>, Option<serde_json::Value>),
    /// The changes each recording put in effect after its first frame:
    /// the tick and the value from that tick on.
    pub changes: (TunedChanges, TunedChanges),
    /// The first tick, from the later of the two first frames on, at which
    /// its values in effect differ.
    pub first_tick: u64,
}

/// One agent in both runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgentComparison {
    /// The agent's index in the crowd.
    pub agent: u32,
    /// Ticks kept by both runs.
    pub ticks: usize,
    /// Its first tick that decided otherwise, if any.
    pub first: Option<Divergence>,
}

/// The first tick at which an agent decided otherwise.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Divergence {
    /// The tick's serial.
    pub tick: u64,
    /// The decider that ran after the tick in each run (`None`: idle).
    pub leaf: (Option<String>, Option<String>),
    /// The first decision step that differs.
    pub what: Difference,
}

/// The first decision step of a tick that differs between two runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Difference {
    /// A decider accepted in both runs, with other values (a `decide`'s
    /// value, a score or a weight), or its `decide` turned it down in both
    /// runs, returning other values.
    DecideValue {
        /// The decider.
        decider: String,
        /// Whether it was accepted in both runs (`false`: turned down by
        /// its `decide` in both).
        accepted: bool,
        /// Its value in the first run and in the second.
        values: (f64, f64),
    },
    /// A decider was turned down in one run and not the other, or for
    /// another reason (`"accepted"` where it was not turned down).
    Rejection {
        /// The decider.
        decider: String,
        /// What happened to it in each run: the reason it was turned down
        /// (`"gate full"`), or `"accepted"`.
        outcomes: (String, String),
    },
    /// Another step: each run's step as the viewer words it
    /// (`"activate DRINK"`; `"none"` where a run has no more steps).
    Step {
        /// The step in each run.
        steps: (String, String),
    },
    /// The same steps, another path or leaf (a step was dropped from a
    /// full recording).
    Path,
}

impl Comparison {
    /// Whether every agent decided alike at every tick both runs kept.
    pub fn same(&self) -> bool {
        self.agents.iter().all(|a| a.first.is_none())
    }

    /// The agents whose decisions changed, with where, earliest first.
    pub fn diverged(&self) -> Vec<(u32, &Divergence)> {
        let mut out: Vec<_> = self
            .agents
            .iter()
            .filter_map(|a| Some((a.agent, a.first.as_ref()?)))
            .collect();
        out.sort_by_key(|(agent, d)| (d.tick, *agent));
        out
    }

    /// The first tick at which any agent decided otherwise.
    pub fn first_tick(&self) -> Option<u64> {
        self.diverged().first().map(|(_, d)| d.tick)
    }

    /// Whether no agent's decisions changed before tick `serial`.
    pub fn same_before(&self, serial: u64) -> bool {
        self.first_tick().is_none_or(|t| t >= serial)
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let diverged = self.diverged();
        writeln!(
            f,
            "tree `{}`: {} agents compared, {} decided otherwise",
            self.tree,
            self.agents.len(),
            diverged.len()
        )?;
        for (agent, d) in &diverged {
            let name = |l: &Option<String>| l.clone().unwrap_or_else(|| "idle".into());
            write!(
                f,
                "agent {agent}: from tick {}: {} / {}: ",
                d.tick,
                name(&d.leaf.0),
                name(&d.leaf.1)
            )?;
            match &d.what {
                Difference::DecideValue {
                    decider,
                    accepted,
                    values,
                } => {
                    let how = if *accepted {
                        "accepted"
                    } else {
                        "turned down by its decide"
                    };
                    writeln!(f, "{decider} {how} with {} / {}", values.0, values.1)
                }
                Difference::Rejection { decider, outcomes } => {
                    writeln!(f, "{decider} {} / {}", outcomes.0, outcomes.1)
                }
                Difference::Step { steps } => writeln!(f, "{} / {}", steps.0, steps.1),
                Difference::Path => writeln!(f, "another path"),
            }?;
        }
        if !self.unmatched.is_empty() {
            writeln!(f, "recorded in one run only: {:?}", self.unmatched)?;
        }
        for t in &self.tuning {
            let value =
                |v: &Option<serde_json::Value>| v.as_ref().map_or("-".into(), |v| v.to_string());
            let changes = |c: &[(u64, serde_json::Value)]| -> String {
                c.iter()
                    .map(|(t, v)| alloc_crate::format!(", {v} from tick {t}"))
                    .collect()
            };
            writeln!(
                f,
                "tunable {}: {}{} / {}{}: first differs at tick {}",
                t.name,
                value(&t.start.0),
                changes(&t.changes.0),
                value(&t.start.1),
                changes(&t.changes.1),
                t.first_tick
            )?;
        }
        Ok(())
    }
}

/// Why two recordings cannot be compared.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CompareError {
    /// A document that is not a recording this crate reads.
    NotARecording {
        /// Which one: 1 or 2.
        which: u8,
        /// What is wrong.
        problem: String,
    },
    /// Recordings of two trees.
    OtherTree {
        /// The first recording's tree.
        first: String,
        /// The second's.
        second: String,
    },
    /// Recordings that share no tick of an agent: nothing could be
    /// compared (no agent recorded in both, or none at a tick both kept).
    NothingInCommon {
        /// Agents recorded in both.
        agents: usize,
    },
    /// Recordings of one tree whose structure changed between them.
    StructureChanged {
        /// The tree.
        tree: String,
        /// The first item that differs, and how (`"item 4: FLEE is EAT"`).
        at: String,
    },
}

impl fmt::Display for CompareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompareError::NotARecording { which, problem } => {
                write!(
                    f,
                    "recording {which} is not a bt-viewer recording: {problem}"
                )
            }
            CompareError::OtherTree { first, second } => write!(
                f,
                "the recordings are of two trees, `{first}` and `{second}`"
            ),
            CompareError::NothingInCommon { agents } => write!(
                f,
                "the recordings have no tick of an agent in common ({agents} agents \
                 recorded in both): nothing to compare"
            ),
            CompareError::StructureChanged { tree, at } => write!(
                f,
                "tree `{tree}` has another structure in the second recording: {at}"
            ),
        }
    }
}

impl std::error::Error for CompareError {}

/// Compares two recordings (each the JSON text [`Recording::to_json`]
/// writes, or a page's `recording.json`) of one tree.
///
/// # Errors
/// [`CompareError`] when either is not a recording (a malformed tick, an
/// agent listed twice or a run past the last frame included: the error
/// names the agent and the tick entry; a key given twice is one), or
/// they are of two trees, or of one tree whose structure changed, or they
/// share no tick of an agent (nothing could be compared).
///
/// Numbers are read by value: `1` and `1.0` (as another tool may write a
/// recording again) are the same number.
///
/// [`Recording::to_json`]: crate::Recording::to_json
pub fn compare(first: &str, second: &str) -> Result<Comparison, CompareError> {
    let mut quads = Quads::default();
    let a = read(first, 1, &mut quads)?;
    let b = read(second, 2, &mut quads)?;
    let tree = check_trees(&a, &b)?;
    let names: Vec<String> = a
        .items
        .iter()
        .map(|it| it["name"].as_str().unwrap_or("?").to_string())
        .collect();
    let mut agents = Vec::new();
    let mut unmatched = Vec::new();
    for (agent, ticks_a) in &a.agents {
        let Some(ticks_b) = b.agents.get(agent) else {
            unmatched.push(*agent);
            continue;
        };
        let runs = Runs {
            a: &a,
            b: &b,
            quads: &quads,
            names: &names,
        };
        agents.push(runs.agent(*agent, ticks_a, ticks_b));
    }
    unmatched.extend(b.agents.keys().filter(|x| !a.agents.contains_key(x)));
    if agents.iter().all(|a| a.ticks == 0) {
        return Err(CompareError::NothingInCommon {
            agents: agents.len(),
        });
    }
    unmatched.sort_unstable();
    let mut firsts: Vec<u64> = agents
        .iter()
        .filter_map(|a: &AgentComparison| a.first.as_ref().map(|d| d.tick))
        .collect();
    firsts.sort_unstable();
    let mut diverged_by_tick: Vec<(u64, usize)> = Vec::new();
    for (i, tick) in firsts.iter().enumerate() {
        match diverged_by_tick.last_mut() {
            Some((t, n)) if t == tick => *n = i + 1,
            _ => diverged_by_tick.push((*tick, i + 1)),
        }
    }
    Ok(Comparison {
        tree,
        agents,
        diverged_by_tick,
        unmatched,
        tuning: tuning::differences(&a.tuning, &b.tuning),
    })
}

/// The tree's name, when both recordings have the same tree.
fn check_trees(a: &Doc, b: &Doc) -> Result<String, CompareError> {
    let (first, second) = (a.name.clone(), b.name.clone());
    if first != second {
        return Err(CompareError::OtherTree { first, second });
    }
    let (ia, ib) = (&a.items, &b.items);
    if ia.len() != ib.len() {
        return Err(CompareError::StructureChanged {
            tree: first,
            at: alloc_crate::format!("{} items, then {}", ia.len(), ib.len()),
        });
    }
    for (i, (x, y)) in ia.iter().zip(ib).enumerate() {
        if x != y {
            return Err(CompareError::StructureChanged {
                tree: first,
                at: alloc_crate::format!(
                    "item {i}: {} is {}",
                    x["name"].as_str().unwrap_or("?"),
                    y["name"].as_str().unwrap_or("?")
                ),
            });
        }
    }
    Ok(first)
}

/// The two recordings, as one agent's ticks are compared.
struct Runs<'a> {
    a: &'a Doc,
    b: &'a Doc,
    quads: &'a Quads,
    names: &'a [String],
}

impl Runs<'_> {
    /// The 1-based event kind `kind`'s name (in the first recording's
    /// legend).
    fn event(&self, kind: &Scalar) -> &str {
        let k = kind.as_u64().unwrap_or(0) as usize;
        self.a
            .events_legend
            .get(k.wrapping_sub(1))
            .map_or("?", String::as_str)
    }

    fn rejection(&self, code: &Scalar) -> &str {
        let c = code.as_u64().unwrap_or(u64::MAX) as usize;
        self.a.rejections.get(c).map_or("?", String::as_str)
    }

    fn name(&self, item: &Scalar) -> Option<String> {
        item.as_u64().map(|i| self.item(i))
    }

    fn item(&self, i: u64) -> String {
        self.names
            .get(i as usize)
            .cloned()
            .unwrap_or_else(|| "?".into())
    }

    fn agent(&self, agent: u32, a: &[Segment], b: &[Segment]) -> AgentComparison {
        let (mut i, mut j, mut both) = (0, 0, 0u64);
        let mut first = None;
        // The last pair of full ticks compared: a pair is compared once,
        // at the first serial both runs have it.
        let mut compared: Option<(u32, u32)> = None;
        while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
            let (end_a, end_b) = (x.from.saturating_add(x.len), y.from.saturating_add(y.len));
            let (from, to) = (x.from.max(y.from), end_a.min(end_b));
            if from < to {
                both += to - from;
                if first.is_none() && compared != Some((x.tick, y.tick)) {
                    first = self.diverge(from, x.tick, y.tick);
                    compared = Some((x.tick, y.tick));
                }
            }
            if end_a <= end_b {
                i += 1;
            } else {
                j += 1;
            }
        }
        AgentComparison {
            agent,
            ticks: usize::try_from(both).unwrap_or(usize::MAX),
            first,
        }
    }

    /// How tick `ta` of the first run and tick `tb` of the second (of
    /// serial `tick`) decided otherwise, if they did.
    fn diverge(&self, tick: u64, ta: u32, tb: u32) -> Option<Divergence> {
        let (la, lb) = (
            self.a.ticks[ta as usize].leaf,
            self.b.ticks[tb as usize].leaf,
        );
        let (ea, eb) = (self.a.events(ta), self.b.events(tb));
        if la == lb && ea == eb && self.a.levels(ta) == self.b.levels(tb) {
            return None;
        }
        let leaf = (la.map(|i| self.item(i)), lb.map(|i| self.item(i)));
        let word = |q: Option<&Event>| -> String {
            match q {
                None => "none".into(),
                Some([kind, code, item, arg]) => {
                    let kind = self.event(kind);
                    let item = self.name(item).unwrap_or_default();
                    match kind {
                        "reject" => {
                            alloc_crate::format!("reject {item} ({})", self.rejection(code))
                        }
                        "accept" => alloc_crate::format!("accept {item} = {arg}"),
                        _ => alloc_crate::format!("{kind} {item}"),
                    }
                }
            }
        };
        let outcome = |q: &Event| -> Option<String> {
            match self.event(&q[0]) {
                "reject" => Some(self.rejection(&q[1]).to_string()),
                "accept" => Some("accepted".into()),
                _ => None,
            }
        };
        for k in 0..ea.len().max(eb.len()) {
            if ea.get(k) == eb.get(k) {
                continue;
            }
            let (qa, qb) = (
                ea.get(k).map(|&e| self.quads.get(e)),
                eb.get(k).map(|&e| self.quads.get(e)),
            );
            let what = match (qa, qb) {
                (Some(x), Some(y)) if x[2] == y[2] => {
                    let decider = self.name(&x[2]).unwrap_or_default();
                    match (self.event(&x[0]), self.event(&y[0])) {
                        // The same outcome with other values: accepted, or
                        // turned down by the `decide`.
                        (kind @ ("accept" | "reject"), same)
                            if kind == same
                                && (kind == "accept"
                                    || (x[1] == y[1] && self.rejection(&x[1]) == "decide")) =>
                        {
                            Difference::DecideValue {
                                decider,
                                accepted: kind == "accept",
                                values: (
                                    x[3].as_f64().unwrap_or(f64::NAN),
                                    y[3].as_f64().unwrap_or(f64::NAN),
                                ),
                            }
                        }
                        _ => match (outcome(x), outcome(y)) {
                            (Some(oa), Some(ob)) => Difference::Rejection {
                                decider,
                                outcomes: (oa, ob),
                            },
                            _ => Difference::Step {
                                steps: (word(qa), word(qb)),
                            },
                        },
                    }
                }
                _ => Difference::Step {
                    steps: (word(qa), word(qb)),
                },
            };
            return Some(Divergence { tick, leaf, what });
        }
        Some(Divergence {
            tick,
            leaf,
            what: Difference::Path,
        })
    }
}
