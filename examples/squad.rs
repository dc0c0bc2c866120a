//! Fifty soldiers share one tree and a handful of squad-wide limits, with
//! the numbers a designer tunes while the game runs.
//!
//! Every soldier runs the same tree, and all their memories are bound to one
//! `TreeShared`, which keeps the limits that span the whole squad: at most
//! one grenade in the air and none within the grenade cooldown of the last
//! one (a gate and a global cooldown), at most a few soldiers shooting at
//! once (a gate), and flanking only in pairs (a group role). A wounded
//! soldier falls back until he has recovered. The grenade throw is a
//! deferred action: the behavior asks the game for a throw and keeps
//! running until the game reports that the grenade has landed, a second
//! later, unless the enemy goes out of sight first and the soldier calls
//! the throw off.
//!
//! The grenade cooldown, the number of shooters and the health below which
//! a soldier falls back are **tunables**: declared with the tree, read by
//! its deciders, and changed while the squad fights, in effect from its
//! next tick.
//!
//! Each soldier's world (enemy in sight, under fire, wants to flank) comes
//! from its own seeded generator, so every run prints the same lines: one
//! per simulated second, with the soldiers in each behavior and what
//! happened. The limits are checked after every tick, with the values in
//! effect; the run fails if one is ever broken.
//!
//! ```sh
//! cargo run --example squad                             # 60 s, as fast as it goes
//! cargo run --example squad -- --tuning squad.toml      # in real time, tuned by the file
//! cargo run --example squad -- --live                   # in real time, tuned from the page
//! cargo run --example squad -- --live --tuning squad.toml --seconds 300 --port 8800
//! ```
//!
//! With `--tuning FILE` the squad runs in real time and watches the file
//! (written with the defaults and their doc lines if it does not exist):
//! save a change and it takes effect at the next tick, or, for a bad file,
//! not at all, with the reason printed. With `--live` it serves the viewer
//! page on loopback (its address is printed), whose panel of tunables
//! changes them, each change marked on the timeline. `--seconds` is the
//! length of the fight (60 by default).
//!
//! ```text
//! ROOT (prioritized)
//! ├── FLANK           wants to flank; together: 2 (opens when two soldiers want it)
//! ├── FALL_BACK       health below FALL_BACK_BELOW; until it is 0.25 above it
//! ├── THROW_GRENADE   ENEMY_VISIBLE, has a grenade; gate: 1, cooldown: GRENADE_COOLDOWN; deferred action
//! ├── SHOOT           ENEMY_VISIBLE; gate: SHOOTERS; a burst of 10 ticks
//! └── MOVE (slot)     select: under fire → TAKE_COVER, else ADVANCE
//!     ├── TAKE_COVER
//!     └── ADVANCE
//! ```
//!
//! FLANK comes first so that nothing splits a pair once it has formed: a
//! soldier waiting for a partner keeps fighting meanwhile (the lobby keeps
//! his place as long as FLANK asks for him every tick), and when the pair
//! forms he drops what he is doing, even a throw, which the game is then
//! told to cancel. The soldier that completes the pair enters at once, the
//! one that was waiting on its next tick, so partners start one tick apart
//! at most.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bt_core::{
    Action, ActionOp, ActionState, Outcome, TickInput, Ticket, TreeShared, TuningFile, behavior,
    deactivate_all, decider, group, tick_all, tree, tunables,
};
use bt_viewer::{Capacity, FlightRecorder, LiveServer, Watch};

const SOLDIERS: usize = 50;
const HZ: u32 = 30;
const DT: f32 = 1.0 / HZ as f32;
/// The game's action code for a grenade throw.
const GRENADE: u32 = 1;
/// Ticks from a throw's launch to the game's report that it landed.
const THROW_TICKS: u32 = HZ;
/// Ticks of one burst of fire.
const BURST: u8 = 10;
/// Seconds a flanking move lasts.
const FLANK_TIME: f64 = 3.0;
/// Health lost a second under fire, and won back a second falling back.
const HIT: f64 = 0.06;
const HEAL: f64 = 0.15;
/// How far above the threshold a soldier recovers before he goes back.
const RECOVERED: f64 = 0.25;

