//! What the viewer page says about a run, word for word against what
//! bt-core says about the same run: each node's last rejection and its
//! reason, the value of a `decide` that rejects, the flags a flag test
//! missed and the tick's flags by name, the plots' labels, and a console
//! with no error or warning. Headless Chromium, as `browser.rs`.

use crate::herd;
use crate::webdriver;
use webdriver::{browser_log, js};

use std::time::{Duration, Instant};

use bt_core::{Event, ItemIdx, Rejection, Tracer, tick_traced};
use bt_viewer::{Capacity, DataCapacity, FlightRecorder, LiveServer, Watch, write_page};
use fantoccini::Client;
use herd::{Grazer, HERD, Sense, herd};
use serde_json::{Value, json};

fn with_browser<F>(test: impl FnOnce(Client) -> F)
where
    F: std::future::Future<Output = ()>,
{
    webdriver::with_browser((1600, 1000), test);
}

use webdriver::{file_url, out_dir};

async fn wait_ready(client: &Client) {
    webdriver::wait_ready_within(client, Duration::from_secs(30)).await;
}

async fn scrub_to(client: &Client, t: usize) {
    js(
        client,
        &format!(
            "const s = document.getElementById('scrubber'); s.value = {t};\
             s.dispatchEvent(new Event('input'));"
        ),
    )
    .await;
}

/// `n` grazers recorded for `ticks` ticks, with their values.
fn herd_recorder(n: usize, ticks: u32) -> FlightRecorder {
    let (mut grazers, mut memories) = herd(n);
    let mut recorder = FlightRecorder::new(&HERD, n, Watch::All, Capacity::new(ticks as usize, 12))
        .name_flags::<Sense, Sense>()
        .with_data(DataCapacity::new(4, 8));
    for t in 0..ticks {
        grazers.iter_mut().for_each(Grazer::step);
        recorder.tick_all_with_data(&HERD, &mut grazers, &mut memories, |i, g| g.input(i, t));
    }
    recorder
}

/// One agent's tick as bt-core tells it.
#[derive(Default)]
struct Said {
    /// The decision flags the tick was given.
    decision: u64,
    /// Each rejection, in order.
    rejected: Vec<(usize, Rejection)>,
    /// What each `decide` that rejected returned.
    declined: Vec<(usize, f32)>,
}

impl Tracer for Said {
    fn event(&mut self, event: &Event) {
        match *event {
            Event::Rejected { node, by } => self.rejected.push((node.index.get(), by)),
            Event::Declined { node, value } => self.declined.push((node.index.get(), value)),
            _ => {}
        }
    }
}

/// A twin herd ticked by bt-core: what it says of each agent, tick by
/// tick.
fn said(n: usize, ticks: u32) -> Vec<Vec<Said>> {
    let (mut grazers, mut memories) = herd(n);
    let mut out: Vec<Vec<Said>> = (0..n).map(|_| Vec::new()).collect();
    for t in 0..ticks {
        grazers.iter_mut().for_each(Grazer::step);
        for (i, (g, m)) in grazers.iter_mut().zip(&mut memories).enumerate() {
            let input = g.input(i, t);
            let mut s = Said {
                decision: u64::from(g.sense.bits()),
                ..Said::default()
            };
            tick_traced(&HERD, g, m, &input, &mut s).unwrap();
            out[i].push(s);
        }
    }
    out
}

/// Flag names of a mask, as the recording names them.
fn names(mask: u64) -> String {
    Sense::from_bits_truncate(mask as u32)
        .iter_names()
        .map(|(n, _)| n)
        .collect::<Vec<_>>()
        .join(" | ")
}

