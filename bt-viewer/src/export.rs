//! The recording: what the viewer opens, as a versioned JSON document.
//!
//! ```text
//! {
//!   "format": "bt-viewer-recording", "version": 2,
//!   "tree":   { "name", "levels", "items": [ item, … ], "flag_names", "tunables" },
//!   "legend": { "events", "rejections", "whys", "actions", "errors" },
//!   "tuning": { "first", "start": [ … ], "changes": [ … ] },                  (with tunables)
//!   "agents": [ { "agent", "first_tick", "ticks": [ tick or run, … ], "inputs" }, … ],
//!   "values": [ { "agent", "fields": { name: [ value, … ] }, "overflow" }, … ],   (optional)
//!   "clock":  { "first", "now": [ time or null, … ] }                             (compact only)
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
//! seconds or null), `shared` (`gate`, `cooldown`, `together`, each
//! null when absent) and, for an item whose fields name tunables, `tuned`
//! (`every`, `gate`, `cooldown`: the tunable's name, for those that name
//! one; the number beside it is then the tunable's default).
//! `flag_names` has `decision` and `stimuli`, each a list of
//! `[bit, name]` (empty unless the recorder was told them).
//! `tunables` (absent for a tree without them) lists the tree's tunables
//! in the order declared, each `{"name", "doc", "kind", "min", "max",
//! "default"}`: `kind` is `"float"`, `"int"`, `"bool"` or `"choice"`,
//! `min` and `max` are null for a bool or a choice, and a choice has
//! `choices`, its names in the order declared.
//!
//! `tuning` (absent for a tree without tunables) is their values over the
//! recording: `first` is its first frame (the oldest the recorder kept),
//! `start` each tunable's value in effect there (`{"name", "value"}`, in
//! the table's order), and `changes` every change put in effect after it,
//! oldest first, each `{"tick", "name", "from", "to"}`: `tick` is the
//! first tick whose decisions read the value `to`. A value is a number, or
//! true or false. The value in effect at a tick is that of the last change
//! at or before it, or the start's.
//!
//! A tick is an array, to keep large recordings small:
//! `[serial, now, leaf, visited, flags, path, events]` where `leaf` is an
//! item index or null, `flags` has bit 0 set when events were dropped and
//! bits 1–3 the error code (1-based index into `legend.errors`), `path` is
//! flat quadruples `item, redecides, time_active, mask` (root first; `mask`
//! 0 or a hex string) and `events` flat quadruples `kind, code, item, arg`:
//! `kind` is a 1-based index into `legend.events`; `code` indexes
//! `legend.rejections` for `reject`, `legend.whys` for `deactivate` and
//! `legend.actions` for `action-reported`; `arg` is the value of `accept`
//! and of a `reject` by `decide` (what the `decide` returned),
//! the child that takes over in `preempt`, the failed child in `redecide`,
//! the action code in `launch` and the ticket serial in `cancel` (whose `code` is the ticket's slot).
//!
//! An agent's `inputs` are the flags its ticks were given, as flat triples
//! `serial, decision, stimuli` (masks 0 or hex strings) at its first kept
//! tick and wherever they change from one kept tick to the next: the flags
//! of a kept tick are those of the last triple at or before its serial.
//!
//! A run, in a compact recording only ([`Recording::compact`]), is
//! `[n, [since, …]]`: the `n` ticks after the last full tick repeat it
//! but for time; the `k`-th is `k` serials later, at `clock.now` of its
//! serial, and each path level's time active is that time minus its
//! `since`, as `f32`.
//!
//! `values[i].fields[name][j]` is the value the agent recorded under
//! `name` ([`AgentData`](crate::AgentData)) at its `j`-th kept tick
//! (counting each tick of a run), or null; a number that an `f32` holds
//! exactly (as one the agent widened from an `f32` does) is written as the
//! shortest decimal that reads back as that `f32` (`0.1`, not
//! `0.10000000149011612`: read it as an `f32` to have it exactly); `overflow` lists the serials
//! of the ticks some of whose values did not fit.

