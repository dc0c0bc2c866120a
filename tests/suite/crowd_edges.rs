//! Crowd edges: a tick given a clock far ahead, agents ticked under ids
//! that clash with their deferred actions, and the stack a tick needs.

use bt_core::{TickInput, TraceRecorder, group, leaf, tick, tick_all, tick_traced, tree};

/// An agent that looks around at most once a second and walks otherwise.
#[derive(Default)]
struct Walker {
    /// When it looked around.
    looked: Vec<f64>,
}

// LOOK preempts WALK whenever its timer lets it, ticks once and ends, and
// the group falls back to WALK in the same tick.
leaf! { LOOK: Walker, every: 1.0, tick: |w, cx| { w.looked.push(cx.now); false } }
leaf! { WALK: Walker, tick: |_, _| true }
group! { WALKER_ROOT: Walker, prioritized [LOOK, WALK] }
tree! { WALKER: Walker = WALKER_ROOT, memory: WalkerMemory }

/// How a crowd of walkers is ticked.
#[derive(Clone, Copy, Debug)]
enum Ticking {
    /// One by one with `tick` (the steady walk and its quick redecide).
    Plain,
    /// One by one with `tick_traced` (the step machine alone).
    Traced,
    /// With `tick_all`.
    Crowd,
}

fn tick_walkers(how: Ticking, walkers: &mut [Walker], memories: &mut [WalkerMemory], now: f64) {
    let input = TickInput::new(now, 0.25);
    match how {
        Ticking::Plain => {
            for (w, m) in walkers.iter_mut().zip(memories.iter_mut()) {
                tick(&WALKER, w, m, &input).unwrap();
            }
        }
        Ticking::Traced => {
            for (w, m) in walkers.iter_mut().zip(memories.iter_mut()) {
                let mut trace = TraceRecorder::new();
                tick_traced(&WALKER, w, m, &input, &mut trace).unwrap();
            }
        }
        Ticking::Crowd => {
            let report = tick_all(&WALKER, walkers, memories, |_, _| input);
            assert_eq!(report.errors, 0);
        }
    }
}

/// One tick given milliseconds for seconds stamps every timer far ahead;
/// back at normal times, each timer has run out (its stamp is more than a
/// period ahead) and works again at once, every period, as before.
#[test]
fn a_timer_stamped_far_ahead_runs_out_when_the_clock_comes_back() {
    for how in [Ticking::Plain, Ticking::Traced, Ticking::Crowd] {
        let mut walkers: Vec<Walker> = (0..3).map(|_| Walker::default()).collect();
        let mut memories: Vec<WalkerMemory> = (0..3).map(|i| WALKER.new_memory(i)).collect();
        // Quarter-second ticks: one look a second, from 0.
        let mut t = 0.0;
        while t < 3.0 {
            tick_walkers(how, &mut walkers, &mut memories, t);
            t += 0.25;
        }
        for w in &walkers {
            assert_eq!(w.looked, [0.0, 1.0, 2.0], "{how:?}");
        }
        // One bad tick: 3 s given as 3000.
        tick_walkers(how, &mut walkers, &mut memories, 3000.0);
        for (w, m) in walkers.iter().zip(&memories) {
            assert_eq!(w.looked.last(), Some(&3000.0), "{how:?}");
            assert_eq!(m.timer(0), 3000.0);
        }
        // Back to normal times: every agent looks again at once, then
        // once a second.
        while t < 6.0 {
            tick_walkers(how, &mut walkers, &mut memories, t);
            t += 0.25;
        }
        for w in &walkers {
            assert_eq!(w.looked[4..], [3.0, 4.0, 5.0], "{how:?}");
        }
    }
}