tunables! { SQUAD_TUNING:
    /// Seconds after a grenade before the squad throws another.
    GRENADE_COOLDOWN: f64 = 5.0, 0.0..=60.0;
    /// Soldiers that may shoot at once.
    SHOOTERS: i64 = 3, 1..=50;
    /// Health below which a soldier falls back (1 is unhurt).
    FALL_BACK_BELOW: f64 = 0.25, 0.0..=0.75;
}

bt_core::bitflags::bitflags! {
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
    /// The enemy in sight, by the game's entity id.
    target: u64,
    /// 1 unhurt; lost under fire, won back falling back.
    health: f64,
}

impl Soldier {
    fn new(i: usize) -> Self {
        let rng = 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1);
        Soldier {
            rng,
            grenades: 1,
            health: 1.0,
            ..Soldier::default()
        }
    }

    /// True with a probability of `per_second` events a second, this tick.
    fn chance(&mut self, per_second: f64) -> bool {
        let draw = (next(&mut self.rng) >> 11) as f64 / (1u64 << 53) as f64;
        draw < per_second * f64::from(DT)
    }

    /// The world moves: enemies come into sight and go, fire comes and goes,
    /// and a pinned-down soldier may decide to flank (until he has).
    fn live(&mut self) {
        if self.enemy_visible {
            self.enemy_visible = !self.chance(0.5);
        } else if self.chance(0.3) {
            self.enemy_visible = true;
            self.target = 1000 + next(&mut self.rng) % 8;
        }
        self.under_fire ^= self.chance(if self.under_fire { 0.4 } else { 0.2 });
        let pinned = self.under_fire && !self.enemy_visible;
        self.wants_flank |= pinned && self.chance(0.05);
        if self.under_fire {
            self.health = (self.health - HIT * f64::from(DT)).max(0.0);
        }
    }

    fn decision(&self) -> Decision {
        let mut flags = Decision::empty();
        flags.set(Decision::ENEMY_VISIBLE, self.enemy_visible);
        flags
    }
}

/// xorshift64*: the world's generator.
fn next(s: &mut u64) -> u64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

/// SHOOT's memory block: ticks fired in this burst.
#[derive(Default)]
struct Burst(u8);

behavior! { FLANK_MOVE: Soldier,
    tick: |_s, cx| cx.time_active() < FLANK_TIME,
    deactivate: |s, _cx| s.wants_flank = false,
}
// The grenade is readied while the game carries out the throw; the soldier
// calls it off if the enemy goes out of sight before it leaves his hand
// (the behavior then ends with the throw pending, and the game is told to
// cancel it). It ends too once the game reports back.
behavior! { THROW: Soldier,
    launch: |s, _cx| Some(Action::new(GRENADE, s.target)),
    tick: |s, cx| s.enemy_visible && cx.action == ActionState::Pending,
}
behavior! { FIRE: Soldier, memory: Burst,
    tick: |_s, m, _cx| {
        m.0 += 1;
        m.0 < BURST
    },
}
// Out of the fight until the soldier has won back some health. Its
// context is typed by the squad's table: a read is one load.
behavior! { RETREAT: Soldier, tunables: SQUAD_TUNING,
    tick: |s, cx| {
        s.health = (s.health + HEAL * f64::from(DT)).min(1.0);
        s.health < cx.tuned(FALL_BACK_BELOW) + RECOVERED
    },
}
behavior! { HIDE: Soldier }
behavior! { MOVE_UP: Soldier }

decider! { FLANK: Soldier => FLANK_MOVE, when: |s, _| s.wants_flank, together: 2 }
decider! { FALL_BACK: Soldier => RETREAT, when: |s, d| s.health < d.tuned(FALL_BACK_BELOW) }
decider! { THROW_GRENADE: Soldier => THROW,
    needs_all: Decision::ENEMY_VISIBLE,
    when: |s, _| s.grenades > 0,
    gate: 1,
    cooldown: tunable(GRENADE_COOLDOWN),
}
decider! { SHOOT: Soldier => FIRE, needs_all: Decision::ENEMY_VISIBLE, gate: tunable(SHOOTERS) }
decider! { TAKE_COVER: Soldier => HIDE }
decider! { ADVANCE: Soldier => MOVE_UP }
group! { MOVE: Soldier, slot [TAKE_COVER, ADVANCE],
    select: |s| Some(if s.under_fire { 0 } else { 1 }),
}
group! { ROOT: Soldier, prioritized [FLANK, FALL_BACK, THROW_GRENADE, SHOOT, MOVE] }
tree! { SQUAD: Soldier = ROOT, memory: SquadMemory, tunables: SQUAD_TUNING }