use alloc_crate::string::String;
use alloc_crate::vec::Vec;

use serde::Serialize;
use serde_json::Value;

mod json;
mod runs;
mod tree;
mod tuning;

#[cfg(feature = "live")]
pub(crate) use json::{Lanes, Recorded, Source, write as write_json};
pub(crate) use runs::compact;
#[cfg(feature = "live")]
pub(crate) use runs::implied_since;
use tree::hex;
pub use tree::{FlagNamesInfo, ItemInfo, PreInfo, SharedInfo, TestInfo, TreeInfo, TunedInfo};
pub use tuning::{TunableInfo, TunedValue, Tuning, TuningChange};

use crate::recorder::{
    ACTION_STATES, DataValue, ERRORS, FlightRecorder, KIND_NAMES, REJECTIONS, TickView, TickWords,
    WHYS, value_payload,
};

/// The `format` field of a recording.
pub const FORMAT: &str = "bt-viewer-recording";
/// The version of the recording format this crate writes.
pub const VERSION: u32 = 2;

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
    /// The values of the tree's tunables over the recording: those in
    /// effect at its first frame and every change after it, with its tick;
    /// not written for a tree without tunables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tuning: Option<Tuning>,
    /// The watched agents.
    pub agents: Vec<AgentTicks>,
    /// The watched agents' own values ([`AgentData`](crate::AgentData)),
    /// when they were recorded; not written when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<AgentValues>,
    /// The time of each frame, when the recording is compact
    /// ([`compact`](Self::compact)); not written otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<Clock>,
}

/// One watched agent's own values over its kept ticks.
#[derive(Clone, Debug, Serialize)]
pub struct AgentValues {
    /// The agent's index in the crowd (as in [`AgentTicks::agent`]).
    pub agent: u32,
    /// Per field name, one value per kept tick of the agent, in the order
    /// of its ticks: a number, a text, or null when the tick did not
    /// record it.
    pub fields: serde_json::Map<String, Value>,
    /// Serials of the ticks some of whose values did not fit their room.
    pub overflow: Vec<u64>,
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
    /// The decision and stimuli flags its ticks were given, as flat
    /// triples `serial, decision, stimuli` (each mask 0 or a hex string):
    /// at its first kept tick and at each kept tick given other flags than
    /// the kept tick before it. Not written when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<Value>,
}

/// Whether a kept tick's decision and stimuli `flags` go into
/// [`AgentTicks::inputs`]: they differ from `last`, those of the kept
/// tick before it (`None` for the first), which they then replace.
fn input_changed(last: &mut Option<(u64, u64)>, flags: (u64, u64)) -> bool {
    let changed = *last != Some(flags);
    *last = Some(flags);
    changed
}

/// A flag mask as the recording writes it: 0, or a hex string.
fn mask_value(mask: u64) -> Value {
    if mask == 0 {
        Value::from(0)
    } else {
        Value::from(hex(mask))
    }
}

/// An `f32` as the shortest decimal that reads back as the same `f32`
/// (`0.033333335`, not the `f64` widening `0.03333333507180214`).
fn short_value(x: f32) -> Value {
    serde_json::Number::from_f64(short_f64(x)).map_or(Value::Null, Value::Number)
}

/// The `f64` nearest the shortest decimal of `x` (of the two that are as
/// near to `x`, the one whose last digit is even), or `x` when it is not
/// finite.
fn short_f64(x: f32) -> f64 {
    if !x.is_finite() {
        return f64::from(x);
    }
    let mut text = Vec::with_capacity(24);
    // serde_json writes an f32 as its shortest decimal; to a Vec, without
    // fail.
    let _ =
        serde_json::ser::Formatter::write_f32(&mut serde_json::ser::CompactFormatter, &mut text, x);
    core::str::from_utf8(&text)
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(f64::from(x))
}

/// `x` as the `f32` that holds it exactly, when one does (a value an
/// agent widened from an `f32`): the recording writes it as that `f32`'s
/// shortest decimal, less than half as long.
pub(crate) fn as_f32(x: f64) -> Option<f32> {
    let y = x as f32;
    (f64::from(y) == x).then_some(y)
}