/// A stamp less than a period ahead of the clock (a clock a little
/// behind) still waits for the stamp plus the period, also when the
/// steady walk has a finding to reuse.
#[test]
fn a_timer_stamped_less_than_a_period_ahead_still_waits() {
    for how in [Ticking::Plain, Ticking::Traced, Ticking::Crowd] {
        let mut walkers = [Walker::default()];
        let mut memories = [WALKER.new_memory(0)];
        for t in [10.0, 10.25, 10.5, 9.5, 9.75, 10.0, 10.75, 11.0, 10.25, 9.0] {
            tick_walkers(how, &mut walkers, &mut memories, t);
        }
        // 9.5 to 10.75: the stamp 10 is less than a period ahead or
        // behind; 11 looks; 10.25 waits (11 is less than a period ahead);
        // 9.0: 11 is two periods ahead, so the timer has run out.
        assert_eq!(walkers[0].looked, [10.0, 11.0, 9.0], "{how:?}");
    }
}

// The stack a tick takes.

mod wide {
    // Blocks of 128 KiB, three levels, and no behavior with a DBlock or a
    // memory type: nothing a tick builds is block-sized.
    bt_core::leaf! { STEP: u32, tick: |a, _cx| { *a += 1; *a % 2 == 0 } }
    bt_core::leaf! { REST: u32, tick: |a, _cx| { *a += 10; true } }
    bt_core::group! { INNER: u32, prioritized [STEP, REST] }
    bt_core::group! { ROOT: u32, sequential [INNER] }
    bt_core::tree! { pub WIDE: u32 = ROOT, block: 131072 }
}

/// A tree without DBlocks reserves no DBlock scratch space: with three
/// levels of 128 KiB blocks, its ticks run on a thread with a stack of
/// 128 KiB, a third of levels × block (the memory is on the heap).
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn a_tree_without_dblocks_ticks_on_a_stack_smaller_than_its_blocks() {
    let tree = &wide::WIDE;
    let stack = 128 * 1024;
    assert!(stack < tree.levels() * tree.block_size());
    let mut memory = Box::new(tree.new_memory(0));
    let agent = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let mut agent = 0u32;
            for t in 0..4 {
                let input = TickInput::new(f64::from(t), 1.0);
                tick(tree, &mut agent, &mut memory, &input).unwrap();
                let mut trace = TraceRecorder::new();
                tick_traced(tree, &mut agent, &mut memory, &input, &mut trace).unwrap();
            }
            agent
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(agent > 0);
}

mod planner {
    /// A DBlock value of 64 KiB.
    pub struct Plan(pub [u8; 64 * 1024]);
    // PLAN's `decide` hands its behavior a 64 KiB plan each time it starts.
    bt_core::leaf! { PLAN: u32,
        dblock: Plan,
        when: |_, d| { d.set(Plan([3; 64 * 1024])); true },
        activate: |a, plan, _cx| { *a += u32::from(plan.map_or(0, |p| p.0[5])) << 16; true },
        tick: |a, _cx| { *a += 1; (*a & 0xFFFF) % 4 != 0 },
    }
    bt_core::leaf! { IDLE: u32 }
    bt_core::group! { INNER: u32, prioritized [PLAN, IDLE] }
    bt_core::group! { ROOT: u32, sequential [INNER] }
    bt_core::tree! { pub PLANNER: u32 = ROOT, block: 65536 }
}

/// A tree with DBlocks keeps their scratch space, levels × block bytes, on
/// the stack while its step machine runs, and a `decide` builds its DBlock
/// value there: with three levels of 64 KiB blocks, its ticks run on a
/// thread with (levels + 8) × block bytes and 256 KiB more, unoptimised
/// builds included (which move the value through a few frames), and carry
/// every plan.
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn a_tree_with_dblocks_ticks_within_its_documented_stack() {
    let tree = &planner::PLANNER;
    let stack = (tree.levels() + 8) * tree.block_size() + 256 * 1024;
    let mut memory = Box::new(tree.new_memory(0));
    let agent = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let mut agent = 0u32;
            for t in 0..8 {
                let input = TickInput::new(f64::from(t), 1.0);
                tick(tree, &mut agent, &mut memory, &input).unwrap();
            }
            agent
        })
        .unwrap()
        .join()
        .unwrap();
    // Eight ticks; PLAN ends on every fourth and starts again on the next
    // tick, so it was activated twice, each time with its plan (3).
    assert_eq!(agent, ((2 * 3) << 16) + 8);
}

// Agent ids and deferred actions.

mod courier {
    use bt_core::Action;

