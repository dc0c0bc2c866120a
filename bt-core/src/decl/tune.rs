//! Tunables: named, typed values declared beside a tree ([`tunables!`]),
//! read by its closures through the tick's context, and changed while the
//! game runs, without a rebuild.
//!
//! [`tunables!`]: crate::tunables

use alloc::boxed::Box;
use alloc::string::String;
use core::fmt;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicBool, AtomicU64};

use super::msg::Msg;
use crate::raw::TunedSlots;

/// What a tunable holds, and the values it may take.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum TunableKind {
    /// A number, read as `f64`, from `min` to `max`.
    Float {
        /// The least value.
        min: f64,
        /// The greatest value.
        max: f64,
    },
    /// A whole number, read as `i64`, from `min` to `max`.
    Int {
        /// The least value.
        min: i64,
        /// The greatest value.
        max: i64,
    },
    /// Yes or no, read as `bool`.
    Bool,
}

impl TunableKind {
    /// The kind's name, as errors give it: `float`, `int` or `bool`.
    pub const fn name(self) -> &'static str {
        match self {
            TunableKind::Float { .. } => "float",
            TunableKind::Int { .. } => "int",
            TunableKind::Bool => "bool",
        }
    }

    /// Whether the value of bits `bits` is one this kind may take.
    pub const fn allows(self, bits: u64) -> bool {
        match self {
            TunableKind::Float { min, max } => {
                let v = f64::from_bits(bits);
                v >= min && v <= max
            }
            TunableKind::Int { min, max } => {
                let v = bits as i64;
                v >= min && v <= max
            }
            TunableKind::Bool => bits <= 1,
        }
    }
}

/// One tunable as [`tunables!`](crate::tunables) declares it.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct TunableDecl {
    /// Its name, as the declaration spells it (`GRENADE_COOLDOWN`).
    pub name: &'static str,
    /// Its doc comment, trimmed of the `///`.
    pub doc: &'static str,
    /// What it holds and its range.
    pub kind: TunableKind,
    /// Its default value, as bits ([`TunableValue::to_bits`]).
    pub default: u64,
}

impl TunableDecl {
    /// A float tunable.
    pub const fn float(
        name: &'static str,
        doc: &'static str,
        default: f64,
        min: f64,
        max: f64,
    ) -> Self {
        TunableDecl {
            name,
            doc,
            kind: TunableKind::Float { min, max },
            default: default.to_bits(),
        }
    }

    /// An int tunable.
    pub const fn int(
        name: &'static str,
        doc: &'static str,
        default: i64,
        min: i64,
        max: i64,
    ) -> Self {
        TunableDecl {
            name,
            doc,
            kind: TunableKind::Int { min, max },
            default: default as u64,
        }
    }

    /// A bool tunable.
    pub const fn bool(name: &'static str, doc: &'static str, default: bool) -> Self {
        TunableDecl {
            name,
            doc,
            kind: TunableKind::Bool,
            default: default as u64,
        }
    }
}

/// The tunables of a tree, as [`tunables!`](crate::tunables) declares them:
/// the static that `tree!`'s `tunables:` key names.
#[derive(Debug)]
pub struct Tunables {
    name: &'static str,
    decls: &'static [TunableDecl],
    /// The module the table is declared in (`tunables!` sets it).
    module: &'static str,
}

impl Tunables {
    /// The table `name` of `decls`, checked at compile time: names given
    /// once, ranges that hold something, defaults within them.
    ///
    /// # Panics
    /// (At compile time, in a `static`.) On a name given twice, a range
    /// whose least value is above its greatest or not a number, or a
    /// default outside its range, naming the tunable.
    pub const fn new(name: &'static str, decls: &'static [TunableDecl]) -> Self {
        let mut i = 0;
        while i < decls.len() {
            let d = &decls[i];
            let range_holds = match d.kind {
                TunableKind::Float { min, max } => min <= max,
                TunableKind::Int { min, max } => min <= max,
                TunableKind::Bool => true,
            };
            if !range_holds {
                tunable_range_empty(name, d.name);
            }
            if !d.kind.allows(d.default) {
                tunable_default_outside(name, d.name);
            }
            let mut j = 0;
            while j < i {
                if same(decls[j].name, d.name) {
                    tunable_twice(name, d.name);
                }
                j += 1;
            }
            i += 1;
        }
        assert!(
            decls.len() <= u16::MAX as usize,
            "tunables: more than 65 535 of them"
        );
        Tunables {
            name,
            decls,
            module: "",
        }
    }

