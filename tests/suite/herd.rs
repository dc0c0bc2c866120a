//! The `herd` example, smaller: what a newcomer builds from the guide runs,
//! keeps the water hole's gate, and goes on exactly after a load in place.

#[path = "../../examples/herd/herd.rs"]
mod example;

use example as herd;

#[test]
#[cfg_attr(miri, ignore)] // too slow
fn the_herd_example_keeps_its_promises() {
    let dir = std::env::temp_dir().join(format!("bt-herd-{}", std::process::id()));
    let outcome = herd::run(&herd::Config {
        creatures: 40,
        ticks: 200,
        watched: 3,
        page: Some(&dir),
        print: false,
    });
    assert!(
        outcome.continued_exactly,
        "the loaded herd went its own way"
    );
    assert_eq!(outcome.most_drinking, 3, "the water hole fills to its gate");
    assert!(outcome.fled > 0 && outcome.drank > 0 && outcome.slept > 0);
    assert!(
        outcome.trace.starts_with("tick agent=3 t=10.000"),
        "{}",
        outcome.trace
    );
    let recording = std::fs::read_to_string(dir.join("recording.json")).unwrap();
    for named in ["\"thirst\"", "\"NIGHT\"", "\"PREDATOR\"", "\"DRINK\""] {
        assert!(recording.contains(named), "the recording names {named}");
    }
    assert!(dir.join("viewer.html").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
