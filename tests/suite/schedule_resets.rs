//! Rates changed several times between two frames count as one change,
//! from the rate of the last frame to the one given last: a game that
//! resets every rate to a default each frame (the schedule's own,
//! `EveryFrame`, or `OnWake`) and then sets the one it wants ticks the
//! agents it would tick setting that rate alone, and a save taken between
//! the changes and the frame continues as the unsaved run.

use bt_core::{Rate, Schedule, TickInput, leaf, tick_scheduled, tree};

#[derive(Clone, Debug, Default)]
struct Npc;

leaf! { IDLE: Npc }
tree! { NPCS: Npc = IDLE, memory: NpcMemory }

const RATES: [Rate; 7] = [
    Rate::EveryFrame,
    Rate::Every(2),
    Rate::Every(3),
    Rate::Every(4),
    Rate::Every(7),
    Rate::Every(16),
    Rate::OnWake,
];

/// A crowd of `n` and its schedule, under `budget`.
struct Crowd {
    agents: Vec<Npc>,
    memories: Vec<NpcMemory>,
    schedule: Schedule,
}

impl Crowd {
    fn new(n: usize, budget: Option<u32>) -> Self {
        Crowd {
            agents: vec![Npc; n],
            memories: (0..n).map(|i| NPCS.new_memory(i as u64)).collect(),
            schedule: Schedule::new(n, 0.0).with_budget(budget),
        }
    }

    /// The next frame: the agents it ticked, in order.
    fn frame(&mut self) -> Vec<usize> {
        let now = (self.schedule.frame() + 1) as f64 * 0.1;
        let mut ticked = Vec::new();
        let report = tick_scheduled(
            &NPCS,
            &mut self.agents,
            &mut self.memories,
            &mut self.schedule,
            now,
            |i, _, dt| {
                ticked.push(i);
                TickInput::new(now, dt)
            },
        );
        assert_eq!(report.crowd.errors, 0);
        ticked
    }

    /// Which agents are due before the next frame.
    fn due(&self) -> Vec<bool> {
        (0..self.agents.len())
            .map(|i| self.schedule.is_due(i))
            .collect()
    }
}

/// A small generator, the same numbers on every run.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// Each frame, each agent's rate is drawn (kept most of the time, moved
/// among the rates of `RATES` otherwise); one crowd sets it alone, the
/// others first reset it to `EveryFrame`, to `OnWake`, or to a rate drawn
/// at random. Every crowd has the same agents due before each frame, and
/// ticks the same agents in the same order, with and without a budget.
#[test]
fn rates_reset_to_a_default_and_set_again_tick_as_rates_set_once() {
    // Smaller under Miri, which runs it too.
    let (n, frames) = if cfg!(miri) { (12, 12) } else { (400, 120) };
    for budget in [None, Some(60)] {
        let mut crowds: Vec<Crowd> = (0..4).map(|_| Crowd::new(n, budget)).collect();
        let mut rates = vec![Rate::EveryFrame; n];
        let mut draw = Lcg(7);
        for f in 0..frames {
            for (i, rate) in rates.iter_mut().enumerate() {
                if draw.below(5) == 0 {
                    *rate = RATES[draw.below(RATES.len())];
                }
                let other = RATES[draw.below(RATES.len())];
                for (c, crowd) in crowds.iter_mut().enumerate() {
                    let reset = [
                        None,
                        Some(Rate::EveryFrame),
                        Some(Rate::OnWake),
                        Some(other),
                    ][c];
                    if let Some(reset) = reset {
                        crowd.schedule.set_rate(i, reset).unwrap();
                    }
                    crowd.schedule.set_rate(i, *rate).unwrap();
                }
            }
            let due = crowds[0].due();
            let ticked = crowds[0].frame();
            for (c, crowd) in crowds.iter_mut().enumerate().skip(1) {
                assert_eq!(
                    crowd.due(),
                    due,
                    "budget {budget:?}, frame {f}, crowd {c}: due"
                );
                assert_eq!(
                    crowd.frame(),
                    ticked,
                    "budget {budget:?}, frame {f}, crowd {c}: ticked"
                );
            }
        }
    }
}

/// A crowd at `Every(16)` set to `Every(4)` (through `EveryFrame`) has due
/// in the next frame the agents whose `Every(16)` turn it is, which the
/// rule makes due as soon as their rate is set; saved before that frame
/// (JSON and postcard) and loaded, it goes on ticking as the unsaved crowd.
#[test]
fn a_save_between_rate_changes_and_the_frame_continues_exactly() {
    let (n, after) = if cfg!(miri) { (16, 8) } else { (256, 40) };
    for compact in [false, true] {
        let mut crowd = Crowd::new(n, Some(40));
        for i in 0..n {
            crowd.schedule.set_rate(i, Rate::Every(16)).unwrap();
        }
        for _ in 0..20 {
            crowd.frame();
        }
        let f = crowd.schedule.frame();
        for i in 0..n {
            crowd.schedule.set_rate(i, Rate::EveryFrame).unwrap();
            crowd.schedule.set_rate(i, Rate::Every(4)).unwrap();
        }
        // Those whose `Every(16)` turn the next frame is, less any the
        // budget left waiting (due already).
        let turn = |i: usize| f % 16 == u64::from(Schedule::phase(i, 16));
        let due = crowd.due();
        assert!(due.iter().filter(|&&d| d).count() >= (0..n).filter(|&i| turn(i)).count());
        for (i, &d) in due.iter().enumerate() {
            assert!(
                d || !turn(i),
                "agent {i}: its Every(16) turn is the next frame"
            );
        }
        let saved = crowd.schedule.snapshot(4.0);
        let mut restored = Crowd::new(n, None);
        restored.schedule = if compact {
            let bytes = postcard::to_allocvec(&saved).unwrap();
            Schedule::restore(4.0, &mut postcard::Deserializer::from_bytes(&bytes)).unwrap()
        } else {
            let text = serde_json::to_string(&saved).unwrap();
            Schedule::restore(4.0, &mut serde_json::Deserializer::from_str(&text)).unwrap()
        };
        assert_eq!(restored.due(), due, "compact {compact}: due after the load");
        for g in 0..after {
            assert_eq!(
                restored.frame(),
                crowd.frame(),
                "compact {compact}, frame {}",
                f + g
            );
        }
    }
}
