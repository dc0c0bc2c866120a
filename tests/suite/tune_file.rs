//! The tuning file: a tree's tunables read from a TOML file the game
//! watches; a save takes effect at the crowd's next tick, all of it or,
//! for a bad file, none of it.
//!
//! The tests write files in a folder of their own under the system's
//! temporary folder, and wait for the watcher with a deadline, never a
//! fixed sleep.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use bt_core::tune_file::Applied;
use bt_core::{
    TickInput, TreeShared, TunableKind, TuneFileError, TuningFile, group, leaf, tick_all, tree,
    tunables,
};

tunables! { pub CAMP_TUNING:
    /// Health fraction below which a scout flees.
    FLEE_BELOW: f64 = 0.25, 0.0..=1.0;
    /// Arrows a scout carries.
    ARROWS: i64 = 6, 1..=30;
    /// Whether scouts light fires.
    FIRES: bool = false;
    /// How scouts hold themselves.
    STANCE: enum Stance { Crouch, Stand, Prone } = Crouch;
}

tunables! { OTHER_TUNING:
    LOUD: bool = false;
}

/// What one tick of a scout read.
type Read = (f64, i64, bool, Stance);

#[derive(Default)]
struct Scout {
    health: f64,
    read: Vec<Read>,
}

leaf! { FLEE: Scout, when: |s, d| s.health < d.tuned(FLEE_BELOW) }
leaf! { KEEP_WATCH: Scout,
    tick: |s, cx| {
        s.read.push((cx.tuned(FLEE_BELOW), cx.tuned(ARROWS), cx.tuned(FIRES), cx.tuned(STANCE)));
        true
    },
}
group! { ROOT: Scout, prioritized [FLEE, KEEP_WATCH] }
tree! { CAMP: Scout = ROOT, memory: CampMemory, tunables: CAMP_TUNING }
tree! { LOUD_CAMP: Scout = ROOT, memory: LoudMemory, tunables: OTHER_TUNING }
tree! { BARE: Scout = KEEP_WATCH }

