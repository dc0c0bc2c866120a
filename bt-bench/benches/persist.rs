//! Save and restore of a W1 crowd: the size of one agent's snapshot in a
//! compact format (postcard) and in JSON, and the time to save and to
//! restore 10 000 agents.
//!
//! ```sh
//! cargo bench -p bt-bench --bench persist
//! ```
//!
//! The crowd runs 300 ticks first, so that its agents are spread over the
//! tree's states (fleeing, guarding, eating, patrolling, idling). Saving
//! writes every agent's memory into one reused buffer; restoring reads each
//! back into a fresh memory (`W1.new_memory` included in the time). Each
//! figure is the median of 7 runs.

#[allow(dead_code)]
#[path = "workloads/world.rs"]
mod world;

#[allow(dead_code)]
#[path = "workloads/w1_core.rs"]
mod w1_core;

use std::hint::black_box;
use std::time::{Duration, Instant};

use w1_core::{Crowd, W1, W1Memory};

const AGENTS: usize = 10_000;
const RUNS: usize = 7;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let mut crowd = Crowd::new(AGENTS);
    for t in 0..300 {
        crowd.tick(t);
    }
    let now = world::now(300);

    let sizes: Vec<usize> = crowd
        .memories
        .iter()
        .map(|m| postcard::to_allocvec(&m.snapshot(now)).unwrap().len())
        .collect();
    let json: usize = crowd.memories.iter().map(|m| serde_json_len(m, now)).sum();
    let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
    let mean = sizes.iter().sum::<usize>() as f64 / AGENTS as f64;
    println!(
        "W1 agent snapshot, postcard: {min}..{max} bytes, mean {mean:.1} (the memory itself: {} bytes)",
        W1Memory::byte_size()
    );
    println!(
        "W1 agent snapshot, JSON: mean {:.1} bytes",
        json as f64 / AGENTS as f64
    );

    let mut buffer = vec![0u8; 256 * AGENTS];
    let mut ends = vec![0usize; AGENTS];
    let mut saves = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let mut at = 0;
        for (m, end) in crowd.memories.iter().zip(&mut ends) {
            let used = postcard::to_slice(&m.snapshot(now), &mut buffer[at..])
                .unwrap()
                .len();
            at += used;
            *end = at;
        }
        saves.push(start.elapsed());
        black_box(&buffer);
    }
    let mut restores = Vec::new();
    let mut restored: Vec<W1Memory> = Vec::with_capacity(AGENTS);
    for _ in 0..RUNS {
        restored.clear();
        let start = Instant::now();
        let mut from = 0;
        for &end in &ends {
            let mut m = W1.new_memory(0);
            m.restore(
                now,
                &mut postcard::Deserializer::from_bytes(&buffer[from..end]),
            )
            .expect("restores");
            restored.push(m);
            from = end;
        }
        restores.push(start.elapsed());
        black_box(&restored);
    }
    for (a, b) in crowd.memories.iter().zip(&restored) {
        assert!(a.active_path().eq(b.active_path()), "restored as saved");
    }
    let (save, restore) = (median(saves), median(restores));
    println!(
        "{AGENTS} agents: save {:.2} ms ({:.0} ns/agent), restore {:.2} ms ({:.0} ns/agent), {} bytes in all",
        save.as_secs_f64() * 1e3,
        save.as_secs_f64() * 1e9 / AGENTS as f64,
        restore.as_secs_f64() * 1e3,
        restore.as_secs_f64() * 1e9 / AGENTS as f64,
        ends.last().unwrap()
    );
}

/// Bytes of `m`'s snapshot in JSON, counted without keeping the text.
fn serde_json_len(m: &W1Memory, now: f64) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    serde_json::to_writer(&mut c, &m.snapshot(now)).unwrap();
    c.0
}
