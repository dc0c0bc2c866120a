//! A herd of 200 creatures that eat, sleep, drink at a water hole three at
//! a time and flee a predator (a stimulus the world sets on them): one
//! creature's decisions printed as a trace, the crowd saved at tick 100
//! and loaded back into the running game at tick 200, where it goes on
//! exactly as it did from the save, and five creatures recorded for the
//! decision viewer (written under `target/herd/`).
//!
//! `cargo run --example herd`

mod herd;

fn main() {
    let dir = std::path::Path::new("target/herd");
    let outcome = herd::run(&herd::Config {
        creatures: 200,
        ticks: 200,
        watched: 7,
        page: Some(dir),
        print: true,
    });
    println!(
        "\ncreature 7's decisions, traced from tick 100:\n{}",
        outcome.trace
    );
    println!(
        "{} fled a predator, {} drank (at most {} at once), {} slept",
        outcome.fled, outcome.drank, outcome.most_drinking, outcome.slept
    );
    assert!(
        outcome.continued_exactly,
        "the loaded herd went its own way"
    );
    println!("the loaded herd made the same decisions again, creature for creature");
}