/// A rejection's reason as the page should give it: bt-core's reason, and
/// for a decision-flag test the flags it needs that the tick lacked.
fn reason(item: usize, by: Rejection, decision: u64) -> String {
    match by {
        Rejection::Decision => {
            let test = HERD
                .node(ItemIdx(item as u16))
                .decider()
                .preconditions()
                .decision;
            // The herd's tests are all `needs_all`.
            assert_eq!((test.any, test.none, test.not_all), (0, 0, 0));
            format!("decision flags: missing {}", names(test.all & !decision))
        }
        other => other.as_str().to_owned(),
    }
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn every_nodes_last_rejection_and_decide_value_are_bt_cores() {
    const N: usize = 12;
    const TICKS: u32 = 300;
    let json = herd_recorder(N, TICKS).export_compact().to_json();
    let all = said(N, TICKS);
    let items = HERD.len();
    let item = |name: &str| HERD.find(name).unwrap().get();
    let (graze, rest) = (item("GRAZE"), item("REST"));
    let first = |truth: &[Said], i: usize, why: Rejection| {
        (0..truth.len()).find(|&t| truth[t].rejected.iter().any(|&(j, by)| j == i && by == why))
    };
    // A grazer whose GRAZE is turned down by its `decide` and for lack of
    // FOOD, and whose REST by its `decide`.
    let cases = |truth: &[Said]| {
        [
            first(truth, graze, Rejection::Decide),
            first(truth, rest, Rejection::Decide),
            first(truth, graze, Rejection::Decision),
        ]
    };
    let watched = (0..N)
        .find(|&i| cases(&all[i]).iter().all(Option::is_some))
        .expect("a grazer with each kind of rejection");
    let truth = &all[watched];
    let mut at: Vec<usize> = (0..TICKS as usize).step_by(23).collect();
    at.extend(cases(truth).into_iter().flatten());
    let page = write_page(&out_dir("text-why"), &json).unwrap();

    with_browser(|client| async move {
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        js(&client, &format!("btViewer.selectAgent({watched});")).await;
        let mut reasons_seen = std::collections::BTreeSet::new();
        for &t in &at {
            scrub_to(&client, t).await;
            let tips = js(
                &client,
                &format!("return Array.from({{length: {items}}}, (_, i) => btViewer.tipText(i));"),
            )
            .await;
            for i in 0..items {
                let tip = tips[i].as_str().unwrap();
                // The last rejection at or before `t`, as bt-core told it.
                let last = (0..=t).rev().find_map(|u| {
                    truth[u]
                        .rejected
                        .iter()
                        .rev()
                        .find(|&&(j, _)| j == i)
                        .map(|&(_, by)| (u, reason(i, by, truth[u].decision)))
                });
                let want = match &last {
                    Some((u, r)) => format!("last rejection: {r} (tick {u},"),
                    None => "last rejection: none in the kept ticks".to_owned(),
                };
                assert!(
                    tip.contains(&want),
                    "item {i} at tick {t}: {want} in\n{tip}"
                );
                if let Some((_, r)) = last {
                    reasons_seen.insert(r.split(':').next().unwrap().to_owned());
                }
                // A `decide` that rejected at `t` shows what it returned.
                if let Some(&(_, v)) = truth[t].declined.iter().rev().find(|&&(j, _)| j == i) {
                    let want = format!("decide value at this tick: {v:.3} (rejects)");
                    assert!(
                        tip.contains(&want),
                        "item {i} at tick {t}: {want} in\n{tip}"
                    );
                }
            }
            // The events: a `decide` that rejected with its value, as
            // bt-core's trace writes it, and flag rejections by name.
            let events = js(
                &client,
                "return [...document.querySelectorAll('#events li')].map(li => li.textContent);",
            )
            .await;
            let events: Vec<&str> = events
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap())
                .collect();
            let mut want = Vec::new();
            for &(i, by) in &truth[t].rejected {
                let name = format!("{} #{i}", HERD.node(ItemIdx(i as u16)).name());
                if by == Rejection::Decide {
                    let v = truth[t].declined.iter().find(|&&(j, _)| j == i).unwrap().1;
                    want.push(format!("decline {name} = {v:.3}"));
                    want.push(format!("reject {name} (decide)"));
                } else {
                    want.push(format!(
                        "reject {name} ({})",
                        reason(i, by, truth[t].decision)
                    ));
                }
            }
            let got: Vec<&str> = events
                .iter()
                .copied()
                .filter(|l| l.starts_with("reject ") || l.starts_with("decline "))
                .collect();
            assert_eq!(got, want, "events at tick {t}");
            // The tick's flags by name.
            let summary = js(
                &client,
                "return document.getElementById('tick-summary').textContent;",
            )
            .await;
            let flags = match names(truth[t].decision) {
                n if n.is_empty() => "none".to_owned(),
                n => n,
            };
            let want = format!("decision flags: {flags}; stimuli flags: none");
            assert!(
                summary.as_str().unwrap().contains(&want),
                "tick {t}: {want} in {summary}"
            );
        }
        assert!(
            reasons_seen.contains("decide") && reasons_seen.contains("decision flags"),
            "{reasons_seen:?}"
        );
        let errors = js(&client, "return window.btErrors;").await;
        assert_eq!(errors, json!([]));
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn a_plots_label_is_the_recorded_maximum() {
    const N: usize = 3;
    const TICKS: u32 = 120;
    let mut doc: Value = serde_json::from_str(&herd_recorder(N, TICKS).export().to_json()).unwrap();
    // Two more numbers beside the grazers' own: a count that never
    // changes, and a small one.
    let kept = doc["agents"][0]["ticks"].as_array().unwrap().len();
    let fields = &mut doc["values"][0]["fields"];
    fields["grenades"] = json!(vec![3; kept]);
    fields["tiny"] = json!(
        (0..kept)
            .map(|j| if j % 3 == 0 { 4.7e-6 } else { 1e-7 })
            .collect::<Vec<f64>>()
    );
    let max = |name: &str| {
        doc["values"][0]["fields"][name]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_f64)
            .fold(f64::NEG_INFINITY, f64::max)
    };
    let want: Vec<(String, f64)> = ["hunger", "fatigue", "grenades", "tiny"]
        .iter()
        .map(|n| (n.to_string(), max(n)))
        .collect();
    let page = write_page(&out_dir("text-plots"), &doc.to_string()).unwrap();
    with_browser(|client| async move {
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        js(&client, "btViewer.selectAgent(0);").await;
        let labels = js(&client, "return btViewer.plotLabels();").await;
        let labels = labels.as_array().unwrap();
        assert_eq!(labels.len(), want.len(), "{labels:?}");
        for (name, max) in &want {
            let label = labels
                .iter()
                .find(|l| l[0] == json!(name))
                .unwrap_or_else(|| panic!("no plot of {name}: {labels:?}"));
            let shown: f64 = label[1].as_str().unwrap().parse().unwrap();
            // Four significant digits at least.
            assert!(
                (shown - max).abs() <= max.abs() * 1e-4,
                "{name}: label {label} for a maximum of {max}"
            );
        }
        // The values beside the dump write the small one as it is.
        scrub_to(&client, 0).await;
        let tiny = js(
            &client,
            "return document.querySelector('#values tr[data-name=tiny] td.value').textContent;",
        )
        .await;
        assert_eq!(tiny.as_str().unwrap().parse::<f64>().unwrap(), 4.7e-6);
    });
}

/// The console's errors and warnings in `log`.
fn complaints(log: &[Value]) -> Vec<&Value> {
    log.iter()
        .filter(|e| matches!(e["level"].as_str(), Some("SEVERE" | "WARNING")))
        .collect()
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn the_pages_log_no_error_or_warning() {
    const N: usize = 6;
    const TICKS: u32 = 200;
    let page = write_page(
        &out_dir("text-console"),
        &herd_recorder(N, TICKS).export_compact().to_json(),
    )
    .unwrap();
    let (mut grazers, mut memories) = herd(N);
    let mut recorder = FlightRecorder::new(&HERD, N, Watch::All, Capacity::new(100, 12))
        .name_flags::<Sense, Sense>();
    let mut t = 0;
    let mut run = move |ticks: u32, server: &mut LiveServer| {
        for _ in 0..ticks {
            grazers.iter_mut().for_each(Grazer::step);
            recorder.tick_all(&HERD, &mut grazers, &mut memories, |i, g| g.input(i, t));
            server.publish(&recorder);
            t += 1;
        }
    };
    let mut server = LiveServer::start(0).expect("a loopback port");
    let url = server.url();
    run(10, &mut server);
    let server = std::sync::Mutex::new(server);
    with_browser(|client| async move {
        // The page of a file, zoomed and scrubbed: a canvas that reads
        // its drawing back (the overview keeps its bands in a canvas of
        // its own and reads none) says so to the browser.
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        // Headless Chromium draws canvases without the GPU, and so never
        // warns of a readback: each readback's context is checked too.
        js(
            &client,
            "window.readbacks = []; const get = CanvasRenderingContext2D.prototype.getImageData;\
             CanvasRenderingContext2D.prototype.getImageData = function (...a) {\
               window.readbacks.push([this.canvas.id, this.getContextAttributes().willReadFrequently]);\
               return get.apply(this, a);\
             };",
        )
        .await;
        for (v0, v1) in [(0, 100), (50, 150), (20, 199), (0, 60), (0, 199)] {
            js(&client, &format!("btViewer.zoom({v0}, {v1});")).await;
            scrub_to(&client, v0 + 10).await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let readbacks = js(&client, "return window.readbacks;").await;
        let readbacks = readbacks.as_array().unwrap();
        for r in readbacks {
            assert_eq!(
                r[1],
                json!(true),
                "a readback without willReadFrequently: {r}"
            );
        }
        let log = browser_log(&client).await;
        assert_eq!(complaints(&log), Vec::<&Value>::new(), "the file's page");

        // The live page.
        client.goto(&url).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while server.lock().unwrap().clients() == 0 {
            assert!(
                Instant::now() < deadline,
                "the page never followed the stream"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        run(5, &mut server.lock().unwrap());
        wait_ready(&client).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let log = browser_log(&client).await;
        assert_eq!(complaints(&log), Vec::<&Value>::new(), "the live page");
        drop(server);
    });
}