    /// A courier fetches a parcel (a deferred action a game system carries
    /// out), then waits.
    #[derive(Default)]
    pub struct Courier {
        pub fetched: u32,
    }
    bt_core::leaf! { FETCH: Courier,
        when: |c, _| c.fetched == 0,
        launch: |_, _cx| Some(Action::new(7, 0)),
        deactivate: |c, _cx| c.fetched += 1,
    }
    bt_core::leaf! { WAIT: Courier }
    bt_core::group! { ROOT: Courier, prioritized [FETCH, WAIT] }
    bt_core::tree! { pub COURIERS: Courier = ROOT, memory: CourierMemory }
}

use bt_core::{ActionOp, Outcome, TickError, TreeShared};
use courier::{COURIERS, Courier, CourierMemory};

fn couriers(n: usize) -> (std::sync::Arc<TreeShared>, Vec<Courier>, Vec<CourierMemory>) {
    let shared = COURIERS.new_shared(16);
    let agents = (0..n).map(|_| Courier::default()).collect();
    let memories = (0..n as u64)
        .map(|i| COURIERS.new_memory_in(&shared, i))
        .collect();
    (shared, agents, memories)
}

/// Reports every launch queued back as succeeded, routed by the agent id
/// its request names, as a game system does; returns the ids.
fn report_launches(shared: &TreeShared, memories: &mut [CourierMemory]) -> Vec<u32> {
    let mut ids = Vec::new();
    shared.drain_actions(|request| {
        if let ActionOp::Launch(_) = request.op {
            ids.push(request.agent);
            assert!(
                memories[request.agent as usize].complete(request.ticket, Outcome::Succeeded),
                "the completion reaches the memory that launched it"
            );
        }
    });
    ids
}

/// Two agents of a crowd tick given the same id: the one whose id is
/// another agent's index, while that agent has an action pending under
/// it, is not ticked, and the report names both; no request of the crowd
/// names an agent that did not launch it, so every outcome routed by id
/// reaches its memory.
#[test]
fn an_agent_given_the_id_of_another_with_a_pending_action_is_not_ticked() {
    let (shared, mut agents, mut memories) = couriers(3);
    // Agent 2 is given agent 0's id.
    let id_of = |i: usize| if i == 2 { 0 } else { i as u32 };
    let input = |i: usize, _: &mut Courier| TickInput::new(0.0, 0.1).with_agent(id_of(i));
    let report = tick_all(&COURIERS, &mut agents, &mut memories, input);
    assert_eq!(report.errors, 1);
    let expected = TickError::AgentIdTaken {
        id: 0,
        agent: 2,
        holder: 0,
    };
    assert_eq!(report.first_error, Some((2, expected)));
    assert_eq!(
        expected.to_string(),
        "agent 2 ticked under agent id 0, under which agent 0 has a deferred action \
         pending; give each agent its own id"
    );
    assert!(memories[2].is_idle(), "nothing ran for agent 2");
    assert_eq!(report_launches(&shared, &mut memories), [0, 1]);
    // With its own id, agent 2 fetches too; the others wait.
    let input = |i: usize, _: &mut Courier| TickInput::new(0.1, 0.1).with_agent(i as u32);
    let report = tick_all(&COURIERS, &mut agents, &mut memories, input);
    assert_eq!(report.errors, 0);
    assert_eq!(report_launches(&shared, &mut memories), [2]);
    tick_all(&COURIERS, &mut agents, &mut memories, input);
    let fetched: Vec<u32> = agents.iter().map(|c| c.fetched).collect();
    assert_eq!(fetched, [1, 1, 1]);
}

/// The launches a game system drains, by the agent id each names.
fn launched_ids(shared: &TreeShared) -> Vec<u32> {
    let mut ids = Vec::new();
    shared.drain_actions(|request| {
        if let ActionOp::Launch(_) = request.op {
            ids.push(request.agent);
        }
    });
    ids
}