/// A folder of the test's own, removed when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new(test: &str) -> Folder {
        let dir = std::env::temp_dir().join(format!("bt-tune-{}-{test}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Folder(dir)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A camp of scouts of health `healths`.
fn camp(healths: &[f64]) -> (Arc<TreeShared>, Vec<Scout>, Vec<CampMemory>) {
    let shared = CAMP.new_shared(0);
    let scouts = healths
        .iter()
        .map(|&health| Scout {
            health,
            ..Scout::default()
        })
        .collect();
    let memories = (0..healths.len())
        .map(|i| CAMP.new_memory_in(&shared, i as u64))
        .collect();
    (shared, scouts, memories)
}

fn tick(scouts: &mut [Scout], memories: &mut [CampMemory]) {
    tick_all(&CAMP, scouts, memories, |_, _| TickInput::new(0.0, 0.1));
}

fn values(shared: &TreeShared) -> Read {
    (
        shared.tuned(FLEE_BELOW),
        shared.tuned(ARROWS),
        shared.tuned(FIRES),
        shared.tuned(STANCE),
    )
}

const DEFAULTS: Read = (0.25, 6, false, Stance::Crouch);

/// Saves `text` as an editor that saves by renaming does: a new file,
/// renamed over the old one.
fn save_by_rename(path: &Path, text: &str) {
    let new = path.with_extension("toml.new");
    fs::write(&new, text).unwrap();
    fs::rename(&new, path).unwrap();
}

/// The next outcome of `file`, polled until one comes, for at most 5 s.
#[track_caller]
fn next_outcome(file: &mut TuningFile) -> Result<Applied, TuneFileError> {
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(outcome) = file.poll() {
            return outcome;
        }
        assert!(
            Instant::now() < end,
            "no reading of {} within 5 s",
            file.path().display()
        );
        thread::sleep(Duration::from_millis(2));
    }
}

/// A good file is staged when it is read, and in effect from the crowd's
/// next tick: a decision changes because of it. A save while the game
/// runs takes effect the same way, and a key left out of it keeps its
/// value.
#[test]
#[cfg_attr(miri, ignore = "watches files, which Miri's isolation forbids")]
fn a_good_file_takes_effect_at_the_crowds_next_tick() {
    let folder = Folder::new("good");
    let path = folder.file("camp.toml");
    fs::write(&path, "# The designer's\nFLEE_BELOW = 0.5\nARROWS = 9\n").unwrap();
    let (shared, mut scouts, mut memories) = camp(&[0.3, 0.9, 1.0]);
    tick(&mut scouts, &mut memories);
    let flee = CAMP.find("FLEE");
    assert_ne!(memories[0].leaf(), flee);
    let mut file = TuningFile::watch(&path, [&shared]).unwrap();
    let applied = file.poll().unwrap().unwrap();
    assert_eq!(
        (applied.set, applied.changed),
        (2, vec!["FLEE_BELOW", "ARROWS"])
    );
    // Staged, not in effect before the tick.
    assert_eq!(values(&shared), DEFAULTS);
    assert!(file.poll().is_none());
    tick(&mut scouts, &mut memories);
    assert_eq!(memories[0].leaf(), flee);
    assert_ne!(memories[1].leaf(), flee);
    assert_eq!(
        scouts[2].read.last(),
        Some(&(0.5, 9, false, Stance::Crouch))
    );
    // The designer saves (in place): the second scout flees from the tick
    // after the save is read, not before.
    fs::write(&path, "FLEE_BELOW = 0.95\nSTANCE = \"Prone\"\n").unwrap();
    let applied = next_outcome(&mut file).unwrap();
    assert_eq!(applied.changed, ["FLEE_BELOW", "STANCE"]);
    assert_ne!(memories[1].leaf(), flee);
    tick(&mut scouts, &mut memories);
    assert_eq!(memories[1].leaf(), flee);
    // ARROWS, left out, keeps the 9 of the first file.
    assert_eq!(
        scouts[2].read.last(),
        Some(&(0.95, 9, false, Stance::Prone))
    );
    assert_eq!(shared.tuning_changes(), 4);
}

/// A bad file: the text after a good line, and the error it must give.
struct Refused {
    bad: &'static [u8],
    variant: &'static str,
    key: Option<&'static str>,
    line: usize,
    message: &'static str,
}

fn refused(
    bad: &'static [u8],
    variant: &'static str,
    key: Option<&'static str>,
    line: usize,
    message: &'static str,
) -> Refused {
    Refused {
        bad,
        variant,
        key,
        line,
        message,
    }
}

impl Refused {
    /// Loads the file into a fresh crowd: the error is the one expected,
    /// and nothing is staged, not even the good line before the bad one.
    #[track_caller]
    fn check(&self, folder: &Folder) {
        let path = folder.file("camp.toml");
        let mut text = b"FIRES = true\n".to_vec();
        text.extend_from_slice(self.bad);
        fs::write(&path, &text).unwrap();
        let (shared, _, _) = camp(&[]);
        let err = TuningFile::load(&path, [&shared]).unwrap_err();
        let said = err.to_string();
        let case = format!("{:?}: {said}", String::from_utf8_lossy(self.bad));
        let variant = match &err {
            TuneFileError::UnknownKey { .. } => "UnknownKey",
            TuneFileError::WrongType { .. } => "WrongType",
            TuneFileError::OutOfRange { .. } => "OutOfRange",
            TuneFileError::Syntax { .. } => "Syntax",
            _ => "another",
        };
        assert_eq!(variant, self.variant, "{case}");
        assert_eq!(
            (err.key(), err.line()),
            (self.key, Some(self.line)),
            "{case}"
        );
        assert_eq!(err.path(), Some(path.as_path()), "{case}");
        let folder = format!("{}{}", folder.0.display(), std::path::MAIN_SEPARATOR);
        let said = said.replace(&folder, "");
        assert!(said.starts_with(self.message), "{case}");
        assert!(!shared.apply_tuning(), "{case}");
        assert_eq!(values(&shared), DEFAULTS, "{case}");
    }
}

/// Each kind of bad file is a typed error naming the file, the key and
/// its line, and changes nothing: the good line before the bad one is not
/// staged either.
#[test]
#[cfg_attr(miri, ignore = "reads files, which Miri's isolation forbids")]
fn a_bad_file_is_refused_naming_its_key_and_line_and_changes_nothing() {
    let folder = Folder::new("bad");
    let path = folder.file("camp.toml");
    // After the good line: the bad text, the variant, key, line, message.
    #[rustfmt::skip]
    let cases = [
        refused(b"RANGE = 3", "UnknownKey", Some("RANGE"), 2,
         "camp.toml:2: tunables `CAMP_TUNING` have no `RANGE`"),
        refused(b"\nARROWS = \"many\"", "WrongType", Some("ARROWS"), 3,
         "camp.toml:3: tunable `ARROWS` is an int, not \"many\""),
        refused(b"ARROWS = 2.5", "WrongType", Some("ARROWS"), 2,
         "camp.toml:2: tunable `ARROWS` is an int, not 2.5"),
        refused(b"FLEE_BELOW = true", "WrongType", Some("FLEE_BELOW"), 2,
         "camp.toml:2: tunable `FLEE_BELOW` is a float, not true"),
        refused(b"ARROWS = [1, 2]", "WrongType", Some("ARROWS"), 2,
         "camp.toml:2: tunable `ARROWS` is an int, not [1, 2]"),
        refused(b"STANCE = 2", "WrongType", Some("STANCE"), 2,
         "camp.toml:2: tunable `STANCE` is a choice, not 2"),
        refused(b"[ARROWS]\nmany = 1", "WrongType", Some("ARROWS"), 2,
         "camp.toml:2: tunable `ARROWS` is an int, not [ARROWS]"),
        refused(b"ARROWS = 31", "OutOfRange", Some("ARROWS"), 2,
         "camp.toml:2: tunable `ARROWS`: 31 is outside 1..=30"),
        refused(b"FLEE_BELOW = 1.5", "OutOfRange", Some("FLEE_BELOW"), 2,
         "camp.toml:2: tunable `FLEE_BELOW`: 1.5 is outside 0..=1"),
        refused(b"FLEE_BELOW = nan", "OutOfRange", Some("FLEE_BELOW"), 2,
         "camp.toml:2: tunable `FLEE_BELOW`: nan is outside 0..=1"),
        refused(b"STANCE = \"Kneel\"", "OutOfRange", Some("STANCE"), 2,
         "camp.toml:2: tunable `STANCE`: \"Kneel\" is not one of \"Crouch\", \"Stand\", \"Prone\""),
        refused(b"\n\nARROWS = ", "Syntax", None, 4, "camp.toml:4: not TOML: "),
        refused(b"FIRES = false", "Syntax", None, 2, "camp.toml:2: not TOML: "),
        refused(b"# \xff\n", "Syntax", None, 2, "camp.toml:2: not TOML: not UTF-8 text"),
    ];
    for case in cases {
        case.check(&folder);
    }
    // A file that cannot be read: missing, or a folder.
    let (shared, _, _) = camp(&[]);
    for (unread, kind) in [
        (folder.file("none.toml"), Some(ErrorKind::NotFound)),
        (folder.0.clone(), None),
    ] {
        match TuningFile::load(&unread, [&shared]).unwrap_err() {
            TuneFileError::Read { path, error } => {
                assert_eq!(path, unread);
                if let Some(kind) = kind {
                    assert_eq!(error.kind(), kind);
                }
            }
            e => panic!("{e}"),
        }
    }
    assert!(!shared.apply_tuning());
    // Watched: the bad file is reported by `poll` and changes nothing;
    // the watching goes on, and the file made good is taken.
    fs::write(&path, "FIRES = true\nARROWS = 0\n").unwrap();
    let mut file = TuningFile::watch(&path, [&shared]).unwrap();
    let err = next_outcome(&mut file).unwrap_err();
    assert_eq!((err.key(), err.line()), (Some("ARROWS"), Some(2)));
    assert!(!shared.apply_tuning());
    fs::write(&path, "FIRES = true\nARROWS = 1\n").unwrap();
    assert_eq!(next_outcome(&mut file).unwrap().set, 2);
    assert!(shared.apply_tuning());
    assert_eq!(values(&shared), (0.25, 1, true, Stance::Crouch));
}

/// The file of version `k`: every value tells `k`.
fn version(k: i64) -> Read {
    let stance = [Stance::Crouch, Stance::Stand, Stance::Prone][k as usize % 3];
    (k as f64 / 100.0, k, k % 2 == 0, stance)
}

fn version_text(k: i64) -> String {
    let (flee, arrows, fires, stance) = version(k);
    format!(
        "# Version {k}\nFLEE_BELOW = {flee:?}\nARROWS = {arrows}\nFIRES = {fires}\nSTANCE = \"{stance:?}\"\n"
    )
}

/// A file rewritten again and again while the game runs: at each tick,
/// every scout reads the values of one version of the file, never some of
/// one and some of another, and the game ends with the last version's.
#[test]
#[cfg_attr(miri, ignore = "watches files, which Miri's isolation forbids")]
fn a_file_rewritten_while_the_game_runs_ends_with_the_last_files_values_never_a_mix() {
    const LAST: i64 = 20;
    let folder = Folder::new("rewritten");
    let path = folder.file("camp.toml");
    let (shared, mut scouts, mut memories) = camp(&[0.9, 0.9, 0.9]);
    let mut file = TuningFile::watch(&path, [&shared]).unwrap();
    assert!(matches!(file.poll(), Some(Err(TuneFileError::Read { .. }))));
    let writer = {
        let path = path.clone();
        thread::spawn(move || {
            for k in 1..=LAST {
                save_by_rename(&path, &version_text(k));
                // Now in a burst, now spaced beyond the debounce.
                thread::sleep(Duration::from_millis((k as u64 * 7) % 90));
            }
        })
    };
    let end = Instant::now() + Duration::from_secs(10);
    let mut taken = 0;
    loop {
        while let Some(outcome) = file.poll() {
            outcome.unwrap();
            taken += 1;
        }
        tick(&mut scouts, &mut memories);
        let now = *scouts[0].read.last().unwrap();
        for s in &scouts {
            assert_eq!(s.read.last(), Some(&now), "the scouts of one tick differ");
        }
        assert!(now == DEFAULTS || now == version(now.1), "a mix: {now:?}");
        if writer.is_finished() && now == version(LAST) {
            break;
        }
        assert!(Instant::now() < end, "still at {now:?} after 10 s");
        thread::sleep(Duration::from_millis(1));
    }
    writer.join().unwrap();
    assert!((1..=LAST as usize).contains(&taken), "{taken} readings");
    assert_eq!(values(&shared), version(LAST));
}

/// A file deleted is reported once and changes nothing; written again,
/// in place or by rename, it is read again.
#[test]
#[cfg_attr(miri, ignore = "watches files, which Miri's isolation forbids")]
fn a_deleted_file_is_watched_until_it_is_written_again() {
    let folder = Folder::new("deleted");
    let path = folder.file("camp.toml");
    let (shared, mut scouts, mut memories) = camp(&[0.9]);
    fs::write(&path, version_text(1)).unwrap();
    let mut file = TuningFile::watch(&path, [&shared]).unwrap();
    next_outcome(&mut file).unwrap();
    fs::remove_file(&path).unwrap();
    match next_outcome(&mut file) {
        Err(TuneFileError::Read { error, .. }) => assert_eq!(error.kind(), ErrorKind::NotFound),
        e => panic!("{e:?}"),
    }
    tick(&mut scouts, &mut memories);
    assert_eq!(values(&shared), version(1));
    fs::write(&path, version_text(2)).unwrap();
    next_outcome(&mut file).unwrap();
    tick(&mut scouts, &mut memories);
    assert_eq!(values(&shared), version(2));
    fs::remove_file(&path).unwrap();
    assert!(next_outcome(&mut file).is_err());
    save_by_rename(&path, &version_text(3));
    next_outcome(&mut file).unwrap();
    tick(&mut scouts, &mut memories);
    assert_eq!(scouts[0].read.last(), Some(&version(3)));
}

/// A save that changes nothing, or a file touched, reads the same content
/// and does nothing; the next real change is the next outcome.
#[test]
#[cfg_attr(miri, ignore = "watches files, which Miri's isolation forbids")]
fn a_save_that_changes_nothing_does_nothing() {
    let folder = Folder::new("unchanged");
    let path = folder.file("camp.toml");
    let (shared, _, _) = camp(&[]);
    fs::write(&path, version_text(4)).unwrap();
    let mut file = TuningFile::watch(&path, [&shared]).unwrap();
    file.poll().unwrap().unwrap();
    shared.apply_tuning();
    fs::write(&path, version_text(4)).unwrap();
    save_by_rename(&path, &version_text(4));
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(SystemTime::now())
        .unwrap();
    // Long enough for the watcher to have read the file again (it waits
    // out the debounce first): nothing comes of it.
    let quiet = Instant::now() + TuningFile::DEBOUNCE * 6;
    while Instant::now() < quiet {
        assert!(file.poll().is_none());
        thread::sleep(Duration::from_millis(2));
    }
    fs::write(&path, version_text(5)).unwrap();
    let applied = next_outcome(&mut file).unwrap();
    assert_eq!(applied.set, 4);
    assert_eq!(applied.changed, ["FLEE_BELOW", "ARROWS", "FIRES", "STANCE"]);
    assert!(shared.apply_tuning());
    assert_eq!(values(&shared), version(5));
}

/// A save of the crowd taken after a file changed its tunables keeps the
/// file's values (a choice by its name), and loads them into a new crowd.
#[test]
#[cfg_attr(miri, ignore = "reads files, which Miri's isolation forbids")]
fn a_save_after_a_file_change_keeps_the_files_values() {
    let folder = Folder::new("save");
    let path = folder.file("camp.toml");
    fs::write(&path, "FLEE_BELOW = 0.4\nSTANCE = \"Prone\"\n").unwrap();
    let (shared, mut scouts, mut memories) = camp(&[0.9]);
    TuningFile::load(&path, [&shared]).unwrap();
    tick(&mut scouts, &mut memories);
    let json = serde_json::to_string(&shared.snapshot(1.0)).unwrap();
    assert!(
        json.contains(r#"{"name":"STANCE","value":{"name":"Prone"}}"#),
        "{json}"
    );
    let (fresh, _, _) = camp(&[]);
    fresh
        .restore(&CAMP, 2.0, &mut serde_json::Deserializer::from_str(&json))
        .unwrap();
    assert_eq!(values(&fresh), (0.4, 6, false, Stance::Prone));
}

/// The starting file lists every tunable with its doc line, what it takes
/// and its default, and loads as the defaults; it is never written over.
#[test]
#[cfg_attr(miri, ignore = "writes files, which Miri's isolation forbids")]
fn the_starting_file_lists_every_tunable_and_loads_as_the_defaults() {
    let folder = Folder::new("defaults");
    let path = folder.file("camp.toml");
    TuningFile::write_defaults(&path, &CAMP_TUNING).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        "\
# The tunables of `CAMP_TUNING`.
# A value saved here takes effect at the crowd's next tick; a tunable
# left out of the file keeps the value it has.

# Health fraction below which a scout flees.
# A number from 0.0 to 1.0; default 0.25.
FLEE_BELOW = 0.25

# Arrows a scout carries.
# A whole number from 1 to 30; default 6.
ARROWS = 6

# Whether scouts light fires.
# true or false; default false.
FIRES = false

# How scouts hold themselves.
# One of \"Crouch\", \"Stand\", \"Prone\"; default \"Crouch\".
STANCE = \"Crouch\"
"
    );
    let (shared, _, _) = camp(&[]);
    shared.tune(ARROWS, 20).unwrap();
    shared.tune(STANCE, Stance::Stand).unwrap();
    shared.apply_tuning();
    let applied = TuningFile::load(&path, [&shared]).unwrap();
    assert_eq!(applied.changed, ["ARROWS", "STANCE"]);
    shared.apply_tuning();
    assert_eq!(values(&shared), DEFAULTS);
    fs::write(&path, "ARROWS = 3\n").unwrap();
    let err = TuningFile::write_defaults(&path, &CAMP_TUNING).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AlreadyExists);
    assert_eq!(fs::read_to_string(&path).unwrap(), "ARROWS = 3\n");
    assert_eq!(
        CAMP_TUNING.decls()[3].kind,
        TunableKind::Choice {
            names: &["Crouch", "Stand", "Prone"]
        }
    );
}

