//! Reading a recording for [`compare`](super::compare): the document
//! checked as a recording, and each agent's ticks by serial, every tick
//! checked against the tree and the legend so that a malformed recording
//! is an error naming the agent and tick at fault, never a comparison of
//! what it does not say.
//!
//! The ticks are read into a compact form as the text is parsed, one
//! agent's entry at a time: what is compared (leaf, path items, events),
//! in arrays shared by every tick, never a JSON value per tick. The
//! agents' own values and the ticks' times are skipped.

use alloc_crate::collections::BTreeMap;
use alloc_crate::format;
use alloc_crate::string::String;
use alloc_crate::vec::Vec;
use core::fmt;
use std::collections::HashMap;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::CompareError;

/// One of an event's numbers, by value: `1`, `1.0` and `-0.0` written by
/// one tool or another are the same number; anything else that is not a
/// number is kept as it is.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Scalar {
    Null,
    /// A whole number within `i64`.
    Int(i64),
    /// A whole number above `i64::MAX`.
    Big(u64),
    /// Any other number (never NaN: JSON has none).
    Float(f64),
    Other(alloc_crate::boxed::Box<Value>),
}

impl Eq for Scalar {}

impl core::hash::Hash for Scalar {
    fn hash<H: core::hash::Hasher>(&self, h: &mut H) {
        core::mem::discriminant(self).hash(h);
        match self {
            Scalar::Int(i) => i.hash(h),
            Scalar::Big(u) => u.hash(h),
            Scalar::Float(f) => f.to_bits().hash(h),
            // Rare: equal ones hash alike, by kind only.
            Scalar::Null | Scalar::Other(_) => {}
        }
    }
}

impl Scalar {
    fn of(v: &Value) -> Self {
        match v {
            Value::Null => Scalar::Null,
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Scalar::Int(i)
                } else if let Some(u) = n.as_u64() {
                    Scalar::Big(u)
                } else {
                    let f = n.as_f64().unwrap_or(0.0);
                    // Whole and within i64: the same number as the integer.
                    if f.fract() == 0.0 && f.abs() < 9.2e18 {
                        Scalar::Int(f as i64)
                    } else {
                        Scalar::Float(f)
                    }
                }
            }
            other => Scalar::Other(alloc_crate::boxed::Box::new(other.clone())),
        }
    }

    pub(super) fn as_u64(&self) -> Option<u64> {
        match self {
            Scalar::Int(i) => u64::try_from(*i).ok(),
            Scalar::Big(u) => Some(*u),
            _ => None,
        }
    }

    pub(super) fn as_f64(&self) -> Option<f64> {
        match self {
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Big(u) => Some(*u as f64),
            Scalar::Float(f) => Some(*f),
            _ => None,
        }
    }

    fn value(&self) -> Value {
        match self {
            Scalar::Null => Value::Null,
            Scalar::Int(i) => (*i).into(),
            Scalar::Big(u) => (*u).into(),
            Scalar::Float(f) => (*f).into(),
            Scalar::Other(v) => (**v).clone(),
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.value())
    }
}

/// An event: kind, code, item, value.
pub(super) type Event = [Scalar; 4];

/// The events of both recordings, each kept once and known by its
/// number: ticks list numbers, and two events are alike when their
/// numbers are.
#[derive(Default)]
pub(super) struct Quads {
    ids: HashMap<Event, u32>,
    list: Vec<Event>,
}

impl Quads {
    /// Event `id`.
    pub(super) fn get(&self, id: u32) -> &Event {
        &self.list[id as usize]
    }

    fn id(&mut self, e: Event) -> Result<u32, &'static str> {
        if let Some(&id) = self.ids.get(&e) {
            return Ok(id);
        }
        let id = u32::try_from(self.list.len()).map_err(|_| TOO_LARGE)?;
        self.list.push(e.clone());
        self.ids.insert(e, id);
        Ok(id)
    }
}

const TOO_LARGE: &str = "more ticks, levels or events than a comparison holds";

/// A full tick, its path items and events in the recording's shared
/// arrays.
pub(super) struct Tick {
    /// The leaf's item (`None`: idle).
    pub(super) leaf: Option<u64>,
    levels: (u32, u32),
    events: (u32, u32),
}

/// Ticks `from..from + len` of an agent, each the full tick `tick`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Segment {
    pub(super) from: u64,
    pub(super) len: u64,
    pub(super) tick: u32,
}

