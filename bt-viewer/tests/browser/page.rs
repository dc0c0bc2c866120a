//! The viewer page in a real browser: headless Chromium driven through
//! chromedriver (WebDriver).
//!
//! Needs Debian's `chromium` and `chromium-driver`
//! (`apt-get install -y chromium chromium-driver`). Without them the tests
//! are reported as ignored, with that reason (the package's build script
//! looks for them), except under CI (`CI` set), where they run and fail.
//!
//! The tests write their pages (and a screenshot of a herd) under
//! `target/viewer-tests/`. The screenshots of the docs come from the
//! `viewer` example: `scripts/screenshots.sh`.

use crate::herd;
use crate::scene;
use crate::webdriver;
use webdriver::js;

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bt_core::{
    DumpView, Event, ItemIdx, TickInput, Tracer, behavior, debug_print_state, decider, group,
    tick_traced, tree,
};
use bt_viewer::{Capacity, DataCapacity, FlightRecorder, LiveServer, Watch, page_with, write_page};
use fantoccini::actions::{InputSource, MouseActions, PointerAction};
use fantoccini::{Client, Locator};
use herd::{Grazer, HERD, Sense, herd};
use scene::{CAMP, Creature, crowd};
use serde_json::{Value, json};

/// The page's size in these tests.
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

/// The colour drawn at tick `tick` of agent `agent`'s lane, `[r, g, b]`.
async fn lane_color(client: &Client, agent: usize, tick: u64) -> Value {
    js(
        client,
        &format!(
            "const p = btViewer.lanePoint({agent}, {tick}); const c = document.getElementById('lanes');\
             const r = c.getBoundingClientRect(), d = window.devicePixelRatio || 1;\
             const px = c.getContext('2d').getImageData(Math.floor((p.x - r.left) * d), Math.floor((p.y - r.top) * d), 1, 1).data;\
             return [px[0], px[1], px[2]];"
        ),
    )
    .await
}

/// A CSS colour as the canvas draws it, `[r, g, b]`.
async fn css_rgb(client: &Client, color: &str) -> Value {
    js(
        client,
        &format!(
            "const c = document.createElement('canvas'); c.width = c.height = 1;\
             const g = c.getContext('2d'); g.fillStyle = {}; g.fillRect(0, 0, 1, 1);\
             const d = g.getImageData(0, 0, 1, 1).data; return [d[0], d[1], d[2]];",
            json!(color)
        ),
    )
    .await
}

async fn no_errors(client: &Client) {
    let errors = js(client, "return window.btErrors;").await;
    assert_eq!(errors, json!([]), "uncaught errors in the page");
}

