//! Finding the odd agent among many, in a real browser (headless Chromium
//! through chromedriver, see `browser.rs`): rare behaviors in the
//! overview, the legend as a filter, the crowd's track of Subset Rule
//! reports, errors and rejections, matches in tick order, and a recording
//! of 10 000 distinct agents with values opened and searched in time.

use crate::herd;
use crate::scene;
use crate::webdriver;
use webdriver::js;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bt_core::{Event, Rejection, Tracer, behavior, decider, group, tick_traced, tree};
use bt_viewer::{Capacity, DataCapacity, FlightRecorder, Watch, write_page};
use fantoccini::actions::{InputSource, MouseActions, PointerAction};
use fantoccini::{Client, Locator};
use herd::Grazer;
use scene::{CAMP, Creature, crowd};
use serde_json::{Value, json};

bitflags::bitflags! {
    /// What a member of the pack senses: the herd's senses, and the full
    /// moon that only one of them ever sees.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Sign: u32 {
        const DANGER = 1 << 0;
        const FOOD = 1 << 1;
        const MOON = 1 << 2;
    }
}

behavior! { RUN: Grazer, tick: |g, cx| g.sense.contains(herd::Sense::DANGER) || cx.time_active() < 1.0 }
behavior! { EAT_GRASS: Grazer, tick: |g, _cx| { g.hunger -= 0.03; g.hunger > 0.5 } }
behavior! { SLEEP: Grazer, tick: |g, _cx| { g.fatigue -= 0.02; g.fatigue > 0.5 } }
behavior! { WALK: Grazer, tick: |_g, cx| cx.time_active() < 4.0 }
behavior! { LOOK: Grazer, tick: |_g, cx| cx.time_active() < 2.0 }
behavior! { SING: Grazer, tick: |_g, cx| cx.time_active() < 0.2 }

decider! { HOWL: Grazer => SING, needs_all: Sign::MOON }
decider! { FLEE: Grazer => RUN, needs_all: Sign::DANGER }
decider! { GRAZE: Grazer => EAT_GRASS, needs_all: Sign::FOOD,
    decide: |g, _| if g.hunger > 3.0 { g.hunger } else { 0.0 },
}
decider! { REST: Grazer => SLEEP, decide: |g, _| if g.fatigue > 4.0 { 1.0 } else { 0.0 } }
decider! { WANDER: Grazer => WALK, decide: |g, _| 1.0 + g.fatigue / 8.0 }
decider! { GAZE: Grazer => LOOK, decide: |_g, _| 0.5 }
group! { IDLE: Grazer, random [WANDER, GAZE] }
group! { ROOT: Grazer, prioritized [HOWL, FLEE, GRAZE, REST, IDLE] }
tree! { PACK: Grazer = ROOT, memory: PackMemory }

/// The agent that howls, and the ticks it sees the moon.
const HOWLER: usize = 7321;
const MOON: std::ops::RangeInclusive<u32> = 300..=311;

/// A pack of `n` at 30 Hz for `ticks` ticks, every agent watched with its
/// values, exported compact; and what bt-core says: each agent's leaf
/// name after each tick (read from its memory).
struct Pack {
    json: String,
    leaves: Vec<Vec<&'static str>>,
    made: Duration,
}

fn pack_run(n: usize, ticks: u32) -> Pack {
    let started = Instant::now();
    let (mut grazers, _) = herd::herd(n);
    let mut memories: Vec<PackMemory> = (0..n).map(|i| PACK.new_memory(i as u64)).collect();
    let mut recorder = FlightRecorder::new(&PACK, n, Watch::All, Capacity::new(ticks as usize, 12))
        .name_flags::<Sign, Sign>()
        .with_data(DataCapacity::new(4, 8));
    let mut leaves = Vec::with_capacity(ticks as usize);
    for t in 0..ticks {
        grazers.iter_mut().for_each(Grazer::step);
        recorder.tick_all_with_data(&PACK, &mut grazers, &mut memories, |i, g| {
            let moon = if i == HOWLER && MOON.contains(&t) {
                Sign::MOON.bits()
            } else {
                0
            };
            g.input(i, t)
                .with_decision_bits(u64::from(g.sense.bits() | moon))
        });
        leaves.push(
            memories
                .iter()
                .map(|m| m.leaf().map_or("idle", |l| PACK.node(l).name()))
                .collect(),
        );
    }
    let mut out = Vec::new();
    recorder.write_json_compact(&mut out).unwrap();
    Pack {
        json: String::from_utf8(out).unwrap(),
        leaves,
        made: started.elapsed(),
    }
}

