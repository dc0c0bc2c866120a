//! Every group policy at work in one tree: a house cat's afternoon.
//!
//! Kit plays when nothing else is going on, stalks whatever is most worth
//! stalking, wanders off when restless, eats when hungry and the bowl is
//! full, and runs or hides when something frightens it. The world is a
//! fixed script (48 ticks of 0.5 s) and the cat's own generator has a fixed
//! seed, so every run prints the same lines: each change of the active path,
//! the world events that cause it, and at the end the plays in the order the
//! shuffle drew them.
//!
//! Run it with `cargo run --example policies`.
//!
//! ```text
//! ROOT (prioritized)
//! ├── ALARM (prioritized, DELEGATE_DECIDE)   accepts iff a child does
//! │   ├── RUN_FROM_DOG                       the dog is near
//! │   └── HIDE_FROM_THUNDER                  it thunders
//! ├── EAT (sequential, CALL_DECIDE_ON_REDECIDE)  hungry, and the bowl is full
//! │   ├── GO_TO_BOWL
//! │   ├── SNIFF_BOWL
//! │   └── EAT_FROM_BOWL
//! ├── CHOOSE_TARGET (scored)                 interest / distance, every tick
//! │   ├── STALK_MOUSE
//! │   └── STALK_BIRD
//! ├── ROAM (random)                          restless; weighted by place
//! │   ├── ROAM_GARDEN                        weight 1
//! │   ├── ROAM_ROOF                          weight 3
//! │   └── ROAM_SHED                          rejects: the door is shut
//! └── IDLE (shuffle)                         every play once per round
//!     └── PLAY_STRETCH, PLAY_YAWN, PLAY_GROOM, PLAY_ROLL
//! ```
//!
//! `DELEGATE_DECIDE` goes beyond Spore, which had no such flag: only a
//! helper function (`DelegateDecideToChildren`) that a group's own `decide`
//! could call, with caveats. A group with the flag has no `decide` at all;
//! it accepts exactly when one of its children would, and activates that
//! child without calling the child's `decide` a second time.

use bt_core::{Ctx, TickInput, behavior, decider, group, tick, tree};

/// Seconds per tick.
const DT: f32 = 0.5;
/// Ticks the script runs.
const TICKS: u32 = 48;
/// Seed of the cat's own generator: it drives ROAM's draws and IDLE's shuffle.
const SEED: u64 = 2024;

/// Something worth stalking: how interesting, and how far (m).
#[derive(Clone, Copy)]
struct Target {
    interest: f32,
    distance: f32,
}

/// The agent: the cat and what it perceives.
#[derive(Default)]
struct Kit {
    hungry: bool,
    bowl_full: bool,
    restless: bool,
    thunder: bool,
    dog_near: bool,
    mouse: Option<Target>,
    bird: Option<Target>,
    /// The plays, in the order IDLE drew them.
    plays: Vec<&'static str>,
    /// What the cat did this tick, printed after it.
    notes: Vec<String>,
}

/// A target's score: interest over distance; 0 (reject) when there is none.
fn score(target: Option<Target>) -> f32 {
    target.map_or(0.0, |t| t.interest / t.distance)
}

/// Whether a behavior that lasts `seconds` goes on: false on the tick that
/// completes them.
fn lasts(cx: &Ctx, seconds: f64) -> bool {
    cx.time_active() < seconds
}

// ---------------------------------------------------------------------------
// Behaviors. `tick` returning false ends the behavior.

/// A play animation of one second; IDLE's shuffle records the order.
macro_rules! play {
    ($($name:ident),*) => {$(
        behavior! { $name: Kit,
            activate: |c, _cx| { c.plays.push(stringify!($name)); true },
            tick: |_c, cx| lasts(cx, 1.0),
        }
    )*};
}
play!(STRETCH, YAWN, GROOM, ROLL);

