//! Tuning from the page: a `{"op": "tune", "name", "value"}` control
//! request, checked on the server's thread against the crowd's shared
//! state (so that a refused value is answered at once, naming the tunable
//! and why), then handed to the game's thread, which stages it at its next
//! frame; and the `tuning` event that shows the pages the values over the
//! frames kept, sent when a publish brings a change.

use bt_core::TuneValue;
use hyper::body::Bytes;
use serde_json::Value;

use super::control::Command;
use super::feed::Snapshot;
use super::stream::Hub;

/// The command that changes the tunable `name` to `value`, or why the
/// request is refused (`true`: a bad request; `false`: the program cannot
/// take it now).
pub(super) fn command(
    snapshot: &Snapshot,
    name: &str,
    value: &Value,
) -> Result<Command, (bool, String)> {
    let Some(tree) = snapshot.tree() else {
        return Err((false, "nothing was published yet".into()));
    };
    if tree.tunables.is_empty() {
        return Err((
            true,
            format!("tree `{}` has no tunable `{name}`: it has none", tree.name),
        ));
    }
    let Some(shared) = snapshot.tuned_shared() else {
        return Err((
            false,
            "the recorder has not ticked a memory bound to the crowd's shared state yet".into(),
        ));
    };
    let Some(tuned) = tune_value(value) else {
        return Err((
            true,
            format!("tunable `{name}`: {value} is neither a number, true or false nor a name"),
        ));
    };
    shared
        .check_tune_named(name, tuned.clone())
        .map_err(|e| (true, e.to_string()))?;
    Ok(Command::Tune(
        std::sync::Arc::clone(shared),
        name.into(),
        tuned,
    ))
}

/// A value as the page gives it: a whole number, another number, true or
/// false, or a name (of a choice).
fn tune_value(value: &Value) -> Option<TuneValue> {
    match value {
        Value::Bool(b) => Some(TuneValue::Bool(*b)),
        Value::String(name) => Some(TuneValue::Name(name.clone().into())),
        Value::Number(n) => n
            .as_i64()
            .map(TuneValue::Int)
            .or_else(|| n.as_f64().map(TuneValue::Float)),
        _ => None,
    }
}

impl Hub {
    /// Sends `event` (a `tuning` event) to every stream that has its
    /// recording.
    pub(super) fn send_tuning(&self, event: &Bytes) {
        let budget = self.limits.backlog_bytes;
        let mut streams = self.lock();
        streams.joined.retain(|c| c.send(event, budget));
        self.count(&streams);
    }
}
