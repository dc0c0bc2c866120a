//! Values given by name (from a file, a page, a console, a save) and the
//! checks that turn them into a tunable's bits, or into a [`TuneError`]
//! naming the tunable.

use alloc::borrow::Cow;
use alloc::string::String;
use core::fmt;

use super::{TunableKind, Tunables};

/// A value given by name ([`TreeShared::tune_named`](crate::TreeShared::tune_named)): from a file, a
/// page, a console.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum TuneValue {
    /// A number (for a float tunable; an int one takes it if whole).
    Float(f64),
    /// A whole number (for an int or a float tunable).
    Int(i64),
    /// Yes or no.
    Bool(bool),
    /// One of a choice tunable's names, as its `enum` spells it
    /// (`TuneValue::Name("Prone".into())`).
    Name(Cow<'static, str>),
}

impl fmt::Display for TuneValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TuneValue::Float(v) => write!(f, "{v}"),
            TuneValue::Int(v) => write!(f, "{v}"),
            TuneValue::Bool(v) => write!(f, "{v}"),
            TuneValue::Name(v) => write!(f, "\"{v}\""),
        }
    }
}

/// Why a tunable's value was not changed. Nothing was.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum TuneError {
    /// The tree has no tunable of that name.
    Unknown {
        /// The tree.
        tree: &'static str,
        /// The name given.
        name: String,
    },
    /// A tunable of another table than the tree's.
    OtherTable {
        /// The tree.
        tree: &'static str,
        /// The tunable.
        name: &'static str,
        /// Its table.
        table: &'static str,
    },
    /// A value of another type than the tunable's.
    WrongType {
        /// The tunable.
        name: &'static str,
        /// What it holds: `float`, `int`, `bool` or `choice`
        /// ([`TunableKind::name`]).
        expected: &'static str,
        /// The value given.
        value: TuneValue,
    },
    /// A value outside the tunable's range; for a choice, a name that is
    /// not one of its names.
    OutOfRange {
        /// The tunable.
        name: &'static str,
        /// The value given.
        value: TuneValue,
        /// Its kind, with the range (or the names) it allows.
        kind: TunableKind,
    },
}

impl fmt::Display for TuneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TuneError::Unknown { tree, name } => {
                write!(f, "tree `{tree}` has no tunable `{name}`")
            }
            TuneError::OtherTable { tree, name, table } => write!(
                f,
                "tunable `{name}` is of table `{table}`, not of tree `{tree}`'s"
            ),
            TuneError::WrongType {
                name,
                expected,
                value,
            } => {
                let a = if expected.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                };
                write!(f, "tunable `{name}` is {a} {expected}, not {value}")
            }
            TuneError::OutOfRange { name, value, kind } => {
                write!(f, "tunable `{name}`: {value} is ")?;
                write_allowed(f, *kind)
            }
        }
    }
}

/// What a tunable of kind `kind` allows, after "is": `outside 0..=1`,
/// `not a bool`, `not one of "Crouch", "Stand", "Prone"`.
pub(crate) fn write_allowed(f: &mut fmt::Formatter<'_>, kind: TunableKind) -> fmt::Result {
    match kind {
        TunableKind::Float { min, max } => write!(f, "outside {min}..={max}"),
        TunableKind::Int { min, max } => write!(f, "outside {min}..={max}"),
        TunableKind::Bool => f.write_str("not a bool"),
        TunableKind::Choice { names } => {
            f.write_str("not one of ")?;
            for (i, n) in names.iter().enumerate() {
                let sep = if i == 0 { "" } else { ", " };
                write!(f, "{sep}\"{n}\"")?;
            }
            Ok(())
        }
    }
}

impl core::error::Error for TuneError {}

/// The place and bits of the tunable `name` of `table` (of tree `tree`)
/// for `value`, checked as [`TreeShared::tune_named`](crate::TreeShared::tune_named) checks it.
pub(crate) fn checked_bits(
    tree: &'static str,
    table: &'static Tunables,
    name: &str,
    value: TuneValue,
) -> Result<(usize, u64), TuneError> {
    let index = table.find(name).ok_or_else(|| TuneError::Unknown {
        tree,
        name: name.into(),
    })?;
    let decl = &table.decls()[index];
    Ok((index, bits_for(decl.name, decl.kind, value)?))
}

/// The bits of `value` for a tunable of kind `kind`, checked.
pub(crate) fn bits_for(
    name: &'static str,
    kind: TunableKind,
    value: TuneValue,
) -> Result<u64, TuneError> {
    let bits = match (kind, &value) {
        (TunableKind::Float { .. }, TuneValue::Float(v)) => v.to_bits(),
        (TunableKind::Float { .. }, TuneValue::Int(v)) => (*v as f64).to_bits(),
        (TunableKind::Int { .. }, TuneValue::Int(v)) => *v as u64,
        (TunableKind::Int { .. }, &TuneValue::Float(v))
            if v >= i64::MIN as f64 && v < i64::MAX as f64 && (v as i64) as f64 == v =>
        {
            v as i64 as u64
        }
        (TunableKind::Bool, TuneValue::Bool(v)) => u64::from(*v),
        // A name not among the choices: past the last, which `allows`
        // refuses below.
        (TunableKind::Choice { names }, TuneValue::Name(n)) => names
            .iter()
            .position(|c| *c == n.as_ref())
            .unwrap_or(names.len())
            as u64,
        _ => {
            return Err(TuneError::WrongType {
                name,
                expected: kind.name(),
                value,
            });
        }
    };
    if kind.allows(bits) {
        Ok(bits)
    } else {
        Err(TuneError::OutOfRange { name, value, kind })
    }
}

/// The value of bits `bits` for a tunable of kind `kind`, as given by
/// name (a save writes it so).
#[cfg(feature = "serde")]
pub(crate) fn value_of(kind: TunableKind, bits: u64) -> TuneValue {
    match kind {
        TunableKind::Int { .. } => TuneValue::Int(bits as i64),
        TunableKind::Bool => TuneValue::Bool(bits != 0),
        TunableKind::Choice { names } => match names.get(bits as usize) {
            Some(n) => TuneValue::Name(Cow::Borrowed(n)),
            None => TuneValue::Int(bits as i64),
        },
        TunableKind::Float { .. } => TuneValue::Float(f64::from_bits(bits)),
    }
}