/// The pack of 10 000 distinct agents over 600 ticks, made once for the
/// tests that need it.
fn big_pack() -> &'static Pack {
    static BIG: OnceLock<Pack> = OnceLock::new();
    BIG.get_or_init(|| pack_run(10_000, 600))
}

fn with_browser<F>(test: impl FnOnce(Client) -> F)
where
    F: std::future::Future<Output = ()>,
{
    webdriver::with_browser((1600, 1000), test);
}

use webdriver::{file_url, out_dir};

async fn wait_ready(client: &Client) {
    webdriver::wait_ready_within(client, Duration::from_secs(60)).await;
}

async fn no_errors(client: &Client) {
    let errors = js(client, "return window.btErrors;").await;
    assert_eq!(errors, json!([]), "uncaught errors in the page");
}

/// Clicks with the mouse at page point `p` (`{x, y}` as the page gives it).
async fn click_at(client: &Client, p: &Value) {
    let (x, y) = (p["x"].as_f64().unwrap(), p["y"].as_f64().unwrap());
    let click = MouseActions::new("mouse".into())
        .then(PointerAction::MoveTo {
            duration: None,
            x: x.round() as i64,
            y: y.round() as i64,
        })
        .then(PointerAction::Down {
            button: fantoccini::actions::MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::Up {
            button: fantoccini::actions::MOUSE_BUTTON_LEFT,
        });
    client.perform_actions(click).await.unwrap();
    client.release_actions().await.unwrap();
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn ten_thousand_distinct_agents_with_values_open_and_answer_in_time() {
    // The aim is to open in under 3 s and answer a scrub or a filter in
    // under 50 ms; the bounds asserted are three times the worst seen on
    // a shared 2-core machine under load (open 3.5 s with the recording
    // compressed in the page, at a load average of 3 to 8; scrub median
    // 18 ms, filter median 218 ms), and the figures are printed.
    const OPEN_MS: f64 = 11_000.0;
    const SCRUB_MS: f64 = 55.0;
    const FILTER_MS: f64 = 660.0;
    const TICKS: u64 = 600;
    let pack = big_pack();
    let written = Instant::now();
    let page = write_page(&out_dir("big-distinct"), &pack.json).expect("writing the page");
    let written = written.elapsed();
    // The page holds the recording compressed: the browser reads a quarter
    // of the bytes or fewer.
    let page_mb = std::fs::metadata(&page).unwrap().len() as f64 / 1e6;
    assert!(page_mb < pack.json.len() as f64 / 1e6 / 3.0, "{page_mb} MB");
    let mb = pack.json.len() as f64 / 1e6;
    let made = pack.made;
    with_browser(|client| async move {
        let t0 = Instant::now();
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        let open = t0.elapsed();
        // From the start of the navigation to the page ready, in its clock.
        let ready = js(&client, "return performance.now();").await;
        let phases = js(&client, "return btViewer.state();").await;
        assert_eq!(phases["last"], json!(TICKS - 1));
        assert_eq!(
            js(&client, "return btViewer.rows().length;").await,
            json!(10_000)
        );
        // Scrub: the real scrubber, over ten agents spread over the crowd.
        let scrub = js(
            &client,
            "const s = document.getElementById('scrubber'); const times = [];\
             for (const a of [0, 1111, 2222, 3333, 4444, 5555, 6666, 7777, 8888, 9999]) {\
               btViewer.selectAgent(a);\
               for (let t = 0; t < 600; t += 20) {\
                 const t0 = performance.now(); s.value = t; s.dispatchEvent(new Event('input'));\
                 times.push(performance.now() - t0);\
               }\
             }\
             times.sort((a, b) => a - b);\
             return [times.length, times[times.length >> 1], times[times.length - 1], btViewer.state().cursor];",
        )
        .await;
        assert_eq!(scrub[3], json!(580));
        // Filters: a band of the overview, a legend entry, a track and
        // queries, each timed three times (the median and the slowest
        // kept: the machine is shared).
        let filters = js(
            &client,
            "const times = [];\
             const item = n => [...document.querySelectorAll('#q-item option')].find(o => o.textContent.startsWith(n + ' #')).value;\
             const timed = (name, f) => {\
               const ts = []; let n = 0;\
               for (let i = 0; i < 3; i++) { const t0 = performance.now(); n = f(); ts.push(performance.now() - t0); btViewer.clearFilter(); }\
               ts.sort((a, b) => a - b); times.push([name, ts[1], ts[2], n]);\
             };\
             for (const t of [100, 300, 500]) timed('band WANDER @' + t, () => btViewer.filterBand(Number(item('WANDER')), t).length);\
             timed('legend GRAZE', () => btViewer.filterLegend('GRAZE').length);\
             timed('track rejections @200', () => btViewer.filterTrack('rejection', 200).length);\
             for (const [k, n, r] of [['entered', 'FLEE', -1], ['rejected', 'GRAZE', 3], ['ran', 'REST', -1], ['trouble', 'ROOT', -1]])\
               timed(k + ' ' + n, () => btViewer.query(k, Number(item(n)), r, 0, 599).length);\
             return times;",
        )
        .await;
        no_errors(&client).await;
        let filters = filters.as_array().unwrap();
        let worst = filters
            .iter()
            .map(|f| f[1].as_f64().unwrap())
            .fold(0.0, f64::max);
        let detail: Vec<String> = filters
            .iter()
            .map(|f| {
                format!(
                    "{} {:.1} ms, slowest {:.1} ms ({} agents)",
                    f[0].as_str().unwrap(),
                    f[1].as_f64().unwrap(),
                    f[2].as_f64().unwrap(),
                    f[3]
                )
            })
            .collect();
        let line = format!(
            "10000 distinct agents with values x 600 ticks: {mb:.1} MB of JSON in a page of {page_mb:.1} MB; open {:.0} ms \
             (navigation to ready in the page clock: markup read by {:.0} ms, recording text taken in {:.0} ms, \
             unpacked in {:.0} ms, parsed and checked in {:.0} ms, indexed and drawn in {:.0} ms; \
             {:.0} ms as the test saw it); {} scrubber moves over 10 agents: median {:.2} ms, slowest {:.2} ms; \
             filters (median of 3): {}; recording made in {:.1} s, page written in {:.1} s",
            ready.as_f64().unwrap(),
            phases["bootMs"].as_f64().unwrap(),
            phases["readMs"].as_f64().unwrap(),
            phases["unpackMs"].as_f64().unwrap(),
            phases["parseMs"].as_f64().unwrap(),
            phases["openMs"].as_f64().unwrap(),
            open.as_secs_f64() * 1e3,
            scrub[0],
            scrub[1].as_f64().unwrap(),
            scrub[2].as_f64().unwrap(),
            detail.join(", "),
            made.as_secs_f64(),
            written.as_secs_f64()
        );
        eprintln!("{line}");
        std::fs::write(
            out_dir("big-distinct").join("timing.txt"),
            format!("{line}\n"),
        )
        .unwrap();
        assert!(ready.as_f64().unwrap() < OPEN_MS, "{line}");
        assert!(scrub[1].as_f64().unwrap() < SCRUB_MS, "{line}");
        assert!(worst < FILTER_MS, "{line}");
    });
}

/// What is drawn at page point `p` of the canvas `id`, `[r, g, b]`.
async fn pixel(client: &Client, id: &str, p: &Value) -> Value {
    js(
        client,
        &format!(
            "const c = document.getElementById('{id}'), r = c.getBoundingClientRect(), d = window.devicePixelRatio || 1;\
             const px = c.getContext('2d').getImageData(Math.floor(({x} - r.left) * d), Math.floor(({y} - r.top) * d), 1, 1).data;\
             return [px[0], px[1], px[2]];",
            x = p["x"],
            y = p["y"]
        ),
    )
    .await
}

/// A CSS colour as the canvas draws it, `[r, g, b]`.
async fn css_rgb(client: &Client, color: &Value) -> Value {
    js(
        client,
        &format!(
            "const c = document.createElement('canvas'); c.width = c.height = 1;\
             const g = c.getContext('2d'); g.fillStyle = {color}; g.fillRect(0, 0, 1, 1);\
             const d = g.getImageData(0, 0, 1, 1).data; return [d[0], d[1], d[2]];"
        ),
    )
    .await
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn a_behavior_one_agent_of_10000_runs_is_seen_and_one_click_away() {
    let pack = big_pack();
    // What bt-core says: who howled, and when.
    let howled: Vec<(usize, usize)> = pack
        .leaves
        .iter()
        .enumerate()
        .flat_map(|(t, row)| {
            row.iter()
                .enumerate()
                .filter(|(_, l)| **l == "HOWL")
                .map(move |(i, _)| (i, t))
        })
        .collect();
    assert!(
        !howled.is_empty() && howled.iter().all(|&(i, _)| i == HOWLER),
        "{howled:?}"
    );
    let first = howled[0].1;
    let per_tick: Vec<u32> = pack
        .leaves
        .iter()
        .map(|row| row.iter().filter(|l| **l == "HOWL").count() as u32)
        .collect();
    let page = write_page(&out_dir("rare"), &pack.json).expect("writing the page");
    with_browser(|client| async move {
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        let shown = js(&client, "return btViewer.overview().counts.HOWL;").await;
        assert_eq!(shown, json!(per_tick));
        // The legend says one agent runs it, and that it is rare.
        let entry = js(
            &client,
            "const e = document.querySelector(\"#overview-legend span[data-name='HOWL']\");\
             return [e.dataset.agents, e.className, e.textContent];",
        )
        .await;
        assert_eq!(entry[0], json!("1"), "{entry}");
        assert_eq!(entry[1], json!("rare"), "{entry}");
        // Its band is drawn high enough to see, in its colour, and a
        // click on it shows the one agent.
        let mid = howled[howled.len() / 2].1;
        let at = js(
            &client,
            &format!("return btViewer.overviewPoint('HOWL', {mid});"),
        )
        .await;
        assert!(at["h"].as_f64().unwrap() >= 3.0, "{at}");
        let color = js(&client, "return btViewer.colorOf('HOWL');").await;
        assert_eq!(
            pixel(&client, "overview", &at).await,
            css_rgb(&client, &color).await
        );
        click_at(&client, &at).await;
        assert_eq!(
            js(&client, "return btViewer.rows();").await,
            json!([HOWLER])
        );
        assert_eq!(
            js(&client, "return btViewer.state().cursor;").await,
            json!(mid)
        );
        client
            .find(Locator::Id("q-clear"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        assert_eq!(
            js(&client, "return btViewer.rows().length;").await,
            json!(10_000)
        );
        // The legend entry: the agents that sing in view, the first at
        // the tick it began.
        client
            .find(Locator::Css("#overview-legend span[data-name='HOWL']"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        assert_eq!(
            js(&client, "return btViewer.rows();").await,
            json!([HOWLER])
        );
        assert_eq!(
            js(&client, "return btViewer.matches();").await,
            json!([[HOWLER, first]])
        );
        let state = js(&client, "return btViewer.state();").await;
        assert_eq!(
            (state["agent"].clone(), state["cursor"].clone()),
            (json!(HOWLER), json!(first))
        );
        // In a view that ends before it sings, nobody does.
        js(
            &client,
            &format!("btViewer.clearFilter(); btViewer.zoom(0, {});", first - 1),
        )
        .await;
        assert_eq!(
            js(&client, "return btViewer.filterLegend('HOWL');").await,
            json!([])
        );
        // A common behavior: the agents bt-core says ran it in view.
        js(&client, "btViewer.clearFilter(); btViewer.zoom(100, 199);").await;
        let want: Vec<usize> = (0..10_000)
            .filter(|&i| (100..=199).any(|t| pack.leaves[t][i] == "REST"))
            .collect();
        js(&client, "btViewer.filterLegend('REST');").await;
        assert_eq!(js(&client, "return btViewer.rows();").await, json!(want));
        no_errors(&client).await;
    });
}

/// Each tick of a camp run, per agent, as bt-core tells it: whether it
/// had a Subset Rule report, an error, a rejection; and the camp's
/// recording.
struct Camp {
    json: String,
    /// `[tick][agent]` → (report, error, rejection).
    told: Vec<Vec<(bool, bool, bool)>>,
    /// `[tick][agent]` → the events.
    events: Vec<Vec<Vec<Event>>>,
}

fn camp_run(n: usize, ticks: u32) -> Camp {
    #[derive(Default)]
    struct All(Vec<Event>);
    impl Tracer for All {
        fn event(&mut self, event: &Event) {
            self.0.push(*event);
        }
    }
    let (mut agents, mut memories) = crowd(n);
    let (mut twins, mut twin_mem) = crowd(n);
    let mut recorder = FlightRecorder::new(&CAMP, n, Watch::All, Capacity::new(ticks as usize, 64));
    let mut told = Vec::new();
    let mut events = Vec::new();
    for t in 0..ticks {
        agents.iter_mut().for_each(Creature::step);
        twins.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
        let mut row = Vec::new();
        let mut evs = Vec::new();
        for (i, (c, m)) in twins.iter_mut().zip(&mut twin_mem).enumerate() {
            let mut all = All::default();
            let err = tick_traced(&CAMP, c, m, &c.input(i, t), &mut all).is_err();
            let has = |f: &dyn Fn(&Event) -> bool| all.0.iter().any(f);
            row.push((
                has(&|e| matches!(e, Event::SubsetViolation { .. })),
                err || has(&|e| matches!(e, Event::RedecideLimit { .. })),
                has(&|e| matches!(e, Event::Rejected { .. })),
            ));
            evs.push(all.0);
        }
        told.push(row);
        events.push(evs);
    }
    Camp {
        json: recorder.export_compact().to_json(),
        told,
        events,
    }
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn the_track_counts_reports_errors_and_rejections_and_a_click_shows_those_agents() {
    const N: usize = 300;
    const TICKS: u32 = 200;
    let camp = camp_run(N, TICKS);
    let count = |f: fn(&(bool, bool, bool)) -> bool| -> Vec<usize> {
        camp.told
            .iter()
            .map(|row| row.iter().filter(|x| f(x)).count())
            .collect()
    };
    let want = json!({
        "subset": count(|x| x.0),
        "error": count(|x| x.1),
        "rejection": count(|x| x.2),
    });
    let subset = count(|x| x.0);
    assert!(
        subset.iter().any(|&n| n > 0),
        "no Subset Rule report in the run"
    );
    let page = write_page(&out_dir("track"), &camp.json).expect("writing the page");
    let told = camp.told;
    with_browser(|client| async move {
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        let track = js(&client, "return btViewer.track();").await;
        assert_eq!(track["first"], json!(0));
        assert_eq!(track["counts"], want);
        // A click on the reports' row at a tick with the fewest reports,
        // and on the rejections' row: the agents bt-core says.
        let t = (0..TICKS as usize)
            .filter(|&t| subset[t] > 0)
            .min_by_key(|&t| subset[t])
            .unwrap();
        for (kind, t, pick) in [
            (
                "subset",
                t,
                (|x: &(bool, bool, bool)| x.0) as fn(&(bool, bool, bool)) -> bool,
            ),
            ("rejection", 120, |x| x.2),
        ] {
            let at = js(
                &client,
                &format!("return btViewer.trackPoint('{kind}', {t});"),
            )
            .await;
            click_at(&client, &at).await;
            let agents: Vec<usize> = (0..N).filter(|&i| pick(&told[t][i])).collect();
            assert_eq!(
                js(&client, "return btViewer.rows();").await,
                json!(agents),
                "{kind} at {t}"
            );
            let state = js(&client, "return btViewer.state();").await;
            assert_eq!(
                (state["agent"].clone(), state["cursor"].clone()),
                (json!(agents[0]), json!(t))
            );
            let note = js(
                &client,
                "return document.getElementById('filter-note').textContent;",
            )
            .await;
            assert!(
                note.as_str()
                    .unwrap()
                    .starts_with(&format!("{} agents had a", agents.len())),
                "{note}"
            );
            js(&client, "btViewer.clearFilter();").await;
        }
        no_errors(&client).await;
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn matches_go_by_tick_from_the_earliest_with_next_and_previous() {
    const N: usize = 60;
    const TICKS: u32 = 200;
    let camp = camp_run(N, TICKS);
    let events = camp.events;
    let patrol = CAMP.find("PATROL").unwrap();
    let flee = CAMP.find("FLEE").unwrap();
    // (agent, first tick in from..=to) of each agent with a `hit`, by
    // tick then agent: what bt-core says.
    let by_tick = |from: usize, to: usize, hit: &dyn Fn(&Event) -> bool| -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = (0..N)
            .filter_map(|i| {
                (from..=to)
                    .find(|&t| events[t][i].iter().any(hit))
                    .map(|t| (i, t))
            })
            .collect();
        out.sort_by_key(|&(i, t)| (t, i));
        out
    };
    let cases = [
        (
            "rejected",
            patrol,
            "2",
            30,
            199,
            by_tick(
                30,
                199,
                &|e| matches!(e, Event::Rejected { node, by: Rejection::Timer } if node.index == patrol),
            ),
        ),
        (
            "entered",
            flee,
            "-1",
            60,
            180,
            by_tick(
                60,
                180,
                &|e| matches!(e, Event::Activated { node, .. } if node.index == flee),
            ),
        ),
    ];
    for c in &cases {
        assert!(c.5.len() >= 3, "{}: {:?}", c.0, c.5);
        // The earliest is not the lowest agent id: the order is the point.
        let mut by_id = c.5.clone();
        by_id.sort();
        assert_ne!(by_id, c.5, "{}", c.0);
    }
    let page = write_page(&out_dir("by-tick"), &camp.json).expect("writing the page");
    with_browser(|client| async move {
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        for (kind, item, reason, from, to, want) in &cases {
            js(
                &client,
                &format!(
                    "const set = (id, v) => {{ const e = document.getElementById(id); e.value = v; e.dispatchEvent(new Event('change')); }};\
                     set('q-kind', '{kind}'); set('q-item', {}); set('q-reason', '{reason}');\
                     set('q-from', {from}); set('q-to', {to});",
                    item.0
                ),
            )
            .await;
            client
                .find(Locator::Id("q-run"))
                .await
                .unwrap()
                .click()
                .await
                .unwrap();
            let listed: Vec<(usize, usize)> =
                serde_json::from_value(js(&client, "return btViewer.matches();").await).unwrap();
            assert_eq!(&listed, want, "{kind}");
            let first = client.find(Locator::Id("first-match")).await.unwrap();
            assert_eq!(
                first.text().await.unwrap(),
                format!("first match: #{} @ tick {}", want[0].0, want[0].1)
            );
            // first, next, next, previous: each selects its agent at its tick.
            let at = |i: usize| json!([want[i].0, want[i].1]);
            let now = || async {
                let s = js(&client, "return btViewer.state();").await;
                json!([s["agent"], s["cursor"]])
            };
            first.click().await.unwrap();
            assert_eq!(now().await, at(0));
            for (button, i) in [("next-match", 1), ("next-match", 2), ("prev-match", 1)] {
                client
                    .find(Locator::Id(button))
                    .await
                    .unwrap()
                    .click()
                    .await
                    .unwrap();
                assert_eq!(now().await, at(i), "{kind} {button}");
                let label = client
                    .find(Locator::Id("match-at"))
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap();
                assert_eq!(
                    label,
                    format!(
                        "match {} of {}: #{} @ tick {}",
                        i + 1,
                        want.len(),
                        want[i].0,
                        want[i].1
                    )
                );
            }
            // The previous of the first stays at the first.
            first.click().await.unwrap();
            client
                .find(Locator::Id("prev-match"))
                .await
                .unwrap()
                .click()
                .await
                .unwrap();
            assert_eq!(now().await, at(0));
        }
        no_errors(&client).await;
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn values_read_when_an_agent_is_shown_are_its_own_and_a_bad_entry_says_so() {
    const N: usize = 50;
    const TICKS: u32 = 40;
    let pack = pack_run(N, TICKS);
    let doc: Value = serde_json::from_str(&pack.json).unwrap();
    // The last agent's values at tick 30, as the recording holds them
    // (every tick kept: its 30th value).
    let want = &doc["values"][N - 1]["fields"];
    let hunger = want["hunger"][30].clone();
    assert_eq!(doc["values"][N - 1]["agent"], json!(N - 1));
    // Agent 3's entry broken: its fields are not an object.
    let bad = pack.json.replacen(
        r#"{"agent":3,"fields":{"#,
        r#"{"agent":3,"fields":7,"x":{"#,
        1,
    );
    assert_ne!(bad, pack.json);
    let page = write_page(&out_dir("lazy-values"), &bad).expect("writing the page");
    with_browser(|client| async move {
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        // Read whole, the recording is refused; read an agent at a time,
        // only agent 3's values are, and the page says why.
        js(
            &client,
            &format!("btViewer.selectAgent({}); btViewer.seek(30);", N - 1),
        )
        .await;
        let shown = js(
            &client,
            "return document.querySelector(\"#values tr[data-name='hunger']\").dataset.value;",
        )
        .await;
        assert_eq!(
            serde_json::from_str::<Value>(shown.as_str().unwrap()).unwrap(),
            hunger
        );
        js(&client, "btViewer.selectAgent(3);").await;
        let note = js(
            &client,
            "return document.getElementById('values-note').textContent;",
        )
        .await;
        assert_eq!(note, json!("Values entry of agent 3 is malformed."));
        assert_eq!(
            js(
                &client,
                "return document.querySelectorAll('#values tr').length;"
            )
            .await,
            json!(0)
        );
        assert_eq!(
            js(&client, "return document.getElementById('app').hidden;").await,
            json!(false)
        );
        no_errors(&client).await;
    });
}
