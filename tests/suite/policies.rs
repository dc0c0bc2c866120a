//! Group policies and the decider flags that change how groups decide.
//!
//! The agent here, [`Pal`], journals every callback like `world::Bot`, but
//! its `decide` functions return a value set per decider (a weight or a
//! score, not only accept/reject), and its behaviors can end after a fixed
//! number of ticks. Each policy gets exact journals where the outcome is
//! determined, exact counts over fixed seeds where it is random, and a
//! snapshot trace.
//!
//! `DELEGATE_DECIDE` goes beyond Spore, which had no such flag: only a
//! helper (`DelegateDecideToChildren`) that a group's own `decide` could
//! call. Here a delegating group has no `decide`; it accepts iff one of its
//! children would, and that child is activated without a second call of its
//! `decide`, and (under a scored group) scores what that child scores.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use bt_core::{
    Has, TickInput, TickReport, TraceRecorder, Tree, deactivate_all, decider, group, tick,
    tick_traced, tree,
};

bitflags::bitflags! {
    /// Decision flags of the policy trees.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Cue: u32 {
        /// Lets `C3` (scored) be scored at all.
        const GO = 1 << 0;
    }
}

/// The test agent: per-decider `decide` values, scripted ends, a journal.
#[derive(Default)]
pub struct Pal {
    /// What each decider's `decide` returns; a decider not listed returns
    /// 0.0 (rejects).
    pub score: HashMap<&'static str, f32>,
    /// Behaviors whose `tick` returns false.
    pub ends: HashSet<&'static str>,
    /// When not 0, every leaf behavior ends on its `life`-th tick, counting
    /// the tick in which it was activated as the first.
    pub life: u32,
    /// Every call, as `"decide X"`, `"activate X"`, `"tick X"`, `"deactivate X"`.
    pub journal: RefCell<Vec<String>>,
}

