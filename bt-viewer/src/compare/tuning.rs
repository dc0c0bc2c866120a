//! The tunables of two recordings compared: which took other values, at
//! the start or by a change, and from which tick.

use alloc_crate::format;
use alloc_crate::string::{String, ToString};
use alloc_crate::vec::Vec;

use serde_json::Value;

use super::TunableDifference;

/// A recording's `tuning`: the first frame, the values in effect there
/// by name, and each change (tick, name, value from that tick on).
#[derive(Default)]
pub(super) struct Tuned {
    first: u64,
    start: Vec<(String, Value)>,
    changes: Vec<(u64, String, Value)>,
}

/// A recording's `tuning` (`None`: absent, no tunables), or what is
/// wrong with it.
pub(super) fn read(tuning: Option<&Value>) -> Result<Tuned, String> {
    let Some(t) = tuning else {
        return Ok(Tuned::default());
    };
    let bad = |what: &str| format!("its `tuning` is malformed: {what}");
    let first = t["first"]
        .as_u64()
        .ok_or_else(|| bad("`first` is not a tick"))?;
    let start = t["start"]
        .as_array()
        .ok_or_else(|| bad("`start` is not a list"))?
        .iter()
        .map(|v| Some((v["name"].as_str()?.to_string(), value(&v["value"])?)))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad("a value of `start` has no name or no value"))?;
    let mut changes = Vec::new();
    let mut last = first;
    for (k, c) in t["changes"]
        .as_array()
        .ok_or_else(|| bad("`changes` is not a list"))?
        .iter()
        .enumerate()
    {
        let change = (|| {
            let tick = c["tick"].as_u64()?;
            let name = c["name"].as_str()?;
            let to = value(&c["to"])?;
            value(&c["from"])?;
            start.iter().any(|(n, _)| n == name).then_some(())?;
            (tick > first && tick >= last).then_some((tick, name.to_string(), to))
        })();
        let change = change.ok_or_else(|| {
            bad(&format!(
                "change {k} is not a tick after `first` (and after the change before it), \
                 a tunable of `start`, and two values"
            ))
        })?;
        last = change.0;
        changes.push(change);
    }
    Ok(Tuned {
        first,
        start,
        changes,
    })
}

/// A tunable's value: a number, true or false, or a name.
fn value(v: &Value) -> Option<Value> {
    (v.is_number() || v.is_boolean() || v.is_string()).then(|| v.clone())
}

/// Whether two values are the same: numbers by value (`1` and `1.0`).
fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => x.as_f64() == y.as_f64(),
        (a, b) => a == b,
    }
}

impl Tuned {
    fn start_of(&self, name: &str) -> Option<&Value> {
        self.start.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The value of `name` in effect at tick `tick` (at or after `first`).
    fn at(&self, name: &str, tick: u64) -> Option<&Value> {
        let changed = self
            .changes
            .iter()
            .rev()
            .find(|(t, n, _)| *t <= tick && n == name);
        changed.map(|(_, _, v)| v).or_else(|| self.start_of(name))
    }

    /// The changes of `name`: (tick, value from then on).
    fn changes_of(&self, name: &str) -> Vec<(u64, Value)> {
        self.changes
            .iter()
            .filter(|(_, n, _)| n == name)
            .map(|(t, _, v)| (*t, v.clone()))
            .collect()
    }
}

/// The tunables whose values in effect differ between `a` and `b` at a
/// tick from the later of their first frames on, in the order of the
/// first recording's table (then of the second's).
pub(super) fn differences(a: &Tuned, b: &Tuned) -> Vec<TunableDifference> {
    let from = a.first.max(b.first);
    let mut names: Vec<&str> = a.start.iter().map(|(n, _)| n.as_str()).collect();
    for (n, _) in &b.start {
        if !names.contains(&n.as_str()) {
            names.push(n);
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let mut ticks: Vec<u64> = a
                .changes
                .iter()
                .chain(&b.changes)
                .filter(|(t, n, _)| n == name && *t > from)
                .map(|(t, _, _)| *t)
                .collect();
            ticks.push(from);
            ticks.sort_unstable();
            let tick = ticks
                .into_iter()
                .find(|&t| !same(a.at(name, t), b.at(name, t)))?;
            Some(TunableDifference {
                name: name.to_string(),
                start: (a.start_of(name).cloned(), b.start_of(name).cloned()),
                changes: (a.changes_of(name), b.changes_of(name)),
                first_tick: tick,
            })
        })
        .collect()
}
