//! The decision viewer on a squad of soldiers.
//!
//! Twenty soldiers share one tree with squad-wide limits (a grenade gate
//! and cooldown, a gate on shooting, flanking in pairs) and a deferred
//! action (the throw). A flight recorder keeps every soldier's ticks and
//! its own values (grenades left, under fire, enemy in sight); the
//! program writes the recording and the viewer page under
//! `target/viewer/` and prints the page's path: open it in a browser.
//!
//! ```sh
//! cargo run --example viewer                      # writes target/viewer/viewer.html
//! cargo run --example viewer -- --live            # serves the page on 127.0.0.1, 60 s
//! cargo run --example viewer -- --live --seconds 5 --port 8800
//! cargo run --example viewer -- --live --ticks 90  # stops after 90 ticks
//! ```
//!
//! With `--live` it serves the page on loopback and runs the squad in real
//! time, streaming each tick (and each soldier's values) to the page, which can pause it, step it one
//! tick at a time and set breakpoints; it stops by itself after
//! `--seconds` (60 by default, time spent paused included) or `--ticks`,
//! whichever comes first.
//!
//! ```text
//! ROOT (prioritized)
//! ├── FLANK           wants to flank; together: 2
//! ├── THROW_GRENADE   ENEMY_VISIBLE, has a grenade; gate: 1, cooldown: 5 s; deferred action
//! ├── SHOOT           ENEMY_VISIBLE; gate: 3; a burst of 10 ticks
//! └── MOVE (slot)     select: under fire → TAKE_COVER, else ADVANCE
//!     ├── TAKE_COVER
//!     └── ADVANCE
//! ```

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bt_core::{
    Action, ActionOp, ActionState, Outcome, TickInput, Ticket, behavior, decider, group, tree,
};
use bt_viewer::{
    AgentData, Capacity, DataCapacity, DataOut, FlightRecorder, LiveServer, Watch, write_page,
};

const SOLDIERS: usize = 20;
const HZ: u32 = 30;
const DT: f32 = 1.0 / HZ as f32;
/// Ticks recorded when writing the page: 20 s.
const TICKS: u32 = 20 * HZ;
const GRENADE: u32 = 1;

bitflags::bitflags! {
    /// Decision flags, made from the soldier each tick.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Decision: u32 {
        const ENEMY_VISIBLE = 1 << 0;
    }
}

/// One soldier and what it perceives.
#[derive(Default)]
struct Soldier {
    rng: u64,
    enemy_visible: bool,
    under_fire: bool,
    wants_flank: bool,
    grenades: u8,
}

impl Soldier {
    fn new(i: usize) -> Self {
        Soldier {
            rng: 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1),
            grenades: 2,
            ..Soldier::default()
        }
    }

    fn chance(&mut self, per_second: f64) -> bool {
        let s = &mut self.rng;
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        let draw = (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
        draw < per_second * f64::from(DT)
    }

    fn live(&mut self) {
        self.enemy_visible ^= self.chance(if self.enemy_visible { 0.5 } else { 0.3 });
        self.under_fire ^= self.chance(if self.under_fire { 0.4 } else { 0.2 });
        let pinned = self.under_fire && !self.enemy_visible;
        self.wants_flank |= pinned && self.chance(0.1);
    }

    fn input(&self, i: usize, now: f64) -> TickInput {
        let mut flags = Decision::empty();
        flags.set(Decision::ENEMY_VISIBLE, self.enemy_visible);
        TickInput::new(now, DT)
            .with_decision(flags)
            .with_agent(i as u32)
    }
}

/// What the viewer shows beside each soldier's decisions, and plots under
/// its lane.
impl AgentData for Soldier {
    fn record(&self, out: &mut DataOut<'_>) {
        out.num("grenades", f64::from(self.grenades));
        out.num("under_fire", f64::from(u8::from(self.under_fire)));
        out.text("enemy", if self.enemy_visible { "in sight" } else { "-" });
        out.text("flank", if self.wants_flank { "wanted" } else { "-" });
    }
}

fn accept(yes: bool) -> f32 {
    if yes { 1.0 } else { 0.0 }
}

/// SHOOT's memory block: ticks fired in this burst.
#[derive(Default)]
struct Burst(u8);

behavior! { FLANK_MOVE: Soldier,
    tick: |_s, cx| cx.time_active() < 3.0,
    deactivate: |s, _cx| s.wants_flank = false,
}
behavior! { THROW: Soldier,
    launch: |_s, _cx| Some(Action::new(GRENADE, 0)),
    tick: |s, cx| s.enemy_visible && cx.action == ActionState::Pending,
}
behavior! { FIRE: Soldier, memory: Burst,
    tick: |_s, m, _cx| {
        m.0 += 1;
        m.0 < 10
    },
}
behavior! { HIDE: Soldier }
behavior! { MOVE_UP: Soldier }

