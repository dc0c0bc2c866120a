//! The `ticks` messages of streams that follow some lanes only: each
//! publish's agents' parts are made once, for the lanes some stream
//! follows, and each stream's message is put together from the parts of
//! its own lanes and the crowd's summary. The `lanes` event gives a
//! stream the kept ticks of the lanes it starts to follow.

use std::sync::Arc;

use hyper::body::Bytes;
use serde_json::Value;

use super::{Delta, Encoder, Snapshot, sse, to_value};
use crate::export::{agent_values, tick_json};
use crate::recorder::TickWords;

/// One agent's part of a publish's `ticks` message.
pub(super) struct Lane {
    pub(super) slot: u32,
    /// `{"agent", "ticks"}`.
    pub(super) ticks: String,
    /// Its values' entry, when it recorded some.
    pub(super) values: Option<String>,
    /// Whether its ticks hold a run (which needs the message's clock).
    pub(super) run: bool,
}

/// A publish's parts of the `ticks` messages: the lanes some stream
/// followed when it was made, in slot order.
pub(super) struct Parts {
    pub(super) lanes: Vec<Lane>,
    /// The clock of its runs.
    pub(super) clock: Option<String>,
    /// Whether every lane is there.
    pub(super) all: bool,
}

/// The lanes (watch slots) a stream follows: `None` for every one.
pub(in crate::live) type View = Option<Arc<[u32]>>;

/// The lanes the streams follow together.
pub(in crate::live) enum Wanted {
    All,
    /// Sorted.
    Slots(Vec<u32>),
}

impl Wanted {
    pub(super) fn has(&self, slot: u32) -> bool {
        match self {
            Wanted::All => true,
            Wanted::Slots(s) => s.binary_search(&slot).is_ok(),
        }
    }

    /// What the streams of `views` follow together.
    pub(in crate::live) fn of<'v>(views: impl Iterator<Item = &'v View>) -> Self {
        let mut slots = Vec::new();
        for view in views {
            match view {
                None => return Wanted::All,
                Some(v) => slots.extend_from_slice(v),
            }
        }
        slots.sort_unstable();
        slots.dedup();
        Wanted::Slots(slots)
    }
}

/// A `ticks` event of `lanes` (in slot order), with `clock` when one
/// holds a run, and `crowd` when given.
fn assemble<'l>(
    lanes: impl Iterator<Item = &'l Lane> + Clone,
    clock: Option<&str>,
    crowd: Option<&str>,
) -> Bytes {
    let mut s = String::from("event: ticks\ndata: {\"agents\":[");
    for (i, lane) in lanes.clone().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&lane.ticks);
    }
    s.push(']');
    if let Some(clock) = clock.filter(|_| lanes.clone().any(|l| l.run)) {
        s.push_str(",\"clock\":");
        s.push_str(clock);
    }
    let mut values = lanes.filter_map(|l| l.values.as_deref()).peekable();
    if values.peek().is_some() {
        s.push_str(",\"values\":[");
        for (i, v) in values.enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(v);
        }
        s.push(']');
    }
    if let Some(crowd) = crowd {
        s.push_str(",\"crowd\":");
        s.push_str(crowd);
    }
    s.push_str("}\n\n");
    Bytes::from(s)
}

impl Delta {
    /// Whether it holds ticks of `slot`.
    fn holds(&self, slot: u32) -> bool {
        let at = self.entries.partition_point(|e| e.slot < slot);
        self.entries.get(at).is_some_and(|e| e.slot == slot)
    }