/// A throw the game is carrying out: whose, and the tick it lands.
struct InFlight {
    agent: usize,
    ticket: Ticket,
    lands: u32,
}

/// The behavior deciders counted, in the order of the columns.
const COLUMNS: [&str; 6] = [
    "THROW_GRENADE",
    "SHOOT",
    "FLANK",
    "FALL_BACK",
    "TAKE_COVER",
    "ADVANCE",
];
const THROWING: usize = 0;
const SHOOTING: usize = 1;
const FLANKING: usize = 2;
const FALLING_BACK: usize = 3;

/// How the squad runs, from the command line.
struct Options {
    seconds: u32,
    /// `--tuning FILE`: the file watched.
    tuning: Option<PathBuf>,
    /// `--live`: the port (`--port`, any free one by default).
    live: Option<u16>,
    /// Whether ticks follow the wall clock (when a designer tunes the
    /// squad) or go as fast as they can.
    real_time: bool,
}

impl Options {
    fn parse() -> Self {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let value = |name: &str| {
            let at = args.iter().position(|a| a == name)?;
            let value = args.get(at + 1);
            Some(value.unwrap_or_else(|| fail(&format!("{name}: give a value after it"))))
        };
        let number = |name: &str| {
            value(name).map(|v| {
                v.parse::<u32>()
                    .unwrap_or_else(|_| fail(&format!("{name} {v}: not a whole number")))
            })
        };
        let tuning = value("--tuning").map(PathBuf::from);
        let live = args.iter().any(|a| a == "--live").then(|| {
            let port = number("--port").unwrap_or(0);
            u16::try_from(port).unwrap_or_else(|_| fail(&format!("--port {port}: too large")))
        });
        Options {
            seconds: number("--seconds").unwrap_or(60),
            // A run that a designer tunes goes in real time.
            real_time: tuning.is_some() || live.is_some(),
            tuning,
            live,
        }
    }
}

fn fail(why: &str) -> ! {
    eprintln!("squad: {why}");
    std::process::exit(2)
}

/// Watches the tuning file, written with the defaults if it is missing.
fn watch(path: &Path, shared: &Arc<TreeShared>, say: &mut dyn FnMut(String)) -> TuningFile {
    if !path.exists() {
        TuningFile::write_defaults(path, &SQUAD_TUNING)
            .unwrap_or_else(|e| fail(&format!("writing {}: {e}", path.display())));
        say(format!(
            "wrote the defaults to {}: edit and save it",
            path.display()
        ));
    }
    TuningFile::watch(path, [shared]).unwrap_or_else(|e| fail(&e.to_string()))
}

/// The values in effect, for a line of the report.
fn tuning(shared: &TreeShared) -> String {
    format!(
        "grenade cooldown {} s, {} shooters, fall back below {}",
        shared.tuned(GRENADE_COOLDOWN),
        shared.tuned(SHOOTERS),
        shared.tuned(FALL_BACK_BELOW)
    )
}

/// The live page: a server, and the recorder whose ticks it streams (the
/// last 10 s of every soldier).
struct Live {
    server: LiveServer,
    recorder: FlightRecorder,
}

fn main() {
    run(&Options::parse(), &mut |line| println!("{line}"));
}