/// A recording as compared.
pub(super) struct Doc {
    pub(super) name: String,
    pub(super) items: Vec<Value>,
    pub(super) events_legend: Vec<String>,
    pub(super) rejections: Vec<String>,
    /// Each agent's ticks by serial, in segments of ticks a serial apart
    /// that repeat one full tick (a full tick and the run after it): the
    /// first serial, the number of ticks and the full tick's index. Runs
    /// are never expanded.
    pub(super) agents: BTreeMap<u32, Vec<Segment>>,
    pub(super) ticks: Vec<Tick>,
    levels: Vec<u64>,
    events: Vec<u32>,
    /// Its tunables' values.
    pub(super) tuning: super::tuning::Tuned,
}

impl Doc {
    /// Tick `t`'s path items.
    pub(super) fn levels(&self, t: u32) -> &[u64] {
        let (a, b) = self.ticks[t as usize].levels;
        &self.levels[a as usize..b as usize]
    }

    /// Tick `t`'s events, by number (see [`Quads`]).
    pub(super) fn events(&self, t: u32) -> &[u32] {
        let (a, b) = self.ticks[t as usize].events;
        &self.events[a as usize..b as usize]
    }
}

/// `text` as a recording this build reads (`which`: 1 or 2), each agent's
/// ticks checked.
///
/// # Errors
/// [`CompareError::NotARecording`] naming the agent (and the tick) when
/// an agent is listed twice or has no index, its ticks are not a list, a
/// tick is neither a tick nor a run, serials do not rise, a leaf, a path
/// item or an event kind is not one of the tree's or the legend's, or a
/// run reaches past the recording's last frame (or the recording, not
/// compact, has no frames to reach).
pub(super) fn read(text: &str, which: u8, quads: &mut Quads) -> Result<Doc, CompareError> {
    let bad = |problem: String| CompareError::NotARecording { which, problem };
    let mut de = serde_json::Deserializer::from_str(text);
    let raw = de
        .deserialize_any(TopVisitor { quads: &mut *quads })
        .and_then(|raw| de.end().map(|()| raw))
        .map_err(|e| bad(e.to_string()))?;
    if raw.format.as_ref() != Some(&Value::from(crate::FORMAT)) {
        return Err(bad("no `format` of a bt-viewer recording".into()));
    }
    let version = raw.version.unwrap_or(Value::Null);
    if version != crate::VERSION {
        return Err(bad(format!(
            "format version {version}, this build reads {}",
            crate::VERSION
        )));
    }
    let tree = raw.tree.unwrap_or(Value::Null);
    let (Some(items), Some(agents)) = (tree["items"].as_array(), raw.agents) else {
        return Err(bad("no tree or no agents".into()));
    };
    let legend = raw.legend.unwrap_or(Value::Null);
    let names = |key: &str| -> Vec<String> {
        legend[key]
            .as_array()
            .map(|a| a.iter().map(|s| s.as_str().unwrap_or("?").into()).collect())
            .unwrap_or_default()
    };
    let clock = raw.clock.unwrap_or(Value::Null);
    // The frames a run may reach: the clock's, first and last.
    let clock = match (clock["first"].as_u64(), clock["now"].as_array()) {
        (Some(first), Some(now)) if !now.is_empty() => first
            .checked_add(now.len() as u64 - 1)
            .map(|last| (first, last)),
        _ => None,
    };
    let mut doc = Doc {
        name: tree["name"].as_str().unwrap_or("?").into(),
        items: items.clone(),
        events_legend: names("events"),
        rejections: names("rejections"),
        agents: BTreeMap::new(),
        ticks: agents.ticks,
        levels: agents.levels,
        events: agents.events,
        tuning: super::tuning::read(raw.tuning.as_ref()).map_err(bad)?,
    };
    let n_items = doc.items.len() as u64;
    let n_events = doc.events_legend.len() as u64;
    for (k, agent) in agents.list.into_iter().enumerate() {
        let id = agent.id.ok_or_else(|| {
            bad(format!(
                "agent entry {k} is malformed: no agent index (0 to 2^32 - 1)"
            ))
        })?;
        let list = agent
            .ticks
            .ok_or_else(|| bad(format!("agent #{id} is malformed: `ticks` is not a list")))?;
        let mut ticks: Vec<Segment> = Vec::new();
        for (j, entry) in list.into_iter().enumerate() {
            let at = |problem: &str| {
                bad(format!(
                    "agent #{id} is malformed: tick entry {j}: {problem}"
                ))
            };
            // The serial after the agent's last tick so far.
            let next = ticks.last().map(|s| s.from.saturating_add(s.len));
            match entry {
                Entry::Full { serial, tick } => {
                    let serial = serial.ok_or_else(|| at("the serial is not a tick number"))?;
                    if next.is_some_and(|next| serial < next) {
                        return Err(at("serials do not rise"));
                    }
                    let t = tick.map_err(&at)?;
                    doc.check(t, n_items, n_events, quads).map_err(&at)?;
                    ticks.push(Segment {
                        from: serial,
                        len: 1,
                        tick: t,
                    });
                }
                // A run: `n` ticks repeating the last full one, each a
                // frame of the clock.
                Entry::Run { n, times } => {
                    let n = n
                        .filter(|&n| n > 0)
                        .ok_or_else(|| at("a run without a count"))?;
                    let last = ticks.last_mut().ok_or_else(|| at("a run first"))?;
                    let after = last.from.saturating_add(last.len);
                    match (after.checked_add(n - 1), clock) {
                        (Some(end), Some((first, last_frame)))
                            if after >= first && end <= last_frame => {}
                        (_, None) => return Err(at("a run in a recording without a clock")),
                        (_, Some((first, _))) if after < first => {
                            return Err(at("a run before the recording's first frame"));
                        }
                        _ => return Err(at("a run past the recording's last frame")),
                    }
                    if !times {
                        return Err(at("a run without its times"));
                    }
                    last.len += n;
                }
                Entry::Neither => return Err(at("neither a tick nor a run")),
            }
        }
        if doc.agents.insert(id, ticks).is_some() {
            return Err(bad(format!("agent #{id} is listed twice")));
        }
    }
    Ok(doc)
}

