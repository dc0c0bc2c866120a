//! Reading the live server's event stream, for the live tests of
//! bt-viewer and bt-bevy.

use std::io::BufRead;

/// The next server-sent event from `r`: (event name, data). Each event is
/// one chunk of the response, so the chunk sizes are lines of their own
/// and are skipped.
pub fn next_event(r: &mut impl BufRead) -> (String, String) {
    let (mut event, mut data) = (String::new(), String::new());
    loop {
        let mut line = String::new();
        assert!(r.read_line(&mut line).unwrap() > 0, "the stream ended");
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() && !event.is_empty() {
            return (event, data);
        }
        if let Some(e) = line.strip_prefix("event: ") {
            event = e.to_owned();
        } else if let Some(d) = line.strip_prefix("data: ") {
            data.push_str(d);
        }
    }
}
