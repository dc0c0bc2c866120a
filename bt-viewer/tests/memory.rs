//! Writing a whole recording's JSON takes memory in proportion to its
//! text at most, not the tens of times more of a `Recording` of
//! `serde_json` values: `FlightRecorder::write_json` and
//! `write_json_compact` hold a block of agents' ticks and a piece of text
//! (the writer gets the rest), less than the text; the live server holds
//! the text it sends, once, for every page that joins (`GET
//! /recording.json` and the `recording` event of `GET /events`), which is
//! what the page expects byte for byte.
//!
//! A binary of its own: it installs a counting global allocator, which
//! keeps the live heap bytes and their peak. Its tests run one at a time.

mod scene;

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use bt_viewer::{Capacity, FlightRecorder, Watch};
use scene::{CAMP, Creature, crowd};

struct Counting;

/// Live heap bytes (as requested), and their peak since the last reset.
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged; the counting touches only atomics and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // The old block and the new are both live while it is copied.
        grew(new_size);
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One test at a time: the counts are the whole process's.
static ONE: Mutex<()> = Mutex::new(());

/// `f`'s result, and the most heap bytes live at once while it ran beyond
/// those live when it began.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let out = f();
    (out, PEAK.load(Relaxed).saturating_sub(base))
}

/// A writer that keeps nothing: it counts the bytes and checks them
/// against `expected`.
struct Check<'e> {
    expected: &'e [u8],
    at: usize,
}

impl Write for Check<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let end = self.at + buf.len();
        assert!(
            self.expected.get(self.at..end) == Some(buf),
            "the text differs from byte {} on",
            self.at
        );
        self.at = end;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// 300 creatures over 300 ticks, all kept.
fn camp() -> FlightRecorder {
    let (mut agents, mut memories) = crowd(300);
    let mut recorder = FlightRecorder::new(&CAMP, 300, Watch::All, Capacity::new(300, 16));
    for t in 0..300 {
        agents.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
    }
    recorder
}

#[test]
fn writing_a_recording_holds_less_than_its_text() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let recorder = camp();
    for compact in [false, true] {
        let expected = if compact {
            recorder.export_compact().to_json()
        } else {
            recorder.export().to_json()
        };
        let (_, built) = peak_of(|| {
            if compact {
                recorder.export_compact().to_json().len()
            } else {
                recorder.export().to_json().len()
            }
        });
        let mut check = Check {
            expected: expected.as_bytes(),
            at: 0,
        };
        let (done, peak) = peak_of(|| {
            if compact {
                recorder.write_json_compact(&mut check)
            } else {
                recorder.write_json(&mut check)
            }
        });
        done.unwrap();
        assert_eq!(check.at, expected.len(), "the text ends early");
        println!(
            "{}: {} bytes of text; writing it held {peak} bytes at most; \
             building it as a Recording held {built}",
            if compact { "compact" } else { "whole" },
            expected.len()
        );
        // A block of agents' ticks (2 MiB of words, and the room its
        // vectors grew into), their values, and 64 KiB of text.
        assert!(peak <= 6 << 20, "{peak} bytes held");
        assert!(peak < expected.len(), "{peak} bytes held");
    }
}

#[cfg(feature = "live")]
mod live {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpStream;
    use std::time::{Duration, Instant};

    use bt_viewer::LiveServer;

    use super::*;

    /// Reads a response's head from `r`: its lines.
    fn head(r: &mut impl BufRead) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                return lines;
            }
            lines.push(line.trim().to_owned());
        }
    }

    fn request(server: &LiveServer, path: &str) -> BufReader<TcpStream> {
        let mut s = TcpStream::connect(server.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        BufReader::with_capacity(64 << 10, s)
    }

    /// Reads `n` bytes from `r` into a buffer it reuses, checking them
    /// against `expected`.
    fn read_checked(r: &mut impl Read, expected: &[u8]) {
        let mut buf = vec![0; 64 << 10];
        let mut at = 0;
        while at < expected.len() {
            let want = (expected.len() - at).min(buf.len());
            r.read_exact(&mut buf[..want]).unwrap();
            assert!(
                buf[..want] == expected[at..at + want],
                "the text differs from byte {at} on"
            );
            at += want;
        }
    }

    #[test]
    fn the_recording_a_page_joins_is_held_once_as_its_text() {
        let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
        let recorder = camp();
        let expected = recorder.export_compact().to_json();
        let mut server = LiveServer::start(0).unwrap();
        server.publish(&recorder);

        let ((), peak) = peak_of(|| {
            let mut r = request(&server, "/recording.json");
            let lines = head(&mut r);
            assert!(lines[0].starts_with("HTTP/1.1 200"), "{lines:?}");
            let length = format!("content-length: {}", expected.len());
            assert!(
                lines.iter().any(|l| l.to_ascii_lowercase() == length),
                "{lines:?}"
            );
            read_checked(&mut r, expected.as_bytes());
        });
        println!(
            "GET /recording.json: {} bytes of text; the server held {peak} bytes at most",
            expected.len()
        );
        assert!(peak <= 2 * expected.len(), "{peak} bytes held");
        assert_eq!(server.exports_made(), 1);

        // A page that joins a second later: a recording made for it.
        std::thread::sleep(Duration::from_millis(1100));
        let ((), peak) = peak_of(|| {
            let mut r = request(&server, "/events");
            let lines = head(&mut r);
            assert!(lines[0].starts_with("HTTP/1.1 200"), "{lines:?}");
            let deadline = Instant::now() + Duration::from_secs(10);
            while server.clients() == 0 {
                assert!(Instant::now() < deadline, "the page never followed");
                std::thread::sleep(Duration::from_millis(5));
            }
            server.publish(&recorder);
            // One chunk on the wire: its size, then the event.
            let mut size = String::new();
            r.read_line(&mut size).unwrap();
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            let head = b"event: recording\ndata: ";
            assert_eq!(size, head.len() + expected.len() + 2);
            read_checked(&mut r, head);
            read_checked(&mut r, expected.as_bytes());
            read_checked(&mut r, b"\n\n");
        });
        println!(
            "GET /events: {} bytes of text; the server held {peak} bytes at most",
            expected.len()
        );
        assert!(peak <= 2 * expected.len(), "{peak} bytes held");
        assert_eq!(server.exports_made(), 2);
    }
}
