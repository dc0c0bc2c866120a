//! Recording brains into the decision viewer's flight recorder: the same
//! ticks as bt-core's own traced tick, lanes that end with their entity,
//! and the live endpoint following the app.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bt_bevy::bt_viewer::{Capacity, FlightRecorder, Recording, Watch};
use bt_bevy::{
    BrainPlugin, BrainRecorder, BrainStats, BrainSystems, DebugBrain, RecordBrains, Recorded,
    agent_id,
};
use bt_core::{TickInput, TraceRecorder, tick_traced};
use serde_json::Value;

use crate::sse::next_event;

use crate::common::{app, clock};
use crate::crowd::{creature, world_step};
use crate::w1_core::{Agent, W1, W1Memory};

/// The W1 crowd's app, recording as `settings` say.
fn recording_app(settings: RecordBrains) -> App {
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&W1).in_schedule(Update).record(settings))
        .add_systems(Update, world_step.before(BrainSystems::Tick));
    app
}

fn export(app: &App) -> Recording {
    app.world().resource::<BrainRecorder<W1Memory>>().export()
}

/// The serials of a lane's kept ticks.
/// The serials of `ticks`, a run of repeats (`[n]` or `[n, since]`: the
/// `n` ticks after the entry before it) written out.
fn serials(ticks: &[Value]) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for t in ticks {
        let t = t.as_array().unwrap();
        if t.len() == 7 {
            out.push(t[0].as_u64().unwrap());
        } else {
            let after = *out.last().expect("a run after a full tick");
            out.extend((1..=t[0].as_u64().unwrap()).map(|q| after + q));
        }
    }
    out
}

#[test]
fn recorded_entities_hold_the_ticks_bt_core_records_for_the_same_agents() {
    const N: usize = 200;
    const FRAMES: usize = 90;
    let picked = [3, 50, 77, 120, 199];
    let debugged = 50;
    let capacity = Capacity::new(64, 24);
    let mut app = recording_app(RecordBrains::marked(8).capacity(capacity));
    let entities: Vec<Entity> = (0..N)
        .map(|i| {
            let mut e = app.world_mut().spawn(creature(i));
            if picked.contains(&i) {
                e.insert(Recorded);
            }
            if i == debugged {
                e.insert(DebugBrain::quiet());
            }
            e.id()
        })
        .collect();
    // The reference: the same crowd over slices, seeded as the plugin
    // seeds its brains, recorded by the same recorder over bt-core's tick;
    // and the debugged creature alone through `tick_traced`.
    let mut agents: Vec<Agent> = (0..N).map(|i| creature(i).0).collect();
    let mut memories: Vec<W1Memory> = (1..=entities.len() as u64)
        .map(|k| W1.new_memory(k))
        .collect();
    let mut reference = FlightRecorder::new(&W1, N, Watch::Agents(&picked), capacity);
    let mut alone = creature(debugged).0;
    let mut alone_memory = W1.new_memory(debugged as u64 + 1);
    for frame in 0..FRAMES {
        app.update();
        let (now, dt) = clock(&app);
        for a in &mut agents {
            a.world.step();
        }
        reference.tick_all(&W1, &mut agents, &mut memories, |i, a| {
            TickInput::new(now, dt)
                .with_agent(agent_id(entities[i]))
                .with_decision(a.world.flags())
        });
        alone.world.step();
        let mut trace = TraceRecorder::new();
        let input = TickInput::new(now, dt)
            .with_agent(agent_id(entities[debugged]))
            .with_decision(alone.world.flags());
        tick_traced(&W1, &mut alone, &mut alone_memory, &input, &mut trace).unwrap();
        let debug = app
            .world()
            .get::<DebugBrain>(entities[debugged])
            .expect("the debugged entity");
        assert_eq!(debug.trace(), trace.take(), "frame {frame}");
        let stats = app.world().resource::<BrainStats<W1Memory>>();
        assert_eq!(stats.ticked, N as u64, "frame {frame}");
    }
    let got = export(&app);
    let want = reference.export();
    assert_eq!(got.agents.len(), picked.len());
    for (i, lane) in picked.iter().zip(&want.agents) {
        // The lane names the entity as the plugin names it to bt-core.
        let mine = got
            .agents
            .iter()
            .find(|a| a.agent == agent_id(entities[*i]))
            .unwrap_or_else(|| panic!("no lane for creature {i}"));
        assert_eq!(mine.ticks.len(), capacity.ticks, "creature {i}");
        assert_eq!(mine.first_tick, (FRAMES - capacity.ticks) as u64);
        // Events, active paths, leaves, times: every tick the same.
        assert_eq!(mine.ticks, lane.ticks, "creature {i}");
    }
    // The ticks say something: decisions were taken and rejected.
    let events: usize = got
        .agents
        .iter()
        .flat_map(|a| &a.ticks)
        .map(|t| t[6].as_array().unwrap().len() / 4)
        .sum();
    assert!(events > 100, "{events} events recorded");
    assert_eq!(got.tree.name, W1.name());
}

