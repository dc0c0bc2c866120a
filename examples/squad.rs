//! Fifty soldiers share one tree and a handful of squad-wide limits.
//!
//! Every soldier runs the same tree, and all their memories are bound to one
//! `TreeShared`, which keeps the limits that span the whole squad: at most
//! one grenade in the air and none within 5 s of the last one (a gate and a
//! global cooldown), at most three soldiers shooting at once (a gate), and
//! flanking only in pairs (a group role). The grenade throw is a deferred
//! action: the behavior asks the game for a throw and keeps running until
//! the game reports that the grenade has landed, a second later, unless
//! the enemy goes out of sight first and the soldier calls the throw off.
//!
//! Each soldier's world (enemy in sight, under fire, wants to flank) comes
//! from its own seeded generator, so every run prints the same lines: one
//! per simulated second, with the soldiers in each behavior and what
//! happened. The limits are checked after every tick; the run fails if one
//! is ever broken.
//!
//! Run it with `cargo run --example squad`.
//!
//! ```text
//! ROOT (prioritized)
//! ├── FLANK           wants to flank; together: 2 (opens when two soldiers want it)
//! ├── THROW_GRENADE   ENEMY_VISIBLE, has a grenade; gate: 1, cooldown: 5 s; deferred action
//! ├── SHOOT           ENEMY_VISIBLE; gate: 3; a burst of 10 ticks
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

use bt_core::{
    Action, ActionOp, ActionState, Outcome, TickInput, Ticket, behavior, deactivate_all, decider,
    group, tick_all, tree,
};

const SOLDIERS: usize = 50;
const HZ: u32 = 30;
const SECONDS: u32 = 60;
const DT: f32 = 1.0 / HZ as f32;
/// The game's action code for a grenade throw.
const GRENADE: u32 = 1;
/// Ticks from a throw's launch to the game's report that it landed.
const THROW_TICKS: u32 = HZ;
/// Ticks of one burst of fire.
const BURST: u8 = 10;
/// Seconds a flanking move lasts.
const FLANK_TIME: f64 = 3.0;

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
}

impl Soldier {
    fn new(i: usize) -> Self {
        let rng = 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1);
        Soldier {
            rng,
            grenades: 1,
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
behavior! { HIDE: Soldier }
behavior! { MOVE_UP: Soldier }

decider! { FLANK: Soldier => FLANK_MOVE, when: |s, _| s.wants_flank, together: 2 }
decider! { THROW_GRENADE: Soldier => THROW,
    needs_all: Decision::ENEMY_VISIBLE,
    when: |s, _| s.grenades > 0,
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

/// A throw the game is carrying out: whose, and the tick it lands.
struct InFlight {
    agent: usize,
    ticket: Ticket,
    lands: u32,
}

/// The behavior deciders counted, in the order of the columns.
const COLUMNS: [&str; 5] = ["THROW_GRENADE", "SHOOT", "FLANK", "TAKE_COVER", "ADVANCE"];
const THROWING: usize = 0;
const SHOOTING: usize = 1;
const FLANKING: usize = 2;

fn main() {
    let mut soldiers: Vec<Soldier> = (0..SOLDIERS).map(Soldier::new).collect();
    // Room for a launch and a cancellation per soldier and tick.
    let shared = SQUAD.new_shared(2 * SOLDIERS);
    let mut memories: Vec<SquadMemory> = (0..SOLDIERS)
        .map(|i| SQUAD.new_memory_in(&shared, i as u64))
        .collect();
    let columns = COLUMNS.map(|name| SQUAD.find(name).expect("a decider of the tree"));

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

    println!(
        "squad: {SOLDIERS} soldiers, {SECONDS} s at {HZ} Hz, one tree ({} B of memory each)",
        SquadMemory::byte_size()
    );
    println!("limits: THROW_GRENADE gate 1 + cooldown 5 s, SHOOT gate 3, FLANK together 2");
    println!("soldiers in each behavior at the end of each second, and what happened in it:\n");
    println!("  time  throw  shoot  flank  cover  advance  waiting  events");

    for t in 0..SECONDS * HZ {
        let now = f64::from(t) / f64::from(HZ);
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
        let report = tick_all(&SQUAD, &mut soldiers, &mut memories, |i, s| {
            TickInput::new(now, DT)
                .with_decision(s.decision())
                .with_agent(i as u32)
        });
        assert_eq!(report.errors, 0, "{:?}", report.first_error);

        // The game picks up what the soldiers asked for.
        shared.drain_actions(|req| {
            let agent = req.agent as usize;
            match req.op {
                ActionOp::Launch(action) => {
                    assert_eq!(action.code, GRENADE);
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
        // The limits, after every tick.
        assert!(counts[THROWING] <= 1, "t={now:.2}: {counts:?}");
        assert!(counts[SHOOTING] <= 3, "t={now:.2}: {counts:?}");
        assert!(counts[FLANKING] <= 2, "t={now:.2}: {counts:?}");
        let gate = |c: usize| shared.gate_count(columns[c]);
        assert_eq!(gate(THROWING), Some(counts[THROWING]));
        assert_eq!(gate(SHOOTING), Some(counts[SHOOTING]));
        let gated = counts[THROWING] + counts[SHOOTING];
        assert_eq!(shared.gates_held(), u64::from(gated));

        if (t + 1) % HZ == 0 {
            // In the flank lobby: waiting for a partner, or admitted.
            let waiting = shared.roles_held() - u64::from(counts[FLANKING]);
            let mut line = format!("  {:>3} s", (t + 1) / HZ);
            for (name, n) in ["throw", "shoot", "flank", "cover", "advance"]
                .iter()
                .zip(counts)
            {
                line += &format!("  {n:>w$}", w = name.len());
            }
            line += &format!("  {waiting:>7}  {}", notes.join(", "));
            println!("{}", line.trim_end());
            notes.clear();
        }
    }

    // The squad leaves the fight: every behavior deactivates, a throw still
    // pending is cancelled, and the gate slots and lobby places come back.
    // Dropping the memories gives back nothing more.
    let end = TickInput::new(f64::from(SECONDS), DT);
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

    // The limits held over the whole run, and something happened under them.
    let gaps: Vec<f64> = throws.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|&g| g >= 5.0 - 1e-6), "{throws:?}");
    for pair in flank_starts.chunks(2) {
        match *pair {
            [a, b] => assert!(b - a <= 1, "partners started at ticks {a} and {b}"),
            // Only the run's last tick may have a partner still to come.
            [a] => assert_eq!(a, SECONDS * HZ - 1, "a soldier flanked alone"),
            _ => unreachable!(),
        }
    }
    assert!(landed > 0, "no grenade landed");
    assert!(starts[SHOOTING] > 0, "nobody shot");
    assert!(!flank_starts.is_empty(), "nobody flanked");

    let min_gap = gaps.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "\n{} throws, at least {min_gap:.2} s apart: {landed} landed, {cancelled} called off",
        throws.len()
    );
    println!(
        "{} bursts of fire, {} flanking pairs (partners at most 1 tick apart)",
        starts[SHOOTING],
        flank_starts.len() / 2
    );
    println!("never more than 1 thrower, 3 shooters or 2 flankers at the end of a tick");
}