/// One file tunes crowds of one table, each of them; no crowd, a crowd
/// without tunables, crowds of two tables and a folder that does not
/// exist are errors saying so.
#[test]
#[cfg_attr(miri, ignore = "watches files, which Miri's isolation forbids")]
fn a_file_tunes_every_crowd_of_its_table_and_no_other() {
    let folder = Folder::new("crowds");
    let path = folder.file("camp.toml");
    fs::write(&path, "ARROWS = 12\n").unwrap();
    let (first, _, _) = camp(&[]);
    let (second, _, _) = camp(&[]);
    let crowds = vec![first, second];
    let mut file = TuningFile::watch(&path, &crowds).unwrap();
    assert_eq!(next_outcome(&mut file).unwrap().set, 1);
    for c in &crowds {
        c.apply_tuning();
        assert_eq!(c.tuned(ARROWS), 12);
    }
    let bare = Arc::new(TreeShared::new(&BARE, 0));
    let loud = LOUD_CAMP.new_shared(0);
    for (crowds, says) in [
        (Vec::<&Arc<TreeShared>>::new(), "no crowd to tune was given"),
        (
            vec![&bare],
            "tree `BARE` has no tunables to read from a file",
        ),
        (
            vec![&crowds[0], &loud],
            "crowds with tunables `CAMP_TUNING` and `OTHER_TUNING`: one file tunes one table",
        ),
    ] {
        let err = TuningFile::watch(&path, crowds.iter().copied()).unwrap_err();
        assert_eq!(err.to_string(), says);
        assert_eq!(
            TuningFile::load(&path, crowds).unwrap_err().to_string(),
            says
        );
    }
    let nowhere = folder.file("gone/camp.toml");
    let err = TuningFile::watch(&nowhere, [&crowds[0]]).unwrap_err();
    assert!(matches!(err, TuneFileError::Watch { .. }), "{err}");
}

