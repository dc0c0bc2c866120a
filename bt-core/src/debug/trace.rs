//! The trace recorder and the text form of events.

use alloc::string::String;

use crate::interp::{Event, Tracer, write_event};

/// Renders events as stable text, one line per event, indented by depth:
/// the form decision-trace snapshots are written in.
#[derive(Clone, Debug, Default)]
pub struct TraceRecorder {
    text: String,
}

impl TraceRecorder {
    /// An empty recorder.
    pub fn new() -> Self {
        Self::default()
    }

    /// The text recorded so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes the text, leaving the recorder empty.
    pub fn take(&mut self) -> String {
        core::mem::take(&mut self.text)
    }

    /// Appends a line of the caller's own (a note between ticks).
    pub fn note(&mut self, line: &str) {
        self.text.push_str("# ");
        self.text.push_str(line);
        self.text.push('\n');
    }
}

impl Tracer for TraceRecorder {
    fn event(&mut self, event: &Event) {
        // Writing to a String cannot fail.
        let _ = write_event(&mut self.text, event);
    }
}