/// The fight, each line of its report given to `say`.
fn run(options: &Options, say: &mut dyn FnMut(String)) {
    let ticks = options.seconds * HZ;
    let mut soldiers: Vec<Soldier> = (0..SOLDIERS).map(Soldier::new).collect();
    // Room for a launch and a cancellation per soldier and tick.
    let shared = SQUAD.new_shared(2 * SOLDIERS);
    let mut memories: Vec<SquadMemory> = (0..SOLDIERS)
        .map(|i| SQUAD.new_memory_in(&shared, i as u64))
        .collect();
    let columns = COLUMNS.map(|name| SQUAD.find(name).expect("a decider of the tree"));
    let mut file = options
        .tuning
        .as_ref()
        .map(|path| watch(path, &shared, say));
    let mut live = options.live.map(|port| {
        let server = LiveServer::start(port).unwrap_or_else(|e| fail(&format!("--live: {e}")));
        say(format!("live view: {}", server.url()));
        let capacity = Capacity::new(10 * HZ as usize, 16);
        let recorder = FlightRecorder::new(&SQUAD, SOLDIERS, Watch::All, capacity);
        Live { server, recorder }
    });

    let mut in_flight: Vec<InFlight> = Vec::new();
    let mut throws: Vec<f64> = Vec::new(); // launch times
    let mut landed = 0;
    let mut cancelled = 0;
    // Per soldier, the column it ran after the last tick; per column, how
    // many times soldiers entered it; the ticks at which one began to flank.
    let mut was: Vec<Option<usize>> = vec![None; SOLDIERS];
    let mut starts = [0u32; COLUMNS.len()];
    let mut flank_starts: Vec<u32> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    // The shooters after the last tick, and the changes of values seen.
    let mut shooters = 0;
    let mut changes = shared.tuning_changes();

    say(format!(
        "squad: {SOLDIERS} soldiers, {} s at {HZ} Hz, one tree ({} B of memory each)",
        options.seconds,
        SquadMemory::byte_size()
    ));
    say(format!(
        "limits: THROW_GRENADE gate 1 + cooldown, SHOOT gate, FLANK together 2; {}",
        tuning(&shared)
    ));
    say("soldiers in each behavior at the end of each second, and what happened in it:\n".into());
    say("  time  throw  shoot  flank  back  cover  advance  waiting  events".into());

    let mut clock = Instant::now();
    for t in 0..ticks {
        let now = f64::from(t) / f64::from(HZ);
        // A saved tuning file is staged whole, or not at all.
        while let Some(read) = file.as_mut().and_then(TuningFile::poll) {
            match read {
                Ok(read) if read.changed.is_empty() => {}
                Ok(read) => notes.push(format!("the file changes {}", read.changed.join(", "))),
                Err(e) => say(format!("        {e}")),
            }
        }
        // The game reports the throws that have landed.
        in_flight.retain(|f| {
            if f.lands > t {
                return true;
            }
            let done = memories[f.agent].complete(f.ticket, Outcome::Succeeded);
            assert!(done, "soldier {}: a landed throw was not pending", f.agent);
            soldiers[f.agent].grenades -= 1;
            landed += 1;
            false
        });
        soldiers.iter_mut().for_each(Soldier::live);
        let input = |i: usize, s: &mut Soldier| {
            TickInput::new(now, DT)
                .with_decision(s.decision())
                .with_agent(i as u32)
        };
        let report = match &mut live {
            Some(live) => live
                .recorder
                .tick_all(&SQUAD, &mut soldiers, &mut memories, input),
            None => tick_all(&SQUAD, &mut soldiers, &mut memories, input),
        };
        assert_eq!(report.errors, 0, "{:?}", report.first_error);
        if shared.tuning_changes() != changes {
            changes = shared.tuning_changes();
            notes.push(format!("now {}", tuning(&shared)));
        }

        // The game picks up what the soldiers asked for.
        shared.drain_actions(|req| {
            let agent = req.agent as usize;
            match req.op {
                ActionOp::Launch(action) => {
                    assert_eq!(action.code, GRENADE);
                    // The cooldown in effect when the throw was decided.
                    let cooldown = shared.tuned(GRENADE_COOLDOWN);
                    if let Some(last) = throws.last() {
                        let gap = now - last;
                        assert!(gap >= cooldown - 1e-6, "t={now:.2}: {gap} s after a throw");
                    }
                    throws.push(now);
                    in_flight.push(InFlight {
                        agent,
                        ticket: req.ticket,
                        lands: t + THROW_TICKS,
                    });
                    notes.push(format!("#{agent} throws at enemy {}", action.arg));
                }
                ActionOp::Cancel => {
                    cancelled += 1;
                    in_flight.retain(|f| f.agent != agent || f.ticket != req.ticket);
                    notes.push(format!("#{agent} calls it off"));
                }
            }
        });

        // Who runs what, read from each memory's active leaf.
        let mut counts = [0u32; COLUMNS.len()];
        for (i, memory) in memories.iter().enumerate() {
            let leaf = memory.leaf().expect("MOVE always accepts");
            let column = columns.iter().position(|&c| c == leaf);
            if let Some(c) = column {
                counts[c] += 1;
            }
            if let Some(c) = column.filter(|_| was[i] != column) {
                starts[c] += 1;
                if c == FLANKING {
                    flank_starts.push(t);
                    notes.push(format!("#{i} flanks"));
                }
            }
            was[i] = column;
        }
        // The limits, after every tick, with the values in effect: a gate
        // made smaller than the soldiers inside admits no one until enough
        // have left.
        let gate_size = u32::try_from(shared.tuned(SHOOTERS)).expect("1 to 50");
        assert!(counts[THROWING] <= 1, "t={now:.2}: {counts:?}");
        assert!(
            counts[SHOOTING] <= gate_size.max(shooters),
            "t={now:.2}: {counts:?}"
        );
        assert!(counts[FLANKING] <= 2, "t={now:.2}: {counts:?}");
        shooters = counts[SHOOTING];
        let gate = |c: usize| shared.gate_count(columns[c]);
        assert_eq!(gate(THROWING), Some(counts[THROWING]));
        assert_eq!(gate(SHOOTING), Some(counts[SHOOTING]));
        let gated = counts[THROWING] + counts[SHOOTING];
        assert_eq!(shared.gates_held(), u64::from(gated));

        if (t + 1) % HZ == 0 {
            // In the flank lobby: waiting for a partner, or admitted.
            let waiting = shared.roles_held() - u64::from(counts[FLANKING]);
            let mut line = format!("  {:>3} s", (t + 1) / HZ);
            for (name, n) in ["throw", "shoot", "flank", "back", "cover", "advance"]
                .iter()
                .zip(counts)
            {
                line += &format!("  {n:>w$}", w = name.len());
            }
            line += &format!("  {waiting:>7}  {}", notes.join(", "));
            say(line.trim_end().to_owned());
            notes.clear();
        }
        if let Some(live) = &mut live {
            // Publishes to the pages, takes their changes of tunables (in
            // effect from the next tick), and waits while one keeps the
            // squad paused; after a pause the squad goes on at its pace.
            let before = Instant::now();
            live.server.frame(&live.recorder);
            let waited = before.elapsed();
            if waited.as_secs_f64() * f64::from(HZ) > 1.0 {
                clock += waited;
            }
        }
        if options.real_time {
            let due = clock + Duration::from_secs_f64(f64::from(t + 1) / f64::from(HZ));
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
        }
    }

    // The squad leaves the fight: every behavior deactivates, a throw still
    // pending is cancelled, and the gate slots and lobby places come back.
    // Dropping the memories gives back nothing more.
    let end = TickInput::new(f64::from(options.seconds), DT);
    for (soldier, memory) in soldiers.iter_mut().zip(&mut memories) {
        deactivate_all(&SQUAD, soldier, memory, &end).expect("same tree, valid input");
    }
    shared.drain_actions(|req| {
        assert_eq!(req.op, ActionOp::Cancel, "only cancellations now");
        in_flight.retain(|f| f.agent != req.agent as usize || f.ticket != req.ticket);
        cancelled += 1;
    });
    assert!(in_flight.is_empty(), "every pending throw was cancelled");
    assert_eq!(shared.gates_held(), 0, "gate slots after deactivate_all");
    assert_eq!(shared.roles_held(), 0, "lobby places after deactivate_all");
    drop(memories);
    assert_eq!(shared.gates_held(), 0, "gate slots after the drop");
    assert_eq!(shared.roles_held(), 0, "places in the lobby after the drop");
    assert_eq!(shared.lost_requests(), 0, "queue overflow");

    for pair in flank_starts.chunks(2) {
        match *pair {
            [a, b] => assert!(b - a <= 1, "partners started at ticks {a} and {b}"),
            // Only the run's last tick may have a partner still to come.
            [a] => assert_eq!(a, ticks - 1, "a soldier flanked alone"),
            _ => unreachable!(),
        }
    }
    if options.seconds >= 60 && options.tuning.is_none() && options.live.is_none() {
        // The default fight: something happened under the limits.
        assert!(landed > 0, "no grenade landed");
        assert!(starts[SHOOTING] > 0, "nobody shot");
        assert!(!flank_starts.is_empty(), "nobody flanked");
        assert!(starts[FALLING_BACK] > 0, "nobody fell back");
    }

    let gaps = throws.windows(2).map(|w| w[1] - w[0]);
    let min_gap = gaps.fold(f64::INFINITY, f64::min);
    say(format!(
        "\n{} throws, at least {min_gap:.2} s apart: {landed} landed, {cancelled} called off",
        throws.len()
    ));
    say(format!(
        "{} bursts of fire, {} flanking pairs (partners at most 1 tick apart), {} times fell back",
        starts[SHOOTING],
        flank_starts.len() / 2,
        starts[FALLING_BACK]
    ));
    say("never more than 1 thrower, the shooters' gate or 2 flankers at the end of a tick".into());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder of the test's own, removed when dropped.
    struct Folder(PathBuf);

    impl Folder {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("bt-squad-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Folder(dir)
        }
    }

    impl Drop for Folder {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// The report of a fight of `seconds` tuned by the file `file`.
    fn fight(seconds: u32, file: &Path, real_time: bool) -> Vec<String> {
        let options = Options {
            seconds,
            tuning: Some(file.to_owned()),
            live: None,
            real_time,
        };
        let mut lines = Vec::new();
        run(&options, &mut |line| lines.push(line));
        lines
    }

    /// The shortest time between two throws the report gives.
    fn least_gap(lines: &[String]) -> f64 {
        let line = lines.iter().find(|l| l.contains(" s apart")).unwrap();
        let at = line.find("at least ").unwrap() + "at least ".len();
        line[at..].split(' ').next().unwrap().parse().unwrap()
    }

    #[test]
    fn a_file_there_before_the_fight_sets_its_limits_from_the_first_tick() {
        let folder = Folder::new("before");
        let file = folder.0.join("squad.toml");
        std::fs::write(&file, "GRENADE_COOLDOWN = 20.0\nSHOOTERS = 1\n").unwrap();
        let lines = fight(60, &file, false);
        let first = lines.iter().position(|l| l.starts_with("    1 s")).unwrap();
        assert!(
            lines[first].contains("the file changes GRENADE_COOLDOWN, SHOOTERS")
                && lines[first].contains("now grenade cooldown 20 s, 1 shooters"),
            "{lines:#?}"
        );
        // The fight checks its limits with the values in effect; the
        // throws are now the new cooldown apart (5 s by default).
        assert!(least_gap(&lines) >= 20.0, "{lines:#?}");
    }

    #[test]
    fn a_bad_file_changes_nothing_and_says_which_key_and_line() {
        let folder = Folder::new("bad");
        let file = folder.0.join("squad.toml");
        std::fs::write(&file, "GRENADE_COOLDOWN = 20.0\nSHOOTERS = 0\n").unwrap();
        let lines = fight(60, &file, false);
        let said = lines.iter().find(|l| l.contains("SHOOTERS")).unwrap();
        assert!(
            said.contains("squad.toml:2: tunable `SHOOTERS`: 0 is outside 1..=50"),
            "{said}"
        );
        assert!(
            !lines.iter().any(|l| l.contains("now grenade")),
            "{lines:#?}"
        );
        assert!(least_gap(&lines) < 20.0, "{lines:#?}");
    }

    #[test]
    fn a_file_saved_during_the_fight_takes_effect_in_it() {
        let folder = Folder::new("during");
        let file = folder.0.join("squad.toml");
        let writer = {
            let file = file.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(1200));
                std::fs::write(&file, "SHOOTERS = 2\nFALL_BACK_BELOW = 0.5\n").unwrap();
            })
        };
        let lines = fight(4, &file, true);
        writer.join().unwrap();
        // The missing file was written with the defaults, which change
        // nothing; the saved one takes effect a second or more in.
        assert!(lines[0].starts_with("wrote the defaults to"), "{lines:#?}");
        let changed = lines
            .iter()
            .position(|l| l.contains("now grenade cooldown 5 s, 2 shooters, fall back below 0.5"))
            .unwrap_or_else(|| panic!("{lines:#?}"));
        let first = lines.iter().position(|l| l.starts_with("    1 s")).unwrap();
        assert!(changed > first, "{lines:#?}");
        assert!(lines[changed].contains("the file changes SHOOTERS, FALL_BACK_BELOW"));
    }
}
