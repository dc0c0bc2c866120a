//! A tuning file (feature `tune-file`): a tree's tunables read from a TOML
//! file that the game watches, so that a designer's save takes effect at
//! the crowd's next tick.
//!
//! ```toml
//! # Health fraction below which a deer flees.
//! FLEE_BELOW = 0.3
//! RUN_FOR = 60
//! STANCE = "Prone"
//! ```
//!
//! The file sets tunables by their names, as declared; a float tunable
//! takes an integer, an int one a whole float, a choice one of its names
//! as a string. [`TuningFile::write_defaults`] writes a starting file with
//! every tunable, its doc lines, what it takes and its default.
//!
//! The contract:
//!
//! - **All or nothing.** A file is read and checked whole before any of
//!   its values is staged. A key that is not a tunable of the table, a
//!   value of another type or outside its range, text that is not TOML,
//!   and a file that cannot be read are each a [`TuneFileError`] naming
//!   the file, and the key and its line where there is one, and change
//!   nothing. The values of a good file are staged together on every
//!   crowd: a crowd's tick puts all of them in effect, never some.
//! - **A key left out keeps its value**: it does not go back to its
//!   default. The file is one way among others to change a tunable (a
//!   console, the game's own code, a loaded save), and a file that sets
//!   the few values a designer is working on must not undo the others.
//!   To go back to a default, write it: the starting file says each one.
//! - **Staged, in effect at the next tick.** As for
//!   [`TreeShared::tune`], the values of a file take effect when the
//!   crowd's next tick starts, for every agent of that tick alike; no
//!   agent's state is reset.
//! - **Watching.** [`TuningFile::watch`] reads the file at once and then
//!   after each change, on a thread of its own: it waits until the file's
//!   folder has been quiet for 50 ms (an editor's save is several
//!   writes), reads the file, reads it again if it changed while it was
//!   read or in the 50 ms after (half a second after the first change at
//!   most, should the changes never stop), and, if its content differs
//!   from the last reading, checks it. The game calls
//!   [`TuningFile::poll`] between frames; it stages what was read and
//!   says what it did. A save that changes nothing does nothing. The folder is watched, not the file,
//!   so a file deleted, or replaced by an editor that saves by renaming a
//!   new file over it, goes on being watched: a deletion is reported once
//!   as [`TuneFileError::Read`] and changes nothing, and the file written
//!   again is read again. The folder itself is watched where it was when
//!   the watching began: a folder renamed or deleted, and another put in
//!   its place, is not watched; make the `TuningFile` again.
//! - A file written in place (not renamed over the old one) by a program
//!   that pauses in the middle of its writing for longer than 50 ms can be
//!   read half-written, and its first half taken if it is good TOML; the
//!   rest is read when the writing ends. A tool that writes tuning files
//!   should write a new file and rename it over the old one.
//!
//! [`TreeShared::tune`]: crate::TreeShared::tune

use alloc::sync::Arc;
use alloc::vec::Vec;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::decl::tune::Tunables;
use crate::memory::shared::TreeShared;

mod defaults;
mod error;
mod parse;
mod watch;

pub use error::{Applied, TuneFileError};

use parse::Checked;
use watch::Watch;

