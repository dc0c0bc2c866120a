//! What writing a whole recording costs: W1 (`WORKLOAD.md`) at N = 10 000
//! agents, every one recorded, the last T = 600 ticks kept (20 s at
//! 30 Hz), written as the viewer's JSON by
//! `FlightRecorder::write_json_compact` and `write_json` (into a writer
//! that keeps nothing), and sent by the live server to a page that asks
//! for it (`GET /recording.json` over loopback, to the last byte).
//!
//! ```sh
//! cargo bench -p bt-bench --bench export
//! BT_BENCH_QUICK=1 cargo bench -p bt-bench --bench export   # fewer runs
//! BT_BENCH_N=1000 BT_BENCH_T=300 cargo bench -p bt-bench --bench export
//! ```
//!
//! Times are medians (and the range: the machine may be busy) of several
//! runs; with them, the bytes written and the most heap bytes held at once
//! while writing, over every run (the recorder and the server's copies of
//! the ticks, there before, not counted; the server holds the text it
//! sends). The target: the compact recording of N = 10 000 × T = 600
//! written in under 2 s.
//!
//! `BT_BENCH_OLD=1` also times what the recording took before it was
//! written as it is read: `export_compact()` (a `Recording` of
//! `serde_json` values) and `to_json()`, once. It takes tens of GB at
//! N = 10 000: give it a smaller `BT_BENCH_N`.
//!
//! `BT_BENCH_PROFILE=compact|whole|live|old` makes the recording and
//! writes it once, untimed, for `perf record` or
//! `valgrind --tool=callgrind`.

#[path = "workloads/w1_core.rs"]
#[allow(dead_code)]
mod w1_core;
#[path = "workloads/world.rs"]
#[allow(dead_code)]
mod world;

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use bt_core::TickInput;
use bt_viewer::{Capacity, FlightRecorder, LiveServer, Watch};
use w1_core::{Crowd, W1};
use world::{DT, now};

const N: usize = 10_000;
const T: u32 = 600;
/// Words an agent a tick: a W1 tick takes 11.8 on average.
const WORDS: usize = 16;

