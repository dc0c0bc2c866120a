//! Misuse of the saved page's finders: a behavior one agent of 1 000 runs,
//! the matches' order, the plots' labels of constant and tiny series.

use crate::webdriver;

use bt_core::{TickInput, behavior, decider, group, tree};
use bt_viewer::{AgentData, Capacity, DataCapacity, DataOut, FlightRecorder, Watch};
use serde_json::Value;
use webdriver::{js, until, with_browser};

#[derive(Default)]
struct Bot {
    id: u32,
    t: u32,
}

impl AgentData for Bot {
    fn record(&self, out: &mut DataOut<'_>) {
        out.num("grenades", 3.0);
        out.num("tiny", 4.7e-6);
    }
}

behavior! { RARE_ACT: Bot }
behavior! { EAT: Bot }
behavior! { WANDER: Bot }
decider! { RARE: Bot => RARE_ACT, when: |b, _| b.id == 777 && b.t >= 40 }
decider! { EAT_D: Bot => EAT, decide: |b, _| if (b.id + b.t) % 3 == 0 { 1.0 } else { 0.0 } }
decider! { WANDER_D: Bot => WANDER }
group! { ROOT: Bot, prioritized [RARE, EAT_D, WANDER_D] }
tree! { BOTS: Bot = ROOT }

/// A saved page of 1 000 agents, 60 ticks; agent 777 alone runs RARE,
/// from tick 40 on.
fn page() -> std::path::PathBuf {
    let n = 1_000;
    let mut bots: Vec<Bot> = (0..n).map(|id| Bot { id, t: 0 }).collect();
    let mut mems: Vec<_> = (0..n).map(|i| BOTS.new_memory(u64::from(i))).collect();
    let mut recorder = FlightRecorder::new(&BOTS, n as usize, Watch::All, Capacity::ticks(60))
        .with_data(DataCapacity::values(2));
    for t in 0..60 {
        for b in &mut bots {
            b.t = t;
        }
        recorder.tick_all_with_data(&BOTS, &mut bots, &mut mems, |_, _| {
            TickInput::new(f64::from(t) * 0.1, 0.1)
        });
    }
    let dir = std::env::temp_dir().join(format!("bt-finder-misuse-{}", std::process::id()));
    bt_viewer::write_page(&dir, &recorder.export_compact().to_json()).expect("the page")
}

#[test]
fn a_behavior_one_agent_of_1000_runs_can_be_seen_and_its_labels_are_right() {
    let page = page();
    with_browser((1400, 1000), |c| async move {
        c.goto(&format!("file://{}", page.display())).await.unwrap();
        until(
            &c,
            "return !!window.btViewer && window.btViewer.state().last >= 59",
            "the page opens",
        )
        .await;
        // The rare band: at least 3 px high at a tick it is run.
        let p = js(&c, "return window.btViewer.overviewPoint('RARE', 45)").await;
        println!("RARE band at 45: {p}");
        assert!(
            p["h"].as_f64().unwrap_or(0.0) >= 3.0,
            "RARE at tick 45: {p}"
        );
        // Its counts: exactly one agent from tick 40 on.
        let o = js(&c, "return window.btViewer.overview()").await;
        let first = o["first"].as_u64().unwrap();
        let rare: Vec<u64> = o["counts"]["RARE"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        let want: Vec<u64> = (first..60).map(|t| u64::from(t >= 40)).collect();
        assert_eq!(rare, want);
        // The plots' labels of agent 777: a constant 3 and 4.7e-6.
        js(&c, "window.btViewer.selectAgent(777); return true").await;
        until(
            &c,
            "return window.btViewer.plotLabels().length >= 2",
            "the plots",
        )
        .await;
        let labels = js(&c, "return window.btViewer.plotLabels()").await;
        println!("labels {labels}");
        let label = |name: &str| -> String {
            labels
                .as_array()
                .unwrap()
                .iter()
                .find(|l| l[0] == name)
                .map(|l| l[1].as_str().unwrap_or("").to_owned())
                .unwrap_or_default()
        };
        let g = label("grenades");
        assert!(
            g.contains('3') && !g.contains('4'),
            "grenades 3 is labelled {g:?}"
        );
        let tiny = label("tiny");
        assert!(
            tiny.contains("4.7") || tiny.contains("e-6") || tiny.contains("0.0000047"),
            "4.7e-6 is labelled {tiny:?}"
        );
        let errors: Value = js(&c, "return window.btErrors").await;
        assert_eq!(errors, Value::Array(vec![]), "{errors}");
    });
}