/// The time of each frame that every kept tick of it shares.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Clock {
    /// The serial of the first frame.
    pub first: u64,
    /// Per frame from `first`, the time its ticks share, or null when
    /// they differ (or it has none).
    pub now: Vec<Option<f64>>,
}

impl Clock {
    fn at(&self, serial: u64) -> Option<f64> {
        let i = usize::try_from(serial.checked_sub(self.first)?).ok()?;
        self.now.get(i).copied().flatten()
    }

    /// The clock of the `(serial, now)` of every tick.
    fn of<I: Iterator<Item = (u64, f64)>>(ticks: impl Fn() -> I) -> Self {
        Self::of_each(|each| ticks().for_each(|(s, t)| each(s, t)))
    }

    /// The clock of the `(serial, now)` of every tick that `ticks` hands
    /// its argument (it is called twice).
    fn of_each(mut ticks: impl FnMut(&mut dyn FnMut(u64, f64))) -> Self {
        let (mut first, mut last) = (u64::MAX, None);
        ticks(&mut |s, _| {
            first = first.min(s);
            last = last.max(Some(s));
        });
        let Some(last) = last else {
            return Clock::default();
        };
        let n = usize::try_from(last - first + 1).unwrap_or(0);
        let mut now: Vec<Option<f64>> = alloc_crate::vec![None; n];
        let mut mixed = alloc_crate::vec![false; n];
        ticks(&mut |s, t| {
            let i = (s - first) as usize;
            match now[i] {
                None if !mixed[i] => now[i] = Some(t),
                Some(x) if x.to_bits() != t.to_bits() => {
                    now[i] = None;
                    mixed[i] = true;
                }
                _ => {}
            }
        });
        Clock { first, now }
    }
}

