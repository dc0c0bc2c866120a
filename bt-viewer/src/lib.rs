//! A flight recorder for [`bt_core`] trees and a decision viewer that runs
//! in the browser.
//!
//! "Why did agent #4711 stop guarding at t = 12.5?" Tick the crowd through
//! a [`FlightRecorder`]: it keeps the last ticks of every watched agent —
//! each decision step (rejections and why, decide values, activations,
//! preemptions, redecides, Subset Rule reports, deferred actions, errors)
//! and the active path after the tick — in frames allocated once, the
//! newest overwriting the oldest.
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
//! (no network, no build step). The page draws the tree (each decider as `NAME #index`,
//! its checks by flag name, the decide values of the tick), replays the
//! ticks one by one with the events, the random draws and scores, the
//! state dump and the agent's own values at the cursor; above the lanes,
//! how many agents run each behavior over time; a query finds the agents
//! that entered a decider, were rejected at one for a reason, or had a
//! Subset Rule report or an error, and the lanes (drawn on a canvas, with
//! zoom and pan, the agent's numbers plotted under its lane) show those.
//! With the `live` feature, `LiveServer` serves the same page from
//! loopback and streams new ticks to it as they happen.
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
//! # Features
//!
//! - `live` (default): `LiveServer`, a loopback HTTP endpoint (hyper on
//!   a one-thread tokio event loop) that serves the viewer and streams
//!   ticks to it as server-sent events, with bounded memory per client,
//!   timeouts and no thread per connection; `Limits` sets its bounds.
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

mod export;
#[cfg(feature = "live")]
mod live;
mod page;
mod recorder;

pub use export::{
    AgentTicks, AgentValues, Clock, FORMAT, FlagNamesInfo, ItemInfo, Legend, PreInfo, Recording,
    SharedInfo, TestInfo, TreeInfo, VERSION,
};
#[cfg(feature = "live")]
#[cfg_attr(docsrs, doc(cfg(feature = "live")))]
pub use live::{Limits, LiveServer};
pub use page::{PAGE, page_with, write_page};
pub use recorder::{AgentData, Capacity, DataCapacity, DataOut, FlightRecorder, Watch};