    /// The table, declared in module `module` (`tunables!` gives its
    /// `module_path!()`): what tells two tables of one name apart at
    /// compile time.
    #[doc(hidden)]
    pub const fn __in(mut self, module: &'static str) -> Self {
        self.module = module;
        self
    }

    /// Whether `other` is this table, as far as a `const fn` can tell:
    /// the same name, declared in the same module.
    pub(crate) const fn is(&self, other: &Tunables) -> bool {
        same(self.name, other.name) && same(self.module, other.module)
    }

    /// The table's name (the static's).
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Every tunable, in the order declared.
    pub const fn decls(&self) -> &'static [TunableDecl] {
        self.decls
    }

    /// How many tunables the table has.
    pub const fn len(&self) -> usize {
        self.decls.len()
    }

    /// Whether the table has none.
    pub const fn is_empty(&self) -> bool {
        self.decls.is_empty()
    }

    /// The place of the tunable named `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.decls.iter().position(|d| d.name == name)
    }
}

/// Whether two strings are equal, in a `const fn`.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for i64 {}
    impl Sealed for bool {}
}

/// A type a tunable is read as: `f64`, `i64` or `bool`.
pub trait TunableValue: Copy + fmt::Debug + sealed::Sealed + 'static {
    /// The value of bits `bits`.
    fn from_bits(bits: u64) -> Self;
    /// The value's bits.
    fn to_bits(self) -> u64;
    /// The value, as given by name.
    fn tune_value(self) -> TuneValue;
}

impl TunableValue for f64 {
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    fn tune_value(self) -> TuneValue {
        TuneValue::Float(self)
    }
}

impl TunableValue for i64 {
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        bits as i64
    }
    fn to_bits(self) -> u64 {
        self as u64
    }
    fn tune_value(self) -> TuneValue {
        TuneValue::Int(self)
    }
}

impl TunableValue for bool {
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        bits != 0
    }
    fn to_bits(self) -> u64 {
        u64::from(self)
    }
    fn tune_value(self) -> TuneValue {
        TuneValue::Bool(self)
    }
}

/// One tunable of a table, typed: what closures read
/// (`cx.tuned(GRENADE_COOLDOWN)`) and code changes. Made by
/// [`tunables!`](crate::tunables), one `const` per tunable.
pub struct Tunable<T: TunableValue> {
    table: &'static Tunables,
    index: u16,
    _value: PhantomData<fn() -> T>,
}

impl<T: TunableValue> Clone for Tunable<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: TunableValue> Copy for Tunable<T> {}

impl<T: TunableValue> fmt::Debug for Tunable<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::{}", self.table.name, self.name())
    }
}

impl<T: TunableValue> Tunable<T> {
    #[doc(hidden)]
    pub const fn __new(table: &'static Tunables, index: u16) -> Self {
        Tunable {
            table,
            index,
            _value: PhantomData,
        }
    }

    /// Its table.
    pub const fn table(self) -> &'static Tunables {
        self.table
    }

    /// Its place in its table.
    pub const fn index(self) -> usize {
        self.index as usize
    }

    /// Its declaration.
    pub const fn decl(self) -> &'static TunableDecl {
        &self.table.decls[self.index as usize]
    }

    /// Its name.
    pub const fn name(self) -> &'static str {
        self.decl().name
    }

    /// Its default value.
    pub fn default_value(self) -> T {
        T::from_bits(self.decl().default)
    }
}

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

/// A value given by name ([`TreeShared::tune_named`](crate::TreeShared::tune_named)): from a file, a
/// page, a console.
#[derive(Clone, Copy, Debug, PartialEq)]
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
}