impl Doc {
    /// What is wrong with full tick `t` against the tree and the legend.
    fn check(
        &self,
        t: u32,
        n_items: u64,
        n_events: u64,
        quads: &Quads,
    ) -> Result<(), &'static str> {
        let tick = &self.ticks[t as usize];
        if tick.leaf.is_some_and(|l| l >= n_items) {
            return Err("the leaf is not an item of the tree");
        }
        if self.levels(t).iter().any(|&i| i >= n_items) {
            return Err("the path is not levels of the tree's items");
        }
        if !self.events(t).iter().all(|&e| {
            quads.get(e)[0]
                .as_u64()
                .is_some_and(|k| (1..=n_events).contains(&k))
        }) {
            return Err("the events are not quadruples of the legend's kinds");
        }
        Ok(())
    }
}

// ---------- the parse ----------

/// The document's parts, as read.
#[derive(Default)]
struct Raw {
    format: Option<Value>,
    version: Option<Value>,
    tree: Option<Value>,
    legend: Option<Value>,
    clock: Option<Value>,
    tuning: Option<Value>,
    agents: Option<Agents>,
}

/// The agents' entries, their full ticks in shared arrays.
#[derive(Default)]
struct Agents {
    list: Vec<RawAgent>,
    ticks: Vec<Tick>,
    levels: Vec<u64>,
    events: Vec<u32>,
}

struct RawAgent {
    id: Option<u32>,
    /// `None`: not a list.
    ticks: Option<Vec<Entry>>,
}

/// One entry of an agent's ticks, as read.
enum Entry {
    /// A full tick: its serial, and its index in the shared ticks or what
    /// is wrong with its form.
    Full {
        serial: Option<u64>,
        tick: Result<u32, &'static str>,
    },
    /// A run of `n` ticks, with (`times`) or without its times.
    Run {
        n: Option<u64>,
        times: bool,
    },
    Neither,
}

impl Agents {
    /// Takes in one agent's entry, read as a value (one agent at a time).
    fn take(&mut self, agent: &Value, quads: &mut Quads) {
        let id = agent["agent"]
            .as_u64()
            .and_then(|id| u32::try_from(id).ok());
        let ticks = agent["ticks"]
            .as_array()
            .map(|list| list.iter().map(|t| self.entry(t, quads)).collect());
        self.list.push(RawAgent { id, ticks });
    }

