//! The live page's panel of tunables in a real browser (headless Chromium
//! driven through chromedriver): a threshold raised in the page changes
//! the running program's decisions from its next tick, and the timeline
//! marks the change at that tick; a value out of range is refused, naming
//! the tunable.
//!
//! Needs Debian's `chromium` and `chromium-driver`, as `tests/browser.rs`
//! does. Without them the test is reported as ignored, except under CI
//! (`CI` set), where it fails.

use crate::tuned;
use crate::webdriver;
use webdriver::{click, js, until};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bt_viewer::{Capacity, FlightRecorder, LiveServer, Watch};
use fantoccini::Client;
use serde_json::{Value, json};
use tuned::{DEER, herd, input, leaf_at};

fn with_browser<F>(test: impl FnOnce(Client) -> F)
where
    F: std::future::Future<Output = ()>,
{
    webdriver::with_browser((1400, 1000), test);
}

/// The spans of agent `id`'s lane as the page draws them: (leaf, from, to).
async fn spans(client: &Client, id: u32) -> Vec<(String, u64, u64)> {
    let lane = js(client, &format!("return btViewer.lane({id}).spans;")).await;
    lane.as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s[0].as_str().unwrap().to_owned(),
                s[1].as_u64().unwrap(),
                s[2].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Types `value` into tunable `name`'s field and presses its button.
async fn set(client: &Client, name: &str, value: &str) {
    js(
        client,
        &format!(
            "const f = document.querySelector('#tune-table tr[data-name=\"{name}\"] input');\
             f.value = '{value}'; f.dispatchEvent(new Event('input'));"
        ),
    )
    .await;
    click(
        client,
        &format!("#tune-table tr[data-name=\"{name}\"] button.tune-set"),
    )
    .await;
}

/// A row's note.
async fn note(client: &Client, name: &str) -> String {
    let script = format!(
        "return document.querySelector('#tune-table tr[data-name=\"{name}\"] .tune-note').textContent;"
    );
    js(client, &script).await.as_str().unwrap().to_owned()
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn a_threshold_raised_in_the_page_changes_the_next_tick_and_is_marked_on_the_timeline() {
    let mut server = LiveServer::start(0).expect("a loopback port");
    let url = server.url();
    // Deer 1 (health 0.28) grazes while FLEE_BELOW is 0.25.
    let (shared, mut deer, mut memories) = herd(&[0.1, 0.28, 0.9]);
    let mut recorder = FlightRecorder::new(&DEER, 3, Watch::All, Capacity::ticks(2000));
    with_browser(|client| async move {
        client.goto(&url).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while server.clients() == 0 {
            assert!(Instant::now() < deadline, "the page never followed");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // The program runs in its thread, one frame each 30 ms.
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let game = std::thread::spawn(move || {
            let mut t = 0;
            while !stopped.load(Ordering::Relaxed) && t < 5000 {
                recorder.tick_all(&DEER, &mut deer, &mut memories, |_, _| input(t));
                server.frame(&recorder);
                t += 1;
                std::thread::sleep(Duration::from_millis(30));
            }
            recorder
        });

        // The panel: each tunable with its doc line, kind, range and value.
        until(
            &client,
            "return document.querySelectorAll('#tune-table tr').length === 3 && \
             !document.getElementById('tune-panel').hidden && btViewer.state().last >= 5;",
            "the page never showed the tunables",
        )
        .await;
        let rows = js(
            &client,
            "return [...document.querySelectorAll('#tune-table tr')].map(r => \
             [...r.querySelectorAll('td.tune-name, td.tune-doc, td.tune-kind, td.tune-value')].map(d => d.textContent)\
             .concat([r.querySelector('input').type]));",
        )
        .await;
        assert_eq!(
            rows,
            json!([
                [
                    "FLEE_BELOW",
                    "Health fraction below which a deer flees.",
                    "float 0 … 1",
                    "0.25",
                    "number"
                ],
                [
                    "RUN_FOR",
                    "Metres a deer runs before it looks back.",
                    "int 1 … 500",
                    "40",
                    "number"
                ],
                [
                    "GRAZING",
                    "Whether deer graze at all.",
                    "bool",
                    "true",
                    "checkbox"
                ],
            ])
        );
        assert_eq!(spans(&client, 1).await[0].0, "GRAZE");

        // The threshold raised from the page.
        let sent = Instant::now();
        set(&client, "FLEE_BELOW", "0.3").await;
        until(
            &client,
            "return btViewer.tuneMarks().length === 1;",
            "the change was never marked on the timeline",
        )
        .await;
        let took = sent.elapsed();
        println!("from the click to the mark on the timeline: {took:?}");
        // The program takes it at its next frame (30 ms away) and the page
        // draws it at its next: 0.2 to 0.37 s on a loaded 2-core machine.
        assert!(took < Duration::from_millis(1200), "{took:?}");
        let marks = js(&client, "return btViewer.tuneMarks();").await;
        let at = marks[0]["tick"].as_u64().unwrap();
        assert_eq!(marks[0]["text"], json!("FLEE_BELOW 0.25 → 0.3"));
        // Deer 1 flees from that very tick: the first the program ticked
        // after it took the change.
        until(
            &client,
            &format!("return btViewer.state().last > {at};"),
            "no tick after the change",
        )
        .await;
        let lane = spans(&client, 1).await;
        assert_eq!(
            lane,
            [("GRAZE".into(), 0, at - 1), ("FLEE".into(), at, lane[1].2)],
            "{lane:?}"
        );
        until(
            &client,
            "return document.querySelector('#tune-table tr[data-name=\"FLEE_BELOW\"] .tune-value').textContent === '0.3';",
            "the value in effect was not shown",
        )
        .await;
        assert_eq!(
            note(&client, "FLEE_BELOW").await,
            format!("in effect from tick {at}")
        );
        // The tick's summary says so.
        js(
            &client,
            &format!("btViewer.selectAgent(1); btViewer.seek({at});"),
        )
        .await;
        let summary = js(
            &client,
            "return document.getElementById('tick-summary').textContent;",
        )
        .await;
        assert!(
            summary
                .as_str()
                .unwrap()
                .contains("tuned at this tick: FLEE_BELOW 0.25 → 0.3"),
            "{summary}"
        );

        // A value out of range is refused, naming the tunable and why; the
        // value stays.
        set(&client, "FLEE_BELOW", "1.5").await;
        until(
            &client,
            "return document.querySelector('#tune-table tr[data-name=\"FLEE_BELOW\"] .tune-note.refused') !== null;",
            "the refusal was not shown",
        )
        .await;
        assert_eq!(
            note(&client, "FLEE_BELOW").await,
            "refused: tunable `FLEE_BELOW`: 1.5 is outside 0..=1"
        );

        // A checkbox for a bool.
        click(&client, "#tune-table tr[data-name=\"GRAZING\"] input").await;
        until(
            &client,
            "return btViewer.tuneMarks().length === 2;",
            "the second change was never marked",
        )
        .await;
        assert_eq!(
            js(&client, "return btViewer.tuneMarks()[1].text;").await,
            json!("GRAZING true → false")
        );
        assert_eq!(js(&client, "return window.btErrors;").await, json!([]));

        stop.store(true, Ordering::Relaxed);
        let recorder = game.join().expect("the program");
        // The program's own recording agrees.
        let doc: Value = serde_json::from_str(&recorder.export().to_json()).unwrap();
        assert_eq!(doc["tuning"]["changes"][0]["tick"], json!(at));
        assert_eq!(leaf_at(&doc, 1, at - 1).as_deref(), Some("GRAZE"));
        assert_eq!(leaf_at(&doc, 1, at).as_deref(), Some("FLEE"));
        assert_eq!(shared.tuned(tuned::FLEE_BELOW), 0.3);
        assert!(!shared.tuned(tuned::GRAZING));
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn the_comparison_page_lists_the_tunables_that_differ_and_marks_their_changes() {
    // The same scenario twice; the second time the threshold is raised at
    // tick 8, and deer 1 flees from there.
    let run = |raise: bool| {
        tuned::record(&[0.1, 0.28, 0.9], 20, 20, |t, shared| {
            if raise && t == 8 {
                shared.tune(tuned::FLEE_BELOW, 0.3).unwrap();
            }
        })
        .export()
        .to_json()
    };
    let (before, after) = (run(false), run(true));
    let dir = webdriver::out_dir("compare-tuning");
    let (page, comparison) =
        bt_viewer::write_compare_page(&dir, &after, &before, ["after.json", "before.json"])
            .unwrap();
    assert_eq!(comparison.unwrap().tuning.len(), 1);
    with_browser(|client| async move {
        client.goto(&webdriver::file_url(&page)).await.unwrap();
        until(
            &client,
            "return document.body.dataset.compare === '1';",
            "the comparison never opened",
        )
        .await;
        let listed = js(
            &client,
            "return [...document.querySelectorAll('#cmp-tuning span')].map(s => s.textContent);",
        )
        .await;
        assert_eq!(
            listed,
            json!(["FLEE_BELOW: 0.25, 0.3 from tick 8 / 0.25 (first differs at tick 8)"])
        );
        // The first run's timeline marks its change; a click on the
        // listed tunable goes to its tick.
        js(&client, "btViewer.zoom(0, 19); btViewer.seek(0);").await;
        let marks = js(
            &client,
            "return btViewer.tuneMarks().map(m => [m.tick, m.text]);",
        )
        .await;
        assert_eq!(marks, json!([[8, "FLEE_BELOW 0.25 → 0.3"]]));
        click(&client, "#cmp-tuning span").await;
        assert_eq!(
            js(&client, "return btViewer.state().cursor;").await,
            json!(8)
        );
        assert_eq!(js(&client, "return window.btErrors;").await, json!([]));
        // A recording whose tuning is malformed is refused, saying so.
        let mut bad: Value = serde_json::from_str(&before).unwrap();
        bad["tuning"]["changes"] = json!([{"tick": "8"}]);
        let opened = client
            .execute(
                "const ok = btViewer.loadText(arguments[0], 'bad.json');\
                 return [ok, document.getElementById('message').textContent];",
                vec![json!(bad.to_string())],
            )
            .await
            .unwrap();
        assert_eq!(opened[0], json!(false));
        assert!(
            opened[1]
                .as_str()
                .unwrap()
                .starts_with("The recording's tuning is malformed."),
            "{opened}"
        );
    });
}
