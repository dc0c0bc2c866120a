//! A flight recorder for [`bt_core`] trees and a decision viewer that runs
//! in the browser.
//!
//! "Why did agent #4711 stop guarding at t = 12.5?" Tick the crowd through
//! a [`FlightRecorder`]: it keeps the last ticks of every watched agent —
//! each decision step (rejections and why, decide values, those that
//! accepted and those that rejected, activations, preemptions, redecides,
//! Subset Rule reports, deferred actions, errors), the tick's decision and
//! stimuli flags, and the active path after the tick — in frames allocated
//! once, the newest overwriting the oldest.
//! With [`FlightRecorder::with_data`] and
//! [`tick_all_with_data`](FlightRecorder::tick_all_with_data), it also
//! keeps what each watched agent says about itself ([`AgentData`]: its
//! hunger, its target…) at every tick, in room set aside once;
//! [`name_flags`](FlightRecorder::name_flags) names the flag bits.
//! [`FlightRecorder::export`] makes a [`Recording`], a versioned JSON
//! document ([`export_compact`](FlightRecorder::export_compact) the same,
//! with runs of repeated ticks merged, for large crowds);
//! [`write_json`](FlightRecorder::write_json) and
//! [`write_json_compact`](FlightRecorder::write_json_compact) write its
//! text into a file or any writer without building it, in a few MiB
//! whatever its size (a `Recording` takes tens of times its text);
//! [`write_page`] writes it beside the viewer, one self-contained HTML file
//! (no network, no build step) that holds the recording compressed (about
//! a quarter of the JSON's bytes; keep `recording.json` for other tools).
//! A recording of 10 000 agents × 600 ticks with their values (175 MB of
//! JSON) opens in 2.8 to 3.5 s on a loaded 2-core machine. The page draws the tree (each decider as `NAME #index`,
//! its checks by flag name, the decide values of the tick), replays the
//! ticks one by one with the events, the random draws and scores, the
//! tick's flags by name, the state dump and the agent's own values at the
//! cursor (a node's tooltip gives its last decide value and its last
//! rejection with the reason, and for a flag test the flags that failed:
//! "decision flags: missing FOOD"); above the lanes,
//! how many agents run each behavior over time (a behavior that any agent
//! runs at a tick is drawn at least 3 pixels high there, so one agent of
//! 10 000 can be seen and clicked: a click shows the agents of a band at
//! its tick), a legend that gives how many agents run each behavior, marks
//! those that at most one agent in a hundred runs as rare (in a crowd of
//! 100 or more), and shows on a
//! click the agents that run it in the ticks in view, and a track of how
//! many agents had a Subset Rule report, an error or a rejection at each
//! tick (a click shows them); a query finds the agents that entered a
//! decider, were rejected at one for a reason, ran one, or had a Subset
//! Rule report or an error, and the lanes (drawn on a canvas, with zoom
//! and pan, the agent's numbers plotted under its lane) show those. The
//! matches of a query, a legend entry or the track go by tick, the
//! earliest first (the lower agent id first on a tie), with buttons to the
//! first, the previous and the next. The page reads an agent's values
//! when it first shows them (a malformed entry is then named in the values
//! panel, the rest of the recording still shown): opening a recording
//! parses its values' text, most of a large one's, only for the agents
//! looked at.
//! With the `live` feature, `LiveServer` serves the same page from
//! loopback and streams new ticks to it as they happen: the page gets the
//! ticks of the lanes it shows and per-tick counts of the whole crowd, so
//! that it keeps up with a crowd of any size, and opens its stream again
//! when it breaks.
//!
//! ```
//! use bt_core::{TickInput, behavior, decider, group, tree};
//! use bt_viewer::{Capacity, FlightRecorder, Watch};
//!
//! struct Critter { hungry: bool }
//! behavior! { EAT: Critter, tick: |c, _cx| { c.hungry = false; false } }
//! behavior! { WANDER: Critter }
//! decider! { EAT_WHEN_HUNGRY: Critter => EAT, decide: |c, _| if c.hungry { 1.0 } else { 0.0 } }
//! decider! { JUST_WANDER: Critter => WANDER }
//! group! { ROOT: Critter, prioritized [EAT_WHEN_HUNGRY, JUST_WANDER] }
//! tree! { CRITTER: Critter = ROOT }
//!
//! let mut critters: Vec<Critter> = (0..4).map(|i| Critter { hungry: i % 2 == 0 }).collect();
//! let mut memories: Vec<_> = (0..4).map(|i| CRITTER.new_memory(i)).collect();
//! // The last 100 ticks of agents 0 and 3.
//! let mut recorder = FlightRecorder::new(&CRITTER, 4, Watch::Agents(&[0, 3]), Capacity::new(100, 16));
//! for t in 0..10 {
//!     let now = f64::from(t) * 0.5;
//!     recorder.tick_all(&CRITTER, &mut critters, &mut memories, |i, _| {
//!         TickInput::new(now, 0.5).with_agent(i as u32)
//!     });
//! }
//! let recording = recorder.export();
//! assert_eq!(recording.agents.len(), 2);
//! assert_eq!(recording.agents[0].ticks.len(), 10);
//! let json = recording.to_json();
//! assert!(json.starts_with(r#"{"format":"bt-viewer-recording","version":2,"#));
//! // bt_viewer::write_page(std::path::Path::new("target/viewer"), &json) writes the page.
//! ```
//!
//! # Recording a crowd with its values and flag names
//!
//! What the page shows beside each decision: the agent's own numbers
//! ([`AgentData`], plotted under its lane), and the names of the flag bits
//! its deciders test ([`name_flags`](FlightRecorder::name_flags)). The
//! recorder ticks the crowd in place of `tick_all`, and
//! [`write_page`] writes the page and its recording into a folder.
//!
//! ```
//! use bt_core::{Stimuli, TickInput, bitflags::bitflags, behavior, decider, group, tree};
//! use bt_viewer::{AgentData, Capacity, DataCapacity, DataOut, FlightRecorder, Watch};
//!
//! bitflags! {
//!     #[derive(Clone, Copy)]
//!     struct Day: u8 { const NIGHT = 1; }
//!     #[derive(Clone, Copy)]
//!     struct Sense: u8 { const PREDATOR = 1; }
//! }
//!
//! #[derive(Default)]
//! struct Deer { thirst: f32, senses: Stimuli<Sense, 2> }
//!
//! // The values the page plots under each recorded deer's lane.
//! impl AgentData for Deer {
//!     fn record(&self, out: &mut DataOut<'_>) {
//!         out.num("thirst", f64::from(self.thirst));
//!     }
//! }
//!
//! behavior! { RUN: Deer, tick: |_d, cx| cx.stimuli_as::<Sense>().contains(Sense::PREDATOR) }
//! behavior! { SIP: Deer, tick: |d, cx| { d.thirst -= cx.dt; d.thirst > 0.0 } }
//! behavior! { GRAZE: Deer, tick: |d, cx| { d.thirst += 0.2 * cx.dt; true } }
//! decider! { FLEE: Deer => RUN, stimuli_any: Sense::PREDATOR }
//! decider! { DRINK: Deer => SIP, when: |d, _| d.thirst > 0.5, needs_none: Day::NIGHT }
//! decider! { EAT: Deer => GRAZE }
//! group! { ROOT: Deer, prioritized [FLEE, DRINK, EAT] }
//! tree! { HERD: Deer = ROOT }
//!
//! let mut herd: Vec<Deer> = (0..10).map(|_| Deer::default()).collect();
//! let mut memories: Vec<_> = (0..10).map(|i| HERD.new_memory(i)).collect();
//! // Deer 2 and 5, their last 600 ticks (a minute at 10 Hz), one value a tick.
//! let mut recorder = FlightRecorder::new(&HERD, 10, Watch::Agents(&[2, 5]), Capacity::ticks(600))
//!     .with_data(DataCapacity::values(1))
//!     .name_flags::<Day, Sense>();
//! herd[2].senses.set(Sense::PREDATOR, 0, Some(1.0)).unwrap();
//! for t in 0..50 {
//!     let (now, dt) = (f64::from(t) * 0.1, 0.1);
//!     recorder.tick_all_with_data(&HERD, &mut herd, &mut memories, |_, deer| {
//!         TickInput::new(now, dt).with_stimuli(deer.senses.update(dt))
//!     });
//! }
//! let json = recorder.export().to_json();
//! assert!(json.contains(r#""thirst""#) && json.contains(r#""PREDATOR""#));
//! let dir = std::env::temp_dir().join(format!("bt-viewer-doc-{}", std::process::id()));
//! let page = bt_viewer::write_page(&dir, &json)?; // open it in a browser
//! assert!(page.ends_with("viewer.html"));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # Comparing two runs
//!
//! [`compare`] takes two recordings of one tree (the same scenario before
//! and after a change to the tree, a closure or a number) and returns a
//! [`Comparison`]: per agent, the first tick whose decisions differ and
//! what differs there (another decider, a decide value, a rejection's
//! reason), and how many agents had diverged by each tick, for a test to
//! assert on (`comparison.same_before(100)`). Recordings of two trees, or
//! of a tree whose structure changed, are a [`CompareError`]. The
//! `bt-compare` command does the same for two files, for a CI job:
//! `cargo run -p bt-viewer --bin bt-compare -- before.json after.json
//! [--before TICK]` exits 0 when no agent decided otherwise, 1 when some
//! did, 2 when the files cannot be compared.
//!
//! To see the change, `bt-compare --page DIR before.json after.json` also
//! writes `DIR/compare.html` (a CI job can keep it), one self-contained
//! page with both recordings and the comparison inside; in code,
//! [`write_compare_page`] or [`compare_page_with`]. It shows the first run
//! as the viewer does and, above the overview, what [`compare`] found: how
//! many agents had diverged by each tick, plotted on the lanes' time axis;
//! a table of the agents that decided otherwise, earliest first, with the
//! tick, the decider each run ran after it and what differed (a click
//! selects the agent at that tick); and the selected agent's two runs side
//! by side, their lanes aligned on ticks with the ticks whose deciders
//! differ and the first divergence marked, and the events of the cursor's
//! tick in each run with the first step that differs highlighted. The
//! page shows the library's report as it is, so the two cannot disagree.
//! When the recordings cannot be compared, the page holds neither and
//! shows the [`CompareError`]'s message. Opening another file in it leaves
//! the comparison.
//!
//! ```
//! # use bt_core::{TickInput, behavior, decider, group, tree};
//! # use bt_viewer::{Capacity, FlightRecorder, Watch};
//! # struct Critter { hungry: bool }
//! # behavior! { EAT: Critter, tick: |c, _cx| { c.hungry = false; false } }
//! # behavior! { WANDER: Critter }
//! # decider! { EAT_WHEN_HUNGRY: Critter => EAT, decide: |c, _| if c.hungry { 1.0 } else { 0.0 } }
//! # decider! { JUST_WANDER: Critter => WANDER }
//! # group! { ROOT: Critter, prioritized [EAT_WHEN_HUNGRY, JUST_WANDER] }
//! # tree! { CRITTER: Critter = ROOT }
//! // One scenario played twice; the second time critter 1 starts hungry.
//! let record = |hungry: u32| {
//!     let mut critters: Vec<Critter> = (0..3).map(|i| Critter { hungry: i == hungry }).collect();
//!     let mut memories: Vec<_> = (0..3).map(|i| CRITTER.new_memory(i)).collect();
//!     let mut recorder = FlightRecorder::new(&CRITTER, 3, Watch::All, Capacity::ticks(20));
//!     for t in 0..20 {
//!         recorder.tick_all(&CRITTER, &mut critters, &mut memories, |_, _| {
//!             TickInput::new(f64::from(t) * 0.1, 0.1)
//!         });
//!     }
//!     recorder.export().to_json()
//! };
//! let (before, after) = (record(0), record(1));
//! let dir = std::env::temp_dir().join(format!("bt-viewer-compare-{}", std::process::id()));
//! let (page, comparison) = bt_viewer::write_compare_page(&dir, &before, &after, ["before", "after"])?;
//! let comparison = comparison.expect("one tree");
//! assert_eq!(comparison.first_tick(), Some(0)); // critters 0 and 1 ate otherwise at once
//! assert!(page.ends_with("compare.html")); // open it in a browser
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # Tunables
//!
//! A tree with tunables (bt-core's `tunables!`) is recorded with them. The
//! recorder learns the crowd's shared state from the memories it ticks; a
//! recording holds the tunables' table (each one's name, doc line, kind,
//! range and default, in [`TreeInfo::tunables`]) and their values
//! ([`Recording::tuning`]): those in effect at its first frame, and every
//! change put in effect after it, with the tick it took effect at — the
//! first tick whose decisions read the new value — so that a replay or a
//! comparison knows which values each tick read. The recorder's
//! [`tick_all`](FlightRecorder::tick_all) and
//! [`tick_scheduled`](FlightRecorder::tick_scheduled) put the staged
//! changes in effect when the frame starts, for every agent alike, as
//! bt-core's crowd ticks do; a game that ticks agents one by one calls
//! `TreeShared::apply_tuning` at the start of its frame. The page marks
//! each change on the timeline at its tick (`FLEE_BELOW 0.25 → 0.3`, on
//! the ruler and as a dashed line across the lanes) and names it in that
//! tick's summary. A recording made before recordings held tunables still
//! opens, with none.
//!
//! [`compare`] lists the tunables whose values in effect differ between
//! the two runs ([`Comparison::tuning`]): each one's value at the start of
//! each run, its changes with their ticks, and the first tick where the
//! values differ; the agents whose decisions changed because of it are in
//! [`Comparison::agents`] as always, from the first tick they decided
//! otherwise. `bt-compare` prints them, and the comparison page lists them
//! above its table (a click goes to the tick).
//!
//! ```
//! use bt_core::{TickInput, group, leaf, tree, tunables};
//! use bt_viewer::{Capacity, FlightRecorder, Watch};
//!
//! tunables! { HERD_TUNING:
//!     /// Health fraction below which a deer flees.
//!     FLEE_BELOW: f64 = 0.25, 0.0..=1.0;
//! }
//! struct Deer { health: f64 }
//! leaf! { FLEE: Deer, when: |d, x| d.health < x.tuned(FLEE_BELOW) }
//! leaf! { GRAZE: Deer }
//! group! { ROOT: Deer, prioritized [FLEE, GRAZE] }
//! tree! { HERD: Deer = ROOT, memory: HerdMemory, tunables: HERD_TUNING }
//!
//! let record = |raise_at: Option<u32>| {
//!     let shared = HERD.new_shared(0);
//!     let mut herd: Vec<Deer> = [0.1, 0.28].map(|health| Deer { health }).into();
//!     let mut memories: Vec<HerdMemory> = (0..2).map(|i| HERD.new_memory_in(&shared, i)).collect();
//!     let mut recorder = FlightRecorder::new(&HERD, 2, Watch::All, Capacity::ticks(20));
//!     for t in 0..20 {
//!         if raise_at == Some(t) {
//!             shared.tune(FLEE_BELOW, 0.3).unwrap(); // in effect from this tick
//!         }
//!         recorder.tick_all(&HERD, &mut herd, &mut memories, |_, _| {
//!             TickInput::new(f64::from(t) * 0.1, 0.1)
//!         });
//!     }
//!     recorder.export()
//! };
//! let after = record(Some(8));
//! let change = &after.tuning.as_ref().unwrap().changes[0];
//! assert_eq!((change.tick, change.name), (8, "FLEE_BELOW"));
//! let comparison = bt_viewer::compare(&record(None).to_json(), &after.to_json()).unwrap();
//! assert_eq!(comparison.first_tick(), Some(8)); // deer 1 flees from tick 8
//! assert_eq!(comparison.tuning[0].name, "FLEE_BELOW");
//! assert_eq!(comparison.tuning[0].first_tick, 8);
//! ```
//!
//! # Features
//!
//! - `live` (default): `LiveServer`, a loopback HTTP endpoint (hyper on
//!   a one-thread tokio event loop) that serves the viewer and streams
//!   ticks to it as server-sent events, with bounded memory per client,
//!   timeouts and no thread per connection; `Limits` sets its bounds. A
//!   game that calls `LiveServer::frame` can be paused, stepped, stopped
//!   by breakpoints and tuned from the page: its panel of the tree's
//!   tunables shows each one's doc line, kind, range and value in effect,
//!   and a change made there is in effect from the crowd's next tick
//!   (see `LiveServer`).
// The live server's items exist with the `live` feature only: the crate
// docs name them as code, and link them when they are there.
#![cfg_attr(
    feature = "live",
    doc = "\n\nThe live view's items: [`LiveServer`] and its [`Limits`]."
)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

extern crate alloc as alloc_crate;

mod compare;
mod export;
#[cfg(feature = "live")]
mod live;
mod page;
mod recorder;

pub use compare::{
    AgentComparison, CompareError, Comparison, Difference, Divergence, TunableDifference,
    TunedChanges, compare,
};
pub use export::{
    AgentTicks, AgentValues, Clock, FORMAT, FlagNamesInfo, ItemInfo, Legend, PreInfo, Recording,
    SharedInfo, TestInfo, TreeInfo, TunableInfo, TunedInfo, TunedValue, Tuning, TuningChange,
    VERSION,
};
#[cfg(feature = "live")]
#[cfg_attr(docsrs, doc(cfg(feature = "live")))]
pub use live::{Limits, LiveServer};
pub use page::{PAGE, compare_page_with, page_with, write_compare_page, write_page};
pub use recorder::{AgentData, Capacity, DataCapacity, DataOut, FlightRecorder, Watch};