/// One tick in the recording's array form.
pub(crate) fn tick_json(t: &TickView) -> Value {
    let mut path = Vec::with_capacity(t.path.len() * 4);
    for &(item, redecides, active, mask) in &t.path {
        path.push(Value::from(item));
        path.push(Value::from(redecides));
        path.push(short_value(active));
        path.push(mask_value(mask));
    }
    let mut events = Vec::with_capacity(t.events.len() * 4);
    for &(kind, code, item, arg) in &t.events {
        events.push(Value::from(kind));
        events.push(Value::from(code));
        events.push(Value::from(item));
        events.push(if value_payload(kind, code) {
            short_value(f32::from_bits(arg))
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
    ///
    /// Every tick is written whole; [`export_compact`](Self::export_compact)
    /// writes the same, smaller.
    pub fn export(&self) -> Recording {
        self.export_with(|ticks| ticks)
    }

    /// [`export`](Self::export), each agent's ticks compacted as
    /// [`Recording::compact`] does, one agent at a time: for long
    /// recordings of large crowds.
    pub fn export_compact(&self) -> Recording {
        let clock = Clock::of(|| {
            (0..self.watched()).flat_map(|slot| {
                let (_, _, ticks) = self.ticks_of(slot);
                ticks.map(|t| (t.serial, t.now()))
            })
        });
        let mut recording = self.export_with(|t| compact(t, &clock));
        recording.clock = Some(clock);
        recording
    }

    /// Writes the recording [`export`](Self::export) makes into `out` as
    /// JSON: the text of `export().to_json()`, byte for byte, made from
    /// the kept ticks as it goes. It builds no [`Recording`] (which takes
    /// tens of times its text): it holds a block of agents' ticks (some
    /// 2 MiB of words, or one agent's when that is more) with their values
    /// and 64 KiB of text at a time, however large the recording. It hands
    /// `out` pieces of about 64 KiB, so a file needs no `BufWriter`.
    /// W1's 10 000 agents over 600 ticks (675 MB of compact text) take
    /// 1.25 s and 4.4 MB (`cargo bench -p bt-bench --bench export`, on the
    /// 2-core machine, 2026-11-28).
    ///
    /// ```
    /// # use bt_core::{TickInput, behavior, decider, tree};
    /// # use bt_viewer::{Capacity, FlightRecorder, Watch};
    /// # behavior! { IDLE: u8 }
    /// # decider! { JUST_IDLE: u8 => IDLE }
    /// # tree! { T: u8 = JUST_IDLE }
    /// let mut agents = [0u8; 3];
    /// let mut memories: Vec<_> = (0..3).map(|i| T.new_memory(i)).collect();
    /// let mut recorder = FlightRecorder::new(&T, 3, Watch::All, Capacity::new(50, 8));
    /// recorder.tick_all(&T, &mut agents, &mut memories, |_, _| TickInput::new(0.0, 0.1));
    /// let mut json = Vec::new();
    /// recorder.write_json(&mut json)?;
    /// assert_eq!(json, recorder.export().to_json().into_bytes());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    /// Whatever writing to `out` returns.
    pub fn write_json(&self, out: impl std::io::Write) -> std::io::Result<()> {
        json::write(&mut Kept::new(self), false, out)
    }

    /// Writes the recording [`export_compact`](Self::export_compact) makes
    /// into `out` as JSON: the text of `export_compact().to_json()`, byte
    /// for byte, made as [`write_json`](Self::write_json) makes its own,
    /// in as little memory.
    ///
    /// # Errors
    /// Whatever writing to `out` returns.
    pub fn write_json_compact(&self, out: impl std::io::Write) -> std::io::Result<()> {
        json::write(&mut Kept::new(self), true, out)
    }

    fn export_with(&self, shape: impl Fn(Vec<Value>) -> Vec<Value>) -> Recording {
        let mut values = Vec::new();
        let agents = (0..self.watched())
            .map(|slot| {
                let (agent, first_tick, ticks) = self.ticks_of(slot);
                let mut own = Vec::new();
                let (mut inputs, mut last) = (Vec::new(), None);
                let ticks: Vec<Value> = ticks
                    .map(|t| {
                        own.clear();
                        t.own_into(&self.tree, &mut own);
                        if input_changed(&mut last, (own[2], own[3])) {
                            inputs.extend([
                                Value::from(t.serial),
                                mask_value(own[2]),
                                mask_value(own[3]),
                            ]);
                        }
                        tick_json(&TickWords::new(t.serial, &own).decode())
                    })
                    .collect();
                if let Some(v) = self.values_of(slot, agent, &ticks) {
                    values.push(v);
                }
                AgentTicks {
                    agent,
                    first_tick,
                    ticks: shape(ticks),
                    inputs,
                }
            })
            .collect();
        let mut recording = Recording::of(self.tree.clone(), agents);
        recording.values = values;
        recording.tuning = self.tune.tuning(self.first_kept());
        recording
    }

    /// The values agent `slot` recorded at its kept `ticks`, if any.
    fn values_of(&self, slot: usize, agent: u32, ticks: &[Value]) -> Option<AgentValues> {
        let data = self.data.as_ref()?;
        let recorded = ticks.iter().enumerate().filter_map(|(j, tick)| {
            let serial = tick[0].as_u64().unwrap_or(0);
            let (vals, over) = self.data_at(slot, serial)?;
            Some((j, serial, vals, over))
        });
        agent_values(agent, ticks.len(), &data.names, recorded)
    }
}

/// The recorder's kept ticks, for [`json::write`].
struct Kept<'r> {
    recorder: &'r FlightRecorder,
}

impl<'r> Kept<'r> {
    fn new(recorder: &'r FlightRecorder) -> Self {
        Kept { recorder }
    }
}

impl json::Source for Kept<'_> {
    fn tree(&self) -> &TreeInfo {
        &self.recorder.tree
    }

    fn names(&self) -> &[&'static str] {
        self.recorder.data.as_ref().map_or(&[], |d| &d.names)
    }

    fn agents(&self) -> &[u32] {
        self.recorder.agents()
    }

    fn frames(&self) -> (u64, usize) {
        (self.recorder.first_kept(), self.recorder.capacity().ticks)
    }

    fn tuning(&self) -> Option<Tuning> {
        self.recorder.tune.tuning(self.recorder.first_kept())
    }

    fn ticks(&mut self, slots: core::ops::Range<usize>, lanes: &mut json::Lanes) {
        let tree = &self.recorder.tree;
        self.recorder.frame_ticks(slots, |slot, t| {
            t.own_into(tree, lanes.tick(slot, t.serial))
        });
    }

    fn values(
        &mut self,
        slots: core::ops::Range<usize>,
        each: &mut dyn FnMut(usize, u64, json::Recorded),
    ) {
        let recorder = self.recorder;
        if recorder.data.is_some() {
            recorder.frame_ticks(slots, |slot, t| {
                each(slot, t.serial, recorder.data_at(slot, t.serial));
            });
        }
    }

    fn times(&mut self, each: &mut dyn FnMut(u64, f64)) {
        let slots = 0..self.recorder.watched();
        self.recorder
            .frame_ticks(slots, |_, t| each(t.serial, t.now()));
    }
}

/// One agent's values as a recording writes them: `n` kept ticks, the
/// values recorded at some of them (`(place among the n, serial, values by
/// name id, some dropped)`), the names by id. `None` when no tick
/// recorded any.
pub(crate) fn agent_values(
    agent: u32,
    n: usize,
    names: &[&'static str],
    recorded: impl Iterator<Item = (usize, u64, Vec<(usize, DataValue)>, bool)>,
) -> Option<AgentValues> {
    let mut fields: Vec<Vec<Value>> = Vec::new();
    let mut overflow = Vec::new();
    let mut any = false;
    for (j, serial, vals, over) in recorded {
        any = true;
        if over {
            overflow.push(serial);
        }
        for (id, v) in vals {
            if fields.len() <= id {
                fields.resize_with(id + 1, || alloc_crate::vec![Value::Null; n]);
            }
            fields[id][j] = match v {
                DataValue::Num(x) => match as_f32(x) {
                    Some(x) => short_value(x),
                    None => serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number),
                },
                DataValue::Text(s) => Value::String(s),
            };
        }
    }
    any.then(|| AgentValues {
        agent,
        fields: fields
            .into_iter()
            .enumerate()
            .filter(|(id, col)| *id < names.len() && col.iter().any(|v| !v.is_null()))
            .map(|(id, col)| (names[id].into(), Value::Array(col)))
            .collect(),
        overflow,
    })
}

impl Recording {
    /// The recording of `tree` with these agents' ticks.
    pub(crate) fn of(tree: TreeInfo, agents: Vec<AgentTicks>) -> Self {
        Recording {
            format: FORMAT,
            version: VERSION,
            tree,
            legend: Legend::new(),
            tuning: None,
            agents,
            values: Vec::new(),
            clock: None,
        }
    }

    /// Writes each run of ticks that repeat the tick before them but for
    /// time as one `[n, [since…]]` entry, and the time of each frame as
    /// [`clock`](Self::clock): `n` ticks follow the last full tick, the
    /// `k`-th of them `k` serials later at the clock's time of its frame,
    /// with the same events and path, each path level active since the
    /// time given for it (its time active is the clock's time minus that,
    /// as `f32`). Only ticks that read back exactly so are merged: nothing
    /// is lost, and long recordings of agents that keep doing the same
    /// shrink many times over.
    pub fn compact(&mut self) {
        let agents = &self.agents;
        let clock = Clock::of(|| {
            agents.iter().flat_map(|a| {
                a.ticks
                    .iter()
                    .filter_map(|t| Some((t.get(0)?.as_u64()?, t.get(1)?.as_f64()?)))
            })
        });
        for agent in &mut self.agents {
            agent.ticks = compact(core::mem::take(&mut agent.ticks), &clock);
        }
        self.clock = Some(clock);
    }

    /// The recording as JSON text.
    pub fn to_json(&self) -> String {
        // Serializing plain data to a String cannot fail.
        serde_json::to_string(self).expect("a recording serializes")
    }
}