/// Agents given one id that is no index of the crowd (an entity id, say):
/// an agent ticked after one that holds an action pending under the id
/// is not ticked, so no two launches of the crowd name the same agent,
/// also in one tick. A holder ticked later than the agent is found at
/// its own turn, in the same call.
#[test]
fn agents_given_one_id_that_is_no_index_launch_once() {
    let (shared, mut agents, mut memories) = couriers(4);
    // Agents 1 and 3 are both given the id 100; the others their own.
    let id_of = |i: usize| if i % 2 == 1 { 100 } else { i as u32 };
    let input = |i: usize, _: &mut Courier| TickInput::new(0.0, 0.1).with_agent(id_of(i));
    let report = tick_all(&COURIERS, &mut agents, &mut memories, input);
    let taken = TickError::AgentIdTaken {
        id: 100,
        agent: 3,
        holder: 1,
    };
    assert_eq!((report.errors, report.first_error), (1, Some((3, taken))));
    assert!(memories[3].is_idle(), "nothing ran for agent 3");
    assert_eq!(launched_ids(&shared), [0, 100, 2]);
    // So on while agent 1's fetch is pending; with an id of its own,
    // agent 3 fetches.
    let report = tick_all(&COURIERS, &mut agents, &mut memories, input);
    assert_eq!(report.first_error, Some((3, taken)));
    let own = |i: usize, _: &mut Courier| TickInput::new(0.2, 0.1).with_agent(200 + i as u32);
    let report = tick_all(&COURIERS, &mut agents, &mut memories, own);
    assert_eq!(report.errors, 0);
    assert_eq!(launched_ids(&shared), [203]);
    // A holder ticked after the agent: agent 1 holds a fetch pending under
    // the id 20, and agent 0, waiting so far, is given 20 and fetches. Its
    // launch goes out (nothing ticked before it holds 20); agent 1, at its
    // turn, is not ticked, naming agent 0.
    let (shared, mut agents, mut memories) = couriers(2);
    agents[0].fetched = 1;
    let ids = |a: u32, b: u32| {
        move |i: usize, _: &mut Courier| {
            TickInput::new(0.0, 0.1).with_agent(if i == 0 { a } else { b })
        }
    };
    tick_all(&COURIERS, &mut agents, &mut memories, ids(10, 20));
    assert_eq!(launched_ids(&shared), [20]);
    agents[0].fetched = 0;
    let report = tick_all(&COURIERS, &mut agents, &mut memories, ids(20, 20));
    let taken = TickError::AgentIdTaken {
        id: 20,
        agent: 1,
        holder: 0,
    };
    assert_eq!((report.errors, report.first_error), (1, Some((1, taken))));
    assert_eq!(launched_ids(&shared), [20]);
}

/// A crowd ticked a part at a time with `tick_range` is the crowd ticked
/// whole with `tick_all`: the same ids (each agent's index, with no id
/// set by the input), the same launches routed back to the memories that
/// made them, and reports that name agents by their index in the crowd.
#[test]
fn a_crowd_ticked_a_part_at_a_time_is_ticked_as_tick_all_ticks_it() {
    let parts = [0..3, 3..3, 3..7, 7..10];
    let (whole_shared, mut whole_agents, mut whole_memories) = couriers(10);
    let (shared, mut agents, mut memories) = couriers(10);
    for frame in 0..3 {
        let input = |_: usize, _: &mut Courier| TickInput::new(f64::from(frame) * 0.1, 0.1);
        let whole = tick_all(&COURIERS, &mut whole_agents, &mut whole_memories, input);
        let mut ticked = 0;
        for part in parts.clone() {
            let report =
                bt_core::tick_range(&COURIERS, &mut agents, &mut memories, part.clone(), input);
            assert_eq!(report.ticked as usize, part.len());
            ticked += report.ticked;
        }
        assert_eq!(ticked, whole.ticked);
        assert_eq!(
            report_launches(&shared, &mut memories),
            report_launches(&whole_shared, &mut whole_memories),
            "frame {frame}"
        );
    }
    let fetched = |a: &[Courier]| a.iter().map(|c| c.fetched).collect::<Vec<_>>();
    assert_eq!(fetched(&agents), fetched(&whole_agents));
    assert_eq!(fetched(&agents), [1; 10]);
    // An id clash inside a part is reported under the crowd's indices.
    let (_shared, mut agents, mut memories) = couriers(10);
    let first = |_: usize, _: &mut Courier| TickInput::new(0.0, 0.1);
    bt_core::tick_range(&COURIERS, &mut agents, &mut memories, 4..5, first);
    let clash = |i: usize, _: &mut Courier| {
        TickInput::new(0.1, 0.1).with_agent(if i == 5 { 4 } else { i as u32 })
    };
    let report = bt_core::tick_range(&COURIERS, &mut agents, &mut memories, 3..7, clash);
    assert_eq!(
        report.first_error,
        Some((
            5,
            TickError::AgentIdTaken {
                id: 4,
                agent: 5,
                holder: 4
            }
        ))
    );
    // And with an agent outside the part: the whole crowd is looked at.
    let report = bt_core::tick_range(&COURIERS, &mut agents, &mut memories, 8..9, |_, _| {
        TickInput::new(0.2, 0.1).with_agent(4)
    });
    let taken = TickError::AgentIdTaken {
        id: 4,
        agent: 8,
        holder: 4,
    };
    assert_eq!(report.first_error, Some((8, taken)));
}