    fn entry(&mut self, t: &Value, quads: &mut Quads) -> Entry {
        match t.as_array().map(Vec::as_slice) {
            Some(t @ [serial, ..]) if t.len() == 7 => Entry::Full {
                serial: serial.as_u64(),
                tick: self.full(t, quads),
            },
            Some([n, times]) => Entry::Run {
                n: n.as_u64(),
                times: times.is_array(),
            },
            _ => Entry::Neither,
        }
    }

    /// Full tick `t` into the shared arrays, or what is wrong with its
    /// form (what needs the tree and the legend is checked later).
    fn full(&mut self, t: &[Value], quads: &mut Quads) -> Result<u32, &'static str> {
        if !(t[1].is_number() || t[1].is_null()) {
            return Err("the time is not a number");
        }
        let leaf = match &t[2] {
            Value::Null => None,
            // Not an item: out of any tree's range.
            v => Some(v.as_u64().unwrap_or(u64::MAX)),
        };
        if !t[3].is_u64() || !t[4].is_u64() {
            return Err("the visited count or the flags are not counts");
        }
        let path = t[5].as_array().ok_or("the path is not a list")?;
        if path.len() % 4 != 0 {
            return Err("the path is not levels of the tree's items");
        }
        let events = t[6].as_array().ok_or("the events are not a list")?;
        if events.len() % 4 != 0 {
            return Err("the events are not quadruples of the legend's kinds");
        }
        let at = |n: usize| u32::try_from(n).map_err(|_| TOO_LARGE);
        let levels = at(self.levels.len())?;
        self.levels.extend(
            path.chunks(4)
                .map(|level| level[0].as_u64().unwrap_or(u64::MAX)),
        );
        let first_event = at(self.events.len())?;
        for e in events.chunks(4) {
            let quad = [
                Scalar::of(&e[0]),
                Scalar::of(&e[1]),
                Scalar::of(&e[2]),
                Scalar::of(&e[3]),
            ];
            self.events.push(quads.id(quad)?);
        }
        let index = at(self.ticks.len())?;
        self.ticks.push(Tick {
            leaf,
            levels: (levels, at(self.levels.len())?),
            events: (first_event, at(self.events.len())?),
        });
        Ok(index)
    }
}

/// Visitor methods for every JSON value but the one wanted: such a value
/// is read and its part left as `Default` (absent).
macro_rules! anything_else {
    () => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
}

struct TopVisitor<'q> {
    quads: &'q mut Quads,
}

/// The document's keys read (each may be given once).
const KEYS: [&str; 7] = [
    "format", "version", "tree", "legend", "clock", "agents", "tuning",
];

impl<'de> Visitor<'de> for TopVisitor<'_> {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a recording")
    }

    anything_else!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Raw::default())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut raw = Raw::default();
        let mut seen = [false; KEYS.len()];
        while let Some(key) = map.next_key::<alloc_crate::borrow::Cow<'de, str>>()? {
            if let Some(k) = KEYS.iter().position(|k| *k == key)
                && core::mem::replace(&mut seen[k], true)
            {
                return Err(serde::de::Error::custom(format!(
                    "the key `{key}` is given twice"
                )));
            }
            match &*key {
                "format" => raw.format = Some(map.next_value()?),
                "version" => raw.version = Some(map.next_value()?),
                "tree" => raw.tree = Some(map.next_value()?),
                "legend" => raw.legend = Some(map.next_value()?),
                "clock" => raw.clock = Some(map.next_value()?),
                "tuning" => raw.tuning = Some(map.next_value()?),
                "agents" => {
                    raw.agents = map.next_value_seed(AgentsSeed {
                        quads: &mut *self.quads,
                    })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(raw)
    }
}

/// The `agents` list, one entry read as a value at a time.
struct AgentsSeed<'q> {
    quads: &'q mut Quads,
}

impl<'de> DeserializeSeed<'de> for AgentsSeed<'_> {
    type Value = Option<Agents>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AgentsSeed<'_> {
    type Value = Option<Agents>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of agents")
    }

    anything_else!();

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut agents = Agents::default();
        loop {
            let k = agents.list.len();
            let agent = seq
                .next_element::<Value>()
                .map_err(|e| serde::de::Error::custom(format!("agent entry {k}: {e}")))?;
            let Some(agent) = agent else { break };
            agents.take(&agent, self.quads);
        }
        Ok(Some(agents))
    }
}