/// A file moved to other crowds (a game that loaded its crowd into a new
/// one) stages its later readings there, and no longer on the first; a
/// crowd of another table, or no crowd, is refused and the file keeps its
/// crowds.
#[test]
#[cfg_attr(miri, ignore = "watches files, which Miri's isolation forbids")]
fn a_file_moved_to_a_new_crowd_stages_its_later_readings_there() {
    let folder = Folder::new("moved");
    let path = folder.file("camp.toml");
    fs::write(&path, version_text(1)).unwrap();
    let (old, _, _) = camp(&[]);
    let mut file = TuningFile::watch(&path, [&old]).unwrap();
    next_outcome(&mut file).unwrap();
    let (new, _, _) = camp(&[]);
    file.set_crowds([&new]).unwrap();
    // Nothing is read or staged by the move itself.
    assert!(!new.apply_tuning());
    let loud = LOUD_CAMP.new_shared(0);
    let err = file.set_crowds([&loud]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "crowds with tunables `CAMP_TUNING` and `OTHER_TUNING`: one file tunes one table"
    );
    let none: [&Arc<TreeShared>; 0] = [];
    assert_eq!(
        file.set_crowds(none).unwrap_err().to_string(),
        "no crowd to tune was given"
    );
    fs::write(&path, version_text(2)).unwrap();
    next_outcome(&mut file).unwrap();
    assert!(new.apply_tuning());
    assert_eq!(values(&new), version(2));
    old.apply_tuning();
    assert_eq!(values(&old), version(1));
}
