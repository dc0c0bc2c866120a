//! The tree's tunables as a recording holds them: their table (in the
//! tree), and the values in effect at the recording's first frame with
//! every change put in effect after it, each with its tick.

use alloc_crate::vec::Vec;

use bt_core::{TunableKind, Tunables};
use serde::Serialize;
use serde_json::Value;

use crate::recorder::{Change, TuneLog};

/// One tunable of the tree, as the recording describes it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TunableInfo {
    /// Its name (`FLEE_BELOW`).
    pub name: &'static str,
    /// Its doc line, trimmed.
    pub doc: &'static str,
    /// What it holds: `"float"`, `"int"`, `"bool"` or `"choice"`.
    pub kind: &'static str,
    /// Its least value (null for a bool or a choice).
    pub min: Value,
    /// Its greatest value (null for a bool or a choice).
    pub max: Value,
    /// Its default value.
    pub default: Value,
    /// The names a choice takes, in order (empty for the other kinds).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub choices: &'static [&'static str],
}

/// The tunables' values over a recording: those in effect at its first
/// frame, and each change put in effect after it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tuning {
    /// The recording's first frame (the first the recorder kept).
    pub first: u64,
    /// Each tunable's value in effect at that frame, in the table's order.
    pub start: Vec<TunedValue>,
    /// Every change put in effect after that frame, oldest first.
    pub changes: Vec<TuningChange>,
}

/// A tunable's value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TunedValue {
    /// The tunable.
    pub name: &'static str,
    /// Its value: a number, or true / false.
    pub value: Value,
}

/// A change of a tunable's value, put in effect at the start of a tick.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TuningChange {
    /// The first tick (frame serial) whose decisions read the new value.
    pub tick: u64,
    /// The tunable.
    pub name: &'static str,
    /// Its value before.
    pub from: Value,
    /// Its value from `tick` on.
    pub to: Value,
}

/// The value of bits `bits` of a tunable of kind `kind`, as JSON.
pub(crate) fn value_of(kind: TunableKind, bits: u64) -> Value {
    match kind {
        TunableKind::Float { .. } => number(f64::from_bits(bits)),
        TunableKind::Int { .. } => Value::from(bits as i64),
        TunableKind::Bool => Value::from(bits != 0),
        TunableKind::Choice { names } => usize::try_from(bits)
            .ok()
            .and_then(|i| names.get(i))
            .map_or(Value::from(bits), |&name| Value::from(name)),
        // A kind this viewer does not know: its bits.
        _ => Value::from(bits),
    }
}

/// A float as JSON: null when it is not finite.
fn number(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// The table `table` as a recording describes it.
pub(crate) fn table_info(table: Option<&'static Tunables>) -> Vec<TunableInfo> {
    table
        .map_or(&[][..], Tunables::decls)
        .iter()
        .map(|d| {
            let (min, max) = match d.kind {
                TunableKind::Float { min, max } => (number(min), number(max)),
                TunableKind::Int { min, max } => (min.into(), max.into()),
                _ => (Value::Null, Value::Null),
            };
            TunableInfo {
                name: d.name,
                doc: d.doc.trim(),
                kind: d.kind.name(),
                min,
                max,
                default: value_of(d.kind, d.default),
                choices: match d.kind {
                    TunableKind::Choice { names } => names,
                    _ => &[],
                },
            }
        })
        .collect()
}

impl TuneLog {
    /// The tuning of a recording whose first frame is `first`, when the
    /// tree has tunables.
    pub(crate) fn tuning(&self, first: u64) -> Option<Tuning> {
        let decls = self.table?.decls();
        let (start, changes) = self.since(first);
        let change = |c: &Change| {
            let d = &decls[c.index];
            TuningChange {
                tick: c.serial,
                name: d.name,
                from: value_of(d.kind, c.from),
                to: value_of(d.kind, c.to),
            }
        };
        Some(Tuning {
            first,
            start: decls
                .iter()
                .zip(start)
                .map(|(d, bits)| TunedValue {
                    name: d.name,
                    value: value_of(d.kind, bits),
                })
                .collect(),
            changes: changes.iter().map(change).collect(),
        })
    }
}