/// The system allocator, keeping the live heap bytes and their peak.
struct Peak;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged; the counting touches only atomics and never allocates.
unsafe impl GlobalAlloc for Peak {
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
static ALLOCATOR: Peak = Peak;

/// A writer that keeps nothing: it counts the bytes.
struct Count(usize);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One measure: time, bytes written, heap bytes held at most.
#[derive(Clone, Copy)]
struct Sample {
    secs: f64,
    bytes: usize,
    held: usize,
}

/// Times `f`, which returns the bytes it wrote, and the heap it held.
fn measure(f: impl FnOnce() -> usize) -> Sample {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let start = Instant::now();
    let bytes = f();
    let secs = start.elapsed().as_secs_f64();
    Sample {
        secs,
        bytes,
        held: PEAK.load(Relaxed).saturating_sub(base),
    }
}

/// W1's crowd of `n`, ticked `t` times through a recorder that keeps
/// every tick.
fn recorded(n: usize, t: u32) -> FlightRecorder {
    let mut crowd = Crowd::new(n);
    let mut recorder = FlightRecorder::new(&W1, n, Watch::All, Capacity::new(t as usize, WORDS));
    for t in 0..t {
        for a in &mut crowd.agents {
            a.world.step();
        }
        let now = now(t);
        recorder.tick_all(&W1, &mut crowd.agents, &mut crowd.memories, |_, a| {
            TickInput::new(now, DT).with_decision(a.world.flags())
        });
    }
    recorder
}

fn compact(recorder: &FlightRecorder) -> usize {
    let mut out = Count(0);
    recorder
        .write_json_compact(&mut out)
        .expect("a writer that keeps nothing");
    out.0
}

fn whole(recorder: &FlightRecorder) -> usize {
    let mut out = Count(0);
    recorder
        .write_json(&mut out)
        .expect("a writer that keeps nothing");
    out.0
}

fn old(recorder: &FlightRecorder) -> usize {
    recorder.export_compact().to_json().len()
}

/// `GET /recording.json` to the last byte; its length.
fn fetch(server: &LiveServer) -> usize {
    let mut s = TcpStream::connect(server.addr()).expect("the server");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(s, "GET /recording.json HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut r = BufReader::with_capacity(1 << 20, s);
    let mut length = None;
    loop {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        let line = line.trim().to_ascii_lowercase();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("content-length:") {
            length = n.trim().parse().ok();
        }
    }
    let length = length.expect("a Content-Length");
    let mut buf = vec![0; 1 << 20];
    let mut got = 0;
    while got < length {
        let n = r.read(&mut buf).unwrap();
        assert!(n > 0, "the response ended early");
        got += n;
    }
    got
}

/// A live server that kept every publish of `recorder`'s ticks.
fn serving(recorder: &FlightRecorder) -> LiveServer {
    let mut server = LiveServer::start(0).expect("a loopback port");
    server.publish(recorder);
    // The server takes the publish in on its own thread.
    std::thread::sleep(Duration::from_millis(200));
    server
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn main() {
    let n = var("BT_BENCH_N").and_then(|v| v.parse().ok()).unwrap_or(N);
    let t = var("BT_BENCH_T").and_then(|v| v.parse().ok()).unwrap_or(T);
    if let Some(what) = var("BT_BENCH_PROFILE") {
        let recorder = recorded(n, t);
        let bytes = match what.as_str() {
            "compact" => compact(&recorder),
            "whole" => whole(&recorder),
            "old" => old(&recorder),
            "live" => fetch(&serving(&recorder)),
            other => panic!("BT_BENCH_PROFILE: unknown variant `{other}`"),
        };
        println!("{what}: N = {n}, T = {t}, {bytes} bytes");
        return;
    }
    let quick =
        var("BT_BENCH_QUICK").is_some_and(|v| v != "0") || std::env::args().any(|a| a == "--quick");
    let runs = var("BT_BENCH_RUNS")
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 3 } else { 5 });

    let made = Instant::now();
    let recorder = recorded(n, t);
    println!(
        "writing a recording of W1, N = {n} agents x T = {t} ticks, every tick kept \
         ({} MB of frames, made in {:.1} s): medians of {runs} runs after a warm-up",
        recorder.frame_bytes() / 1_000_000,
        made.elapsed().as_secs_f64()
    );
    let server = std::cell::RefCell::new(serving(&recorder));
    let variants: [(&str, &dyn Fn() -> usize); 3] = [
        ("write_json_compact", &|| compact(&recorder)),
        ("write_json", &|| whole(&recorder)),
        ("live GET /recording.json", &|| fetch(&server.borrow())),
    ];
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); variants.len()];
    // The most held, over every run: the server's first recording is made
    // with none before it to let go of.
    let mut held = vec![0; variants.len()];
    // Interleaved, so that the machine's drift touches every variant alike.
    for round in 0..=runs {
        // A publish (of no new tick) a while ago, a second after the last
        // recording: the server makes a whole recording for the next page
        // that asks.
        let exports = server.borrow().exports_made();
        std::thread::sleep(Duration::from_millis(1000));
        server.borrow_mut().publish(&recorder);
        std::thread::sleep(Duration::from_millis(200));
        for (k, (_, f)) in variants.iter().enumerate() {
            let s = measure(f);
            held[k] = held[k].max(s.held);
            if round > 0 {
                samples[k].push(s);
            }
        }
        assert_eq!(
            server.borrow().exports_made(),
            exports + 1,
            "no recording made"
        );
    }
    let mut compact_secs = 0.0;
    for (((name, _), s), &held) in variants.iter().zip(&mut samples).zip(&held) {
        s.sort_by(|a, b| a.secs.total_cmp(&b.secs));
        let m = s[s.len() / 2];
        println!(
            "  {name:<26} {:6.3} s  ({:.3}-{:.3})  {:7.1} MB  {:6.1} MB/s  held {:.1} MB at most ({:.2}x its bytes)",
            m.secs,
            s[0].secs,
            s[s.len() - 1].secs,
            m.bytes as f64 / 1e6,
            m.bytes as f64 / 1e6 / m.secs,
            held as f64 / 1e6,
            held as f64 / m.bytes as f64
        );
        if *name == "write_json_compact" {
            compact_secs = m.secs;
        }
    }
    if var("BT_BENCH_OLD").is_some() {
        let s = measure(|| old(&recorder));
        println!(
            "  {:<26} {:6.3} s  {:7.1} MB  held {:.1} MB at most ({:.1}x its bytes)",
            "export_compact().to_json()",
            s.secs,
            s.bytes as f64 / 1e6,
            s.held as f64 / 1e6,
            s.held as f64 / s.bytes as f64
        );
    }
    if (n, t) == (N, T) {
        println!(
            "  target: the compact recording in under 2 s ({})",
            if compact_secs < 2.0 { "met" } else { "NOT met" }
        );
    }
}