bt_core::bitflags::bitflags! {
    /// Which target a STALK decider hunts: its behavior flags word.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Prey: u32 {
        const MOUSE = 1 << 0;
        const BIRD = 1 << 1;
    }
}

behavior! {
    /// Creeps up on the target named by the flags word, while it is there.
    STALK: Kit,
    tick: |c, cx| match cx.flags_as::<Prey>() {
        Prey::MOUSE => c.mouse.is_some(),
        _ => c.bird.is_some(),
    },
}
behavior! {
    /// A walk of a second and a half; it settles the restlessness.
    WANDER: Kit,
    tick: |c, cx| {
        let going = lasts(cx, 1.5);
        c.restless &= going;
        going
    },
}
behavior! { WALK_TO_BOWL: Kit, tick: |_c, cx| lasts(cx, 1.0) }
behavior! { SNIFF: Kit, tick: |_c, cx| lasts(cx, 0.5) }
behavior! {
    EAT_UP: Kit,
    tick: |c, cx| {
        if lasts(cx, 1.5) {
            return true;
        }
        c.hungry = false;
        c.bowl_full = false;
        c.notes.push("Kit: licks the bowl clean".into());
        false
    },
}
behavior! {
    RUN_AWAY: Kit,
    tick: |c, cx| {
        if lasts(cx, 1.5) {
            return true;
        }
        c.dog_near = false;
        c.notes.push("Kit: safe on the fence".into());
        false
    },
}
behavior! { HIDE: Kit, tick: |c, _cx| c.thunder }

// ---------------------------------------------------------------------------
// Deciders.

decider! { RUN_FROM_DOG: Kit => RUN_AWAY, when: |c, _| c.dog_near }
decider! { HIDE_FROM_THUNDER: Kit => HIDE, when: |c, _| c.thunder }
// ALARM has no decide of its own: it accepts when RUN_FROM_DOG or
// HIDE_FROM_THUNDER would, and starts that one.
group! { ALARM: Kit, prioritized [RUN_FROM_DOG, HIDE_FROM_THUNDER], flags: DELEGATE_DECIDE }

decider! { GO_TO_BOWL: Kit => WALK_TO_BOWL }
decider! { SNIFF_BOWL: Kit => SNIFF }
decider! { EAT_FROM_BOWL: Kit => EAT_UP }
// One step after another. Between steps EAT's decide runs again: if the
// bowl was emptied meanwhile, EAT ends instead of going on.
group! { EAT: Kit, sequential [GO_TO_BOWL, SNIFF_BOWL, EAT_FROM_BOWL],
    when: |c, _| c.hungry && c.bowl_full,
    flags: CALL_DECIDE_ON_REDECIDE,
}

decider! { STALK_MOUSE: Kit => STALK, decide: |c, _| score(c.mouse), behavior_flags: Prey::MOUSE }
decider! { STALK_BIRD: Kit => STALK, decide: |c, _| score(c.bird), behavior_flags: Prey::BIRD }
// Every tick each child is scored; the active one keeps going unless the
// other scores strictly more.
group! { CHOOSE_TARGET: Kit, scored [STALK_MOUSE, STALK_BIRD],
    when: |c, _| c.mouse.is_some() || c.bird.is_some(),
}

decider! { ROAM_GARDEN: Kit => WANDER, when: |c, _| c.restless }
decider! { ROAM_ROOF: Kit => WANDER, decide: |c, _| if c.restless { 3.0 } else { 0.0 } }
decider! { ROAM_SHED: Kit => WANDER, decide: |_, _| 0.0 }
group! { ROAM: Kit, random [ROAM_GARDEN, ROAM_ROOF, ROAM_SHED], when: |c, _| c.restless }

decider! { PLAY_STRETCH: Kit => STRETCH }
decider! { PLAY_YAWN: Kit => YAWN }
decider! { PLAY_GROOM: Kit => GROOM }
decider! { PLAY_ROLL: Kit => ROLL }
group! { IDLE: Kit, shuffle [PLAY_STRETCH, PLAY_YAWN, PLAY_GROOM, PLAY_ROLL] }