/// A tuning file watched for a crowd, or several crowds of one tree: made
/// by [`watch`](Self::watch), read by [`poll`](Self::poll). It holds the
/// crowds' shared states (an `Arc` each) and is `Send` and `Sync`.
/// Dropping it stops the watching (and waits for its thread to end).
///
/// ```
/// use bt_core::{TickInput, TuningFile, group, leaf, tick_all, tree, tunables};
///
/// tunables! { pub HERD_TUNING:
///     /// Health fraction below which a deer flees.
///     FLEE_BELOW: f64 = 0.25, 0.0..=1.0;
/// }
/// #[derive(Default)]
/// struct Deer { health: f64 }
/// leaf! { FLEE: Deer, when: |d, x| d.health < x.tuned(FLEE_BELOW) }
/// leaf! { GRAZE: Deer }
/// group! { ROOT: Deer, prioritized [FLEE, GRAZE] }
/// tree! { HERD: Deer = ROOT, memory: HerdMemory, tunables: HERD_TUNING }
///
/// # let dir = std::env::temp_dir().join(format!("bt-doc-tuning-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let path = dir.join("herd.toml");
/// std::fs::write(&path, "FLEE_BELOW = 0.5\n")?;
///
/// let shared = HERD.new_shared(0);
/// let mut herd = vec![Deer { health: 0.4 }];
/// let mut memories = vec![HERD.new_memory_in(&shared, 0)];
/// let mut tuning = TuningFile::watch(&path, [&shared])?;
/// // Each frame: take what the designer saved, then tick.
/// while let Some(outcome) = tuning.poll() {
///     match outcome {
///         Ok(applied) => println!("tuning: {:?} changed", applied.changed),
///         Err(e) => eprintln!("tuning: {e}"), // nothing changed
///     }
/// }
/// tick_all(&HERD, &mut herd, &mut memories, |_, _| TickInput::new(0.0, 0.1));
/// assert_eq!(memories[0].leaf(), HERD.find("FLEE"));
/// # drop(tuning);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TuningFile {
    path: PathBuf,
    table: &'static Tunables,
    crowds: Vec<Arc<TreeShared>>,
    /// The outcome of the reading `watch` made, until `poll` gives it.
    first: Option<Result<Applied, TuneFileError>>,
    watch: Watch,
}

impl TuningFile {
    /// How long the file's folder must be quiet after a change before the
    /// file is read.
    pub const DEBOUNCE: core::time::Duration = watch::DEBOUNCE;

    /// Watches the tuning file `path` for `crowds` (one crowd: `[&shared]`;
    /// several crowds of one tree: `&crowds`). Reads it at once and stages
    /// its values, in effect from each crowd's next tick; the outcome of
    /// that reading is what the first [`poll`](Self::poll) returns (a file
    /// missing at first is [`TuneFileError::Read`] there, and is read when
    /// it is written). The file's folder must exist.
    ///
    /// # Errors
    /// [`TuneFileError::NoTunables`] for no crowd or a crowd of a tree
    /// without tunables, [`TuneFileError::TablesDiffer`] for crowds of
    /// trees with different tables, [`TuneFileError::Watch`] if the folder
    /// cannot be watched.
    pub fn watch<'a>(
        path: impl AsRef<Path>,
        crowds: impl IntoIterator<Item = &'a Arc<TreeShared>>,
    ) -> Result<Self, TuneFileError> {
        let path = path.as_ref().to_path_buf();
        let (table, crowds) = table_of(crowds)?;
        let (first, watch) = Watch::start(&path, table)?;
        let mut file = TuningFile {
            path,
            table,
            crowds,
            first: None,
            watch,
        };
        file.first = Some(first.map(|checked| file.stage(&checked)));
        Ok(file)
    }

    /// What happened to the file since the last call: `None` if nothing,
    /// else the outcome of one new reading, whose values, if it is good,
    /// are now staged on every crowd. Call it between frames, until it
    /// returns `None` (`while let Some(outcome) = file.poll()`): readings
    /// come in the order they were made, none left out.
    pub fn poll(&mut self) -> Option<Result<Applied, TuneFileError>> {
        if let Some(first) = self.first.take() {
            return Some(first);
        }
        let found = self.watch.next(&self.path)?;
        Some(found.map(|checked| self.stage(&checked)))
    }

    /// Stages the file's later readings on `crowds` instead of the crowds
    /// it was given: for a game that replaces a crowd's shared state with
    /// a new one (a load into a crowd of its own) and goes on watching the
    /// same file. Nothing is read or staged now, and the watching goes on
    /// as it was: a reading not yet polled is staged on `crowds` when
    /// [`poll`](Self::poll) gives it, the first reading of
    /// [`watch`](Self::watch) excepted, which was staged when it was made.
    ///
    /// # Errors
    /// As [`watch`](Self::watch) for the crowds, and
    /// [`TuneFileError::TablesDiffer`] for crowds of a tree with another
    /// table than the file's; the file keeps its crowds then.
    pub fn set_crowds<'a>(
        &mut self,
        crowds: impl IntoIterator<Item = &'a Arc<TreeShared>>,
    ) -> Result<(), TuneFileError> {
        let (table, crowds) = table_of(crowds)?;
        if !core::ptr::eq(table, self.table) {
            return Err(TuneFileError::TablesDiffer {
                table: self.table.name(),
                other: table.name(),
            });
        }
        self.crowds = crowds;
        Ok(())
    }

    /// The file watched.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The table of tunables it sets.
    pub fn tunables(&self) -> &'static Tunables {
        self.table
    }

    /// Reads the tuning file `path` once, without watching it, and stages
    /// its values on `crowds`, as [`watch`](Self::watch) does.
    ///
    /// # Errors
    /// As [`watch`](Self::watch) for the crowds; any fault of the file as
    /// a [`TuneFileError`] naming it (nothing is staged then).
    pub fn load<'a>(
        path: impl AsRef<Path>,
        crowds: impl IntoIterator<Item = &'a Arc<TreeShared>>,
    ) -> Result<Applied, TuneFileError> {
        let path = path.as_ref();
        let (table, crowds) = table_of(crowds)?;
        let checked = watch::read(path, table).1?;
        Ok(stage_on(&crowds, table, &checked))
    }

    /// Writes a starting tuning file at `path`: every tunable of `table`
    /// at its default, each under its doc lines and a line saying what it
    /// takes. Never writes over a file: a game may call it at each start.
    ///
    /// # Errors
    /// The file system's, and [`io::ErrorKind::AlreadyExists`] if there is
    /// a file at `path` already (it is left as it is).
    pub fn write_defaults(path: impl AsRef<Path>, table: &Tunables) -> io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)?;
        file.write_all(Self::defaults(table).as_bytes())
    }

    /// The text [`write_defaults`](Self::write_defaults) writes.
    pub fn defaults(table: &Tunables) -> alloc::string::String {
        defaults::text(table)
    }

    fn stage(&self, checked: &Checked) -> Applied {
        stage_on(&self.crowds, self.table, checked)
    }
}

