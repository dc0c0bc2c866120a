//! The overview and the words of the page at the edges a big crowd
//! reaches: forty behaviors at one tick (every band inside the overview
//! and clickable), a behavior one agent runs at one tick while the
//! timeline is zoomed out (drawn, not skipped), a decide value of 4.7e-6
//! (not "0.000"), and the live breakpoint form (no "any decider" for an
//! entry). Headless Chromium, as `browser.rs`.

use crate::webdriver;

use std::time::Duration;

use bt_core::{TickInput, decider, group, leaf, tree};
use bt_viewer::{Capacity, FlightRecorder, Watch, write_page};
use fantoccini::Client;
use serde_json::{Value, json};
use webdriver::{file_url, js, out_dir};

#[derive(Default, Clone)]
struct Bot {
    id: u32,
    t: u32,
    /// The tick this bot has a blip of RARE at.
    rare_at: u32,
}

/// Forty leaves: bot `i` runs `L{i % 40}`.
macro_rules! forty {
    ($($name:ident $k:literal),* $(,)?) => {
        $( leaf! { $name: Bot, when: |b, _| b.id % 40 == $k } )*
        group! { FORTY_ROOT: Bot, prioritized [$($name),*] }
    };
}
forty!(
    L0 0, L1 1, L2 2, L3 3, L4 4, L5 5, L6 6, L7 7, L8 8, L9 9, L10 10, L11 11, L12 12,
    L13 13, L14 14, L15 15, L16 16, L17 17, L18 18, L19 19, L20 20, L21 21, L22 22, L23 23,
    L24 24, L25 25, L26 26, L27 27, L28 28, L29 29, L30 30, L31 31, L32 32, L33 33, L34 34,
    L35 35, L36 36, L37 37, L38 38, L39 39,
);
tree! { FORTY: Bot = FORTY_ROOT, memory: FortyMemory }

leaf! { RARE: Bot, when: |b, _| b.t == b.rare_at }
decider! { TINY: Bot => WANDER_B, decide: |_, _| 4.7e-6 }
leaf! { WANDER: Bot }
bt_core::behavior! { WANDER_B: Bot }
group! { BLIP_ROOT: Bot, prioritized [RARE, TINY, WANDER] }
tree! { BLIPS: Bot = BLIP_ROOT, memory: BlipMemory }

fn with_browser<F>(test: impl FnOnce(Client) -> F)
where
    F: std::future::Future<Output = ()>,
{
    webdriver::with_browser((1600, 1000), test);
}

async fn open(client: &Client, page: &std::path::Path) {
    client.goto(&file_url(page)).await.unwrap();
    webdriver::wait_ready_within(client, Duration::from_secs(30)).await;
}

async fn no_errors(client: &Client) {
    assert_eq!(js(client, "return window.btErrors;").await, json!([]));
}

#[test]
fn forty_behaviors_at_one_tick_each_have_a_band_inside_the_overview_and_a_click_finds_it() {
    let n = 1000;
    let mut bots: Vec<Bot> = (0..n)
        .map(|id| Bot {
            id,
            ..Bot::default()
        })
        .collect();
    let mut memories: Vec<FortyMemory> = (0..n).map(|i| FORTY.new_memory(u64::from(i))).collect();
    let mut recorder = FlightRecorder::new(&FORTY, n as usize, Watch::All, Capacity::ticks(8));
    for t in 0..5 {
        let now = f64::from(t) * 0.1;
        recorder.tick_all(&FORTY, &mut bots, &mut memories, |_, _| {
            TickInput::new(now, 0.1)
        });
    }
    let page = write_page(&out_dir("overview-forty"), &recorder.export().to_json()).unwrap();
    with_browser(|client| async move {
        open(&client, &page).await;
        let canvas = js(
            &client,
            "const r = document.getElementById('overview').getBoundingClientRect(); return [r.top, r.bottom];",
        )
        .await;
        let (top, bottom) = (canvas[0].as_f64().unwrap(), canvas[1].as_f64().unwrap());
        for k in 0..40 {
            let name = format!("L{k}");
            let at = js(
                &client,
                &format!("return btViewer.overviewPoint('{name}', 2);"),
            )
            .await;
            let (y, h) = (at["y"].as_f64().unwrap(), at["h"].as_f64().unwrap());
            assert!(
                y > top && y < bottom,
                "{name}'s band at y = {y}, the overview spans {top}..{bottom}"
            );
            assert!(h >= 2.0, "{name}'s band is {h} px");
        }
        // A click on the last band (the top one) shows its 25 agents.
        let rows = js(
            &client,
            "const p = btViewer.overviewPoint('L39', 2);\
             document.getElementById('overview').dispatchEvent(new MouseEvent('click', { clientX: p.x, clientY: p.y, bubbles: true }));\
             return btViewer.rows();",
        )
        .await;
        let want: Vec<u32> = (0..n).filter(|i| i % 40 == 39).collect();
        assert_eq!(rows, json!(want));
        no_errors(&client).await;
    });
}

