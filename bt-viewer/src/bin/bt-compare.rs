//! `bt-compare [--page DIR] FIRST.json SECOND.json [--before TICK]`:
//! compares two recordings of one tree (a page's `recording.json`) and
//! says which agents decided otherwise, from which tick, and how.
//!
//! Exits 0 when no agent's decisions changed (before tick `TICK`, with
//! `--before`), 1 when some did, 2 when the files cannot be compared (not
//! recordings, two trees, or a tree whose structure changed). A CI job
//! runs it on a recording made before a change and one made after.
//!
//! Two recordings that have no tick of an agent in common (each kept
//! ticks the other overwrote, or other agents) say nothing of the change:
//! that exits 2 too. `--help` prints the usage and exits 0.
//!
//! With `--page DIR`, it also writes `DIR/compare.html`, one
//! self-contained page with both recordings and the comparison (see
//! `bt_viewer::compare_page_with`), or, when the files cannot be
//! compared, saying why; the exit code is the same.

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: bt-compare [--page DIR] FIRST.json SECOND.json [--before TICK]";

const HELP: &str = "Compares two recordings of one tree and says which agents decided \
otherwise, from which tick, and how.

  --page DIR     also write DIR/compare.html, the page comparing the two runs
  --before TICK  exit 0 when no agent decided otherwise before TICK

Exits 0 when no agent's decisions changed, 1 when some did, 2 when the \
files cannot be compared (or have no tick of an agent in common).";

fn main() -> ExitCode {
    let mut files = Vec::new();
    let (mut before, mut page) = (None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--before" => match args.next().map(|t| t.parse::<u64>().map_err(|_| t)) {
                Some(Ok(t)) => before = Some(t),
                Some(Err(t)) => return usage(&format!("`{t}` is not a tick")),
                None => return usage("--before needs a tick"),
            },
            "-h" | "--help" => {
                println!("{USAGE}\n\n{HELP}");
                return ExitCode::SUCCESS;
            }
            "--page" => match args.next() {
                Some(dir) => page = Some(PathBuf::from(dir)),
                None => return usage("--page needs a directory"),
            },
            _ => files.push(arg),
        }
    }
    if files.len() != 2 {
        return usage("two recording files");
    }
    let mut texts = Vec::new();
    for f in &files {
        match std::fs::read_to_string(f) {
            Ok(t) => texts.push(t),
            Err(e) => {
                eprintln!("bt-compare: {f}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let result = match page {
        Some(dir) => {
            let labels = [files[0].as_str(), files[1].as_str()];
            match bt_viewer::write_compare_page(&dir, &texts[0], &texts[1], labels) {
                Ok((path, result)) => {
                    eprintln!("bt-compare: page written to {}", path.display());
                    result
                }
                Err(e) => {
                    eprintln!("bt-compare: {}: {e}", dir.display());
                    return ExitCode::from(2);
                }
            }
        }
        None => bt_viewer::compare(&texts[0], &texts[1]),
    };
    match result {
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
    eprintln!("bt-compare: {problem}\n{USAGE}");
    ExitCode::from(2)
}