impl fmt::Display for TuneValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TuneValue::Float(v) => write!(f, "{v}"),
            TuneValue::Int(v) => write!(f, "{v}"),
            TuneValue::Bool(v) => write!(f, "{v}"),
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
        /// What it holds: `float`, `int` or `bool`.
        expected: &'static str,
        /// The value given.
        value: TuneValue,
    },
    /// A value outside the tunable's range.
    OutOfRange {
        /// The tunable.
        name: &'static str,
        /// The value given.
        value: TuneValue,
        /// Its kind, with the range.
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
            } => write!(f, "tunable `{name}` is a {expected}, not {value}"),
            TuneError::OutOfRange { name, value, kind } => match kind {
                TunableKind::Float { min, max } => {
                    write!(f, "tunable `{name}`: {value} is outside {min}..={max}")
                }
                TunableKind::Int { min, max } => {
                    write!(f, "tunable `{name}`: {value} is outside {min}..={max}")
                }
                TunableKind::Bool => write!(f, "tunable `{name}`: {value} is not a bool"),
            },
        }
    }
}

impl core::error::Error for TuneError {}

/// The bits of `value` for a tunable of kind `kind`, checked.
pub(crate) fn bits_for(
    name: &'static str,
    kind: TunableKind,
    value: TuneValue,
) -> Result<u64, TuneError> {
    let bits = match (kind, value) {
        (TunableKind::Float { .. }, TuneValue::Float(v)) => v.to_bits(),
        (TunableKind::Float { .. }, TuneValue::Int(v)) => (v as f64).to_bits(),
        (TunableKind::Int { .. }, TuneValue::Int(v)) => v as u64,
        (TunableKind::Int { .. }, TuneValue::Float(v))
            if v >= i64::MIN as f64 && v < i64::MAX as f64 && (v as i64) as f64 == v =>
        {
            v as i64 as u64
        }
        (TunableKind::Bool, TuneValue::Bool(v)) => u64::from(v),
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

const fn tunable_range_empty(table: &str, name: &str) -> ! {
    let msg = Msg::new()
        .s("tunables `")
        .s(table)
        .s("`: tunable `")
        .s(name)
        .s("` has a range with nothing in it (its least value is above its greatest, or not a number)");
    panic!("{}", msg.text())
}

const fn tunable_default_outside(table: &str, name: &str) -> ! {
    let msg = Msg::new()
        .s("tunables `")
        .s(table)
        .s("`: the default of tunable `")
        .s(name)
        .s("` is outside its range");
    panic!("{}", msg.text())
}

const fn tunable_twice(table: &str, name: &str) -> ! {
    let msg = Msg::new()
        .s("tunables `")
        .s(table)
        .s("`: tunable `")
        .s(name)
        .s("` is declared twice");
    panic!("{}", msg.text())
}

/// The values of a table of tunables.
pub(crate) struct TunedValues {
    pub(crate) table: Option<&'static Tunables>,
    /// The values in effect, as bits, after a slot that names the table.
    pub(crate) current: TunedSlots,
    /// The values staged, as bits, where `pending` is set.
    pub(crate) staged: Box<[AtomicU64]>,
    pub(crate) pending: Box<[AtomicBool]>,
    /// Some value is staged.
    pub(crate) dirty: AtomicBool,
    /// Values changed so far (staged changes applied).
    pub(crate) changes: AtomicU64,
}

impl TunedValues {
    /// The defaults of `table` in effect, nothing staged.
    pub(crate) fn new(table: Option<&'static Tunables>) -> Self {
        let decls = table.map_or(&[][..], Tunables::decls);
        TunedValues {
            table,
            current: TunedSlots::new(table, |i| decls[i].default),
            staged: decls.iter().map(|d| AtomicU64::new(d.default)).collect(),
            pending: decls.iter().map(|_| AtomicBool::new(false)).collect(),
            dirty: AtomicBool::new(false),
            changes: AtomicU64::new(0),
        }
    }

    /// The values in effect, as bits, in the table's order.
    #[inline(always)]
    pub(crate) fn current(&self) -> &[AtomicU64] {
        self.current.values()
    }

    /// The table, if the tree has one.
    #[inline(always)]
    pub(crate) fn table(&self) -> Option<&'static Tunables> {
        self.table
    }
}
