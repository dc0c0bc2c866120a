//! The live server's memory while a game publishes faster than the server
//! takes publishes in, with pages that never read. A test binary of its
//! own: the process's memory is this test's alone.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bt_core::{TickInput, behavior, decider, group, tree};
use bt_viewer::{Capacity, FlightRecorder, LiveServer, Watch};

#[derive(Default, Clone)]
struct Bot {
    id: u32,
    t: u32,
}

behavior! { EAT: Bot }
behavior! { WANDER: Bot }
decider! { EAT_D: Bot => EAT, decide: |b, _| if (b.id + b.t) % 3 == 0 { 1.0 } else { 0.0 } }
decider! { WANDER_D: Bot => WANDER }
group! { ROOT: Bot, prioritized [EAT_D, WANDER_D] }
tree! { BOTS: Bot = ROOT, memory: BotMemory }

fn crowd(n: u32) -> (Vec<Bot>, Vec<BotMemory>) {
    let bots: Vec<Bot> = (0..n).map(|id| Bot { id, t: 0 }).collect();
    let memories = (0..n).map(|i| BOTS.new_memory(u64::from(i))).collect();
    (bots, memories)
}

/// Ticks every bot once through the recorder at tick `t`.
fn step(recorder: &mut FlightRecorder, bots: &mut [Bot], memories: &mut [BotMemory], t: u32) {
    for b in bots.iter_mut() {
        b.t = t;
    }
    let now = f64::from(t) * 0.1;
    recorder.tick_all(&BOTS, bots, memories, |_, _| TickInput::new(now, 0.1));
}

fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|x| x.parse().ok())
        .unwrap()
}

/// 2 000 agents published as fast as the game can, with pages that never
/// read: what waits for the server and for the pages stays bounded (the
/// pages' backlog is 2 MiB each here), and no publish stalls the game.
#[test]
fn ten_times_the_agents_with_pages_that_never_read_stay_bounded() {
    let n = 2_000u32;
    let (mut bots, mut mems) = crowd(n);
    let mut recorder = FlightRecorder::new(&BOTS, n as usize, Watch::All, Capacity::ticks(120));
    step(&mut recorder, &mut bots, &mut mems, 0);
    let mut live = LiveServer::start_with(
        0,
        bt_viewer::Limits {
            backlog_bytes: 2 << 20,
            ..Default::default()
        },
    )
    .expect("a server");
    // Four pages of some lanes and one of every lane, none of which reads
    // after its first bytes.
    let mut idle: Vec<TcpStream> = Vec::new();
    let paths = [
        "/events?first=64",
        "/events?first=64",
        "/events?first=512",
        "/events?agents=1,2,3",
        "/events",
    ];
    let k: usize = std::env::var("PAGES")
        .ok()
        .and_then(|x| x.parse().ok())
        .unwrap_or(5);
    for path in &paths[..k] {
        let mut tcp = TcpStream::connect(live.addr()).unwrap();
        write!(tcp, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
        idle.push(tcp);
    }
    std::thread::sleep(Duration::from_millis(200));
    let before = rss_kib();
    let mut worst = Duration::ZERO;
    let mut peak = before;
    let ticks: u32 = std::env::var("TICKS")
        .ok()
        .and_then(|x| x.parse().ok())
        .unwrap_or(3_000);
    for t in 1..ticks {
        step(&mut recorder, &mut bots, &mut mems, t);
        let t0 = Instant::now();
        live.publish(&recorder);
        if t0.elapsed() > Duration::from_millis(10) {
            eprintln!("slow {t}: {:?}", t0.elapsed());
        }
        worst = worst.max(t0.elapsed());
        if t % 50 == 0 {
            peak = peak.max(rss_kib());
        }
    }
    let at_half = peak;
    for t in ticks..2 * ticks {
        step(&mut recorder, &mut bots, &mut mems, t);
        let t0 = Instant::now();
        live.publish(&recorder);
        worst = worst.max(t0.elapsed());
        if t % 50 == 0 {
            peak = peak.max(rss_kib());
        }
    }
    println!(
        "rss before {before} KiB, after {ticks} publishes +{} MiB, after {} +{} MiB, worst publish {worst:?}, clients {}",
        (at_half - before) / 1024,
        2 * ticks,
        (peak - before) / 1024,
        live.clients()
    );
    // Bounded: twice the publishes take no more than 32 MiB more (the
    // queue between the game and the server grew by 100 MiB and more).
    assert!(
        peak - at_half < 32 * 1024,
        "grew by {} MiB more",
        (peak - at_half) / 1024
    );
    assert!(
        worst < Duration::from_millis(200),
        "a publish took {worst:?}"
    );
}
