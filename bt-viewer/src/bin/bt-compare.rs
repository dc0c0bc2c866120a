//! `bt-compare FIRST.json SECOND.json [--before TICK]`: compares two
//! recordings of one tree (a page's `recording.json`) and says which
//! agents decided otherwise, from which tick, and how.
//!
//! Exits 0 when no agent's decisions changed (before tick `TICK`, with
//! `--before`), 1 when some did, 2 when the files cannot be compared (not
//! recordings, two trees, or a tree whose structure changed). A CI job
//! runs it on a recording made before a change and one made after.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (files, before) = match args.as_slice() {
        [a, b] => ([a, b], None),
        [a, b, flag, tick] if flag == "--before" => match tick.parse::<u64>() {
            Ok(t) => ([a, b], Some(t)),
            Err(_) => return usage(&format!("`{tick}` is not a tick")),
        },
        _ => return usage("two recording files"),
    };
    let mut texts = Vec::new();
    for f in files {
        match std::fs::read_to_string(f) {
            Ok(t) => texts.push(t),
            Err(e) => {
                eprintln!("bt-compare: {f}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    match bt_viewer::compare(&texts[0], &texts[1]) {
        Ok(c) => {
            print!("{c}");
            let same = before.map_or_else(|| c.same(), |t| c.same_before(t));
            if same {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("bt-compare: {e}");
            ExitCode::from(2)
        }
    }
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("bt-compare: {problem}\nusage: bt-compare FIRST.json SECOND.json [--before TICK]");
    ExitCode::from(2)
}
