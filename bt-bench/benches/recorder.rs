//! What the flight recorder costs: W1 (`WORKLOAD.md`) at N = 10 000,
//! ticked untraced with `tick_all`, with every agent recorded, and with
//! one watched agent among them, in one run.
//!
//! ```sh
//! cargo bench -p bt-bench --bench recorder
//! BT_BENCH_QUICK=1 cargo bench -p bt-bench --bench recorder   # fewer runs
//! BT_BENCH_RUNS=15 cargo bench -p bt-bench --bench recorder    # more runs
//! ```
//!
//! Times are medians (and minimums: the machine may be busy) of ns per
//! agent-tick of the tree tick only (the world step runs between the timed
//! ticks), over several runs after a warm-up run, the variants taking
//! turns. Every variant must end with the same activation counts.
//!
//! `BT_BENCH_PROFILE=untraced|all|one` runs one variant once, untimed,
//! for `valgrind --tool=callgrind` (instruction counts do not depend on
//! the machine's load); `BT_BENCH_N` sets N. Each variant's crowd tick is
//! a function of its own (`untraced`, `recorded`), as a game's system
//! would be, so its inclusive count is the tick's cost.

#[path = "workloads/w1_core.rs"]
#[allow(dead_code)]
mod w1_core;
#[path = "workloads/world.rs"]
#[allow(dead_code)]
mod world;

use std::hint::black_box;
use std::time::{Duration, Instant};

use bt_core::{CrowdReport, TickInput, tick_all};
use bt_viewer::{Capacity, FlightRecorder, Watch};
use w1_core::{Crowd, W1};
use world::{DT, now};

const N: usize = 10_000;
const T: u32 = 300;
/// The last 64 ticks (about 2 s), with 16 words an agent a tick.
const CAPACITY: Capacity = Capacity::new(64, 16);
/// The watched agent of the one-agent variant.
const WATCHED: usize = 4711;

/// How the crowd is ticked.
#[derive(Clone, Copy)]
enum Variant {
    Untraced,
    RecordAll,
    RecordOne,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Untraced => "untraced (tick_all)",
            Variant::RecordAll => "every agent recorded",
            Variant::RecordOne => "one agent recorded",
        }
    }
}

struct Run {
    ns: f64,
    fingerprint: u64,
    recorder: Option<FlightRecorder>,
}

fn run(variant: Variant, n: usize) -> Run {
    let mut crowd = Crowd::new(n);
    let mut recorder = match variant {
        Variant::Untraced => None,
        Variant::RecordAll => Some(FlightRecorder::new(&W1, n, Watch::All, CAPACITY)),
        Variant::RecordOne => Some(FlightRecorder::new(
            &W1,
            n,
            Watch::Agents(&[WATCHED % n]),
            CAPACITY,
        )),
    };
    let mut timed = Duration::ZERO;
    for t in 0..T {
        for a in &mut crowd.agents {
            a.world.step();
        }
        let now = now(t);
        let start = Instant::now();
        let report = match &mut recorder {
            None => untraced(&mut crowd, now),
            Some(r) => recorded(r, &mut crowd, now),
        };
        timed += start.elapsed();
        assert_eq!(report.errors, 0);
    }
    let counts = black_box(&crowd).activations();
    Run {
        ns: timed.as_secs_f64() * 1e9 / (n as f64 * f64::from(T)),
        fingerprint: counts.iter().fold(0xcbf2_9ce4_8422_2325, |h, &c| {
            (h ^ u64::from(c)).wrapping_mul(0x0100_0000_01b3)
        }),
        recorder,
    }
}

/// The untraced crowd tick, in a function of its own, as a game's system.
#[inline(never)]
fn untraced(crowd: &mut Crowd, now: f64) -> CrowdReport {
    tick_all(&W1, &mut crowd.agents, &mut crowd.memories, |_, a| {
        TickInput::new(now, DT).with_decision(a.world.flags())
    })
}

/// The same crowd tick through the recorder, in a function of its own.
#[inline(never)]
fn recorded(r: &mut FlightRecorder, crowd: &mut Crowd, now: f64) -> CrowdReport {
    r.tick_all(&W1, &mut crowd.agents, &mut crowd.memories, |_, a| {
        TickInput::new(now, DT).with_decision(a.world.flags())
    })
}

fn main() {
    if let Ok(what) = std::env::var("BT_BENCH_PROFILE") {
        let variant = match what.as_str() {
            "untraced" => Variant::Untraced,
            "all" => Variant::RecordAll,
            "one" => Variant::RecordOne,
            other => panic!("BT_BENCH_PROFILE: unknown variant `{other}`"),
        };
        let n = std::env::var("BT_BENCH_N")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(N);
        let r = run(variant, n);
        println!(
            "{}: N = {n}, fingerprint {:#x}",
            variant.name(),
            r.fingerprint
        );
        return;
    }
    let quick = std::env::var("BT_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0")
        || std::env::args().any(|a| a == "--quick");
    let runs = std::env::var("BT_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 3 } else { 7 });
    println!(
        "flight recorder on W1, N = {N}, T = {T}: medians of {runs} runs after a warm-up, \
         ns per agent-tick of the tree tick"
    );
    let variants = [Variant::Untraced, Variant::RecordAll, Variant::RecordOne];
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    let mut fingerprint = None;
    let mut words = 0.0;
    let mut frame_bytes = 0;
    // Interleaved, so that the machine's drift touches every variant alike.
    for round in 0..=runs {
        for (k, &v) in variants.iter().enumerate() {
            let r = run(v, N);
            assert_eq!(
                *fingerprint.get_or_insert(r.fingerprint),
                r.fingerprint,
                "runs differ"
            );
            if let (Variant::RecordAll, Some(rec)) = (v, &r.recorder) {
                words = rec.mean_words_per_tick();
                frame_bytes = rec.frame_bytes();
            }
            if round > 0 {
                samples[k].push(r.ns);
            }
        }
    }
    let median = |s: &mut Vec<f64>| {
        s.sort_by(f64::total_cmp);
        s[s.len() / 2]
    };
    let medians: Vec<f64> = samples.iter_mut().map(median).collect();
    let base = medians[0];
    let base_min = samples[0][0];
    for ((v, m), s) in variants.iter().zip(&medians).zip(&samples) {
        println!(
            "  {:<22} {m:7.1} ns  ({:.1}-{:.1})  {:5.3}x untraced (minimums: {:5.3}x)",
            v.name(),
            s[0],
            s[s.len() - 1],
            m / base,
            s[0] / base_min
        );
    }
    println!(
        "  recorded tick: {words:.1} words = {:.0} bytes written per agent-tick on average; \
         {} frames of {} words an agent = {} bytes per agent per kept tick ({} MB for N = {N})",
        words * 8.0,
        CAPACITY.ticks,
        CAPACITY.words_per_tick,
        CAPACITY.bytes_per_tick(),
        frame_bytes / 1_000_000
    );
    println!(
        "  targets: every agent <= 1.5x untraced ({}), one agent <= 1.05x ({})",
        if medians[1] <= 1.5 * base {
            "met"
        } else {
            "NOT met"
        },
        if medians[2] <= 1.05 * base {
            "met"
        } else {
            "NOT met"
        },
    );
}