group! { ROOT: Kit, prioritized [ALARM, EAT, CHOOSE_TARGET, ROAM, IDLE] }
tree! { CAT: Kit = ROOT, memory: CatMemory }

// ---------------------------------------------------------------------------
// The world script.

/// A target `interest` worth, `distance` m away.
fn seen(interest: f32, distance: f32) -> Option<Target> {
    Some(Target { interest, distance })
}

/// Something that happens in the world: when, what to print, what changes.
type WorldEvent = (f64, &'static str, fn(&mut Kit));

/// What happens when, in time order.
const SCRIPT: &[WorldEvent] = &[
    // Scores 8/4 = 2.0 and 6/6 = 1.0: the mouse.
    (4.0, "a mouse 4 m off, a bird 6 m off", |c| {
        (c.mouse, c.bird) = (seen(8.0, 4.0), seen(6.0, 6.0))
    }),
    // 6/3 = 2.0 only ties the mouse's score: no switch.
    (5.0, "the bird hops to 3 m: a tie", |c| {
        c.bird = seen(6.0, 3.0)
    }),
    // 6/2 = 3.0 beats it.
    (6.0, "the bird hops to 2 m: the best", |c| {
        c.bird = seen(6.0, 2.0)
    }),
    // STALK_BIRD ends; the masked redecide goes back to the mouse.
    (7.5, "the bird flies off", |c| c.bird = None),
    (8.5, "the mouse escapes under the shed", |c| c.mouse = None),
    // ROAM draws with weights garden 1, roof 3 (the shed rejects).
    (9.5, "Kit gets restless", |c| c.restless = true),
    // ALARM accepts through HIDE_FROM_THUNDER and preempts IDLE.
    (11.5, "thunder", |c| c.thunder = true),
    (13.0, "the thunder stops", |c| c.thunder = false),
    (14.0, "Kit is hungry; the bowl is full", |c| {
        (c.hungry, c.bowl_full) = (true, true)
    }),
    // When GO_TO_BOWL ends, EAT's decide runs again, rejects, and EAT ends.
    (14.5, "the dog empties the bowl", |c| c.bowl_full = false),
    (16.0, "the bowl is filled again", |c| c.bowl_full = true),
    (19.5, "the dog comes round the corner", |c| {
        c.dog_near = true
    }),
    (21.5, "Kit gets restless again", |c| c.restless = true),
];

/// The active path below ROOT, as `GROUP > LEAF` (`idle` when empty).
fn path(memory: &CatMemory) -> String {
    let names: Vec<_> = memory
        .active_path()
        .skip(1)
        .map(|level| CAT.node(level.item).name())
        .collect();
    if names.is_empty() {
        "idle".to_string()
    } else {
        names.join(" > ")
    }
}

fn main() {
    println!("policies: {TICKS} ticks of {DT} s\n");
    let mut kit = Kit::default();
    let mut memory = CAT.new_memory(SEED);
    let mut shown = path(&memory);
    for frame in 0..TICKS {
        let now = f64::from(frame) * f64::from(DT);
        for (_, what, event) in SCRIPT.iter().filter(|(at, ..)| *at == now) {
            event(&mut kit);
            println!("t={now:4.1}  world: {what}");
        }
        let input = TickInput::new(now, DT);
        tick(&CAT, &mut kit, &mut memory, &input).expect("the tree is sound");
        for note in kit.notes.drain(..) {
            println!("t={now:4.1}  {note}");
        }
        let now_shown = path(&memory);
        if now_shown != shown {
            println!("t={now:4.1}  {now_shown}  (was {shown})");
            shown = now_shown;
        }
    }
    println!("\nIDLE's plays, in rounds of four (each play once per round):");
    for round in kit.plays.chunks(4) {
        println!("  {}", round.join(" "));
    }
}