impl Pal {
    fn scoring(scores: &[(&'static str, f32)]) -> Self {
        Pal {
            score: scores.iter().copied().collect(),
            ..Pal::default()
        }
    }

    fn set(&mut self, scores: &[(&'static str, f32)]) {
        self.score.extend(scores.iter().copied());
    }

    fn decide(&self, name: &'static str) -> f32 {
        self.journal.borrow_mut().push(format!("decide {name}"));
        self.score.get(name).copied().unwrap_or(0.0)
    }

    fn on(&mut self, what: &str, name: &'static str) {
        self.journal.get_mut().push(format!("{what} {name}"));
    }

    fn ticked(&mut self, name: &'static str, age: u32) -> bool {
        self.on("tick", name);
        !self.ends.contains(name) && (self.life == 0 || age < self.life)
    }

    /// Takes the journal.
    fn take(&mut self) -> Vec<String> {
        std::mem::take(self.journal.get_mut())
    }

    /// How often `entry` appears in the journal.
    fn count(&self, entry: &str) -> usize {
        self.journal.borrow().iter().filter(|e| *e == entry).count()
    }

    /// The behaviors activated, in order, taking the journal.
    fn activated(&mut self) -> Vec<String> {
        self.take()
            .into_iter()
            .filter_map(|e| e.strip_prefix("activate ").map(str::to_owned))
            .collect()
    }
}

/// A memory block: the ticks a behavior has run.
#[derive(Default)]
pub struct Age(u32);

/// The behaviors, each named like the decider that runs it (group
/// behaviors like their group), so journals read `activate S1`.
mod act {
    use super::{Age, Pal};

    macro_rules! journaled {
        ($($name:ident),* $(,)?) => {$(
            bt_core::behavior! { pub $name: Pal,
                memory: Age,
                activate: |p, _m, _cx| { p.on("activate", stringify!($name)); true },
                tick: |p, m, _cx| { m.0 += 1; p.ticked(stringify!($name), m.0) },
                deactivate: |p, _m, _cx| p.on("deactivate", stringify!($name)),
            }
        )*};
    }

    journaled!(REST, S1, S2, S3, R1, R2, R3, LIGHT, NEVER, HEAVY);
    journaled!(P1, P2, P3, P4, C1, C2, C3, K1, K2, G1, G2, W);
    journaled!(X1, X2, X3, XGO);

    /// Group behaviors: they end only when listed in `ends` (not by `life`).
    macro_rules! group_journaled {
        ($($name:ident),* $(,)?) => {$(
            bt_core::behavior! { pub $name: Pal,
                activate: |p, _cx| { p.on("activate", stringify!($name)); true },
                tick: |p, _cx| p.ticked(stringify!($name), 0),
                deactivate: |p, _cx| p.on("deactivate", stringify!($name)),
            }
        )*};
    }

    group_journaled!(SEQ, EAT, PICK);
}

/// A behavior decider whose `decide` returns the agent's score for it.
macro_rules! scored_by_pal {
    ($($name:ident),* $(,)?) => {$(
        decider! { pub $name: Pal => act::$name, decide: |p, _| p.decide(stringify!($name)) }
    )*};
}

decider! {
    /// Accepts always (no `decide`): what a group falls back to.
    pub REST: Pal => act::REST
}

// Sequential: SEQ_ROOT prioritized [SEQ sequential [S1, S2, S3], REST].
scored_by_pal!(S1, S2, S3);
group! { pub SEQ: Pal, sequential [S1, S2, S3],
    behavior: act::SEQ,
    decide: |p, _| p.decide("SEQ"),
}
group! { pub SEQ_ROOT: Pal, prioritized [SEQ, REST] }
tree! { pub T_SEQ: Pal = SEQ_ROOT }

// Random: RND random [R1, R2, R3] at the root.
scored_by_pal!(R1, R2, R3);
group! { pub RND: Pal, random [R1, R2, R3] }
tree! { pub T_RND: Pal = RND }

// Weights: LIGHT has no `decide` (weight 1.0), NEVER rejects, HEAVY 3.0.
decider! { pub LIGHT: Pal => act::LIGHT }
scored_by_pal!(NEVER, HEAVY);
group! { pub WEIGHTED: Pal, random [LIGHT, NEVER, HEAVY] }
tree! { pub T_WEIGHTED: Pal = WEIGHTED }

// The same draw two ways: DECIDED's children have a `decide` (NEVER
// rejects), PLAIN's are decided by flag tests alone (XGO needs Cue::GO).
group! { pub DECIDED: Pal, random [R1, R2, NEVER, R3] }
tree! { pub T_DECIDED: Pal = DECIDED }
decider! { pub X1: Pal => act::X1 }
decider! { pub X2: Pal => act::X2 }
decider! { pub XGO: Pal => act::XGO, needs_all: Cue::GO }
decider! { pub X3: Pal => act::X3 }
group! { pub PLAIN: Pal, random [X1, X2, XGO, X3] }
tree! { pub T_PLAIN_RND: Pal = PLAIN }

// Shuffle: SHUF shuffle [P1, P2, P3, P4] at the root.
scored_by_pal!(P1, P2, P3, P4);
group! { pub SHUF: Pal, shuffle [P1, P2, P3, P4] }
tree! { pub T_SHUF: Pal = SHUF }

// Scored: SCORED scored [C1, C2, C3]; C3 is only eligible with Cue::GO.
scored_by_pal!(C1, C2);
decider! { pub C3: Pal => act::C3, decide: |p, _| p.decide("C3"), needs_all: Cue::GO }
group! { pub SCORED: Pal, scored [C1, C2, C3] }
tree! { pub T_SCORED: Pal = SCORED }

// CALL_DECIDE_ON_REDECIDE: EAT sequential [K1, K2] rechecks its decide when
// a child ends; EAT_PLAIN is the same group without the flag.
scored_by_pal!(K1, K2);
group! { pub EAT: Pal, sequential [K1, K2],
    behavior: act::EAT,
    decide: |p, _| p.decide("EAT"),
    flags: CALL_DECIDE_ON_REDECIDE,
}
group! { pub EAT_PLAIN: Pal, sequential [K1, K2],
    behavior: act::EAT,
    decide: |p, _| p.decide("EAT"),
}
group! { pub REC_ROOT: Pal, prioritized [EAT, REST] }
group! { pub PLAIN_ROOT: Pal, prioritized [EAT_PLAIN, REST] }
tree! { pub T_REC: Pal = REC_ROOT }
tree! { pub T_PLAIN: Pal = PLAIN_ROOT }

// DELEGATE_DECIDE: PICK prioritized [G1, G2] accepts iff G1 or G2 does.
scored_by_pal!(G1, G2);
group! { pub PICK: Pal, prioritized [G1, G2], behavior: act::PICK, flags: DELEGATE_DECIDE }
group! { pub DEL_ROOT: Pal, prioritized [PICK, REST] }
tree! { pub T_DEL: Pal = DEL_ROOT }

// Delegation under a scored group: MOOD takes its children's scores.
scored_by_pal!(W);
group! { pub MOOD: Pal, prioritized [G1, G2], flags: DELEGATE_DECIDE }
group! { pub VS: Pal, scored [MOOD, W] }
tree! { pub T_VS: Pal = VS }

// A delegating shuffle group under a scored group: losing a challenge
// must not use up its round.
group! { pub TUNES: Pal, shuffle [P1, P2, P3], flags: DELEGATE_DECIDE }
group! { pub JUKEBOX: Pal, scored [TUNES, W] }
tree! { pub T_JUKEBOX: Pal = JUKEBOX }

fn at(now: f64) -> TickInput {
    TickInput::new(now, 1.0)
}

#[track_caller]
fn run<const L: usize, const S: usize, const N: usize>(
    tree: &'static Tree<Pal, L, S, N>,
    pal: &mut Pal,
    memory: &mut bt_core::AgentMemory<Pal, L, S, N>,
    now: f64,
) -> TickReport {
    tick(tree, pal, memory, &at(now)).expect("tick")
}

/// The name of the behavior decider that runs (`None`: idle).
fn leaf<const L: usize, const S: usize, const N: usize>(
    tree: &'static Tree<Pal, L, S, N>,
    memory: &bt_core::AgentMemory<Pal, L, S, N>,
) -> Option<&'static str> {
    memory.leaf().map(|i| tree.node(i).name())
}

/// `n` fresh draws by the root group of `tree` for one agent: each tick
/// starts from an idle memory (the agent's generator goes on).
fn draws<const L: usize, const S: usize, const N: usize>(
    tree: &'static Tree<Pal, L, S, N>,
    pal: &mut Pal,
    seed: u64,
    n: usize,
) -> Vec<&'static str> {
    let mut memory = tree.new_memory(seed);
    (0..n)
        .map(|i| {
            let now = i as f64;
            run(tree, pal, &mut memory, now);
            let name = leaf(tree, &memory).expect("a child was drawn");
            deactivate_all(tree, pal, &mut memory, &at(now)).unwrap();
            name
        })
        .collect()
}

/// Splits `runs` into rounds of `names.len()` and checks that each round
/// runs every name exactly once.
#[track_caller]
fn assert_rounds(runs: &[String], names: &[&str]) {
    assert_eq!(runs.len() % names.len(), 0, "{runs:?}");
    for (r, round) in runs.chunks(names.len()).enumerate() {
        let mut sorted: Vec<&str> = round.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        assert_eq!(sorted, names, "round {r} of {runs:?}");
    }
}

// ---------------------------------------------------------------------------
// Sequential

#[test]
fn sequential_runs_children_in_order_and_ends_after_the_last() {
    let mut pal = Pal::scoring(&[("SEQ", 1.0), ("S1", 1.0), ("S3", 1.0)]);
    let mut memory = T_SEQ.new_memory(0);
    run(&T_SEQ, &mut pal, &mut memory, 0.0);
    assert_eq!(
        pal.take(),
        [
            "decide SEQ",
            "activate SEQ",
            "tick SEQ",
            "decide S1",
            "activate S1",
            "tick S1",
        ]
    );

    // S1 ends; S2 rejects, so the next child that activates is S3.
    pal.ends.insert("S1");
    run(&T_SEQ, &mut pal, &mut memory, 1.0);
    assert_eq!(
        pal.take(),
        [
            "tick SEQ",
            "tick S1",
            "deactivate S1",
            "decide S2",
            "decide S3",
            "activate S3",
            "tick S3",
        ]
    );

    // S3 ends: past the last child the group ends, although S1 and S2
    // would accept now; the root falls back to REST.
    pal.set(&[("S2", 1.0)]);
    pal.ends.insert("S3");
    let report = run(&T_SEQ, &mut pal, &mut memory, 2.0);
    assert_eq!(
        pal.take(),
        [
            "tick SEQ",
            "tick S3",
            "deactivate S3",
            "deactivate SEQ",
            "activate REST",
            "tick REST",
        ]
    );
    assert_eq!(report.redecides, 2);
    assert_eq!(report.subset_violation, None);

    // Entered again, the group starts over from its first child.
    pal.ends.clear();
    run(&T_SEQ, &mut pal, &mut memory, 3.0);
    assert_eq!(
        pal.take(),
        [
            "decide SEQ",
            "deactivate REST",
            "activate SEQ",
            "tick SEQ",
            "decide S1",
            "activate S1",
            "tick S1",
        ]
    );
}

#[test]
fn sequential_group_steps_through_its_children_across_ticks() {
    let mut pal = Pal::scoring(&[("SEQ", 1.0), ("S1", 1.0), ("S2", 1.0), ("S3", 1.0)]);
    pal.life = 2;
    let mut memory = T_SEQ.new_memory(0);
    let mut leaves = Vec::new();
    for t in 0..8 {
        run(&T_SEQ, &mut pal, &mut memory, f64::from(t));
        leaves.push(leaf(&T_SEQ, &memory).unwrap());
    }
    // Each child ends on its second tick and the next one starts in that
    // tick. After S3 the group ends and REST runs, until SEQ (before REST
    // in the root) preempts it next tick and starts over.
    assert_eq!(leaves, ["S1", "S2", "S3", "REST", "S1", "S2", "S3", "REST"]);
}

// ---------------------------------------------------------------------------
// No preemption while a child runs (sequential, random, shuffle)

#[test]
fn sequential_random_and_shuffle_groups_never_preempt_their_running_child() {
    // Sequential: S2 runs; S1 (before it) and S3 accept, and are not asked.
    let mut pal = Pal::scoring(&[("SEQ", 1.0), ("S2", 1.0)]);
    let mut memory = T_SEQ.new_memory(0);
    run(&T_SEQ, &mut pal, &mut memory, 0.0);
    assert_eq!(leaf(&T_SEQ, &memory), Some("S2"));
    pal.set(&[("S1", 100.0), ("S3", 100.0)]);
    pal.take();
    for t in 1..4 {
        run(&T_SEQ, &mut pal, &mut memory, f64::from(t));
    }
    assert_eq!(pal.take(), ["tick SEQ", "tick S2"].repeat(3));

    // Random: only R2 accepts at first; then the others weigh 100 times more.
    let mut pal = Pal::scoring(&[("R2", 1.0)]);
    let mut memory = T_RND.new_memory(0);
    run(&T_RND, &mut pal, &mut memory, 0.0);
    assert_eq!(leaf(&T_RND, &memory), Some("R2"));
    pal.set(&[("R1", 100.0), ("R3", 100.0)]);
    pal.take();
    for t in 1..4 {
        run(&T_RND, &mut pal, &mut memory, f64::from(t));
    }
    assert_eq!(pal.take(), ["tick R2"].repeat(3));

    // Shuffle: P3 runs; the others have not run in this round, and still
    // do not preempt it.
    let mut pal = Pal::scoring(&[("P3", 1.0)]);
    let mut memory = T_SHUF.new_memory(0);
    run(&T_SHUF, &mut pal, &mut memory, 0.0);
    assert_eq!(leaf(&T_SHUF, &memory), Some("P3"));
    pal.set(&[("P1", 1.0), ("P2", 1.0), ("P4", 1.0)]);
    pal.take();
    for t in 1..4 {
        run(&T_SHUF, &mut pal, &mut memory, f64::from(t));
    }
    assert_eq!(pal.take(), ["tick P3"].repeat(3));
}

// ---------------------------------------------------------------------------
// Random

#[test]
fn random_choices_are_a_function_of_the_agents_seed() {
    let mut pal = Pal::scoring(&[("R1", 1.0), ("R2", 1.0), ("R3", 1.0)]);
    let a = draws(&T_RND, &mut pal, 7, 40);
    let b = draws(&T_RND, &mut pal, 7, 40);
    let c = draws(&T_RND, &mut pal, 8, 40);
    assert_eq!(a, b, "same seed, same choices");
    assert_ne!(a, c, "another seed, other choices");
    for name in ["R1", "R2", "R3"] {
        assert!(a.contains(&name), "{name} never drawn in {a:?}");
    }
    // Every draw asks every child: 3 decides per draw, 3 x 40 x 3 in all.
    assert_eq!(
        pal.take()
            .iter()
            .filter(|e| e.starts_with("decide"))
            .count(),
        360
    );
}

#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn random_draws_follow_the_weights_and_never_a_rejecting_child() {
    // LIGHT has no decide (weight 1.0), HEAVY weighs 3.0, NEVER rejects.
    let mut pal = Pal::scoring(&[("HEAVY", 3.0)]);
    let n = 4000;
    let picks = draws(&T_WEIGHTED, &mut pal, 42, n);
    let heavy = picks.iter().filter(|p| **p == "HEAVY").count();
    let light = picks.iter().filter(|p| **p == "LIGHT").count();
    assert_eq!(heavy + light, n, "NEVER was drawn");
    // Expected 3000 (3/4); the standard deviation is about 27.
    assert!((2900..=3100).contains(&heavy), "HEAVY drawn {heavy} times");
    // NEVER was asked at every draw, and never activated.
    assert_eq!(pal.count("decide NEVER"), n);
    assert_eq!(pal.count("activate NEVER"), 0);
}

#[test]
fn a_draw_among_plain_children_is_the_draw_with_weights_of_one() {
    // Children with nothing to call take the short way through a draw; it
    // must draw the same numbers as the full way, child for child.
    let root = |t: &Tree<Pal, 2, 0, 16>| t.node(bt_core::ItemIdx::ROOT).has();
    assert!(root(&T_PLAIN_RND).contains(Has::PLAIN_CHILDREN));
    assert!(!root(&T_DECIDED).contains(Has::PLAIN_CHILDREN));
    let position = |name: &str| ["R1", "R2", "NEVER", "R3"].iter().position(|n| *n == name);
    let plain_position = |name: &str| ["X1", "X2", "XGO", "X3"].iter().position(|n| *n == name);
    let mut pal = Pal::scoring(&[("R1", 1.0), ("R2", 1.0), ("R3", 1.0)]);
    for seed in [1, 7, 99] {
        let decided: Vec<_> = draws(&T_DECIDED, &mut pal, seed, 300)
            .into_iter()
            .map(position)
            .collect();
        let plain: Vec<_> = draws(&T_PLAIN_RND, &mut pal, seed, 300)
            .into_iter()
            .map(plain_position)
            .collect();
        assert_eq!(decided, plain, "seed {seed}");
        assert!(!plain.contains(&Some(2)), "XGO drawn without Cue::GO");
        for p in [0, 1, 3] {
            assert!(plain.contains(&Some(p)), "child {p} never drawn");
        }
    }
}

// ---------------------------------------------------------------------------
// Shuffle

/// Every activation of the shuffle tree in the ticks at times `ticks`, each
/// behavior living two ticks.
fn shuffle_runs(
    pal: &mut Pal,
    memory: &mut bt_core::AgentMemory<Pal, 2, 1, 16>,
    ticks: std::ops::Range<u32>,
) -> Vec<String> {
    pal.life = 2;
    for t in ticks {
        run(&T_SHUF, pal, memory, f64::from(t));
    }
    pal.activated()
}

#[test]
fn shuffle_runs_each_child_exactly_once_per_round() {
    let all = [("P1", 1.0), ("P2", 1.0), ("P3", 1.0), ("P4", 1.0)];
    let mut pal = Pal::scoring(&all);
    let mut memory = T_SHUF.new_memory(3);
    // One activation per tick: each child ends on its second tick and the
    // masked redecide starts the next one in the same tick.
    let runs = shuffle_runs(&mut pal, &mut memory, 0..24);
    assert_eq!(runs.len(), 24);
    assert_rounds(&runs, &["P1", "P2", "P3", "P4"]);
    // Rounds are drawn, not declaration order: they are not all the same.
    let first = &runs[..4];
    assert!(runs.chunks(4).any(|r| r != first), "{runs:?}");
}

#[test]
fn shuffle_rounds_live_in_each_agents_own_memory() {
    let all = [("P1", 1.0), ("P2", 1.0), ("P3", 1.0), ("P4", 1.0)];
    // Agent A alone.
    let mut alone = Pal::scoring(&all);
    let mut memory = T_SHUF.new_memory(11);
    let expected = shuffle_runs(&mut alone, &mut memory, 0..16);

    // The same agent, ticked in turn with another one mid-way through its
    // own rounds: A's rounds go on where they were.
    let mut a = Pal::scoring(&all);
    let mut b = Pal::scoring(&all);
    a.life = 2;
    b.life = 2;
    let mut ma = T_SHUF.new_memory(11);
    let mut mb = T_SHUF.new_memory(12);
    for t in 0..16 {
        run(&T_SHUF, &mut a, &mut ma, f64::from(t));
        run(&T_SHUF, &mut b, &mut mb, f64::from(t));
        run(&T_SHUF, &mut b, &mut mb, f64::from(t) + 0.5);
    }
    assert_eq!(a.activated(), expected);
    let runs_b = b.activated();
    assert_rounds(&runs_b, &["P1", "P2", "P3", "P4"]);
    assert_ne!(runs_b, expected);
}

#[test]
fn shuffle_starts_a_new_round_when_no_unused_child_accepts() {
    // P4 does not accept, so no round can include it: once P1..P3 have
    // run, the next round starts among them, still without repeats.
    let mut pal = Pal::scoring(&[("P1", 1.0), ("P2", 1.0), ("P3", 1.0)]);
    let mut memory = T_SHUF.new_memory(5);
    let runs = shuffle_runs(&mut pal, &mut memory, 0..30);
    assert_rounds(&runs, &["P1", "P2", "P3"]);
    // Ten rounds of three have just ended with P1..P3 used: P4 is the only
    // child left unused. Once it accepts, it runs next, which completes the
    // round of four; the next round is drawn among all four.
    pal.set(&[("P4", 1.0)]);
    let runs = shuffle_runs(&mut pal, &mut memory, 30..35);
    assert_eq!(runs[0], "P4", "{runs:?}");
    assert_rounds(&runs[1..], &["P1", "P2", "P3", "P4"]);
}

// ---------------------------------------------------------------------------
// Scored

#[track_caller]
fn scored_winner(scores: &[(&'static str, f32)], cues: Cue) -> (&'static str, Vec<String>) {
    let mut pal = Pal::scoring(scores);
    let mut memory = T_SCORED.new_memory(0);
    tick(
        &T_SCORED,
        &mut pal,
        &mut memory,
        &at(0.0).with_decision(cues),
    )
    .unwrap();
    (leaf(&T_SCORED, &memory).unwrap(), pal.take())
}

#[test]
fn scored_group_runs_the_highest_score_with_ties_to_declaration_order() {
    let (winner, journal) = scored_winner(&[("C1", 1.0), ("C2", 3.0), ("C3", 2.0)], Cue::GO);
    assert_eq!(winner, "C2");
    assert_eq!(
        journal,
        [
            "decide C1",
            "decide C2",
            "decide C3",
            "activate C2",
            "tick C2"
        ]
    );
    let (winner, _) = scored_winner(&[("C1", 1.0), ("C2", 3.0), ("C3", 4.0)], Cue::GO);
    assert_eq!(winner, "C3");
    // Ties go to the child declared first.
    let (winner, _) = scored_winner(&[("C1", 2.0), ("C2", 2.0), ("C3", 2.0)], Cue::GO);
    assert_eq!(winner, "C1");
    let (winner, _) = scored_winner(&[("C1", 1.0), ("C2", 2.0), ("C3", 2.0)], Cue::GO);
    assert_eq!(winner, "C2");
    // A failed precondition means not eligible: C3 is not even scored.
    let (winner, journal) = scored_winner(&[("C1", 1.0), ("C2", 3.0), ("C3", 9.0)], Cue::empty());
    assert_eq!(winner, "C2");
    assert_eq!(
        journal,
        ["decide C1", "decide C2", "activate C2", "tick C2"]
    );
}

#[test]
fn scored_group_keeps_its_child_until_another_scores_strictly_higher() {
    let mut pal = Pal::scoring(&[("C1", 2.0), ("C2", 1.0)]);
    let mut memory = T_SCORED.new_memory(0);
    run(&T_SCORED, &mut pal, &mut memory, 0.0);
    assert_eq!(leaf(&T_SCORED, &memory), Some("C1"));
    pal.take();

    // Each tick the active child is scored again, then the others; an
    // equal score does not take over.
    pal.set(&[("C2", 2.0)]);
    run(&T_SCORED, &mut pal, &mut memory, 1.0);
    assert_eq!(pal.take(), ["decide C1", "decide C2", "tick C1"]);

    // A strictly higher one does.
    pal.set(&[("C2", 2.5)]);
    let report = run(&T_SCORED, &mut pal, &mut memory, 2.0);
    assert_eq!(
        pal.take(),
        [
            "decide C1",
            "decide C2",
            "deactivate C1",
            "activate C2",
            "tick C2"
        ]
    );
    assert_eq!((report.activated, report.deactivated), (1, 1));

    // Hysteresis: the active child is scored by its `decide` alone, without
    // its preconditions. C3 runs with Cue::GO; without it, C3 could not be
    // chosen, but it keeps running on its score.
    pal.set(&[("C3", 5.0)]);
    tick(
        &T_SCORED,
        &mut pal,
        &mut memory,
        &at(3.0).with_decision(Cue::GO),
    )
    .unwrap();
    assert_eq!(leaf(&T_SCORED, &memory), Some("C3"));
    pal.take();
    run(&T_SCORED, &mut pal, &mut memory, 4.0);
    assert_eq!(
        pal.take(),
        ["decide C3", "decide C1", "decide C2", "tick C3"]
    );

    // Its own score now rejecting, it still runs while nothing else
    // accepts, and gives way to anything that does.
    pal.score.clear();
    run(&T_SCORED, &mut pal, &mut memory, 5.0);
    assert_eq!(leaf(&T_SCORED, &memory), Some("C3"));
    pal.set(&[("C2", 0.1)]);
    run(&T_SCORED, &mut pal, &mut memory, 6.0);
    assert_eq!(leaf(&T_SCORED, &memory), Some("C2"));
}

// ---------------------------------------------------------------------------
// CALL_DECIDE_ON_REDECIDE

#[test]
fn call_decide_on_redecide_ends_the_group_when_its_decide_now_rejects() {
    let mut pal = Pal::scoring(&[("EAT", 1.0), ("K1", 1.0), ("K2", 1.0)]);
    let mut memory = T_REC.new_memory(0);
    run(&T_REC, &mut pal, &mut memory, 0.0);
    assert_eq!(leaf(&T_REC, &memory), Some("K1"));
    // While K1 runs, EAT's decide is not called (hysteresis).
    run(&T_REC, &mut pal, &mut memory, 1.0);
    assert_eq!(pal.count("decide EAT"), 1);
    pal.take();

    // K1 ends and EAT now rejects: EAT ends instead of going on with K2.
    pal.ends.insert("K1");
    pal.set(&[("EAT", 0.0)]);
    let report = run(&T_REC, &mut pal, &mut memory, 2.0);
    assert_eq!(
        pal.take(),
        [
            "tick EAT",
            "tick K1",
            "deactivate K1",
            "decide EAT",
            "deactivate EAT",
            "activate REST",
            "tick REST",
        ]
    );
    assert_eq!(report.redecides, 2);
    assert_eq!(report.subset_violation, None);
}

#[test]
fn call_decide_on_redecide_lets_the_group_go_on_when_its_decide_accepts() {
    let mut pal = Pal::scoring(&[("EAT", 1.0), ("K1", 1.0), ("K2", 1.0)]);
    let mut memory = T_REC.new_memory(0);
    run(&T_REC, &mut pal, &mut memory, 0.0);
    pal.take();
    pal.ends.insert("K1");
    run(&T_REC, &mut pal, &mut memory, 1.0);
    assert_eq!(
        pal.take(),
        [
            "tick EAT",
            "tick K1",
            "deactivate K1",
            "decide EAT",
            "decide K2",
            "activate K2",
            "tick K2",
        ]
    );

    // Without the flag the group's decide is not called on a redecide: the
    // same script goes on with K2 although EAT would reject.
    let mut pal = Pal::scoring(&[("EAT", 1.0), ("K1", 1.0), ("K2", 1.0)]);
    let mut memory = T_PLAIN.new_memory(0);
    run(&T_PLAIN, &mut pal, &mut memory, 0.0);
    pal.take();
    pal.ends.insert("K1");
    pal.set(&[("EAT", 0.0)]);
    run(&T_PLAIN, &mut pal, &mut memory, 1.0);
    assert_eq!(
        pal.take(),
        [
            "tick EAT",
            "tick K1",
            "deactivate K1",
            "decide K2",
            "activate K2",
            "tick K2",
        ]
    );
}

// ---------------------------------------------------------------------------
// DELEGATE_DECIDE

#[test]
fn delegating_group_accepts_iff_a_child_would_and_decides_it_once() {
    let mut pal = Pal::default();
    let mut memory = T_DEL.new_memory(0);
    // No child accepts: PICK rejects, REST runs.
    run(&T_DEL, &mut pal, &mut memory, 0.0);
    assert_eq!(
        pal.take(),
        ["decide G1", "decide G2", "activate REST", "tick REST"]
    );
    // Still none: PICK is asked again each tick (it comes before REST),
    // through its children.
    run(&T_DEL, &mut pal, &mut memory, 1.0);
    assert_eq!(pal.take(), ["decide G1", "decide G2", "tick REST"]);

    // G2 accepts: PICK accepts and G2 activates with no second decide.
    pal.set(&[("G2", 1.0)]);
    run(&T_DEL, &mut pal, &mut memory, 2.0);
    assert_eq!(
        pal.take(),
        [
            "decide G1",
            "decide G2",
            "deactivate REST",
            "activate PICK",
            "tick PICK",
            "activate G2",
            "tick G2",
        ]
    );
    assert_eq!(leaf(&T_DEL, &memory), Some("G2"));

    // Once active, the group is a prioritized group like any other: G1
    // preempts G2 when it accepts.
    pal.set(&[("G1", 1.0)]);
    run(&T_DEL, &mut pal, &mut memory, 3.0);
    assert_eq!(
        pal.take(),
        [
            "tick PICK",
            "decide G1",
            "deactivate G2",
            "activate G1",
            "tick G1",
        ]
    );
}

#[test]
fn delegating_group_takes_the_score_of_the_child_it_delegates_to() {
    // MOOD's value in the scored VS is G2's score, 5, not a default 1.0.
    let mut pal = Pal::scoring(&[("G2", 5.0), ("W", 3.0)]);
    let mut memory = T_VS.new_memory(0);
    run(&T_VS, &mut pal, &mut memory, 0.0);
    assert_eq!(leaf(&T_VS, &memory), Some("G2"));
    assert_eq!(pal.count("decide G2"), 1);
    // While it runs, MOOD's current score is still G2's: W at 4 does not
    // beat it, W at 6 does.
    pal.set(&[("W", 4.0)]);
    run(&T_VS, &mut pal, &mut memory, 1.0);
    assert_eq!(leaf(&T_VS, &memory), Some("G2"));
    pal.set(&[("W", 6.0)]);
    run(&T_VS, &mut pal, &mut memory, 2.0);
    assert_eq!(leaf(&T_VS, &memory), Some("W"));
    // A weaker child loses to W.
    let mut pal = Pal::scoring(&[("G2", 2.0), ("W", 3.0)]);
    let mut memory = T_VS.new_memory(0);
    run(&T_VS, &mut pal, &mut memory, 0.0);
    assert_eq!(leaf(&T_VS, &memory), Some("W"));
}

#[test]
fn delegating_shuffle_group_keeps_its_round_when_it_loses_a_challenge() {
    // TUNES (shuffle [P1, P2, P3], delegating) and W compete in a scored
    // group. Each time TUNES is scored it draws a child; only the draws it
    // wins with may count in its round.
    let mut pal = Pal::scoring(&[("P1", 1.0), ("P2", 1.0), ("P3", 1.0)]);
    pal.life = 2;
    let mut memory = T_JUKEBOX.new_memory(9);
    let mut runs = Vec::new();
    for t in 0..45 {
        // Every third tick W scores 5 and takes over (TUNES's draw loses);
        // the next tick W scores 0.5 and TUNES's draw (1.0) wins; the tick
        // after, that child ends and TUNES draws again.
        pal.set(&[("W", if t % 3 == 0 { 5.0 } else { 0.5 })]);
        run(&T_JUKEBOX, &mut pal, &mut memory, f64::from(t));
        runs.extend(pal.activated());
    }
    let tunes: Vec<String> = runs.iter().filter(|r| *r != "W").cloned().collect();
    assert_eq!(runs.len() - tunes.len(), 15, "{runs:?}");
    assert_eq!(tunes.len(), 30, "{runs:?}");
    assert_rounds(&tunes, &["P1", "P2", "P3"]);
}

// ---------------------------------------------------------------------------
// Masked redecide under every policy

/// One tick in which every behavior ends at once: the behaviors activated,
/// in order, and the report.
fn all_end_at_once<const L: usize, const S: usize, const N: usize>(
    tree: &'static Tree<Pal, L, S, N>,
    pal: &mut Pal,
) -> (Vec<String>, TickReport) {
    pal.life = 1;
    let mut memory = tree.new_memory(1);
    let input = at(0.0).with_decision(Cue::GO);
    let report = tick(tree, pal, &mut memory, &input).unwrap();
    assert!(memory.is_idle());
    (pal.activated(), report)
}

#[test]
fn masked_redecide_never_picks_a_child_that_ended_in_the_same_tick() {
    // Sequential: each next child once, then the group ends and REST runs
    // (and ends too).
    let mut pal = Pal::scoring(&[("SEQ", 1.0), ("S1", 1.0), ("S2", 1.0), ("S3", 1.0)]);
    let (runs, report) = all_end_at_once(&T_SEQ, &mut pal);
    assert_eq!(runs, ["SEQ", "S1", "S2", "S3", "REST"]);
    assert_eq!(report.redecides, 5);

    // Random: each child drawn once, then the root group has none left; R2
    // weighs 50 times more, and still is not drawn again.
    let mut pal = Pal::scoring(&[("R1", 1.0), ("R2", 50.0), ("R3", 1.0)]);
    let (runs, report) = all_end_at_once(&T_RND, &mut pal);
    assert_rounds(&runs, &["R1", "R2", "R3"]);
    assert_eq!(report.redecides, 3);

    // Shuffle: the same, within one round.
    let mut pal = Pal::scoring(&[("P1", 1.0), ("P2", 1.0), ("P3", 1.0), ("P4", 1.0)]);
    let (runs, report) = all_end_at_once(&T_SHUF, &mut pal);
    assert_rounds(&runs, &["P1", "P2", "P3", "P4"]);
    assert_eq!(report.redecides, 4);

    // Scored: by falling score; the best one, once ended, is out.
    let mut pal = Pal::scoring(&[("C1", 1.0), ("C2", 3.0), ("C3", 2.0)]);
    let (runs, report) = all_end_at_once(&T_SCORED, &mut pal);
    assert_eq!(runs, ["C2", "C3", "C1"]);
    assert_eq!(report.redecides, 3);

    // Delegating: G1 then G2 in PICK, then PICK is masked in the root and
    // REST runs.
    let mut pal = Pal::scoring(&[("G1", 1.0), ("G2", 1.0)]);
    let (runs, report) = all_end_at_once(&T_DEL, &mut pal);
    assert_eq!(runs, ["PICK", "G1", "G2", "REST"]);
    assert_eq!(report.redecides, 4);

    // CALL_DECIDE_ON_REDECIDE: EAT rechecks its decide (still accepting)
    // before each redecide, and still never picks K1 twice.
    let mut pal = Pal::scoring(&[("EAT", 1.0), ("K1", 1.0), ("K2", 1.0)]);
    let (runs, report) = all_end_at_once(&T_REC, &mut pal);
    assert_eq!(runs, ["EAT", "K1", "K2", "REST"]);
    assert_eq!(report.redecides, 4);
}

// ---------------------------------------------------------------------------
// Snapshot traces, one per policy

/// A step of a traced script: time, note, change to the agent before the tick.
type Step = (f64, &'static str, fn(&mut Pal));

/// Runs `script` on a fresh memory seeded with `seed`, with `Cue::GO` set,
/// and returns the trace.
fn trace<const L: usize, const S: usize, const N: usize>(
    tree: &'static Tree<Pal, L, S, N>,
    pal: &mut Pal,
    seed: u64,
    script: &[Step],
) -> String {
    let mut memory = tree.new_memory(seed);
    let mut trace = TraceRecorder::new();
    for (now, note, change) in script {
        change(pal);
        trace.note(note);
        let input = TickInput::new(*now, 1.0).with_decision(Cue::GO);
        tick_traced(tree, pal, &mut memory, &input, &mut trace).unwrap();
    }
    trace.take()
}

#[test]
fn sequential_trace() {
    let script: [Step; 5] = [
        (0.0, "SEQ accepts: it starts with S1", |p| {
            p.set(&[("SEQ", 1.0), ("S1", 1.0), ("S3", 1.0)])
        }),
        (1.0, "S1 ends; S2 rejects, so S3 runs next", |p| {
            p.ends.insert("S1");
        }),
        (
            2.0,
            "S1 and S2 accept now: no preemption, they are not asked",
            |p| p.set(&[("S2", 1.0)]),
        ),
        (
            3.0,
            "S3 ends: past the last child SEQ ends; REST runs",
            |p| {
                p.ends.insert("S3");
            },
        ),
        (
            4.0,
            "SEQ (before REST) preempts it and starts over from S1",
            |p| p.ends.clear(),
        ),
    ];
    snapshot!(trace(&T_SEQ, &mut Pal::default(), 0, &script));
}

#[test]
fn random_trace() {
    let script: [Step; 5] = [
        (
            0.0,
            "R1 weighs 1, R2 weighs 3, R3 rejects: one weighted draw",
            |p| p.set(&[("R1", 1.0), ("R2", 3.0)]),
        ),
        (
            1.0,
            "R3 accepts with weight 100: no preemption while a child runs",
            |p| {
                p.set(&[("R3", 100.0)]);
                p.life = 3;
            },
        ),
        (
            2.0,
            "the child ends on its third tick: a draw among the others",
            |_| {},
        ),
        (
            3.0,
            "every child ends on its first tick: none runs twice, then idle",
            |p| p.life = 1,
        ),
        (4.0, "an idle agent draws again from the root", |p| {
            p.life = 0
        }),
    ];
    snapshot!(trace(&T_RND, &mut Pal::default(), 7, &script));
}

#[test]
fn shuffle_trace() {
    let script: [Step; 6] = [
        (0.0, "all four accept: a draw among all", |p| {
            p.set(&[("P1", 1.0), ("P2", 1.0), ("P3", 1.0), ("P4", 1.0)]);
            p.life = 2;
        }),
        (1.0, "it ends: a draw among the three not yet run", |_| {}),
        (2.0, "a draw among the two not yet run", |_| {}),
        (3.0, "the last one of the round", |_| {}),
        (
            4.0,
            "a new round, without the one that just ended (masked)",
            |_| {},
        ),
        (
            5.0,
            "P2 ends: a draw among those not yet run in this round",
            |_| {},
        ),
    ];
    snapshot!(trace(&T_SHUF, &mut Pal::default(), 3, &script));
}

#[test]
fn scored_trace() {
    let script: [Step; 6] = [
        (0.0, "C2 scores highest", |p| {
            p.set(&[("C1", 1.0), ("C2", 2.0), ("C3", 0.5)])
        }),
        (1.0, "C1 rises to C2's score: equal does not preempt", |p| {
            p.set(&[("C1", 2.0)])
        }),
        (2.0, "C1 rises above it: C1 preempts C2", |p| {
            p.set(&[("C1", 3.0)])
        }),
        (
            3.0,
            "C1 ends: the masked redecide picks the best other, C2",
            |p| {
                p.ends.insert("C1");
            },
        ),
        (4.0, "C1 rejects, C3 ties C2: C2 keeps running", |p| {
            p.ends.clear();
            p.set(&[("C1", 0.0), ("C3", 2.0)]);
        }),
        (5.0, "C2's own score drops below C3's: C3 preempts", |p| {
            p.set(&[("C2", 1.0)])
        }),
    ];
    snapshot!(trace(&T_SCORED, &mut Pal::default(), 0, &script));
}

#[test]
fn call_decide_on_redecide_trace() {
    let script: [Step; 5] = [
        (0.0, "EAT accepts: K1 runs", |p| {
            p.set(&[("EAT", 1.0), ("K1", 1.0), ("K2", 1.0)])
        }),
        (
            1.0,
            "K1 ends: EAT's decide runs first, accepts, K2 runs",
            |p| {
                p.ends.insert("K1");
            },
        ),
        (
            2.0,
            "K2 ends: EAT accepts but has no child left, REST runs",
            |p| {
                p.ends.insert("K2");
            },
        ),
        (3.0, "EAT preempts REST: K1 again", |p| p.ends.clear()),
        (
            4.0,
            "K1 ends and EAT now rejects: EAT ends before K2 is asked",
            |p| {
                p.ends.insert("K1");
                p.set(&[("EAT", 0.0)]);
            },
        ),
    ];
    snapshot!(trace(&T_REC, &mut Pal::default(), 0, &script));
}

#[test]
fn delegate_decide_trace() {
    let script: [Step; 3] = [
        (
            0.0,
            "neither G1 nor G2 accepts: PICK rejects, REST runs",
            |_| {},
        ),
        (
            1.0,
            "G2 accepts: PICK accepts through it, G2 is decided once",
            |p| p.set(&[("G2", 1.0)]),
        ),
        (
            2.0,
            "G1 accepts: inside the active PICK, G1 preempts G2",
            |p| p.set(&[("G1", 1.0)]),
        ),
    ];
    snapshot!(trace(&T_DEL, &mut Pal::default(), 0, &script));
}

#[test]
fn delegate_decide_under_a_scored_group_trace() {
    let script: [Step; 3] = [
        (0.0, "MOOD scores what G2 scores (5) and beats W (3)", |p| {
            p.set(&[("G2", 5.0), ("W", 3.0)])
        }),
        (
            1.0,
            "MOOD's current score is G2's: W (4) does not beat it",
            |p| p.set(&[("W", 4.0)]),
        ),
        (2.0, "G2 drops to 2: W (4) preempts MOOD", |p| {
            p.set(&[("G2", 2.0)])
        }),
    ];
    snapshot!(trace(&T_VS, &mut Pal::default(), 0, &script));
}