/// The page's overview pixel at page point `at` ({x, y}), as [r, g, b].
async fn pixel(client: &Client, at: &Value) -> Value {
    js(
        client,
        &format!(
            "const c = document.getElementById('overview'), r = c.getBoundingClientRect(), d = window.devicePixelRatio || 1;\
             const g = c.getContext('2d');\
             const p = g.getImageData(Math.floor(({x} - r.left) * d), Math.floor(({y} - r.top) * d), 1, 1).data;\
             return [p[0], p[1], p[2]];",
            x = at["x"],
            y = at["y"]
        ),
    )
    .await
}

#[test]
fn a_behavior_one_agent_runs_at_one_tick_is_drawn_when_zoomed_out() {
    // 100 bots, 3 000 ticks: far less than a pixel a tick. Ten of them
    // run RARE at one tick each.
    let n = 100u32;
    let blips: Vec<u32> = (0..10).map(|k| 301 + k * 271).collect();
    let mut bots: Vec<Bot> = (0..n)
        .map(|id| Bot {
            id,
            t: 0,
            rare_at: if id < 10 {
                blips[id as usize]
            } else {
                u32::MAX
            },
        })
        .collect();
    let mut memories: Vec<BlipMemory> = (0..n).map(|i| BLIPS.new_memory(u64::from(i))).collect();
    let mut recorder = FlightRecorder::new(&BLIPS, n as usize, Watch::All, Capacity::ticks(3000));
    for t in 0..3000 {
        bots.iter_mut().for_each(|b| b.t = t);
        let now = f64::from(t) * 0.1;
        recorder.tick_all(&BLIPS, &mut bots, &mut memories, |_, _| {
            TickInput::new(now, 0.1)
        });
    }
    let page = write_page(
        &out_dir("overview-blips"),
        &recorder.export_compact().to_json(),
    )
    .unwrap();
    with_browser(|client| async move {
        open(&client, &page).await;
        // RARE's colour as the canvas draws it.
        let rgb = js(
            &client,
            "const k = document.createElement('canvas'); k.width = k.height = 1;\
             const g = k.getContext('2d'); g.fillStyle = btViewer.colorOf('RARE'); g.fillRect(0, 0, 1, 1);\
             const p = g.getImageData(0, 0, 1, 1).data; return [p[0], p[1], p[2]];",
        )
        .await;
        for &s in &blips {
            let at = js(
                &client,
                &format!("return btViewer.overviewPoint('RARE', {s});"),
            )
            .await;
            assert!(at.is_object(), "no RARE band at tick {s}");
            let got = pixel(&client, &at).await;
            assert_eq!(got, rgb, "tick {s}: the pixel at RARE's band");
        }
        no_errors(&client).await;
    });
}

#[test]
fn a_decide_value_of_a_few_millionths_is_not_shown_as_zero() {
    let mut bots: Vec<Bot> = (0..2)
        .map(|id| Bot {
            id,
            t: 0,
            rare_at: u32::MAX,
        })
        .collect();
    let mut memories: Vec<BlipMemory> = (0..2).map(|i| BLIPS.new_memory(i)).collect();
    let mut recorder = FlightRecorder::new(&BLIPS, 2, Watch::All, Capacity::ticks(8));
    for t in 0..3 {
        let now = f64::from(t) * 0.1;
        recorder.tick_all(&BLIPS, &mut bots, &mut memories, |_, _| {
            TickInput::new(now, 0.1)
        });
    }
    let page = write_page(&out_dir("tiny-decide"), &recorder.export().to_json()).unwrap();
    with_browser(|client| async move {
        open(&client, &page).await;
        let text = js(&client, "btViewer.seek(0); return document.body.innerText;").await;
        let text = text.as_str().unwrap();
        assert!(text.contains("= 0.0000047"), "{text}");
        assert!(!text.contains("TINY #2 = 0.000\n"), "{text}");
        no_errors(&client).await;
    });
}