    /// Its `ticks` message for a stream that follows `view`: every lane's
    /// ticks (made once, shared), or those of the lanes of `view` and the
    /// crowd's summary. A lane whose part was not made (no stream
    /// followed it then) is sent with every tick whole.
    pub(in crate::live) fn message_for(&self, names: &[&'static str], view: &View) -> Bytes {
        let parts = self.parts.get();
        let Some(view) = view else {
            return self
                .message
                .get_or_init(|| match parts.filter(|p| p.all) {
                    Some(p) => assemble(p.lanes.iter(), p.clock.as_deref(), None),
                    None => {
                        let p = Encoder::default().encode(self, names, false, &Wanted::All);
                        assemble(p.lanes.iter(), None, None)
                    }
                })
                .clone();
        };
        let made = |slot: u32| parts.is_some_and(|p| p.lanes.iter().any(|l| l.slot == slot));
        let missing: Vec<u32> = view
            .iter()
            .copied()
            .filter(|&s| self.holds(s) && !made(s))
            .collect();
        let plain = (!missing.is_empty())
            .then(|| Encoder::default().encode(self, names, false, &Wanted::Slots(missing)));
        let mut lanes: Vec<&Lane> = parts
            .iter()
            .flat_map(|p| p.lanes.iter())
            .chain(plain.iter().flat_map(|p| p.lanes.iter()))
            .filter(|l| view.binary_search(&l.slot).is_ok())
            .collect();
        lanes.sort_by_key(|l| l.slot);
        let clock = parts.and_then(|p| p.clock.as_deref());
        let crowd = self.summary.get().map(|s| s.json.as_str());
        assemble(lanes.into_iter(), clock, crowd)
    }
}

impl Snapshot {
    /// The `lanes` event that starts a stream on the lanes `slots`
    /// (sorted): their kept ticks, each whole, of the publishes up to
    /// `seen`, and their values, as the recording has them:
    /// `{"agents": [{"agent", "first_tick", "ticks"}], "values": [...]}`.
    pub(in crate::live) fn lanes_event(&self, seen: u64, slots: &[u32]) -> Bytes {
        let from = self.frames.saturating_sub(self.keep);
        let (mut agents, mut values) = (Vec::new(), Vec::new());
        let mut own = Vec::new();
        for &slot in slots {
            let Some(&agent) = self.agents.get(slot as usize) else {
                continue;
            };
            let (mut ticks, mut recorded) = (Vec::new(), Vec::new());
            for delta in self.deltas.iter().filter(|d| d.seq <= seen) {
                let at = delta.entries.partition_point(|e| e.slot < slot);
                for e in delta.entries[at..].iter().take_while(|e| e.slot == slot) {
                    if e.serial < from {
                        continue;
                    }
                    own.clear();
                    delta.read_into(e.serial, &delta.words[e.start..e.start + e.len], &mut own);
                    if let Some((vals, over)) = delta.values(e) {
                        recorded.push((ticks.len(), e.serial, vals, over));
                    }
                    ticks.push(tick_json(&TickWords::new(e.serial, &own).decode()));
                }
            }
            let first = ticks.first().and_then(|t| t.get(0)).cloned();
            values.extend(agent_values(
                agent,
                ticks.len(),
                &self.names,
                recorded.into_iter(),
            ));
            agents.push(serde_json::json!({
                "agent": agent,
                "first_tick": first.unwrap_or(Value::from(from)),
                "ticks": ticks,
            }));
        }
        let body = serde_json::json!({
            "agents": agents,
            "values": values.iter().map(to_value).collect::<Vec<_>>(),
        });
        sse("lanes", &body.to_string())
    }

    /// The `crowd` event of stream `stream` that starts at this snapshot.
    pub(in crate::live) fn crowd_event(&self, stream: u64) -> Bytes {
        let items = self.tree.as_ref().map_or(0, |t| t.items.len());
        super::crowd::crowd_event(
            stream,
            &self.agents,
            self.keep,
            self.frames.saturating_sub(self.keep),
            items,
            self.deltas.iter().map(|d| &**d),
        )
    }

    /// The watch slots of the agents `agents`, sorted, the first `first`
    /// slots with them.
    pub(in crate::live) fn slots_of(&self, first: usize, agents: &[u32]) -> Arc<[u32]> {
        let wanted: std::collections::HashSet<u32> = agents.iter().copied().collect();
        let mut slots: Vec<u32> = (0..self.agents.len().min(first) as u32).collect();
        slots.extend(
            self.agents
                .iter()
                .enumerate()
                .filter(|(_, a)| wanted.contains(a))
                .map(|(s, _)| s as u32),
        );
        slots.sort_unstable();
        slots.dedup();
        slots.into()
    }
}