decider! { FLANK: Soldier => FLANK_MOVE, decide: |s, _| accept(s.wants_flank), together: 2 }
decider! { THROW_GRENADE: Soldier => THROW,
    needs_all: Decision::ENEMY_VISIBLE,
    decide: |s, _| accept(s.grenades > 0),
    gate: 1,
    cooldown: 5.0,
}
decider! { SHOOT: Soldier => FIRE, needs_all: Decision::ENEMY_VISIBLE, gate: 3 }
decider! { TAKE_COVER: Soldier => HIDE }
decider! { ADVANCE: Soldier => MOVE_UP }
group! { MOVE: Soldier, slot [TAKE_COVER, ADVANCE],
    select: |s| Some(if s.under_fire { 0 } else { 1 }),
}
group! { ROOT: Soldier, prioritized [FLANK, THROW_GRENADE, SHOOT, MOVE] }
tree! { SQUAD: Soldier = ROOT, memory: SquadMemory }

/// The squad and its game: soldiers, memories, throws in flight.
struct Squad {
    soldiers: Vec<Soldier>,
    memories: Vec<SquadMemory>,
    shared: std::sync::Arc<bt_core::TreeShared>,
    /// (soldier, ticket, tick it lands)
    in_flight: Vec<(usize, Ticket, u32)>,
}

impl Squad {
    fn new() -> Self {
        let shared = SQUAD.new_shared(2 * SOLDIERS);
        Squad {
            soldiers: (0..SOLDIERS).map(Soldier::new).collect(),
            memories: (0..SOLDIERS)
                .map(|i| SQUAD.new_memory_in(&shared, i as u64))
                .collect(),
            shared,
            in_flight: Vec::new(),
        }
    }

    /// One tick of the world and of every soldier, through the recorder.
    fn tick(&mut self, t: u32, recorder: &mut FlightRecorder) {
        let now = f64::from(t) / f64::from(HZ);
        let memories = &mut self.memories;
        let soldiers = &mut self.soldiers;
        self.in_flight.retain(|&(agent, ticket, lands)| {
            if lands > t {
                return true;
            }
            memories[agent].complete(ticket, Outcome::Succeeded);
            soldiers[agent].grenades = soldiers[agent].grenades.saturating_sub(1);
            false
        });
        soldiers.iter_mut().for_each(Soldier::live);
        let report =
            recorder.tick_all_with_data(&SQUAD, soldiers, memories, |i, s| s.input(i, now));
        assert_eq!(report.errors, 0, "{:?}", report.first_error);
        let in_flight = &mut self.in_flight;
        self.shared.drain_actions(|req| match req.op {
            ActionOp::Launch(_) => in_flight.push((req.agent as usize, req.ticket, t + HZ)),
            ActionOp::Cancel => {
                in_flight.retain(|f| f.1 != req.ticket || f.0 != req.agent as usize)
            }
        });
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(|v| {
                v.parse::<u64>()
                    .unwrap_or_else(|_| panic!("{name}: a number"))
            })
    };
    if args.iter().any(|a| a == "--live") {
        live(
            value("--port").unwrap_or(0) as u16,
            value("--seconds").unwrap_or(60),
            value("--ticks").unwrap_or(u64::MAX),
        );
    } else {
        offline();
    }
}

/// Records the whole run and writes the page.
fn offline() {
    let mut squad = Squad::new();
    let mut recorder = FlightRecorder::new(
        &SQUAD,
        SOLDIERS,
        Watch::All,
        Capacity::new(TICKS as usize, 16),
    )
    .with_data(DataCapacity::new(4, 32))
    .name_decision_flags::<Decision>();
    for t in 0..TICKS {
        squad.tick(t, &mut recorder);
    }
    let json = recorder.export_compact().to_json();
    let dir = target_dir().join("viewer");
    let page = write_page(&dir, &json).expect("writing the page");
    println!(
        "recorded {SOLDIERS} soldiers x {TICKS} ticks ({} KiB of frames, {:.1} words a tick)",
        recorder.frame_bytes() / 1024,
        recorder.mean_words_per_tick()
    );
    println!("recording: {}", dir.join("recording.json").display());
    println!("open this page in a browser: {}", page.display());
}

/// Serves the page and streams the squad's ticks in real time.
fn live(port: u16, seconds: u64, ticks: u64) {
    let mut server = LiveServer::start(port).expect("binding 127.0.0.1");
    println!("live view: {}  (stops after {seconds} s)", server.url());
    let mut squad = Squad::new();
    // The last 10 s of every soldier.
    let mut recorder = FlightRecorder::new(
        &SQUAD,
        SOLDIERS,
        Watch::All,
        Capacity::new(10 * HZ as usize, 16),
    )
    .with_data(DataCapacity::new(4, 32))
    .name_decision_flags::<Decision>();
    let start = Instant::now();
    let mut clock = start;
    let mut t = 0;
    while start.elapsed() < Duration::from_secs(seconds) && u64::from(t) < ticks {
        squad.tick(t, &mut recorder);
        // Publishes to the pages, and waits while one keeps the squad paused.
        let before = Instant::now();
        server.frame(&recorder);
        // After a pause the squad goes on at its pace, without catching up.
        let waited = before.elapsed();
        if waited.as_secs_f64() * f64::from(HZ) > 1.0 {
            clock += waited;
        }
        t += 1;
        let due = clock + Duration::from_secs_f64(f64::from(t) / f64::from(HZ));
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
    }
    println!("stopped after {t} ticks");
}

/// `target/` of the workspace (or `CARGO_TARGET_DIR`).
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}