#[test]
fn a_despawned_entity_lane_ends_and_a_later_entity_gets_a_lane_of_its_own() {
    let mut app = recording_app(RecordBrains::all(3).capacity(Capacity::new(100, 24)));
    let [a, b] = [0, 1].map(|i| app.world_mut().spawn(creature(i)).id());
    for _ in 0..10 {
        app.update();
    }
    app.world_mut().despawn(b);
    for _ in 0..10 {
        app.update();
    }
    // Most likely on `b`'s index: a lane of its own all the same.
    let c = app.world_mut().spawn(creature(2)).id();
    // No lane is left for `d`: it runs, unrecorded.
    let d = app.world_mut().spawn(creature(3)).id();
    for _ in 0..10 {
        app.update();
    }
    let stats = app.world().resource::<BrainStats<W1Memory>>();
    assert_eq!(stats.ticked, 3);
    let got = export(&app);
    let lanes: Vec<(u32, Vec<u64>)> = got
        .agents
        .iter()
        .map(|l| (l.agent, serials(&l.ticks)))
        .collect();
    let span = |from: u64, to: u64| (from..to).collect::<Vec<_>>();
    assert_eq!(
        lanes,
        [
            (agent_id(a), span(0, 30)),
            (agent_id(b), span(0, 10)),
            (agent_id(c), span(20, 30)),
        ]
    );
    for e in [a, c, d] {
        assert!(app.world().get::<Recorded>(e).is_some(), "{e} marked");
    }
}

#[test]
fn a_released_lane_goes_to_a_new_entity_once_its_ticks_are_overwritten() {
    let mut app = recording_app(RecordBrains::all(1).capacity(Capacity::new(4, 24)));
    let first = app.world_mut().spawn(creature(0)).id();
    for _ in 0..3 {
        app.update();
    }
    app.world_mut().despawn(first);
    // Four frames later none of the first entity's ticks is kept.
    for _ in 0..4 {
        app.update();
    }
    let second = app.world_mut().spawn(creature(1)).id();
    for _ in 0..2 {
        app.update();
    }
    let got = export(&app);
    assert_eq!(got.agents.len(), 1);
    assert_eq!(got.agents[0].agent, agent_id(second));
    assert_eq!(serials(&got.agents[0].ticks), [7, 8]);
}

#[test]
fn the_live_endpoint_streams_the_ticks_of_the_running_app() {
    let mut app = recording_app(RecordBrains::marked(2).publish_every(Duration::ZERO));
    let watched = app.world_mut().spawn((creature(0), Recorded)).id();
    app.world_mut().spawn(creature(1));
    let url = app
        .world_mut()
        .resource_mut::<BrainRecorder<W1Memory>>()
        .serve(0)
        .unwrap();
    let addr = app
        .world()
        .resource::<BrainRecorder<W1Memory>>()
        .live()
        .unwrap()
        .addr();
    assert!(addr.ip().is_loopback(), "{addr}");
    assert_eq!(url, format!("http://{addr}/"));
    for _ in 0..3 {
        app.update();
    }

    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET /events HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut events = BufReader::new(stream);
    let mut line = String::new();
    events.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    let clients = || {
        app.world()
            .resource::<BrainRecorder<W1Memory>>()
            .live()
            .unwrap()
            .clients()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while clients() == 0 {
        assert!(Instant::now() < deadline, "the client never joined");
        std::thread::sleep(Duration::from_millis(5));
    }

    // The next frame sends the whole recording, the ones after it their
    // own ticks, as the app runs them.
    app.update();
    let (name, data) = next_event(&mut events);
    assert_eq!(name, "recording");
    let doc: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(doc["agents"].as_array().unwrap().len(), 1);
    assert_eq!(doc["agents"][0]["agent"], agent_id(watched));
    assert_eq!(
        serials(doc["agents"][0]["ticks"].as_array().unwrap()),
        [0, 1, 2, 3]
    );
    // A tick that repeats the one before but for time comes as a run,
    // `[1]`, with the leaf of the last full tick.
    let mut leaves = BTreeMap::new();
    let ticks = doc["agents"][0]["ticks"].as_array().unwrap();
    let mut leaf = ticks
        .iter()
        .rev()
        .find(|t| t.as_array().unwrap().len() == 7)
        .unwrap()[2]
        .clone();
    for serial in 4..8u64 {
        app.update();
        let (name, data) = next_event(&mut events);
        assert_eq!(name, "ticks");
        let msg: Value = serde_json::from_str(&data).unwrap();
        let lane = &msg["agents"][0];
        assert_eq!(lane["agent"], agent_id(watched));
        let tick = &lane["ticks"][0];
        if tick.as_array().unwrap().len() == 7 {
            assert_eq!(tick[0], serial);
            let (now, _) = clock(&app);
            assert_eq!(tick[1].as_f64(), Some(now));
            leaf = tick[2].clone();
        } else {
            assert_eq!(tick[0], 1, "a run of one tick: {tick}");
        }
        leaves.insert(serial, leaf.clone());
    }
    // The leaf streamed is the brain's.
    let brain = app
        .world()
        .get::<bt_bevy::Brain<W1Memory>>(watched)
        .unwrap();
    assert_eq!(
        leaves[&7].as_u64(),
        brain.memory().leaf().map(|l| u64::from(l.0))
    );

    // Stopping tells the page.
    app.world_mut()
        .resource_mut::<BrainRecorder<W1Memory>>()
        .stop_serving();
    assert_eq!(next_event(&mut events).0, "end");
}
