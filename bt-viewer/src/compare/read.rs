//! Reading a recording for [`compare`](super::compare): the document
//! checked as a recording, and each agent's ticks by serial, every tick
//! checked against the tree and the legend so that a malformed recording
//! is an error naming the agent and tick at fault, never a comparison of
//! what it does not say.

use alloc_crate::collections::BTreeMap;
use alloc_crate::format;
use alloc_crate::string::{String, ToString};
use alloc_crate::vec::Vec;

use serde_json::Value;

use super::CompareError;

/// Each agent's ticks by serial, each with the full tick it is (a run of
/// a compact recording repeats the last one, which is not copied).
pub(super) type Ticks<'a> = Vec<(u64, &'a Value)>;

/// `text` as a recording this build reads (`which`: 1 or 2).
pub(super) fn parse(text: &str, which: u8) -> Result<Value, CompareError> {
    let bad = |problem: String| CompareError::NotARecording { which, problem };
    let v: Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    if v["format"] != crate::FORMAT {
        return Err(bad("no `format` of a bt-viewer recording".into()));
    }
    if v["version"] != crate::VERSION {
        return Err(bad(format!(
            "format version {}, this build reads {}",
            v["version"],
            crate::VERSION
        )));
    }
    if !v["tree"]["items"].is_array() || !v["agents"].is_array() {
        return Err(bad("no tree or no agents".into()));
    }
    Ok(v)
}

/// The tree's items.
pub(super) fn items(v: &Value) -> &[Value] {
    v["tree"]["items"].as_array().map_or(&[], Vec::as_slice)
}

/// Each agent's ticks, runs of a compact recording expanded, by serial,
/// by agent index.
///
/// # Errors
/// [`CompareError::NotARecording`] naming the agent (and the tick) when
/// an agent is listed twice or has no index, its ticks are not a list, a
/// tick is neither a tick nor a run, serials do not rise, a leaf, a path
/// item or an event kind is not one of the tree's or the legend's, or a
/// run reaches past the recording's last frame (or the recording, not
/// compact, has no frames to reach).
pub(super) fn agent_ticks(v: &Value, which: u8) -> Result<BTreeMap<u32, Ticks<'_>>, CompareError> {
    let bad = |problem: String| CompareError::NotARecording { which, problem };
    let n_items = items(v).len() as u64;
    let n_events = v["legend"]["events"].as_array().map_or(0, Vec::len) as u64;
    // The last frame a run may reach: the clock's last.
    let last_frame = match (v["clock"]["first"].as_u64(), v["clock"]["now"].as_array()) {
        (Some(first), Some(now)) if !now.is_empty() => first.checked_add(now.len() as u64 - 1),
        _ => None,
    };
    let mut out = BTreeMap::new();
    for (k, agent) in v["agents"].as_array().into_iter().flatten().enumerate() {
        let id = agent["agent"]
            .as_u64()
            .and_then(|id| u32::try_from(id).ok())
            .ok_or_else(|| {
                bad(format!(
                    "agent entry {k} is malformed: no agent index (0 to 2^32 - 1)"
                ))
            })?;
        let list = agent["ticks"]
            .as_array()
            .ok_or_else(|| bad(format!("agent #{id} is malformed: `ticks` is not a list")))?;
        let mut ticks: Ticks<'_> = Vec::new();
        for (j, t) in list.iter().enumerate() {
            let at = |problem: &str| {
                bad(format!(
                    "agent #{id} is malformed: tick entry {j}: {problem}"
                ))
            };
            match t.as_array().map(Vec::len) {
                Some(7) => {
                    let serial = t[0]
                        .as_u64()
                        .ok_or_else(|| at("the serial is not a tick number"))?;
                    if ticks.last().is_some_and(|&(s, _)| s >= serial) {
                        return Err(at("serials do not rise"));
                    }
                    check_tick(t, n_items, n_events).map_err(&at)?;
                    ticks.push((serial, t));
                }
                // A run: `n` ticks repeating the last full one.
                Some(2) => {
                    let n = t[0]
                        .as_u64()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| at("a run without a count"))?;
                    let &(serial, last) = ticks.last().ok_or_else(|| at("a run first"))?;
                    let end = serial.checked_add(n);
                    match (end, last_frame) {
                        (Some(end), Some(last)) if end <= last => {}
                        (_, None) => return Err(at("a run in a recording without a clock")),
                        _ => return Err(at("a run past the recording's last frame")),
                    }
                    if !t[1].is_array() {
                        return Err(at("a run without its times"));
                    }
                    ticks.extend((1..=n).map(|k| (serial + k, last)));
                }
                _ => return Err(at("neither a tick nor a run")),
            }
        }
        if out.insert(id, ticks).is_some() {
            return Err(bad(format!("agent #{id} is listed twice")));
        }
    }
    Ok(out)
}

/// What is wrong with full tick `t`, if anything.
fn check_tick(t: &Value, n_items: u64, n_events: u64) -> Result<(), &'static str> {
    let item = |v: &Value| v.as_u64().is_some_and(|i| i < n_items);
    if !(t[1].is_number() || t[1].is_null()) {
        return Err("the time is not a number");
    }
    if !(t[2].is_null() || item(&t[2])) {
        return Err("the leaf is not an item of the tree");
    }
    if !t[3].is_u64() || !t[4].is_u64() {
        return Err("the visited count or the flags are not counts");
    }
    let path = t[5].as_array().ok_or("the path is not a list")?;
    if path.len() % 4 != 0 || !path.chunks(4).all(|level| item(&level[0])) {
        return Err("the path is not levels of the tree's items");
    }
    let events = t[6].as_array().ok_or("the events are not a list")?;
    if events.len() % 4 != 0
        || !events
            .chunks(4)
            .all(|e| e[0].as_u64().is_some_and(|k| (1..=n_events).contains(&k)))
    {
        return Err("the events are not quadruples of the legend's kinds");
    }
    Ok(())
}