impl core::fmt::Debug for TuningFile {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TuningFile")
            .field("path", &self.path)
            .field("tunables", &self.table.name())
            .field("crowds", &self.crowds.len())
            .finish_non_exhaustive()
    }
}

/// The table of `crowds`, checked to be one, and the crowds.
fn table_of<'a>(
    crowds: impl IntoIterator<Item = &'a Arc<TreeShared>>,
) -> Result<(&'static Tunables, Vec<Arc<TreeShared>>), TuneFileError> {
    let crowds: Vec<Arc<TreeShared>> = crowds.into_iter().cloned().collect();
    let mut table: Option<&'static Tunables> = None;
    for crowd in &crowds {
        let Some(own) = crowd.tunables() else {
            return Err(TuneFileError::NoTunables {
                tree: Some(crowd.tree_name()),
            });
        };
        match table {
            Some(t) if !core::ptr::eq(t, own) => {
                return Err(TuneFileError::TablesDiffer {
                    table: t.name(),
                    other: own.name(),
                });
            }
            _ => table = Some(own),
        }
    }
    match table {
        Some(t) => Ok((t, crowds)),
        None => Err(TuneFileError::NoTunables { tree: None }),
    }
}

/// Stages the checked values `checked` of `table` on every crowd, together.
fn stage_on(crowds: &[Arc<TreeShared>], table: &'static Tunables, checked: &Checked) -> Applied {
    let changed = checked
        .iter()
        .filter(|&&(i, bits)| crowds.iter().any(|c| c.tuned_bits(i) != Some(bits)))
        .map(|&(i, _)| table.decls()[i].name)
        .collect();
    for crowd in crowds {
        crowd.stage_together(checked);
    }
    Applied {
        set: checked.len(),
        changed,
    }
}

#[cfg(test)]
mod tests {
    /// A game may keep it anywhere: in a Bevy resource, in a value shared
    /// by threads.
    #[test]
    fn a_tuning_file_can_be_kept_by_any_thread() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<super::TuningFile>();
    }
}
