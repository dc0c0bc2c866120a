//! A herd of deer whose tree has tunables, for the viewer's tests: a deer
//! flees while its health is below `FLEE_BELOW`, grazes while `GRAZING`
//! holds, and stands otherwise; health never changes, so a decision
//! changes only when a tunable does.

#![allow(dead_code)]

use std::sync::Arc;

use bt_core::{TickInput, TreeShared, group, leaf, tree, tunables};
use bt_viewer::{Capacity, FlightRecorder, Watch};

tunables! { pub HERD_TUNING:
    /// Health fraction below which a deer flees.
    FLEE_BELOW: f64 = 0.25, 0.0..=1.0;
    /// Metres a deer runs before it looks back.
    RUN_FOR: i64 = 40, 1..=500;
    /// Whether deer graze at all.
    GRAZING: bool = true;
}

/// One deer.
#[derive(Clone, Debug, Default)]
pub struct Deer {
    pub health: f64,
}

leaf! { FLEE: Deer, when: |d, x| d.health < x.tuned(FLEE_BELOW) }
leaf! { GRAZE: Deer, when: |_, x| x.tuned(GRAZING) }
leaf! { STAND: Deer }
group! { ROOT: Deer, prioritized [FLEE, GRAZE, STAND] }
tree! { pub DEER: Deer = ROOT, memory: DeerMemory, tunables: HERD_TUNING }

/// A herd of deer of these healths, bound to a new shared state.
pub fn herd(healths: &[f64]) -> (Arc<TreeShared>, Vec<Deer>, Vec<DeerMemory>) {
    let shared = DEER.new_shared(0);
    let deer = healths.iter().map(|&health| Deer { health }).collect();
    let memories = (0..healths.len())
        .map(|i| DEER.new_memory_in(&shared, i as u64))
        .collect();
    (shared, deer, memories)
}

/// Tick `t`'s input.
pub fn input(t: u64) -> TickInput {
    TickInput::new(t as f64 * 0.1, 0.1)
}

/// A run of `ticks` ticks of a herd of these healths, every deer
/// recorded (the last `keep` ticks), `tune` called before each tick with
/// the tick and the shared state.
pub fn record(
    healths: &[f64],
    ticks: u64,
    keep: usize,
    mut tune: impl FnMut(u64, &TreeShared),
) -> FlightRecorder {
    let (shared, mut deer, mut memories) = herd(healths);
    let mut recorder = FlightRecorder::new(&DEER, healths.len(), Watch::All, Capacity::ticks(keep));
    for t in 0..ticks {
        tune(t, &shared);
        recorder.tick_all(&DEER, &mut deer, &mut memories, |_, _| input(t));
    }
    recorder
}

/// The name of the leaf agent entry `k` ran at tick `serial` of a
/// recording's JSON (every tick whole).
pub fn leaf_at(json: &serde_json::Value, k: usize, serial: u64) -> Option<String> {
    let items = json["tree"]["items"].as_array().unwrap();
    let tick = json["agents"][k]["ticks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t[0] == serial)
        .unwrap_or_else(|| panic!("agent entry {k} has no tick {serial}"));
    tick[2]
        .as_u64()
        .map(|i| items[i as usize]["name"].as_str().unwrap().to_owned())
}
