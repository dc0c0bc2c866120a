//! Watching a tuning file: the system's notices about its folder, waited
//! out until they stop (a save is several of them), then the file read and
//! checked on a thread of its own, and handed to the game's `poll`.
//!
//! The folder is watched, not the file: an editor that saves by writing a
//! new file and renaming it over the old one replaces the file, and a
//! watch on the file itself would end with the old one.

use alloc::vec::Vec;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode, EventKind};
use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};

use super::TuneFileError;
use super::parse::{Checked, check};
use crate::decl::tune::Tunables;

/// How long the file's folder must be quiet before the file is read.
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(50);

/// How long a stream of notices may put off a reading.
const MOST: Duration = Duration::from_millis(500);

/// What the watching thread hears.
enum Notice {
    /// Something happened to the file (or may have: the system lost
    /// count).
    Changed,
    /// The watcher is dropped.
    Stop,
}

/// What a reading of the file found: compared with the last one, so that
/// a save that changes nothing does nothing.
#[derive(PartialEq)]
pub(crate) enum Seen {
    /// The file's bytes.
    Text(Vec<u8>),
    /// It could not be read, for this reason.
    Unread(io::ErrorKind),
}

/// Reads the file `path` and checks it against `table`.
pub(crate) fn read(
    path: &Path,
    table: &'static Tunables,
) -> (Seen, Result<Checked, TuneFileError>) {
    match std::fs::read(path) {
        Ok(bytes) => {
            let checked = check(path, &bytes, table);
            (Seen::Text(bytes), checked)
        }
        Err(error) => (
            Seen::Unread(error.kind()),
            Err(TuneFileError::Read {
                path: path.into(),
                error,
            }),
        ),
    }
}

/// A file being watched: the system's watcher, and the thread that reads
/// the file after a change.
pub(crate) struct Watch {
    watcher: Option<RecommendedWatcher>,
    notices: Sender<Notice>,
    /// In a mutex only so that a `TuningFile` is `Sync` (a Bevy resource,
    /// say): `next` takes `&mut self` and never locks it.
    found: Mutex<Receiver<Result<Checked, TuneFileError>>>,
    thread: Option<JoinHandle<()>>,
    /// The thread's end has been told.
    ended: bool,
}

impl Watch {
    /// Starts watching the file `path`, then reads it once: its first
    /// reading, and the watch.
    pub(crate) fn start(
        path: &Path,
        table: &'static Tunables,
    ) -> Result<(Result<Checked, TuneFileError>, Watch), TuneFileError> {
        let watch_error = |error| TuneFileError::Watch {
            path: path.into(),
            error,
        };
        let Some(name) = path.file_name().map(OsString::from) else {
            return Err(watch_error(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the path names no file",
            )));
        };
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let (notices, heard) = mpsc::channel();
        let tell = notices.clone();
        let mut watcher = notify::recommended_watcher(move |e: notify::Result<Event>| {
            // A lost notice (an error) may have been about the file.
            if e.map_or(true, |e| concerns(&e, &name)) {
                let _ = tell.send(Notice::Changed);
            }
        })
        .map_err(|e| watch_error(io::Error::other(e)))?;
        watcher
            .watch(folder, RecursiveMode::NonRecursive)
            .map_err(|e| watch_error(io::Error::other(e)))?;
        // Read after the watch starts: a change made in between is heard.
        let (seen, first) = read(path, table);
        let (tell_found, found) = mpsc::channel();
        let file = PathBuf::from(path);
        let thread = std::thread::Builder::new()
            .name("bt-tuning-file".into())
            .spawn(move || {
                watch(&heard, &tell_found, &file, table, seen);
            })
            .map_err(watch_error)?;
        Ok((
            first,
            Watch {
                watcher: Some(watcher),
                notices,
                found: Mutex::new(found),
                thread: Some(thread),
                ended: false,
            },
        ))
    }

    /// The next reading that differs from the one before, if any; the
    /// end of the watching thread once, as an error, should it stop.
    pub(crate) fn next(&mut self, path: &Path) -> Option<Result<Checked, TuneFileError>> {
        let found = self.found.get_mut().unwrap_or_else(PoisonError::into_inner);
        match found.try_recv() {
            Ok(found) => Some(found),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) if !self.ended => {
                self.ended = true;
                Some(Err(TuneFileError::Watch {
                    path: path.into(),
                    error: io::Error::other("the thread that watched the file stopped"),
                }))
            }
            Err(TryRecvError::Disconnected) => None,
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        drop(self.watcher.take());
        let _ = self.notices.send(Notice::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Whether `event` may be about the file named `name` of the folder: any
/// change to it (a write, a new file renamed over it, a removal), not the
/// opening and reading of it.
fn concerns(event: &Event, name: &OsString) -> bool {
    let change = match event.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    };
    change
        && (event.need_rescan()
            || event.paths.is_empty()
            || event.paths.iter().any(|p| p.file_name() == Some(name)))
}

/// The watching thread: after each notice, waits until the notices stop
/// for [`DEBOUNCE`], reads the file, and reads it again should a notice
/// come while it was read or just after (it was still being written), all
/// within [`MOST`] of the first notice; then sends what it found if it
/// differs from the last reading. Ends when told to stop.
fn watch(
    heard: &Receiver<Notice>,
    found: &Sender<Result<Checked, TuneFileError>>,
    path: &Path,
    table: &'static Tunables,
    mut seen: Seen,
) -> Option<()> {
    while let Notice::Changed = heard.recv().ok()? {
        let first = Instant::now();
        quiet(heard, first)?;
        let (mut now, mut checked) = read(path, table);
        while quiet(heard, first)? && first.elapsed() < MOST {
            (now, checked) = read(path, table);
        }
        if now != seen {
            seen = now;
            found.send(checked).ok()?;
        }
    }
    None
}

/// Waits until no notice comes for [`DEBOUNCE`], or until [`MOST`] after
/// `first`: whether one came, or `None` if told to stop.
fn quiet(heard: &Receiver<Notice>, first: Instant) -> Option<bool> {
    let mut any = false;
    loop {
        let wait = DEBOUNCE.min(MOST.saturating_sub(first.elapsed()));
        match heard.recv_timeout(wait) {
            Ok(Notice::Changed) if !wait.is_zero() => any = true,
            Ok(Notice::Changed) => return Some(true),
            Err(RecvTimeoutError::Timeout) => return Some(any),
            Ok(Notice::Stop) | Err(RecvTimeoutError::Disconnected) => return None,
        }
    }
}
