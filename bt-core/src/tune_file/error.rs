//! What a tuning file did ([`Applied`]) and why it did nothing
//! ([`TuneFileError`]).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::decl::tune::TunableKind;
use crate::decl::tune::value::write_allowed;

/// A tuning file taken: its values are staged on every crowd, in effect
/// from each crowd's next tick.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Applied {
    /// How many tunables the file sets.
    pub set: usize,
    /// The tunables whose value it changes (in some crowd, from the value
    /// in effect when it was taken), in the file's order.
    pub changed: Vec<&'static str>,
}

/// Why a tuning file was not taken, or could not be watched. A file that
/// is not taken changes nothing: not one of its values is staged.
#[derive(Debug)]
#[non_exhaustive]
pub enum TuneFileError {
    /// The file could not be read: it is missing (deleted, or not written
    /// yet), not a file, or not readable.
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// The file is not TOML (or not UTF-8 text).
    Syntax {
        /// The file.
        path: PathBuf,
        /// The line (from 1) where it stops being TOML.
        line: usize,
        /// What the TOML reader says.
        message: String,
    },
    /// A key that is not one of the table's tunables.
    UnknownKey {
        /// The file.
        path: PathBuf,
        /// Its line (from 1).
        line: usize,
        /// The key, as the file spells it.
        key: String,
        /// The table of tunables.
        table: &'static str,
    },
    /// A value of another type than its tunable's: text for a number, a
    /// number for a choice, an array, a table.
    WrongType {
        /// The file.
        path: PathBuf,
        /// Its line (from 1).
        line: usize,
        /// The tunable.
        key: &'static str,
        /// What it holds: `float`, `int`, `bool` or `choice`.
        expected: &'static str,
        /// The value, as the file writes it.
        found: String,
    },
    /// A value outside its tunable's range, or, for a choice, a name that
    /// is not one of its names.
    OutOfRange {
        /// The file.
        path: PathBuf,
        /// Its line (from 1).
        line: usize,
        /// The tunable.
        key: &'static str,
        /// The value, as the file writes it.
        found: String,
        /// The tunable's kind, with the range or the names it allows.
        kind: TunableKind,
    },
    /// The file's folder could not be watched (it does not exist, or the
    /// system refused), or the thread that watched it stopped.
    Watch {
        /// The file.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// No crowd was given, or one whose tree has no tunables.
    NoTunables {
        /// The tree without tunables; `None` when no crowd was given.
        tree: Option<&'static str>,
    },
    /// Crowds of trees with different tables: one file tunes one table.
    TablesDiffer {
        /// The first crowd's table.
        table: &'static str,
        /// The table of another crowd.
        other: &'static str,
    },
}

impl TuneFileError {
    /// The file at fault, if the error is about one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            TuneFileError::Read { path, .. }
            | TuneFileError::Syntax { path, .. }
            | TuneFileError::UnknownKey { path, .. }
            | TuneFileError::WrongType { path, .. }
            | TuneFileError::OutOfRange { path, .. }
            | TuneFileError::Watch { path, .. } => Some(path),
            TuneFileError::NoTunables { .. } | TuneFileError::TablesDiffer { .. } => None,
        }
    }

    /// The line at fault (from 1), if the error is about one.
    pub fn line(&self) -> Option<usize> {
        match self {
            TuneFileError::Syntax { line, .. }
            | TuneFileError::UnknownKey { line, .. }
            | TuneFileError::WrongType { line, .. }
            | TuneFileError::OutOfRange { line, .. } => Some(*line),
            _ => None,
        }
    }

    /// The key at fault, if the error is about one.
    pub fn key(&self) -> Option<&str> {
        match self {
            TuneFileError::UnknownKey { key, .. } => Some(key),
            TuneFileError::WrongType { key, .. } | TuneFileError::OutOfRange { key, .. } => {
                Some(key)
            }
            _ => None,
        }
    }
}

impl fmt::Display for TuneFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = self.path() {
            write!(f, "{}", path.display())?;
            if let Some(line) = self.line() {
                write!(f, ":{line}")?;
            }
            f.write_str(": ")?;
        }
        match self {
            TuneFileError::Read { error, .. } => write!(f, "cannot be read: {error}"),
            TuneFileError::Syntax { message, .. } => write!(f, "not TOML: {message}"),
            TuneFileError::UnknownKey { key, table, .. } => {
                write!(f, "tunables `{table}` have no `{key}`")
            }
            TuneFileError::WrongType {
                key,
                expected,
                found,
                ..
            } => {
                let a = if expected.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                };
                write!(f, "tunable `{key}` is {a} {expected}, not {found}")
            }
            TuneFileError::OutOfRange {
                key, found, kind, ..
            } => {
                write!(f, "tunable `{key}`: {found} is ")?;
                write_allowed(f, *kind)
            }
            TuneFileError::Watch { error, .. } => write!(f, "cannot be watched: {error}"),
            TuneFileError::NoTunables { tree: Some(tree) } => {
                write!(f, "tree `{tree}` has no tunables to read from a file")
            }
            TuneFileError::NoTunables { tree: None } => f.write_str("no crowd to tune was given"),
            TuneFileError::TablesDiffer { table, other } => write!(
                f,
                "crowds with tunables `{table}` and `{other}`: one file tunes one table"
            ),
        }
    }
}

impl std::error::Error for TuneFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TuneFileError::Read { error, .. } | TuneFileError::Watch { error, .. } => Some(error),
            _ => None,
        }
    }
}
