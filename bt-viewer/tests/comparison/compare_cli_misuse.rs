//! Attempts to break what the `bt-compare` command promises: exit 0 when
//! no agent decided otherwise (before `--before TICK`), 1 when some did,
//! 2 when the files cannot be compared; `--page DIR` writes
//! `DIR/compare.html` with the same exit code.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

use crate::misuse_common;
use misuse_common::{CRITTER, HERD, Run, after, before, grown, record};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bt-misuse-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bt-compare"))
        .args(args)
        .output()
        .unwrap()
}

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

fn text(o: &Output) -> String {
    format!(
        "[{:?}] out: {} err: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn cli_exit_codes_and_before() {
    let d = dir("codes");
    let a = write(&d, "a.json", &record(&CRITTER, Run::default(), before));
    let a2 = write(&d, "a2.json", &record(&CRITTER, Run::default(), before));
    let b = write(&d, "b.json", &record(&CRITTER, Run::default(), after));
    let o = run(&[&a, &a2]);
    assert_eq!(code(&o), Some(0), "{}", text(&o));
    let o = run(&[&a, &a]);
    assert_eq!(code(&o), Some(0), "one file twice: {}", text(&o));
    let o = run(&[&a, &b]);
    assert_eq!(code(&o), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("agent 2: from tick 12") && out.contains("agent 4: from tick 24"),
        "{out}"
    );
    // The first divergence is at 12: nothing changed before 12, something before 13.
    for (t, want) in [("0", 0), ("12", 0), ("13", 1), ("18446744073709551615", 1)] {
        let o = run(&[&a, &b, "--before", t]);
        assert_eq!(code(&o), Some(want), "--before {t}: {}", text(&o));
        // The option first, too.
        let o = run(&["--before", t, &a, &b]);
        assert_eq!(code(&o), Some(want), "--before {t} first: {}", text(&o));
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn cli_bad_arguments_exit_2_with_a_message() {
    let d = dir("args");
    let a = write(&d, "a.json", &record(&CRITTER, Run::default(), before));
    let missing = d.join("missing.json").to_string_lossy().into_owned();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("no files", vec![]),
        ("one file", vec![&a]),
        ("three files", vec![&a, &a, &a]),
        ("a missing file", vec![&a, &missing]),
        ("--before abc", vec![&a, &a, "--before", "abc"]),
        ("--before -1", vec![&a, &a, "--before", "-1"]),
        ("--before 1.5", vec![&a, &a, "--before", "1.5"]),
        ("--before with no tick", vec![&a, &a, "--before"]),
        ("--page with no dir", vec![&a, &a, "--page"]),
    ];
    for (what, args) in cases {
        let o = run(&args);
        assert_eq!(code(&o), Some(2), "{what}: {}", text(&o));
        assert!(!o.stderr.is_empty(), "{what}: says nothing");
    }
    // The message names the missing file.
    let o = run(&[&a, &missing]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("missing.json"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn cli_not_recordings_exit_2() {
    let d = dir("bad");
    let good_text = record(&CRITTER, Run::default(), before);
    let a = write(&d, "a.json", &good_text);
    let trunc = write(&d, "trunc.json", &good_text[..good_text.len() - 10]);
    let empty = write(&d, "empty.json", "");
    let other = write(&d, "other.json", &record(&HERD, Run::default(), before));
    let grown = write(
        &d,
        "grown.json",
        &record(&grown::CRITTER, Run::default(), before),
    );
    let binary = d.join("bin.json");
    std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x7b]).unwrap();
    let binary = binary.to_string_lossy().into_owned();
    // A bit flipped in the middle of the text (a digit becomes another
    // character).
    let mut bytes = good_text.clone().into_bytes();
    let at = bytes.len() / 2;
    let at = (at..bytes.len()).find(|&i| bytes[i] == b',').unwrap();
    bytes[at] ^= 0x40;
    let flipped = d.join("flipped.json");
    std::fs::write(&flipped, &bytes).unwrap();
    let flipped = flipped.to_string_lossy().into_owned();
    for (what, f) in [
        ("truncated", &trunc),
        ("empty", &empty),
        ("another tree", &other),
        ("another structure", &grown),
        ("not UTF-8", &binary),
        ("a comma flipped", &flipped),
    ] {
        let o = run(&[&a, f]);
        assert_eq!(code(&o), Some(2), "{what}: {}", text(&o));
        let o = run(&[f, &a]);
        assert_eq!(code(&o), Some(2), "{what} first: {}", text(&o));
        println!("{what}: {}", String::from_utf8_lossy(&o.stderr).trim());
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn cli_page_exit_codes_and_content() {
    let d = dir("page");
    let a = write(&d, "a.json", &record(&CRITTER, Run::default(), before));
    let b = write(&d, "b.json", &record(&CRITTER, Run::default(), after));
    let other = write(&d, "other.json", &record(&HERD, Run::default(), before));
    let out = d.join("out");
    let out_s = out.to_string_lossy().into_owned();
    let o = run(&["--page", &out_s, &a, &b]);
    assert_eq!(code(&o), Some(1), "{}", text(&o));
    let page = std::fs::read_to_string(out.join("compare.html")).unwrap();
    assert!(
        page.contains(r#"id="recording-2""#),
        "both recordings inside"
    );
    let o = run(&["--page", &out_s, &a, &a]);
    assert_eq!(code(&o), Some(0), "{}", text(&o));
    // Two trees: the page says why and holds neither recording; exit 2.
    let o = run(&["--page", &out_s, &a, &other]);
    assert_eq!(code(&o), Some(2), "{}", text(&o));
    let page = std::fs::read_to_string(out.join("compare.html")).unwrap();
    assert!(!page.contains(r#"id="recording-2""#) && page.contains("HERD"));
    // A page directory that is a file: exit 2, naming it.
    let o = run(&["--page", &a, &a, &b]);
    assert_eq!(code(&o), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("a.json"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn cli_help_prints_usage_and_exits_0() {
    let o = run(&["--help"]);
    assert_eq!(code(&o), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("usage"),
        "{}",
        text(&o)
    );
}

/// A compact recording whose run of repeated ticks claims 10^12 ticks:
/// a file that lies is "cannot be compared" (2), not a crash.
#[test]
fn cli_run_length_that_lies_exits_2() {
    let d = dir("lie");
    let compact = record(
        &CRITTER,
        Run {
            compact: true,
            ..Run::default()
        },
        |_, _| -1.0,
    );
    let mut v: serde_json::Value = serde_json::from_str(&compact).unwrap();
    let ticks = v["agents"][0]["ticks"].as_array_mut().unwrap();
    let run_at = ticks
        .iter()
        .position(|t| t.as_array().is_some_and(|a| a.len() == 2))
        .expect("a run");
    ticks[run_at][0] = json!(1_000_000_000_000u64);
    let a = write(&d, "a.json", &compact);
    let lie = write(&d, "lie.json", &v.to_string());
    let o = run(&[&a, &lie]);
    assert_eq!(code(&o), Some(2), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&d);
}

/// Runs `bt-compare` on `a_text` and `b_text` under `/usr/bin/time`:
/// the exit code, and the peak memory against the two files' size.
fn compare_memory(name: &str, a_text: &str, b_text: &str) -> (Option<i32>, f64) {
    let d = dir(name);
    let a = write(&d, "a.json", a_text);
    let b = write(&d, "b.json", b_text);
    let started = std::time::Instant::now();
    let o = Command::new("/usr/bin/time")
        .args([
            "-f",
            "maxrss_kb=%M",
            env!("CARGO_BIN_EXE_bt-compare"),
            &a,
            &b,
        ])
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let err = String::from_utf8_lossy(&o.stderr);
    let rss_kb: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("maxrss_kb="))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    let input_mb = (a_text.len() + b_text.len()) as f64 / 1e6;
    let rss_mb = rss_kb as f64 / 1e3;
    let ratio = rss_mb / input_mb;
    println!(
        "{name}: two files of {input_mb:.1} MB in all: {elapsed:?}, peak RSS {rss_mb:.0} MB ({ratio:.1}x the input)"
    );
    let _ = std::fs::remove_dir_all(&d);
    (code(&o), ratio)
}

/// Ten times a big crowd's figure, roughly: 1 000 agents × 300 ticks in
/// each file, every tick written whole. Prints the time and the peak
/// memory against the files' size.
#[test]
fn cli_scale_memory() {
    let run_ = Run {
        agents: 1000,
        ticks: 300,
        capacity: 300,
        ..Run::default()
    };
    let (code, ratio) = compare_memory(
        "scale",
        &record(&CRITTER, run_, before),
        &record(&CRITTER, run_, after),
    );
    assert_eq!(code, Some(1));
    // "A 6 MB input must not take 128 MB": no more than 21 times the input.
    assert!(ratio < 21.0, "{ratio:.1}x");
}

/// A quiet crowd, compacted: 10 000 agents × 600 ticks whose behavior
/// changes every 50 ticks, so each file is mostly runs. Runs are not
/// expanded: the memory stays a small multiple of the files.
#[test]
fn cli_scale_memory_of_a_quiet_crowd() {
    let run_ = Run {
        agents: 10_000,
        ticks: 600,
        capacity: 600,
        compact: true,
        ..Run::default()
    };
    let quiet = |i: usize, t: u64| {
        if ((t + i as u64 % 50) / 50).is_multiple_of(2) {
            1.0
        } else {
            0.0
        }
    };
    let (code, ratio) = compare_memory(
        "scale-quiet",
        &record(&CRITTER, run_, quiet),
        &record(&CRITTER, run_, |i, t| {
            if i == 7 && t == 300 { 0.0 } else { quiet(i, t) }
        }),
    );
    assert_eq!(code, Some(1));
    assert!(ratio < 21.0, "{ratio:.1}x");
}

/// Two recordings that share no tick of an agent (the second's ring kept
/// only ticks the first never reached) compare nothing: a CI job must not
/// pass on them.
#[test]
fn cli_recordings_with_no_tick_in_common_exit_2() {
    let d = dir("disjoint");
    let a = record(
        &CRITTER,
        Run {
            ticks: 10,
            ..Run::default()
        },
        before,
    );
    let b = record(
        &CRITTER,
        Run {
            ticks: 40,
            capacity: 10,
            ..Run::default()
        },
        after,
    );
    let (a, b) = (write(&d, "a.json", &a), write(&d, "b.json", &b));
    let o = run(&[&a, &b]);
    assert_eq!(code(&o), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("no tick of an agent in common"),
        "{}",
        text(&o)
    );
    // The same recording twice compares, and exits 0.
    assert_eq!(code(&run(&[&a, &a])), Some(0));
}