/// A range past the crowd is refused before any agent ticks, naming it.
#[test]
#[should_panic(expected = "tick_range: agents 8..12 of a crowd of 10")]
fn a_range_past_the_crowd_is_refused_naming_it() {
    let (_shared, mut agents, mut memories) = couriers(10);
    bt_core::tick_range(&COURIERS, &mut agents, &mut memories, 8..12, |_, _| {
        TickInput::new(0.0, 0.1)
    });
}

/// A crowd ticked agent by agent with `tick_traced_into` is counted as
/// `tick_all` counts it, and each agent's events and result are those of
/// `tick_traced`: through steady ticks, quick redecides, the step machine
/// and an agent whose input is refused.
#[test]
fn a_crowd_traced_into_its_report_is_counted_as_tick_all_counts_it() {
    let n = 6;
    let fresh = || {
        let walkers: Vec<Walker> = (0..n).map(|_| Walker::default()).collect();
        let memories: Vec<WalkerMemory> = (0..n).map(|i| WALKER.new_memory(i as u64)).collect();
        (walkers, memories)
    };
    let (mut crowd, mut crowd_mem) = fresh();
    let (mut into, mut into_mem) = fresh();
    let (mut one, mut one_mem) = fresh();
    // Agent `i`'s clock is a tenth of a second times `i` ahead; agent 3
    // is given a step back in time at frame 9.
    let input = |frame: u32, i: usize| {
        let dt = if frame == 9 && i == 3 { -1.0 } else { 0.25 };
        TickInput::new(f64::from(frame) * 0.25 + i as f64 * 0.1, dt)
    };
    let (mut steady, mut errors) = (0, 0);
    for frame in 0..24 {
        let whole = tick_all(&WALKER, &mut crowd, &mut crowd_mem, |i, _| input(frame, i));
        let mut report = bt_core::CrowdReport::default();
        for i in 0..n {
            let inp = input(frame, i);
            let mut traced = TraceRecorder::new();
            let result = bt_core::tick_traced_into(
                &WALKER,
                &mut into[i],
                &mut into_mem[i],
                &inp,
                &mut traced,
                &mut report,
                i,
            );
            let mut alone = TraceRecorder::new();
            let expected = tick_traced(&WALKER, &mut one[i], &mut one_mem[i], &inp, &mut alone);
            assert_eq!(result, expected.map(|_| ()), "frame {frame}, agent {i}");
            assert_eq!(traced.text(), alone.text(), "frame {frame}, agent {i}");
            if let Ok(r) = expected {
                steady += usize::from(!r.changed());
            }
        }
        assert_eq!(report, whole, "frame {frame}");
        errors += report.errors;
    }
    let looked = |w: &[Walker]| w.iter().map(|w| w.looked.clone()).collect::<Vec<_>>();
    assert_eq!(looked(&into), looked(&crowd));
    assert_eq!(looked(&into), looked(&one));
    // Every kind of tick came by: steady ones, changes and the error.
    assert!(steady > 0 && steady < 24 * n - 1, "{steady} steady ticks");
    assert_eq!(errors, 1);
}