/// `line` with bt-core's `7:EAT` written as the viewer writes it,
/// `EAT #7`.
fn renamed(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        let starts = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if digits > 0 && starts && b.get(i + digits) == Some(&b':') {
            let name = b[i + digits + 1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                .count();
            if name > 0 {
                let at = i + digits + 1;
                out.push_str(&line[at..at + name]);
                out.push_str(" #");
                out.push_str(&line[i..i + digits]);
                i = at + name;
                continue;
            }
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

/// Collects a tick's events as the viewer lists them (write_event's text,
/// without the steps the recorder does not keep).
#[derive(Default)]
struct Lines(Vec<String>);

impl Tracer for Lines {
    fn event(&mut self, event: &Event) {
        if matches!(
            event,
            Event::Start { .. }
                | Event::Visit { .. }
                | Event::Idle
                | Event::End { .. }
                | Event::Ticked { running: true, .. }
        ) {
            return;
        }
        let mut line = String::new();
        bt_core::write_event(&mut line, event).unwrap();
        self.0.push(renamed(line.trim()));
    }
}

/// What bt-core itself says about one agent of a recorded run, tick by
/// tick: the page must show the same.
struct Truth {
    /// Names on the active path after each tick.
    paths: Vec<Vec<&'static str>>,
    /// The kept events' lines of each tick.
    events: Vec<Vec<String>>,
    /// The active-path dump and the whole-tree dump after each tick.
    dumps: Vec<(String, String)>,
}

/// Records `n` creatures for `ticks` ticks, and follows agent `watched`
/// in a twin crowd ticked directly by bt-core.
fn camp_run(n: usize, ticks: u32, watched: usize) -> (String, Truth) {
    let (mut agents, mut memories) = crowd(n);
    let (mut twins, mut twin_mem) = crowd(n);
    let mut recorder = FlightRecorder::new(&CAMP, n, Watch::All, Capacity::new(ticks as usize, 24));
    let mut truth = Truth {
        paths: Vec::new(),
        events: Vec::new(),
        dumps: Vec::new(),
    };
    for t in 0..ticks {
        agents.iter_mut().for_each(Creature::step);
        twins.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
        for (i, (c, m)) in twins.iter_mut().zip(&mut twin_mem).enumerate() {
            let input = c.input(i, t);
            let mut lines = Lines::default();
            tick_traced(&CAMP, c, m, &input, &mut lines).unwrap();
            if i == watched {
                truth.events.push(lines.0);
                truth
                    .paths
                    .push(m.active_path().map(|l| CAMP.node(l.item).name()).collect());
                let now = scene::now(t);
                let mut path = String::new();
                debug_print_state(&mut path, &CAMP, m, now, DumpView::ActivePath).unwrap();
                let mut whole = String::new();
                debug_print_state(&mut whole, &CAMP, m, now, DumpView::WholeTree).unwrap();
                truth.dumps.push((path, whole));
            }
        }
    }
    (recorder.export().to_json(), truth)
}

/// Spans of equal leaf in a lane: (name, first tick, last tick).
fn spans(paths: &[Vec<&'static str>]) -> Vec<(String, u64, u64)> {
    let mut out: Vec<(String, u64, u64)> = Vec::new();
    for (t, path) in paths.iter().enumerate() {
        let leaf = if path.is_empty() {
            "idle"
        } else {
            path[path.len() - 1]
        };
        match out.last_mut() {
            Some(last) if last.0 == leaf => last.2 = t as u64,
            _ => out.push((leaf.to_owned(), t as u64, t as u64)),
        }
    }
    out
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn scrubbing_shows_the_path_events_spans_and_dump_of_the_tick() {
    const WATCHED: usize = 3;
    let (json, truth) = camp_run(24, 160, WATCHED);
    // A tick of the watched agent where a preemption changed its path and
    // a rejection came before it.
    let tick = (40..160)
        .find(|&t| {
            truth.events[t].iter().any(|l| l.starts_with("preempt"))
                && truth.events[t].iter().any(|l| l.starts_with("reject"))
        })
        .expect("a preemption in the run");
    let page = write_page(&out_dir("camp"), &json).expect("writing the page");

    with_browser(|client| async move {
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;

        // Search the agent by id (typed, then Enter).
        let search = client.find(Locator::Id("agent-search")).await.unwrap();
        search.send_keys(&format!("{WATCHED}\n")).await.unwrap();
        assert_eq!(
            js(&client, "return btViewer.state().agent;").await,
            json!(WATCHED)
        );

        // Move the scrubber to the tick before, then step once.
        js(
            &client,
            &format!(
                "const s = document.getElementById('scrubber'); s.value = {};\
                 s.dispatchEvent(new Event('input'));",
                tick - 1
            ),
        )
        .await;
        client
            .find(Locator::Id("next"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        assert_eq!(
            js(&client, "return btViewer.state().cursor;").await,
            json!(tick)
        );

        // The highlighted path.
        let path = js(
            &client,
            "return [...document.querySelectorAll('#tree .node.active')].map(n => n.dataset.name);",
        )
        .await;
        assert_eq!(path, json!(truth.paths[tick]), "active path at tick {tick}");
        let edges = js(
            &client,
            "return document.querySelectorAll('#tree path.edge.active').length;",
        )
        .await;
        assert_eq!(edges, json!(truth.paths[tick].len().saturating_sub(1)));

        // The event list (a flag rejection's failed flags aside: see
        // text.rs).
        let events = js(
            &client,
            "return [...document.querySelectorAll('#events li:not(.why)')]\
             .map(li => li.textContent.replace(/ \\((decision|stimuli) flags: [^)]*\\)$/, ' ($1 flags)'));",
        )
        .await;
        assert_eq!(events, json!(truth.events[tick]), "events of tick {tick}");

        // The dump, both views.
        let dump = js(
            &client,
            "return document.getElementById('dump').textContent;",
        )
        .await;
        assert_eq!(
            dump.as_str().unwrap(),
            truth.dumps[tick].0,
            "dump at tick {tick}"
        );
        client
            .find(Locator::Id("whole-tree"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let dump = js(
            &client,
            "return document.getElementById('dump').textContent;",
        )
        .await;
        assert_eq!(
            dump.as_str().unwrap(),
            truth.dumps[tick].1,
            "whole tree at tick {tick}"
        );

        // The lane's spans and its markers, as the page holds them and as
        // it draws them.
        let lane = js(&client, &format!("return btViewer.lane({WATCHED});")).await;
        assert_eq!(
            lane["spans"],
            json!(spans(&truth.paths)),
            "lane of agent {WATCHED}"
        );
        for (kind, line) in [
            ("preempt", "preempt"),
            ("redecide", "redecide "),
            ("subset-rule", "SUBSET RULE"),
        ] {
            let expected: Vec<usize> = (0..truth.events.len())
                .filter(|&t| truth.events[t].iter().any(|l| l.starts_with(line)))
                .collect();
            assert!(!expected.is_empty(), "no {kind} in the run");
            assert_eq!(lane["markers"][kind], json!(expected), "{kind} markers");
        }
        for (name, from, to) in spans(&truth.paths) {
            if to - from < 2 {
                continue;
            }
            let drawn = lane_color(&client, WATCHED, (from + to) / 2).await;
            let want = js(
                &client,
                &format!("return btViewer.colorOf({});", json!(name)),
            )
            .await;
            assert_eq!(
                drawn,
                css_rgb(&client, want.as_str().unwrap()).await,
                "{name} at {from}..{to}"
            );
        }

        // Hovering a decider shows its last rejection up to the cursor.
        let rejected = truth.events[tick]
            .iter()
            .find(|l| l.starts_with("reject"))
            .unwrap()
            .clone();
        // "reject EAT #7 (decision flags)"
        let (who, reason) = rejected["reject ".len()..].split_once(" (").unwrap();
        let (_, index) = who.split_once(" #").unwrap();
        let reason = reason.trim_end_matches(')');
        let last = (0..=tick)
            .rev()
            .flat_map(|t| truth.events[t].iter().rev())
            .find(|l| l.starts_with(&format!("reject {who} ")))
            .unwrap();
        assert!(last.ends_with(&format!("({reason})")));
        let node = client
            .find(Locator::Css(&format!("#tree .node[data-item='{index}']")))
            .await
            .unwrap();
        let hover = MouseActions::new("mouse".into()).then(PointerAction::MoveToElement {
            element: node,
            duration: None,
            x: 0,
            y: 0,
        });
        client.perform_actions(hover).await.unwrap();
        let tip = js(
            &client,
            "return document.getElementById('tip').textContent;",
        )
        .await;
        let tip = tip.as_str().unwrap();
        // (A flag rejection's line names the flags that failed after the
        // reason: see text.rs.)
        let line = tip
            .lines()
            .find(|l| l.starts_with("last rejection: "))
            .unwrap_or_default();
        assert!(
            line.starts_with(&format!("last rejection: {reason}"))
                && line.contains(&format!("(tick {tick},")),
            "tooltip: {tip}"
        );

        // A click on a decider searches for it.
        let think = CAMP.find("THINK").unwrap().0;
        client
            .find(Locator::Css(&format!("#tree .node[data-item='{think}']")))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let marked = js(
            &client,
            "return [...document.querySelectorAll('#tree .node.match')].map(n => n.dataset.name);",
        )
        .await;
        assert_eq!(marked, json!(["THINK"]));

        // Search by decider name marks it and lists the agents that ran it.
        let search = client.find(Locator::Id("decider-search")).await.unwrap();
        search.clear().await.unwrap();
        search.send_keys("FIGHT").await.unwrap();
        let marked = js(
            &client,
            "return [...document.querySelectorAll('#tree .node.match')].map(n => n.dataset.name);",
        )
        .await;
        assert_eq!(marked, json!(["FIGHT"]));
        let listed = js(
            &client,
            "return [...document.querySelectorAll('#search-results button')].map(b => Number(b.dataset.agent));",
        )
        .await;
        let doc: Value = serde_json::from_str(&json).unwrap();
        let fight = CAMP.find("FIGHT").unwrap().0;
        let ran: Vec<u64> = doc["agents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| {
                a["ticks"].as_array().unwrap().iter().any(|t| {
                    t[5].as_array()
                        .unwrap()
                        .chunks(4)
                        .any(|l| l[0] == json!(fight))
                })
            })
            .map(|a| a["agent"].as_u64().unwrap())
            .collect();
        assert!(!ran.is_empty());
        assert_eq!(listed, json!(ran));
        search.clear().await.unwrap();
        js(
            &client,
            "document.getElementById('decider-search').dispatchEvent(new Event('input'));",
        )
        .await;
        no_errors(&client).await;
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn bad_input_shows_a_clear_message_and_no_error() {
    let (json, _) = camp_run(2, 20, 0);
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "truncated",
            json[..json.len() / 2].to_owned(),
            "not a complete JSON document",
        ),
        ("empty", String::new(), "The recording is empty."),
        (
            "foreign",
            r#"{"name":"a package","version":"1.0"}"#.to_owned(),
            "not a bt-viewer recording: its \"format\" field is missing",
        ),
        (
            "array",
            "[1, 2, 3]".to_owned(),
            "not a bt-viewer recording: it is not an object",
        ),
        (
            "newer",
            json.replacen(r#""version":2"#, r#""version":99"#, 1),
            "version 99",
        ),
        (
            "older",
            json.replacen(r#""version":2"#, r#""version":1"#, 1),
            "version 1; this viewer reads version 2 (record it again",
        ),
        (
            "run first",
            json.replacen(r#""ticks":[["#, r#""ticks":[[3,0.25],["#, 1),
            "a run of repeats must follow a tick",
        ),
    ];
    let dir = out_dir("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let pages: Vec<(String, PathBuf, &str)> = cases
        .iter()
        .map(|(name, text, want)| {
            let page = dir.join(format!("{}.html", name.replace(' ', "-")));
            std::fs::write(&page, page_with(text)).unwrap();
            (name.to_string(), page, *want)
        })
        .collect();

    with_browser(|client| async move {
        for (name, page, want) in &pages {
            client.goto(&file_url(page)).await.unwrap();
            let message = client.find(Locator::Id("message")).await.unwrap();
            let text = message.text().await.unwrap();
            assert!(text.contains(want), "{name}: {text}");
            assert_eq!(
                message.attr("class").await.unwrap().as_deref(),
                Some("error")
            );
            let hidden = js(&client, "return document.getElementById('app').hidden;").await;
            assert_eq!(hidden, json!(true), "{name}: the viewer is hidden");
            no_errors(&client).await;
        }
        // A tick naming an item the tree does not have, loaded over a good
        // recording: the message replaces it.
        client.goto(&file_url(&pages[0].1)).await.unwrap();
        let good: Value = serde_json::from_str(&json).unwrap();
        let mut bad = good.clone();
        bad["agents"][0]["ticks"][3][2] = json!(999);
        let ok = client
            .execute(
                "return btViewer.loadText(arguments[0], 'x');",
                vec![json!(good.to_string())],
            )
            .await
            .unwrap();
        assert_eq!(ok, json!(true));
        let ok = client
            .execute(
                "return btViewer.loadText(arguments[0], 'x');",
                vec![json!(bad.to_string())],
            )
            .await
            .unwrap();
        assert_eq!(ok, json!(false));
        let text = client
            .find(Locator::Id("message"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(text.contains("unknown item at agent 0, tick 3"), "{text}");
        no_errors(&client).await;
    });
}

/// The text of script element `id` in `page`, replaced by `f` of it.
fn with_script(page: &str, id: &str, f: impl FnOnce(&str) -> String) -> String {
    let open = format!(r#"<script id="{id}""#);
    let start = page.find(&open).expect("the element") + open.len();
    let start = start + page[start..].find('>').unwrap() + 1;
    let end = start + page[start..].find("</script>").unwrap();
    format!("{}{}{}", &page[..start], f(&page[start..end]), &page[end..])
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn the_page_holds_its_recording_compressed_and_says_when_it_is_damaged() {
    let json = herd_recorder(4, 60, true).export_compact().to_json();
    let page = page_with(&json);
    // A quarter of the bytes or fewer, and no JSON text in the page.
    assert!(
        page.len() < bt_viewer::PAGE.len() + json.len() / 2,
        "{} bytes",
        page.len()
    );
    assert!(!page.contains(r#""format":"bt-viewer-recording""#));
    let dir = out_dir("packed");
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.join(format!("{name}.html"));
        std::fs::write(&path, text).unwrap();
        path
    };
    // A browser without `Uint8Array.fromBase64` reads it with `atob`.
    let old = write(
        "no-frombase64",
        &page.replacen(
            "<head>",
            "<head><script>delete Uint8Array.fromBase64;</script>",
            1,
        ),
    );
    // The text's bytes changed, or cut short; one agent's values changed.
    let damaged = write(
        "damaged",
        &with_script(&page, "recording", |b| {
            b.replacen(&b[40..48], "AAAAAAAA", 1)
        }),
    );
    let short = write(
        "short",
        &with_script(&page, "recording", |b| b[..b.len() / 2].to_owned()),
    );
    let values = write(
        "damaged-values",
        &with_script(&page, "recording-values", |b| format!("////{}", &b[4..])),
    );
    with_browser(|client| async move {
        client.goto(&file_url(&old)).await.unwrap();
        wait_ready(&client).await;
        let shown = js(
            &client,
            "btViewer.selectAgent(1); return [Uint8Array.fromBase64 === undefined, btViewer.rows().length, \
             document.getElementById('message').className];",
        )
        .await;
        assert_eq!(shown, json!([true, 4, ""]));
        no_errors(&client).await;
        for page in [&damaged, &short] {
            client.goto(&file_url(page)).await.unwrap();
            let message = client.find(Locator::Id("message")).await.unwrap();
            let text = message.text().await.unwrap();
            assert!(
                text.contains("The recording in this page is damaged ("),
                "{text}"
            );
            assert_eq!(
                message.attr("class").await.unwrap().as_deref(),
                Some("error")
            );
            no_errors(&client).await;
        }
        // The first agent's values are damaged: the page opens and says so
        // when it shows that agent; the others show theirs.
        client.goto(&file_url(&values)).await.unwrap();
        wait_ready(&client).await;
        let said = js(
            &client,
            "const $ = id => document.getElementById(id);\
             btViewer.selectAgent(0); const a = $('values-note').textContent + $('values').textContent;\
             btViewer.selectAgent(1); const b = $('values-note').textContent + $('values').textContent; return [a, b];",
        )
        .await;
        let (a, b) = (said[0].as_str().unwrap(), said[1].as_str().unwrap());
        assert!(
            a.contains("The values of agent 0 in this page are damaged ("),
            "{a}"
        );
        assert!(!b.contains("damaged") && b.contains("hunger"), "{b}");
        no_errors(&client).await;
    });
}

/// One base64 character changed, at positions spread over the text and
/// over one agent's values: every one is reported as damage (a change the
/// inflater takes is caught by the checksum), none opens with other data.
#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn every_changed_character_of_the_packed_recording_is_reported() {
    let json = herd_recorder(4, 60, true).export_compact().to_json();
    let page = page_with(&json);
    let dir = out_dir("packed-flips");
    std::fs::create_dir_all(&dir).unwrap();
    let flip = |b: &str, at: usize| {
        let c = b.as_bytes()[at];
        let to = if c == b'A' { "B" } else { "A" };
        format!("{}{to}{}", &b[..at], &b[at + 1..])
    };
    let mut pages = Vec::new();
    for (k, id) in ["recording", "recording-values"].into_iter().enumerate() {
        let len = {
            let probe = std::cell::Cell::new(0);
            with_script(&page, id, |b| {
                probe.set(b.trim_end_matches('=').len());
                b.to_owned()
            });
            probe.get()
        };
        // Every 24th character of the text; the first agent's values'
        // first 64.
        let (n, step) = if k == 0 { (len / 24, 24) } else { (16, 4) };
        for j in 0..n {
            let at = j * step + 1;
            let path = dir.join(format!("{id}-{at}.html"));
            std::fs::write(&path, with_script(&page, id, |b| flip(b, at))).unwrap();
            pages.push((id, at, path));
        }
    }
    with_browser(|client| async move {
        for (id, at, path) in &pages {
            client.goto(&file_url(path)).await.unwrap();
            let said = if *id == "recording" {
                let message = client.find(Locator::Id("message")).await.unwrap();
                message.text().await.unwrap()
            } else {
                wait_ready(&client).await;
                js(
                    &client,
                    "btViewer.selectAgent(0); return document.getElementById('values-note').textContent;",
                )
                .await
                .as_str()
                .unwrap_or_default()
                .to_owned()
            };
            assert!(said.contains("damaged ("), "{id} changed at {at}: {said}");
        }
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn decider_names_like_markup_show_in_the_page_as_they_are() {
    const NAMES: [&str; 3] = ["<!--<script>", "</script>", "a > b && c"];
    let (mut agents, mut memories) = crowd(3);
    let mut recorder = FlightRecorder::new(&CAMP, 3, Watch::All, Capacity::new(20, 16));
    for t in 0..20 {
        agents.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
    }
    let mut recording = recorder.export();
    for (item, name) in recording.tree.items.iter_mut().zip(NAMES) {
        item.name = name;
    }
    let page = write_page(&out_dir("markup-names"), &recording.to_json()).unwrap();
    with_browser(|client| async move {
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        let shown = js(
            &client,
            "return [...document.querySelectorAll('#tree .node')].slice(0, 3).map(n => n.dataset.name);",
        )
        .await;
        assert_eq!(shown, json!(NAMES));
        let text = js(
            &client,
            "return document.getElementById('tree').textContent;",
        )
        .await;
        for name in NAMES {
            assert!(text.as_str().unwrap().contains(name), "{name} in {text}");
        }
        no_errors(&client).await;
    });
}

/// A herd of `n` grazers over `ticks` ticks at 30 Hz, every one watched
/// and its values recorded, exported compact.
fn herd_recorder(n: usize, ticks: u32, values: bool) -> FlightRecorder {
    let (mut grazers, mut memories) = herd(n);
    let recorder = FlightRecorder::new(&HERD, n, Watch::All, Capacity::new(ticks as usize, 12))
        .name_flags::<Sense, Sense>();
    let mut recorder = if values {
        recorder.with_data(DataCapacity::new(4, 8))
    } else {
        recorder
    };
    for t in 0..ticks {
        grazers.iter_mut().for_each(Grazer::step);
        recorder.tick_all_with_data(&HERD, &mut grazers, &mut memories, |i, g| g.input(i, t));
    }
    recorder
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn ten_thousand_agents_over_600_ticks_open_scrub_and_filter_and_report_their_times() {
    // A real run of a thousand grazers, the recording then ten times over
    // (agent ids 0..10 000): what the page does with 10 000 lanes of 600
    // ticks, without ticking 6 million agents in a debug build.
    const REAL: usize = 1000;
    const COPIES: usize = 10;
    const TICKS: u32 = 600;
    let started = Instant::now();
    let recorder = herd_recorder(REAL, TICKS, false);
    let mut doc: Value = serde_json::to_value(recorder.export_compact()).unwrap();
    let one = doc["agents"].as_array().unwrap().clone();
    let all: Vec<Value> = (0..COPIES)
        .flat_map(|c| {
            one.iter().map(move |a| {
                let mut a = a.clone();
                a["agent"] = json!(a["agent"].as_u64().unwrap() + (c * REAL) as u64);
                a
            })
        })
        .collect();
    doc["agents"] = Value::Array(all);
    let json = doc.to_string();
    let page = write_page(&out_dir("big"), &json).expect("writing the page");
    let made = started.elapsed();
    with_browser(|client| async move {
        let t0 = Instant::now();
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        let open = t0.elapsed();
        // From the start of the navigation to the page ready, in its clock.
        let ready = js(&client, "return performance.now();").await;
        let phases = js(&client, "return btViewer.state();").await;
        assert_eq!(phases["last"], json!(TICKS - 1));
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
        // Filters: a band of the overview, and queries, each timed three
        // times (the median and the slowest kept: the machine is shared).
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
            "10000 agents x 600 ticks: {:.1} MB of JSON; open {:.0} ms (navigation to ready in the page clock: \
             {:.0} ms; parse and check {:.0} ms, index and draw {:.0} ms; {:.0} ms as the test saw it); \
             {} scrubber moves over 10 agents: median {:.2} ms, slowest {:.2} ms; filters (median of 3): {}; \
             recording made in {:.1} s",
            json.len() as f64 / 1e6,
            ready.as_f64().unwrap(),
            ready.as_f64().unwrap(),
            phases["parseMs"].as_f64().unwrap(),
            phases["openMs"].as_f64().unwrap(),
            open.as_secs_f64() * 1e3,
            scrub[0],
            scrub[1].as_f64().unwrap(),
            scrub[2].as_f64().unwrap(),
            detail.join(", "),
            made.as_secs_f64()
        );
        eprintln!("{line}");
        std::fs::write(out_dir("big").join("timing.txt"), format!("{line}\n")).unwrap();
        // The times are the report (the targets are 3 s to open and 50 ms
        // to answer); what fails is three times the slowest seen on a loaded
        // 2-core machine: 3.9 s to open, a 4.5 ms scrub, a 136 ms query.
        assert!(ready.as_f64().unwrap() < 3.0 * 3934.0, "{line}");
        assert!(scrub[1].as_f64().unwrap() < 3.0 * 4.5, "{line}");
        assert!(worst < 3.0 * 136.4, "{line}");
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn the_live_page_follows_a_running_program() {
    let mut server = LiveServer::start(0).expect("a loopback port");
    assert!(server.addr().ip().is_loopback());
    let (mut agents, mut memories) = crowd(5);
    let mut recorder =
        FlightRecorder::new(&CAMP, 5, Watch::Agents(&[1, 4]), Capacity::new(100, 16));
    let mut t = 0;
    let mut run = |ticks: u32, server: &mut LiveServer| {
        for _ in 0..ticks {
            agents.iter_mut().for_each(Creature::step);
            recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
            server.publish(&recorder);
            t += 1;
        }
    };
    run(10, &mut server);
    let url = server.url();
    let server = Mutex::new(server);
    with_browser(|client| async move {
        client.goto(&url).await.unwrap();
        // The page waits for the program's next tick.
        let waiting = js(
            &client,
            "return document.getElementById('message').textContent;",
        )
        .await;
        assert!(waiting.as_str().unwrap().contains("Waiting"), "{waiting}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while server.lock().unwrap().clients() == 0 {
            assert!(
                Instant::now() < deadline,
                "the page never followed the stream"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // It gets the whole recording, then each tick.
        run(1, &mut server.lock().unwrap());
        wait_ready(&client).await;
        assert_eq!(
            js(&client, "return btViewer.state().last;").await,
            json!(10)
        );
        run(14, &mut server.lock().unwrap());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let last = js(&client, "return btViewer.state().last;").await;
            if last == json!(24) {
                break;
            }
            assert!(Instant::now() < deadline, "the page stopped at tick {last}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // It followed the end, and the lanes grew.
        assert_eq!(
            js(&client, "return btViewer.state().cursor;").await,
            json!(24)
        );
        let last_span = js(
            &client,
            "const s = btViewer.lane(4).spans; return s[s.length - 1][2];",
        )
        .await;
        assert_eq!(last_span, json!(24));
        // When the program stops, the page says so and keeps what it has.
        drop(server);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = js(
                &client,
                "return document.getElementById('message').textContent;",
            )
            .await;
            if text.as_str().unwrap().contains("has stopped") {
                break;
            }
            assert!(Instant::now() < deadline, "no word of the stop: {text}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            js(&client, "return btViewer.state().last;").await,
            json!(24)
        );
        no_errors(&client).await;
    });
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

/// Moves the mouse over the tree node of `item`.
async fn hover_node(client: &Client, item: usize) {
    let node = client
        .find(Locator::Css(&format!("#tree .node[data-item='{item}']")))
        .await
        .unwrap();
    let hover = MouseActions::new("mouse".into()).then(PointerAction::MoveToElement {
        element: node,
        duration: None,
        x: 0,
        y: 0,
    });
    client.perform_actions(hover).await.unwrap();
}

/// Moves the scrubber to tick `t`.
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

/// One agent's tick as bt-core tells it: its values before the tick, the
/// decide values and activations in order.
#[derive(Default)]
struct Told {
    hunger: f32,
    fatigue: f32,
    danger: bool,
    /// (item, value) of each `Decided`, and the items activated, in order.
    steps: Vec<(usize, Option<f32>)>,
}

impl Tracer for Told {
    fn event(&mut self, event: &Event) {
        match *event {
            Event::Decided { node, value } => self.steps.push((node.index.get(), Some(value))),
            Event::Activated { node, .. } => self.steps.push((node.index.get(), None)),
            _ => {}
        }
    }
}

/// Runs a twin herd through bt-core and tells each agent's ticks.
fn herd_truth(n: usize, ticks: u32) -> Vec<Vec<Told>> {
    let (mut grazers, mut memories) = herd(n);
    let mut out: Vec<Vec<Told>> = (0..n).map(|_| Vec::new()).collect();
    for t in 0..ticks {
        grazers.iter_mut().for_each(Grazer::step);
        for (i, (g, m)) in grazers.iter_mut().zip(&mut memories).enumerate() {
            let input = g.input(i, t);
            let mut told = Told {
                hunger: g.hunger,
                fatigue: g.fatigue,
                danger: g.sense.contains(Sense::DANGER),
                steps: Vec::new(),
            };
            tick_traced(&HERD, g, m, &input, &mut told).unwrap();
            out[i].push(told);
        }
    }
    out
}

/// The first tick (after the first) where agent `told` activated `item`.
fn first_activation(told: &[Told], item: usize) -> Option<usize> {
    (1..told.len()).find(|&t| told[t].steps.contains(&(item, None)))
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn the_agents_values_decide_values_draws_and_flag_names_are_the_runs() {
    const N: usize = 12;
    const TICKS: u32 = 400;
    let recorder = herd_recorder(N, TICKS, true);
    let json = recorder.export_compact().to_json();
    let item = |name: &str| HERD.find(name).unwrap().0 as usize;
    let (graze, idle) = (item("GRAZE"), item("IDLE"));
    // A grazer that grazes: the tick grazing won, and a draw of the idle
    // group.
    let all = herd_truth(N, TICKS);
    let watched = (0..N)
        .find(|&i| first_activation(&all[i], graze).is_some())
        .expect("a grazer grazes");
    let truth = &all[watched];
    let won = first_activation(truth, graze).unwrap();
    let drew = (1..truth.len())
        .find(|&t| {
            truth[t].steps.iter().any(|&(i, v)| {
                v.is_none()
                    && HERD
                        .node(ItemIdx(i as u16))
                        .parent()
                        .is_some_and(|p| p.index().get() == idle)
            })
        })
        .expect("a draw");
    let page = write_page(&out_dir("why"), &json).unwrap();

    with_browser(|client| async move {
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        js(&client, &format!("btViewer.selectAgent({watched});")).await;

        // The values beside the dump are the grazer's fields as the tick
        // found them, at every tick.
        for t in (0..TICKS as usize).step_by(7).chain([won - 1, won, drew]) {
            scrub_to(&client, t).await;
            // Compared in the page: its numbers are the shortest decimals
            // of the f32s, which read back as the same f32s.
            let want = &truth[t];
            let shown = client
                .execute(
                    "const v = Object.fromEntries([...document.querySelectorAll('#values tr')]\
                     .map(r => [r.dataset.name, JSON.parse(r.dataset.value)]));\
                     return [Math.fround(v.hunger) === Math.fround(Number(arguments[0])),\
                             Math.fround(v.fatigue) === Math.fround(Number(arguments[1])), v.danger,\
                             String(v.hunger), String(v.fatigue)];",
                    vec![
                        json!(want.hunger.to_string()),
                        json!(want.fatigue.to_string()),
                    ],
                )
                .await
                .unwrap();
            assert_eq!(
                shown[0],
                json!(true),
                "hunger at {t}: {shown} vs {}",
                want.hunger
            );
            assert_eq!(
                shown[1],
                json!(true),
                "fatigue at {t}: {shown} vs {}",
                want.fatigue
            );
            let danger = if want.danger { "yes" } else { "no" };
            assert_eq!(shown[2], json!(danger), "at {t}");
        }
        // Hunger is past 3.0, and grazing wins with the hunger the values
        // show as its decide value.
        scrub_to(&client, won).await;
        let value = truth[won]
            .steps
            .iter()
            .find_map(|&(i, v)| (i == graze).then_some(v).flatten())
            .unwrap();
        assert!(truth[won].hunger > 3.0);
        assert_eq!(value, truth[won].hunger);
        let events = js(
            &client,
            "return [...document.querySelectorAll('#events li')].map(li => li.textContent);",
        )
        .await;
        let line = format!("accept GRAZE #{graze} = {value:.3}");
        assert!(
            events.as_array().unwrap().iter().any(|l| l == &json!(line)),
            "{line} in {events}"
        );
        let label = js(
            &client,
            &format!("return document.querySelector('#tree .node[data-item=\"{graze}\"] text.val').textContent;"),
        )
        .await;
        assert_eq!(label, json!(format!("= {value:.3}")));
        // The plots under the lane: hunger and fatigue drawn in their strips.
        let plotted = js(
            &client,
            "const c = document.getElementById('lanes'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;\
             let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] === 11 && d[i + 1] === 107 && d[i + 2] === 46) n++; return n;",
        )
        .await;
        assert!(plotted.as_u64().unwrap() > 100, "plot pixels: {plotted}");

        // The idle group's draw: every candidate's weight, and the pick.
        scrub_to(&client, drew).await;
        let mut weights = Vec::new();
        let mut pick = 0;
        for &(i, v) in &truth[drew].steps {
            let parent = HERD
                .node(ItemIdx(i as u16))
                .parent()
                .map(|p| p.index().get());
            if parent != Some(idle) {
                continue;
            }
            match v {
                Some(v) => weights.push(format!("{} {v:.3}", HERD.node(ItemIdx(i as u16)).name())),
                None => pick = i,
            }
        }
        let want = format!(
            "random draw in IDLE #{idle}: {} → {} #{pick}",
            weights.join(", "),
            HERD.node(ItemIdx(pick as u16)).name()
        );
        let why = js(
            &client,
            "return [...document.querySelectorAll('#events li.why')].map(li => li.textContent);",
        )
        .await;
        assert_eq!(why, json!([want]));
        // Hovering a candidate shows its decide value and the draw.
        let wander = item("WANDER");
        let wv = truth[drew]
            .steps
            .iter()
            .find_map(|&(i, v)| (i == wander).then_some(v).flatten())
            .unwrap();
        hover_node(&client, wander).await;
        let tip = js(
            &client,
            "return document.getElementById('tip').textContent;",
        )
        .await;
        let tip = tip.as_str().unwrap();
        assert!(
            tip.contains(&format!("decide value at this tick: {wv:.3}")),
            "{tip}"
        );
        assert!(tip.contains(&want), "{tip}");
        assert!(tip.contains(&format!("WANDER #{wander}")), "{tip}");

        // Flag names, not masks.
        let subtitle = |name: &str| {
            format!(
                "return document.querySelector('#tree .node[data-name=\"{name}\"] text.sub').textContent;"
            )
        };
        assert!(
            js(&client, &subtitle("FLEE"))
                .await
                .as_str()
                .unwrap()
                .contains("needs DANGER")
        );
        assert!(
            js(&client, &subtitle("GRAZE"))
                .await
                .as_str()
                .unwrap()
                .contains("needs FOOD")
        );
        let tree = js(
            &client,
            "return document.getElementById('tree').textContent;",
        )
        .await;
        assert!(!tree.as_str().unwrap().contains("0x"), "{tree}");
        no_errors(&client).await;
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn the_overview_counts_the_run_and_a_click_on_a_band_shows_its_agents() {
    const N: usize = 60;
    const TICKS: u32 = 300;
    let recorder = herd_recorder(N, TICKS, false);
    let json = recorder.export_compact().to_json();
    // What bt-core says: each grazer's leaf after each tick.
    let (mut grazers, mut memories) = herd(N);
    let mut leaves: Vec<Vec<&'static str>> = Vec::new();
    for t in 0..TICKS {
        grazers.iter_mut().for_each(Grazer::step);
        bt_core::tick_all(&HERD, &mut grazers, &mut memories, |i, g| g.input(i, t));
        leaves.push(
            memories
                .iter()
                .map(|m| m.leaf().map_or("idle", |l| HERD.node(l).name()))
                .collect(),
        );
    }
    let mut counts: std::collections::BTreeMap<&str, Vec<u32>> = Default::default();
    for (t, row) in leaves.iter().enumerate() {
        for name in row {
            counts
                .entry(name)
                .or_insert_with(|| vec![0; TICKS as usize])[t] += 1;
        }
    }
    assert!(counts.len() >= 4, "{:?}", counts.keys());
    let page = write_page(&out_dir("overview"), &json).unwrap();

    with_browser(|client| async move {
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        let shown = js(&client, "return btViewer.overview();").await;
        assert_eq!(shown["first"], json!(0));
        assert_eq!(shown["counts"], json!(counts));
        // The legend names every behavior drawn.
        let legend = js(
            &client,
            "return [...document.querySelectorAll('#overview-legend span')].map(s => s.dataset.name).sort();",
        )
        .await;
        assert_eq!(legend, json!(counts.keys().collect::<Vec<_>>()));
        // A click on a band shows the lanes of its agents at that tick.
        for (name, t) in [("WANDER", 150usize), ("GAZE", 40), ("REST", 250)] {
            if counts.get(name).is_none_or(|c| c[t] == 0) {
                continue;
            }
            let at = js(
                &client,
                &format!("return btViewer.overviewPoint('{name}', {t});"),
            )
            .await;
            click_at(&client, &at).await;
            let rows = js(&client, "return btViewer.rows();").await;
            let want: Vec<usize> = (0..N).filter(|&i| leaves[t][i] == name).collect();
            assert_eq!(rows, json!(want), "{name} at {t}");
            let state = js(&client, "return btViewer.state();").await;
            assert_eq!(state["cursor"], json!(t));
            let note = js(
                &client,
                "return document.getElementById('filter-note').textContent;",
            )
            .await;
            assert!(
                note.as_str()
                    .unwrap()
                    .starts_with(&format!("{} agents running {name} #", want.len())),
                "{note}"
            );
            // Only the lanes shown are drawn.
            let drawn = js(&client, "return btViewer.drawn();").await;
            assert_eq!(
                drawn,
                json!(want[..want.len().min(drawn.as_array().unwrap().len())])
            );
        }
        client
            .find(Locator::Id("q-clear"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        assert_eq!(
            js(&client, "return btViewer.rows().length;").await,
            json!(N)
        );
        // Zoom in around the cursor, pan with the mouse, fit again.
        client
            .find(Locator::Id("zoom-in"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let z = js(&client, "return btViewer.state();").await;
        let width = z["v1"].as_i64().unwrap() - z["v0"].as_i64().unwrap() + 1;
        assert!((140..=160).contains(&width), "{z}");
        let ruler = client.find(Locator::Id("ruler")).await.unwrap();
        let drag = MouseActions::new("mouse".into())
            .then(PointerAction::MoveToElement {
                element: ruler,
                duration: None,
                x: 0,
                y: 0,
            })
            .then(PointerAction::Down {
                button: fantoccini::actions::MOUSE_BUTTON_LEFT,
            })
            .then(PointerAction::MoveBy {
                duration: None,
                x: 200,
                y: 0,
            })
            .then(PointerAction::Up {
                button: fantoccini::actions::MOUSE_BUTTON_LEFT,
            });
        client.perform_actions(drag).await.unwrap();
        client.release_actions().await.unwrap();
        let panned = js(&client, "return btViewer.state();").await;
        assert!(
            panned["v0"].as_i64() < z["v0"].as_i64(),
            "{z} then {panned}"
        );
        assert_eq!(
            panned["v1"].as_i64().unwrap() - panned["v0"].as_i64().unwrap() + 1,
            width
        );
        client
            .find(Locator::Id("zoom-fit"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let fit = js(&client, "return btViewer.state();").await;
        assert_eq!(
            (fit["v0"].clone(), fit["v1"].clone()),
            (json!(0), json!(TICKS - 1))
        );
        no_errors(&client).await;
    });
}

/// Every event of every tick of a camp run, and the active path after
/// it, by agent, as bt-core gives them.
type CampTicks = Vec<Vec<(Vec<Event>, Vec<ItemIdx>)>>;

fn camp_events(n: usize, ticks: u32) -> (String, CampTicks) {
    #[derive(Default)]
    struct All(Vec<Event>);
    impl Tracer for All {
        fn event(&mut self, event: &Event) {
            self.0.push(*event);
        }
    }
    let (mut agents, mut memories) = crowd(n);
    let (mut twins, mut twin_mem) = crowd(n);
    let mut recorder = FlightRecorder::new(&CAMP, n, Watch::All, Capacity::new(ticks as usize, 24));
    let mut events = vec![Vec::new(); n];
    for t in 0..ticks {
        agents.iter_mut().for_each(Creature::step);
        twins.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
        for (i, (c, m)) in twins.iter_mut().zip(&mut twin_mem).enumerate() {
            let input = c.input(i, t);
            let mut all = All::default();
            let result = tick_traced(&CAMP, c, m, &input, &mut all);
            if result.is_err() {
                all.0.push(Event::RedecideLimit {
                    group: bt_core::NodeRef {
                        index: ItemIdx(0),
                        name: "",
                        depth: 0,
                    },
                });
            }
            events[i].push((all.0, m.active_path().map(|l| l.item).collect()));
        }
    }
    (recorder.export_compact().to_json(), events)
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn queries_find_the_agents_that_did_it_and_the_first_match_is_one_click_away() {
    const N: usize = 40;
    const TICKS: u32 = 200;
    let (json, events) = camp_events(N, TICKS);
    let item = |name: &str| CAMP.find(name).unwrap();
    // (agent, first tick) of the agents with an event `hit` in from..=to.
    let truth = |from: usize, to: usize, hit: &dyn Fn(&Event) -> bool| -> Vec<(usize, usize)> {
        (0..N)
            .filter_map(|i| {
                (from..=to)
                    .find(|&t| events[i][t].0.iter().any(hit))
                    .map(|t| (i, t))
            })
            .collect()
    };
    let flee = item("FLEE");
    let patrol = item("PATROL");
    // (kind, decider, reason code, from, to, the agents and first ticks)
    type Case = (
        &'static str,
        &'static str,
        &'static str,
        usize,
        usize,
        Vec<(usize, usize)>,
    );
    let mut cases: Vec<Case> = vec![
        (
            "entered",
            "FLEE",
            "-1",
            50,
            150,
            truth(
                50,
                150,
                &|e| matches!(e, Event::Activated { node, .. } if node.index == flee),
            ),
        ),
        (
            "rejected",
            "PATROL",
            "2",
            0,
            199,
            truth(
                0,
                199,
                &|e| matches!(e, Event::Rejected { node, by: bt_core::Rejection::Timer } if node.index == patrol),
            ),
        ),
        (
            "trouble",
            "ROOT",
            "-1",
            20,
            120,
            truth(20, 120, &|e| {
                matches!(
                    e,
                    Event::SubsetViolation { .. } | Event::RedecideLimit { .. }
                )
            }),
        ),
    ];
    let guard = item("GUARD");
    let ran: Vec<(usize, usize)> = (0..N)
        .filter_map(|i| {
            (30..=170)
                .find(|&t| events[i][t].1.contains(&guard))
                .map(|t| (i, t))
        })
        .collect();
    cases.push(("ran", "GUARD", "-1", 30, 170, ran));
    for c in &cases {
        assert!(
            !c.5.is_empty() && c.5.len() < N,
            "{} {}: {} agents",
            c.0,
            c.1,
            c.5.len()
        );
    }
    let page = write_page(&out_dir("query"), &json).unwrap();

    with_browser(|client| async move {
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        for (kind, name, reason, from, to, want) in &cases {
            // Fill in the query bar and press "find".
            js(
                &client,
                &format!(
                    "const set = (id, v) => {{ const e = document.getElementById(id); e.value = v; e.dispatchEvent(new Event('change')); }};\
                     set('q-kind', '{kind}'); set('q-item', {}); set('q-reason', '{reason}');\
                     set('q-from', {from}); set('q-to', {to});",
                    CAMP.find(name).unwrap().0
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
            let rows = js(&client, "return btViewer.rows();").await;
            let agents: Vec<usize> = want.iter().map(|w| w.0).collect();
            assert_eq!(rows, json!(agents), "{kind} {name}");
            // The first match (the earliest tick, the lower id on a tie),
            // one click away.
            let earliest = want.iter().min_by_key(|&&(i, t)| (t, i)).unwrap();
            let first = client.find(Locator::Id("first-match")).await.unwrap();
            assert_eq!(
                first.text().await.unwrap(),
                format!("first match: #{} @ tick {}", earliest.0, earliest.1)
            );
            first.click().await.unwrap();
            let state = js(&client, "return btViewer.state();").await;
            assert_eq!(
                (state["agent"].clone(), state["cursor"].clone()),
                (json!(earliest.0), json!(earliest.1))
            );
            // And the lane marks where each agent first matched.
            let shown = js(&client, "return btViewer.rows().length;").await;
            assert_eq!(shown, json!(want.len()));
        }
        no_errors(&client).await;
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn screenshot_of_a_herd_with_its_overview_and_values() {
    const N: usize = 40;
    const TICKS: u32 = 600;
    let recorder = herd_recorder(N, TICKS, true);
    let json = recorder.export_compact().to_json();
    let graze = HERD.find("GRAZE").unwrap().0 as usize;
    let all = herd_truth(N, TICKS);
    let (watched, won) = (0..N)
        .find_map(|i| {
            first_activation(&all[i], graze)
                .filter(|&t| t > 150)
                .map(|t| (i, t))
        })
        .expect("a grazer grazes");
    let page = write_page(&out_dir("screenshot"), &json).unwrap();
    with_browser(|client| async move {
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        // A viewport of 1600 x 1000, whatever the window's frame takes.
        let inner = js(&client, "return [window.innerWidth, window.innerHeight];").await;
        let (w, h) = (inner[0].as_u64().unwrap(), inner[1].as_u64().unwrap());
        client
            .set_window_size((1600 + 1600 - w) as u32, (1000 + 1000 - h) as u32)
            .await
            .unwrap();
        let inner = js(&client, "return [window.innerWidth, window.innerHeight];").await;
        assert_eq!(inner, json!([1600, 1000]));
        js(&client, &format!("btViewer.selectAgent({watched});")).await;
        scrub_to(&client, won).await;
        hover_node(&client, graze).await;
        no_errors(&client).await;
        let png = client.screenshot().await.unwrap();
        std::fs::write(out_dir("screenshot").join("viewer.png"), &png).unwrap();
    });
}

/// An agent of long decider names and large decide values.
struct Wordy(f32);

behavior! { GO_ON: Wordy, tick: |_w, _cx| false }
decider! { A_DECIDER_WHOSE_NAME_GOES_ON_AND_ON_AND_ON: Wordy => GO_ON, decide: |w, _| w.0 * 1234567.0 }
decider! { SHORT: Wordy => GO_ON, decide: |w, _| w.0 * 98765.4 }
decider! { MIDDLING_NAME: Wordy => GO_ON, decide: |_, _| 0.5 }
decider! { WIDE_WIDE_WIDE_MMMM_WWWW: Wordy => GO_ON, decide: |w, _| w.0 * 7777777.0 }
group! { AN_INNER_GROUP_WITH_A_NAME_LONGER_THAN_MOST: Wordy, random [WIDE_WIDE_WIDE_MMMM_WWWW, MIDDLING_NAME] }
group! { WORDY_ROOT: Wordy, random [A_DECIDER_WHOSE_NAME_GOES_ON_AND_ON_AND_ON, SHORT, AN_INNER_GROUP_WITH_A_NAME_LONGER_THAN_MOST] }
tree! { WORDY: Wordy = WORDY_ROOT }

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn a_tree_boxs_name_and_decide_value_never_overlap() {
    let mut agents: Vec<Wordy> = (0..3).map(|i| Wordy(1.0 + i as f32)).collect();
    let mut memories: Vec<_> = (0..3).map(|i| WORDY.new_memory(i)).collect();
    let mut recorder = FlightRecorder::new(&WORDY, 3, Watch::All, Capacity::new(20, 32));
    for t in 0..20 {
        recorder.tick_all(&WORDY, &mut agents, &mut memories, |i, _| {
            TickInput::new(f64::from(t) * 0.1, 0.1).with_agent(i as u32)
        });
        // Each tick a redraw: the values change.
        agents.iter_mut().for_each(|a| a.0 *= 1.7);
    }
    let page = write_page(&out_dir("wordy"), &recorder.export().to_json()).unwrap();
    with_browser(|client| async move {
        client.goto(&file_url(&page)).await.unwrap();
        wait_ready(&client).await;
        let mut valued = 0;
        for agent in 0..3 {
            js(&client, &format!("btViewer.selectAgent({agent});")).await;
            for t in [0, 7, 19] {
                js(&client, &format!("btViewer.seek({t});")).await;
                // Per node: its box, name and value as drawn, in page pixels.
                let boxes = js(
                    &client,
                    "return [...document.querySelectorAll('#tree .node')].map(g => {\
                       const r = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };\
                       const v = g.querySelector('text.val');\
                       return { name: g.dataset.name, shown: g.querySelector('text:not(.val):not(.sub)').textContent,\
                                box: r(g.querySelector('rect')), text: r(g.querySelector('text:not(.val):not(.sub)')),\
                                val: v.textContent ? r(v) : null, value: v.textContent }; });",
                )
                .await;
                for node in boxes.as_array().unwrap() {
                    let f = |k: &str, i: usize| node[k][i].as_f64().unwrap();
                    let what = format!("{} at tick {t} of agent {agent}: {node}", node["name"]);
                    assert!(
                        f("text", 0) >= f("box", 0) && f("text", 2) <= f("box", 2) + 0.5,
                        "{what}"
                    );
                    if node["val"].is_null() {
                        continue;
                    }
                    valued += 1;
                    let disjoint = f("text", 2) <= f("val", 0)
                        || f("val", 2) <= f("text", 0)
                        || f("text", 3) <= f("val", 1)
                        || f("val", 3) <= f("text", 1);
                    assert!(disjoint, "name and value overlap: {what}");
                    assert!(f("val", 2) <= f("box", 2) + 0.5, "{what}");
                    // A name cut short still starts as the decider's name.
                    let shown = node["shown"].as_str().unwrap();
                    let name = node["name"].as_str().unwrap();
                    let kept = shown.trim_end_matches(|c: char| c != '…' && !name.contains(c));
                    assert!(
                        shown.starts_with(name) || name.starts_with(kept.trim_end_matches('…')),
                        "{what}"
                    );
                }
            }
        }
        assert!(valued > 20, "only {valued} values drawn");
        no_errors(&client).await;
    });
}
